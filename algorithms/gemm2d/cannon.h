// Cannon: skew, then SendRecv shifts overlapped with partial GeMMs; square meshes only.
#ifndef MESHSIM_ALGORITHMS_GEMM2D_CANNON_H_
#define MESHSIM_ALGORITHMS_GEMM2D_CANNON_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeCannon();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_GEMM2D_CANNON_H_
