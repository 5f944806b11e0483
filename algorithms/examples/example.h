// The example plugin of docs/plugins.md: AllGather both inputs, then one GeMM (OS only).
#ifndef MESHSIM_ALGORITHMS_EXAMPLES_EXAMPLE_H_
#define MESHSIM_ALGORITHMS_EXAMPLES_EXAMPLE_H_

#include <memory>

#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<Algorithm> MakeExample();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_EXAMPLES_EXAMPLE_H_
