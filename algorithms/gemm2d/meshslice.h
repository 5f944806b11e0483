// MeshSlice (paper §3.1, Figure 5): S sliced partial AllGather/ReduceScatter, software pipelined.
#ifndef MESHSIM_ALGORITHMS_GEMM2D_MESHSLICE_H_
#define MESHSIM_ALGORITHMS_GEMM2D_MESHSLICE_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeMeshSlice();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_GEMM2D_MESHSLICE_H_
