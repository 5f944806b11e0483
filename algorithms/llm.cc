#include "algorithms/llm.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "algorithms/dataflow.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {

absl::StatusOr<std::vector<GemmProblem>> BlockProblems(const BlockPlan& plan) {
  std::vector<FcLayer> layers;
  for (const workloads::FcLayerShape& s :
       workloads::BlockFcLayers(plan.model, plan.batch, plan.seq)) {
    layers.push_back({s.name, s.index, s.tokens, s.in, s.out, s.column_parallel});
  }
  const std::vector<std::string> dataflows = absl::StrSplit(plan.dataflow, ',');
  if (dataflows.size() != 1 && dataflows.size() != layers.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--dataflow: ", dataflows.size(),
                                                   " per-layer dataflows for ", layers.size(),
                                                   " FC layers"));
  }
  const auto stationary = [&](const FcLayer& l) -> absl::StatusOr<Stationary> {
    const std::string& d = dataflows.size() == 1 ? dataflows[0] : dataflows[l.index];
    if (d == "auto") return AutoStationary(l);
    return ParseStationary(d);
  };
  if (!plan.layer_slices.empty()) {
    if (plan.layer_slices.size() != layers.size()) {
      return absl::InvalidArgumentError(absl::StrCat("--slices: ", plan.layer_slices.size(),
                                                     " per-layer slice counts for ", layers.size(),
                                                     " FC layers"));
    }
    for (int s : plan.layer_slices) {
      if (s < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--slices: per-layer slice count ", s, " is not allowed; use S >= 1"));
      }
    }
  }
  const auto with_slices = [&](GemmProblem p) {
    if (!plan.layer_slices.empty()) p.slices = plan.layer_slices[p.layer.index];
    return p;
  };
  std::vector<GemmProblem> problems;
  const bool fwd = plan.pass == "fwd" || plan.pass == "train";
  const bool bwd = plan.pass == "bwd" || plan.pass == "train";
  if (!fwd && !bwd) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pass: '", plan.pass, "' is not allowed; allowed: fwd, bwd, train"));
  }
  if (fwd) {
    for (const FcLayer& l : layers) {
      MESHSIM_ASSIGN_OR_RETURN(Stationary s, stationary(l));
      problems.push_back(with_slices(FcProblem(l, s, core::Pass::kFwd)));
    }
  }
  if (bwd) {
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      MESHSIM_ASSIGN_OR_RETURN(Stationary s, stationary(*it));
      problems.push_back(with_slices(FcProblem(*it, s, core::Pass::kBwdData)));
      problems.push_back(with_slices(FcProblem(*it, s, core::Pass::kBwdWeight)));
    }
  }
  return problems;
}

absl::Status LowerProblems(const std::vector<GemmProblem>& problems, const Algorithm& algorithm,
                           const Mesh& mesh, int slices, int element_bytes, core::OpGraph& graph) {
  LoweringContext ctx{graph, mesh, element_bytes, slices,
                      std::vector<core::OpId>(mesh.MachineChips())};
  std::vector<core::OpId> start_of_previous;  // The frontier when the previous problem started.
  for (const GemmProblem& p : problems) {
    ctx.NextProblem(start_of_previous);
    ctx.slices = p.slices > 0 ? p.slices : slices;
    absl::Status s = algorithm.Check(p, mesh, ctx.slices);
    if (!s.ok()) {
      return absl::Status(s.code(), p.label.empty() ? std::string(s.message())
                                                    : absl::StrCat(p.label, ": ", s.message()));
    }
    MESHSIM_RETURN_IF_ERROR(algorithm.Lower(p, ctx));
    MESHSIM_RETURN_IF_ERROR(graph.CheckSize());
  }
  return absl::OkStatus();
}

int64_t CountProblemOps(const std::vector<GemmProblem>& problems, const Algorithm& algorithm,
                        const Mesh& mesh, int slices) {
  int64_t total = 0;
  for (const GemmProblem& p : problems) {
    const int s = p.slices > 0 ? p.slices : slices;
    if (!algorithm.Check(p, mesh, s).ok()) return -1;
    const int64_t ops = algorithm.CountOps(p, mesh, s);
    if (ops < 0) return -1;
    total += ops;
  }
  return total;
}

}  // namespace meshsim::algorithms
