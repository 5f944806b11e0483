// Wang et al.: one direction decomposed into bidirectional SendRecv steps overlapped with
// partial GeMMs, the other a blocking collective; unrolled to S.
#ifndef MESHSIM_ALGORITHMS_GEMM2D_WANG_H_
#define MESHSIM_ALGORITHMS_GEMM2D_WANG_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeWang();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_GEMM2D_WANG_H_
