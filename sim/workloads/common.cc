#include "sim/workloads/common.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "algorithms/dataflow.h"
#include "algorithms/gemm_layer.h"
#include "algorithms/llm.h"
#include "core/check.h"
#include "core/status_macros.h"
#include "sim/tuning.h"
#include "sim/workload_registry.h"
#include "workloads/transformer.h"

namespace meshsim::sim {
namespace workload_support {
namespace {

// The GeMM problems' op count by the plugin's closed form (Algorithm::CountOps) against the
// budget, before any is lowered; for a plugin that reads --slices, the count at S = 1 too, since
// a smaller S merges step GeMMs (it does not remove tp1d's and fsdp's ReduceScatter adds).
absl::Status CheckOpCount(const RunOptions& o, const algorithms::Mesh& mesh,
                          const algorithms::AlgorithmInfo& info,
                          const algorithms::Algorithm& algorithm,
                          const std::vector<algorithms::GemmProblem>& problems) {
  const int64_t budget = o.op_budget();
  const int64_t ops = algorithms::CountProblemOps(problems, algorithm, mesh, o.slices);
  if (ops <= budget) return absl::OkStatus();  // Also -1: no closed form.
  std::string why = absl::StrFormat("its op graph would hold %s ops at --slices %s", Count(ops),
                                    o.slices == 0 ? "auto" : absl::StrCat(o.slices));
  if (info.Declares("slices") && o.slices != 1) {
    std::vector<algorithms::GemmProblem> one = problems;
    for (algorithms::GemmProblem& p : one) p.slices = 1;
    const int64_t at_one = algorithms::CountProblemOps(one, algorithm, mesh, 1);
    if (at_one >= 0) {
      why += absl::StrFormat(" (%s at --slices 1%s)", Count(at_one),
                             at_one > budget ? ", still too many" : ", within it");
    }
  }
  return absl::ResourceExhaustedError(
      absl::StrFormat("%s, more than the limit of %s ops", why, Count(budget)));
}

}  // namespace

bool UsesAutotuner(const RunOptions& o) {
  return o.algorithm == "meshslice" && WorkloadOf(o).TunesMeshSlice();
}

absl::StatusOr<algorithms::TuneResult> AutotuneRun(const RunOptions& o,
                                                   std::vector<algorithms::Mesh> meshes) {
  MESHSIM_ASSIGN_OR_RETURN(algorithms::TuneProblem problem, MakeTuneProblem(o));
  problem.meshes = std::move(meshes);
  return algorithms::Autotune(problem, RunCostModel());
}

absl::Status CheckAlgorithmFitsWorkload(const RunOptions& o,
                                        const algorithms::AlgorithmInfo& info) {
  const bool layer_like = WorkloadOf(o).TakesLayerPlugins();
  if (layer_like && !info.is_layer() && info.one_dimensional) {
    std::vector<std::string> layer_plugins;
    for (const algorithms::AlgorithmInfo& a : algorithms::Algorithms()) {
      if (a.is_layer() || !a.one_dimensional) layer_plugins.push_back(a.name);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("--algorithm: '", o.algorithm, "' is not allowed with --workload ", o.workload,
                     "; allowed: ", absl::StrJoin(layer_plugins, ", ")));
  }
  if (!layer_like && info.is_layer()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--algorithm: '", o.algorithm, "' is a layer plugin; it needs --workload ",
                     absl::StrJoin(WorkloadsWhere(&Workload::TakesLayerPlugins), " or "),
                     ", not --workload ", o.workload));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<algorithms::LayerAlgorithm>> LayerPlugin(
    const RunOptions& o, const std::vector<int>& layer_slices) {
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                           algorithms::FindAlgorithm(o.algorithm));
  MESHSIM_RETURN_IF_ERROR(CheckAlgorithmFitsWorkload(o, *info));
  if (!info->is_layer()) {
    std::optional<algorithms::Stationary> stationary;
    if (o.dataflow.find(',') != std::string::npos) {
      // One dataflow per FC layer (a resolved config): the FC layers of a whole layer take one
      // dataflow, or each its own automatic choice.
      MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));
      const std::vector<std::string> given = absl::StrSplit(o.dataflow, ',');
      std::vector<std::string> automatic;
      for (const workloads::FcLayerShape& s : workloads::BlockFcLayers(model, o.batch, o.seq)) {
        const algorithms::FcLayer l{s.name, s.index, s.tokens, s.in, s.out, s.column_parallel};
        automatic.push_back(algorithms::ToString(algorithms::AutoStationary(l)));
      }
      if (given != automatic) {
        if (std::adjacent_find(given.begin(), given.end(), std::not_equal_to<>()) != given.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--dataflow: '", o.dataflow, "' is not allowed with --workload ", o.workload,
              "; its FC layers take one dataflow or each its automatic one (",
              absl::StrJoin(automatic, ","), ")"));
        }
        MESHSIM_ASSIGN_OR_RETURN(stationary, algorithms::ParseStationary(given.front()));
      }
    } else if (o.dataflow != "auto") {
      MESHSIM_ASSIGN_OR_RETURN(stationary, algorithms::ParseStationary(o.dataflow));
    }
    return algorithms::MakeGemmLayer(MakePlugin(info->make, o, *info), o.algorithm, layer_slices,
                                     o.slices, stationary);
  }
  std::unique_ptr<algorithms::LayerAlgorithm> layer = MakePlugin(info->make_layer, o, *info);
  MESHSIM_CHECK(layer != nullptr) << "algorithm '" << o.algorithm << "' has no layer factory";
  return layer;
}

