// Fully-sharded data parallelism with Wang-style overlap on a ring.
#ifndef MESHSIM_ALGORITHMS_TP1D_FSDP_H_
#define MESHSIM_ALGORITHMS_TP1D_FSDP_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeFsdp();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_TP1D_FSDP_H_
