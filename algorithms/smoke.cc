#include "algorithms/smoke.h"

#include <vector>

#include "absl/strings/str_format.h"

namespace meshsim::algorithms {

absl::Status BuildChain(const ChainOptions& options, core::OpGraph& graph) {
  if (options.chips < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--chips: %d is not allowed; need at least 1", options.chips));
  }
  if (options.steps < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("steps: %d is not allowed; need at least 1", options.steps));
  }
  if (options.step <= core::Time::Zero()) {
    return absl::InvalidArgumentError("step: must be a positive duration");
  }
  const core::NameId name = graph.Intern("step");
  std::vector<core::OpId> prev(options.chips), cur(options.chips);
  for (int s = 0; s < options.steps; ++s) {
    for (int c = 0; c < options.chips; ++c) {
      core::Op op = core::Op::Delay(core::ChipId(c), options.step);
      op.tags.name = name;
      op.tags.slice = s;
      if (s == 0) {
        cur[c] = graph.Add(op);
      } else if (options.chips == 1) {
        cur[c] = graph.Add(op, {prev[c]});
      } else {
        cur[c] = graph.Add(op, {prev[c], prev[(c + options.chips - 1) % options.chips]});
      }
    }
    prev.swap(cur);
  }
  return absl::OkStatus();
}

}  // namespace meshsim::algorithms
