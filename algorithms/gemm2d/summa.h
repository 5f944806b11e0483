// SUMMA (Figure 2a): pipelined broadcast/reduce per iteration, unrolled to S iterations.
#ifndef MESHSIM_ALGORITHMS_GEMM2D_SUMMA_H_
#define MESHSIM_ALGORITHMS_GEMM2D_SUMMA_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeSumma();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_GEMM2D_SUMMA_H_
