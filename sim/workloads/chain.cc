// --workload chain: the smoke test, a wavefront of --steps delays of --step-time on a ring of
// --chips (algorithms/smoke.h). The smallest workload: the usual mesh and plan, one lowering.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "algorithms/smoke.h"
#include "core/status_macros.h"
#include "sim/workload.h"
#include "sim/workloads/common.h"

namespace meshsim::sim {
namespace {

class Chain : public Workload {
 public:
  absl::Status Validate(const RunOptions& o) const override {
    if (int64_t{o.steps} * o.chips <= kMaxChainOps) return absl::OkStatus();
    return InvalidOption("steps", absl::StrCat(o.steps),
                         absl::StrFormat("--chips x --steps must be at most %d ops (here %d x %d)",
                                         kMaxChainOps, o.chips, o.steps));
  }

  RingMeshes Rings(const RunOptions& o, const RunPlan& plan) const override {
    return {};
  }  // Delays only.

  absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                     core::OpGraph& graph) const override {
    return algorithms::BuildChain({.chips = o.chips, .steps = o.steps, .step = o.step_time}, graph);
  }
  std::string Describe(const RunOptions& o, const algorithms::Mesh& mesh) const override {
    return absl::StrCat("--workload chain --steps ", o.steps);
  }
  std::string Fewer() const override { return "chips or steps"; }
};

}  // namespace

const Workload& ChainWorkload() {
  static const Chain w;
  return w;
}

}  // namespace meshsim::sim
