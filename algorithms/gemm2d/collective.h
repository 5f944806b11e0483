// Collective 2D GeMM (MeshSlice Figure 2b): AllGather / ReduceScatter and one GeMM.
#ifndef MESHSIM_ALGORITHMS_GEMM2D_COLLECTIVE_H_
#define MESHSIM_ALGORITHMS_GEMM2D_COLLECTIVE_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeCollective();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_GEMM2D_COLLECTIVE_H_
