#include "algorithms/registry.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/did_you_mean.h"

namespace meshsim::algorithms {

absl::StatusOr<const AlgorithmInfo*> FindAlgorithm(const std::string& name) {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : Algorithms()) {
    if (info.name == name) return &info;
    names.push_back(info.name);
  }
  return absl::NotFoundError(absl::StrFormat("--algorithm: '%s' is not allowed; allowed: %s%s",
                                             name, absl::StrJoin(names, ", "),
                                             core::DidYouMean(name, names)));
}

}  // namespace meshsim::algorithms
