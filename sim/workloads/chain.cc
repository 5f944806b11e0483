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