void SetLayerKernels(const RunOptions& o, workloads::LayerShape& shape) {
  shape.dropout = o.dropout > 0;
  shape.unfused_softmax = o.system.stack.kernel_fused_softmax == 0;
}

absl::Status CheckChunksDivideBatch(const RunOptions& o) {
  if (o.params.Find("chunks") == nullptr) return absl::OkStatus();
  const int64_t chunks = o.params.Int("chunks");
  if (chunks > 0 && o.batch % chunks == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--chunks: '%d' is not allowed; the chunk count must divide --batch %d", chunks, o.batch));
}

std::string Count(int64_t n) {
  return n >= 1000000 ? absl::StrFormat("%.1f M", n / 1e6) : absl::StrCat(n);
}

std::string BudgetSource(const RunOptions& o, const char* key, int64_t given,
                         const std::string& share) {
  if (given > 0) return absl::StrFormat("(--%s %d)", key, given);
  std::string shared;
  if (o.concurrent_runs > 1) {
    shared = absl::StrFormat(", shared by --jobs %d runs at once", o.concurrent_runs);
  }
  return absl::StrFormat("(--%s; default: %s%s)", key, share, shared);
}

absl::Status LowerGemmProblems(const RunOptions& o, const algorithms::Mesh& mesh,
                               const std::vector<algorithms::GemmProblem>& problems,
                               core::OpGraph& graph) {
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                           algorithms::FindAlgorithm(o.algorithm));
  const std::unique_ptr<algorithms::Algorithm> algorithm = MakePlugin(info->make, o, *info);
  // Every registry entry has a factory (tests/algorithms/registry_test.cc); null is a bug.
  MESHSIM_CHECK(algorithm != nullptr) << "algorithm '" << o.algorithm << "' has no factory";
  MESHSIM_RETURN_IF_ERROR(CheckOpCount(o, mesh, *info, *algorithm, problems));
  return algorithms::LowerProblems(problems, *algorithm, mesh, o.slices,
                                   o.system.chip.element_bytes, graph);
}

std::string DescribePluginRun(const RunOptions& o, const algorithms::Mesh& mesh) {
  return absl::StrCat(
      o.workload == kDefaultWorkload ? "" : absl::StrCat("--workload ", o.workload, " "),
      "--algorithm ", o.algorithm, " on mesh ", mesh.ToString());
}

std::string SlicesLowered(const core::OpGraph& graph, const RunPlan& plan, bool per_fc) {
  std::vector<int> per_layer(per_fc ? 4 : 1, 0);
  for (uint32_t i = 0; i < graph.size(); ++i) {
    const core::OpTags& t = graph.op(core::OpId(i)).tags;
    if (per_fc && t.layer < 0) continue;  // The attention core and element-wise ops.
    const size_t l = per_fc ? static_cast<size_t>(t.layer) : 0;
    if (t.slice >= 0 && l < per_layer.size()) per_layer[l] = std::max(per_layer[l], t.slice + 1);
  }
  if (!plan.layer_slices.empty()) per_layer = plan.layer_slices;
  if (std::none_of(per_layer.begin(), per_layer.end(), [](int s) { return s > 0; })) return "";
  return absl::StrJoin(per_layer, ",");
}

