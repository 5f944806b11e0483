// The registry of algorithm plugins: one explicit list, defined in builtin.cc (no static
// self-registration), so that what `meshsim list algorithms` prints is exactly what exists.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(const AlgorithmInfo* info, FindAlgorithm("meshslice"));
//   std::unique_ptr<Algorithm> algo = info->make();
#ifndef MESHSIM_ALGORITHMS_REGISTRY_H_
#define MESHSIM_ALGORITHMS_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

// Every built-in algorithm, in display order.
const std::vector<AlgorithmInfo>& Algorithms();

// NotFound naming the known algorithms when `name` is not one of them.
absl::StatusOr<const AlgorithmInfo*> FindAlgorithm(const std::string& name);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_REGISTRY_H_
