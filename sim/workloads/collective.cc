// --workload collective: one collective per mesh group, all at once (algorithms/microbench.h),
// refused before it starts when its one step would start more flows than --max-flows.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "algorithms/microbench.h"
#include "core/status_macros.h"
#include "network/network_model.h"
#include "sim/memory_limit.h"
#include "sim/workload.h"
#include "sim/workloads/common.h"

namespace meshsim::sim {
namespace {

using workload_support::BudgetSource;
using workload_support::Count;

class Collective : public Workload {
 public:
  absl::Status Validate(const RunOptions& o) const override {
    if (o.collective.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--collective: required by --workload collective (allowed: ",
                       absl::StrJoin(RunOptionChoices("collective"), ", "), ")"));
    }
    if (o.bytes == 0) {
      return absl::InvalidArgumentError(
          "--bytes: required by --workload collective (e.g. --bytes 64MiB)");
    }
    return absl::OkStatus();
  }

  absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                     core::OpGraph& graph) const override {
    MESHSIM_ASSIGN_OR_RETURN(core::CollectiveKind kind, algorithms::ParseCollective(o.collective));
    MESHSIM_RETURN_IF_ERROR(CheckFlowBudget(o, plan.mesh, kind));
    return algorithms::BuildCollectiveBench(plan.mesh, kind, o.group, o.bytes, graph);
  }
  // The groups of --group, except an all-to-all's (no ring) and --group all's (one ring over
  // every chip in snake order, or comm.torus_algorithm's phases).
  RingMeshes Rings(const RunOptions& o, const RunPlan& plan) const override {
    if (o.collective == "alltoall" || o.group == "all") return {};
    return {{plan.mesh}, o.group == "row", o.group == "col"};
  }
  std::string Describe(const RunOptions& o, const algorithms::Mesh& mesh) const override {
    return absl::StrCat("--workload collective --collective ", o.collective, " --group ", o.group);
  }

 private:
  // The flows of the collective workload's one step against --max-flows: an all-to-all of P chips
  // starts P·(P−1) flows at once, all groups together.
  static absl::Status CheckFlowBudget(const RunOptions& o, const algorithms::Mesh& mesh,
                                      core::CollectiveKind kind) {
    MESHSIM_ASSIGN_OR_RETURN(const auto groups, algorithms::MeshGroups(mesh, o.group));
    int64_t flows = 0;
    for (const std::vector<core::ChipId>& g : groups) {
      flows += network::NetworkModel::MaxStepFlows(kind, static_cast<int>(g.size()));
    }
    if (flows <= o.flow_budget()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "--chips: '%d' is not allowed with %s: its step would start %s flows at once (%d group%s "
        "of %d chips%s), more than the limit of %s flows %s; use fewer chips or a smaller "
        "--group, or raise --max-flows",
        o.chips, Collective().Describe(o, mesh), Count(flows), groups.size(),
        groups.size() == 1 ? "" : "s", groups.front().size(),
        kind == core::CollectiveKind::kAllToAll ? ", P*(P-1) flows each" : "",
        Count(o.flow_budget()),
        BudgetSource(o, "max-flows", o.max_flows,
                     absl::StrFormat("half of %s at ~%d B per flow", AvailableMemory().Describe(),
                                     kBytesPerFlow))));
  }
};

}  // namespace

const Workload& CollectiveWorkload() {
  static const Collective w;
  return w;
}

}  // namespace meshsim::sim
