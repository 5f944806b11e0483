// 1D tensor parallelism (sequence-parallel Megatron) with Wang-style overlap on a ring.
#ifndef MESHSIM_ALGORITHMS_TP1D_TP1D_H_
#define MESHSIM_ALGORITHMS_TP1D_TP1D_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeTp1d();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_TP1D_TP1D_H_