absl::Status ModelDimensions(const RunOptions& o, ResolvedValues& values) {
  MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));
  values.hidden = absl::StrCat(model.hidden);
  values.heads = absl::StrCat(model.heads);
  values.ffn = absl::StrCat(model.ffn_dim());
  values.layers = absl::StrCat(model.layers);
  return absl::OkStatus();
}

absl::StatusOr<std::string> FcDataflows(const RunOptions& o) {
  MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));
  std::vector<std::string> flows;
  const std::vector<std::string> given = absl::StrSplit(o.dataflow, ',');
  for (const workloads::FcLayerShape& s : workloads::BlockFcLayers(model, o.batch, o.seq)) {
    const algorithms::FcLayer l{s.name, s.index, s.tokens, s.in, s.out, s.column_parallel};
    const std::string& f = given.size() == 1 ? given[0] : given[s.index];
    flows.push_back(f == "auto" ? algorithms::ToString(algorithms::AutoStationary(l)) : f);
  }
  return absl::StrJoin(flows, ",");
}

std::vector<TensorSize> ModelTensors(const RunOptions& o, bool attention) {
  double h = double(o.hidden), heads = double(o.heads);
  double f = o.ffn > 0 ? double(o.ffn) : 4.0 * h;
  for (const workloads::ModelShape& m : workloads::Models()) {
    if (o.hidden == 0 && m.name == o.model) {
      h = double(m.hidden), heads = double(m.heads), f = double(m.ffn_dim());
    }
  }
  const double b = double(o.batch), s = double(o.seq), e = o.system.chip.element_bytes;
  std::vector<TensorSize> tensors = {{"activations batch x seq x max(3 hidden, ffn)",
                                      {"batch", "seq", "hidden", "ffn", "model"},
                                      b * s * std::max(3 * h, f) * e}};
  if (attention) {
    tensors.push_back({"attention scores batch x heads x seq x seq",
                       {"seq", "batch", "heads", "model"},
                       b * heads * s * s * e});
  }
  return tensors;
}

}  // namespace workload_support

absl::StatusOr<algorithms::Mesh> MeshOrDefault(const RunOptions& o, bool one_dimensional) {
  const int chips = o.mesh_chips();
  if (one_dimensional) {
    if (o.mesh_rows > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mesh: '", o.mesh_rows, "x", o.mesh_cols, "' is not allowed with --algorithm ",
          o.algorithm, ", which runs on a ring of every chip; use 1x", chips, " or auto"));
    }
    return algorithms::Mesh{1, chips};
  }
  if (o.mesh_rows > 0) return algorithms::Mesh{o.mesh_rows, o.mesh_cols};
  if (workload_support::UsesAutotuner(o)) {
    absl::StatusOr<algorithms::TuneResult> tuned = workload_support::AutotuneRun(o, {});
    if (tuned.ok()) return tuned->mesh;
  }
  return algorithms::Mesh::Squarest(chips);
}

absl::Status PlanLayerSlices(const RunOptions& o, const std::vector<int>* layer_slices,
                             RunPlan& plan) {
  if (layer_slices != nullptr) {
    plan.layer_slices = *layer_slices;
  } else if (!o.layer_slices.empty()) {
    plan.layer_slices = o.layer_slices;
  } else if (o.slices == 0 && workload_support::UsesAutotuner(o)) {
    absl::StatusOr<algorithms::TuneResult> tuned = workload_support::AutotuneRun(o, {plan.mesh});
    if (tuned.ok()) plan.layer_slices = tuned->LayerSlices();
  }
  return absl::OkStatus();
}

absl::Status Workload::CheckMesh(const RunOptions& o, const std::string& value,
                                 int64_t cells) const {
  if (cells == o.mesh_chips()) return absl::OkStatus();
  return InvalidOption("mesh", value,
                       o.placement.empty()
                           ? absl::StrFormat("R*C = %d must equal --chips %d", cells, o.chips)
                           : absl::StrFormat("R*C = %d must equal the %d chips of --placement",
                                             cells, o.mesh_chips()));
}

void Workload::ResolveDefaults(RunOptions& o) const { o.batch = std::max(1, o.mesh_chips() / 2); }

absl::StatusOr<algorithms::Mesh> Workload::LogicalMesh(const RunOptions& o,
                                                       bool* one_dimensional) const {
  *one_dimensional = false;
  return MeshOrDefault(o, false);
}

absl::Status Workload::Plan(const RunOptions& o, const std::vector<int>* layer_slices,
                            RunPlan& plan) const {
  return PlanLayerSlices(o, layer_slices, plan);
}

}  // namespace meshsim::sim
