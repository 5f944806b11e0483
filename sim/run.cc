#include "sim/run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "algorithms/autotune/atp_tuner.h"
#include "algorithms/autotune/autotuner.h"
#include "algorithms/dataflow.h"
#include "algorithms/gemm_layer.h"
#include "algorithms/layer_algorithm.h"
#include "algorithms/llm.h"
#include "algorithms/microbench.h"
#include "algorithms/pipeline/pipeline.h"
#include "algorithms/registry.h"
#include "algorithms/reshard/reshard.h"
#include "algorithms/smoke.h"
#include "core/check.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "core/status_macros.h"
#include "network/network_model.h"
#include "sim/machine.h"
#include "sim/metrics.h"
#include "sim/tuning.h"
#include "workloads/layer.h"
#include "workloads/stack.h"
#include "workloads/transformer.h"

namespace meshsim::sim {

namespace {

// What a run lowers besides its options: the logical mesh and, for MeshSlice on the llm
// workload, the per-layer slice counts.
struct Plan {
  algorithms::Mesh mesh;
  bool one_dimensional = false;
  std::vector<int> layer_slices;  // Indexed by FcLayer::index; empty = o.slices everywhere.
  // --workload pipeline: the stages and messages (mesh = one replica's operator mesh).
  std::optional<algorithms::pipeline::PipelinePlan> pipeline;
  algorithms::reshard::HostModel hosts;
};

// `--mesh auto` and `--slices auto` mean the autotuner's choice for MeshSlice on the llm
// workload (CLI.md); other algorithms and workloads keep the squarest mesh and the plugin's
// default S.
bool UsesAutotuner(const RunOptions& o) {
  return (o.workload == "llm" || o.workload == "layer") && o.algorithm == "meshslice";
}

// The autotuner on `meshes` (empty = its candidates) with the run's cost model; an error when
// it has no valid candidate (callers then fall back to the non-tuned behaviour, whose lowering
// reports the plugin's precondition).
absl::StatusOr<algorithms::TuneResult> AutotuneRun(const RunOptions& o,
                                                   std::vector<algorithms::Mesh> meshes) {
  MESHSIM_ASSIGN_OR_RETURN(algorithms::TuneProblem problem, MakeTuneProblem(o));
  problem.meshes = std::move(meshes);
  return algorithms::Autotune(problem, RunCostModel());
}

absl::Status CheckAlgorithmFitsWorkload(const RunOptions& o, const algorithms::AlgorithmInfo& info);

// The layer plugin of a layer or pipeline run: a layer plugin, or a 2D GeMM plugin for the FC
// GeMMs with the rest of the layer local (gemm_layer.h), each FC layer with its S of
// `layer_slices` (empty: --slices).
absl::StatusOr<std::unique_ptr<algorithms::LayerAlgorithm>> LayerPlugin(
    const RunOptions& o, const std::vector<int>& layer_slices = {}) {
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
    return algorithms::MakeGemmLayer(info->make(), o.algorithm, layer_slices, o.slices, stationary);
  }
  std::unique_ptr<algorithms::LayerAlgorithm> layer = info->make_layer();
  MESHSIM_CHECK(layer != nullptr) << "algorithm '" << o.algorithm << "' has no layer factory";
  return layer;
}

// Plans a pipeline step (algorithms/pipeline/pipeline.h) on `op_mesh` and checks that every
// stage fits in HBM.
absl::StatusOr<algorithms::pipeline::PipelinePlan> PlanPipelineRun(
    const RunOptions& o, const algorithms::Mesh& op_mesh,
    const algorithms::reshard::HostModel& hosts) {
  namespace pp = algorithms::pipeline;
  namespace rs = algorithms::reshard;
  MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));
  pp::PipelineProblem p;
  MESHSIM_ASSIGN_OR_RETURN(p.stack, workloads::StackOf(model, o.batch / o.microbatches, o.seq,
                                                       o.system.chip.element_bytes));
  for (workloads::LayerShape& layer : p.stack.layers) layer.dropout = o.dropout > 0;
  p.stages = o.stages;
  p.dp = o.dp;
  p.microbatches = o.microbatches;
  p.op_mesh = op_mesh;
  MESHSIM_ASSIGN_OR_RETURN(p.schedule, pp::ParseSchedule(o.schedule));
  p.overlap = o.overlap;
  p.paired = o.system.stack.p2p == "paired";
  p.delay_weight_grads = o.delay_dw;
  p.flops_per_s = o.system.chip.PeakFlops();
  p.recompute = o.recompute;
  p.chunks = o.chunks;
  MESHSIM_ASSIGN_OR_RETURN(p.reshard.strategy, rs::ParseStrategy(o.reshard));
  MESHSIM_ASSIGN_OR_RETURN(p.reshard.scheduler, rs::ParseScheduler(o.reshard_scheduler));
  p.reshard.scheduler_options.seed = static_cast<uint64_t>(o.seed);
  MESHSIM_ASSIGN_OR_RETURN(const std::unique_ptr<algorithms::LayerAlgorithm> layer, LayerPlugin(o));
  MESHSIM_ASSIGN_OR_RETURN(pp::PipelinePlan plan, pp::PlanPipeline(p, *layer, hosts));
  const int64_t capacity = o.system.chip.hbm_capacity_bytes;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const pp::StagePlan& st = plan.stages[i];
    if (st.peak_bytes_per_chip() <= capacity) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "hbm.capacity: %.1f GB is not enough; stage %d needs %.1f GB per chip (weights, "
        "gradients and optimizer %.1f GB + %d microbatches in flight x %.2f GB of "
        "activations%s); use more stages, a larger --mesh, smaller microbatches%s%s",
        capacity / 1e9, static_cast<int>(i), st.peak_bytes_per_chip() / 1e9,
        st.weight_bytes_per_chip / 1e9, st.in_flight, st.activation_bytes_per_chip / 1e9,
        st.workspace_bytes_per_chip > 0 ? absl::StrFormat(" + %.2f GB recomputation workspace",
                                                          st.workspace_bytes_per_chip / 1e9)
                                        : "",
        o.recompute ? "" : ", --recompute 1", o.schedule == "1f1b" ? "" : " or --schedule 1f1b"));
  }
  return plan;
}

// "63.2 M" for counts of a million and more, else the integer.
std::string Count(int64_t n) {
  return n >= 1000000 ? absl::StrFormat("%.1f M", n / 1e6) : absl::StrCat(n);
}

// What sized the run, for the budget errors: "--algorithm tp1d", "--workload pipeline", ...
std::string RunDescription(const RunOptions& o, const algorithms::Mesh& mesh) {
  if (o.workload == "llm" || o.workload == "gemm" || o.workload == "layer") {
    return absl::StrCat(o.workload == "llm" ? "" : absl::StrCat("--workload ", o.workload, " "),
                        "--algorithm ", o.algorithm, " on mesh ", mesh.ToString());
  }
  if (o.workload == "collective") {
    return absl::StrCat("--workload collective --collective ", o.collective, " --group ", o.group);
  }
  if (o.workload == "chain") return absl::StrCat("--workload chain --steps ", o.steps);
  return absl::StrCat("--workload ", o.workload);
}

// "(--max-ops 1000)" when given, else where the default came from: "(--max-ops; default: half
// of the 23.5 GiB of physical memory at ~200 B per op)"; `share` is what follows "default: ".
std::string BudgetSource(const RunOptions& o, const char* key, int64_t given,
                         const std::string& share) {
  if (given > 0) return absl::StrFormat("(--%s %d)", key, given);
  std::string shared;
  if (o.concurrent_runs > 1) {
    shared = absl::StrFormat(", shared by --jobs %d runs at once", o.concurrent_runs);
  }
  return absl::StrFormat("(--%s; default: %s%s)", key, share, shared);
}

std::string OpBudgetSource(const RunOptions& o) {
  return BudgetSource(
      o, "max-ops", o.max_ops,
      absl::StrFormat("%s of %s at ~%d B per op%s", o.keep_timeline ? "a quarter" : "half",
                      AvailableMemory().Describe(), kBytesPerOp,
                      o.keep_timeline ? ", the timeline kept has another" : ""));
}

// The one-line error of a run whose op graph passes its budget; `why` says by how much.
absl::Status OpBudgetError(const RunOptions& o, const algorithms::Mesh& mesh,
                           const std::string& why) {
  const std::string fewer = o.workload == "pipeline" ? "chips, layers or microbatches"
                            : o.workload == "chain"  ? "chips or steps"
                                                     : "chips or another algorithm or mesh";
  return absl::InvalidArgumentError(
      absl::StrFormat("--chips: '%d' is not allowed with %s: %s %s; use fewer %s, or raise "
                      "--max-ops",
                      o.chips, RunDescription(o, mesh), why, OpBudgetSource(o), fewer));
}

// "5.9 GiB", "12.5 MiB", "64 KiB", "100 B": a memory size.
std::string MemorySize(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= int64_t{1} << 30) return absl::StrFormat("%.1f GiB", b / double(int64_t{1} << 30));
  if (bytes >= int64_t{1} << 20) return absl::StrFormat("%.1f MiB", b / double(int64_t{1} << 20));
  if (bytes >= 1024) return absl::StrFormat("%.0f KiB", b / 1024);
  return absl::StrFormat("%d B", bytes);
}

// What keeps the run's timeline: "--out", "--trace", "--out and --trace", "sweep --timelines".
std::string TimelineKeptFor(const RunOptions& o) {
  if (o.sweep_timelines) return "sweep --timelines";
  if (!o.out.empty() && !o.trace.empty()) return "--out and --trace";
  return o.trace.empty() ? "--out" : "--trace";
}

// The one-line error of a run stopped because its kept timeline passed --max-timeline-bytes.
absl::Status TimelineBudgetError(const RunOptions& o, const algorithms::Mesh& mesh,
                                 const core::Simulator& sim, const core::Executor& exec,
                                 size_t samples, const core::TimelineBudget& budget) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "--chips: '%d' is not allowed with %s and %s: the timeline kept for it passes the limit "
      "of %s %s with %s rows and %s counter samples, at simulated %s with %d of %d ops done; "
      "use fewer chips, leave out %s (the metrics need no timeline), or raise "
      "--max-timeline-bytes",
      o.chips, RunDescription(o, mesh), TimelineKeptFor(o), MemorySize(budget.max_bytes()),
      BudgetSource(o, "max-timeline-bytes", o.max_timeline_bytes,
                   absl::StrFormat("a quarter of %s, the op graph has another",
                                   AvailableMemory().Describe())),
      Count(static_cast<int64_t>(exec.timeline().size())), Count(static_cast<int64_t>(samples)),
      sim.Now().ToString(), exec.finished_count(), exec.graph().size(),
      o.sweep_timelines ? "--timelines" : TimelineKeptFor(o)));
}

// The flows of the collective workload's one step against --max-flows: an all-to-all of P chips
// starts P·(P−1) flows at once, all groups together.
absl::Status CheckFlowBudget(const RunOptions& o, const algorithms::Mesh& mesh,
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
      o.chips, RunDescription(o, mesh), Count(flows), groups.size(), groups.size() == 1 ? "" : "s",
      groups.front().size(), kind == core::CollectiveKind::kAllToAll ? ", P*(P-1) flows each" : "",
      Count(o.flow_budget()),
      BudgetSource(o, "max-flows", o.max_flows,
                   absl::StrFormat("half of %s at ~%d B per flow", AvailableMemory().Describe(),
                                   kBytesPerFlow))));
}

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
  const bool reads_slices =
      std::any_of(info.params.begin(), info.params.end(),
                  [](const algorithms::ParamDoc& p) { return p.name == "slices"; });
  if (reads_slices && o.slices != 1) {
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

absl::Status LowerWorkload(const RunOptions& o, const Plan& run_plan, core::OpGraph& graph);

// Lowers the workload within the op budget (--max-ops): refused before lowering when a plugin's
// closed form says the graph would pass it, else as soon as the graph does (the plugins check
// in their loops).
absl::Status BuildWorkload(const RunOptions& o, const Plan& run_plan, core::OpGraph& graph) {
  graph.set_max_ops(static_cast<size_t>(o.op_budget()));
  absl::Status s = LowerWorkload(o, run_plan, graph);
  if (s.ok()) s = graph.CheckSize();
  if (s.code() != absl::StatusCode::kResourceExhausted) return s;
  // CheckOpCount's message says how many ops; OpGraph::CheckSize's only that the limit passed.
  const std::string why =
      graph.full() ? absl::StrFormat("its op graph passes the limit of %s ops while it is built",
                                     Count(o.op_budget()))
                   : std::string(s.message());
  return OpBudgetError(o, run_plan.mesh, why);
}

absl::Status LowerWorkload(const RunOptions& o, const Plan& run_plan, core::OpGraph& graph) {
  const algorithms::Mesh& mesh = run_plan.mesh;
  if (run_plan.pipeline.has_value()) {
    MESHSIM_ASSIGN_OR_RETURN(const std::unique_ptr<algorithms::LayerAlgorithm> layer,
                             LayerPlugin(o));
    return algorithms::pipeline::LowerPipeline(*run_plan.pipeline, *layer, run_plan.hosts, graph);
  }
  if (o.workload == "chain") {
    return algorithms::BuildChain({.chips = o.chips, .steps = o.steps, .step = o.step_time}, graph);
  }
  if (o.workload == "collective") {
    MESHSIM_ASSIGN_OR_RETURN(core::CollectiveKind kind, algorithms::ParseCollective(o.collective));
    MESHSIM_RETURN_IF_ERROR(CheckFlowBudget(o, mesh, kind));
    return algorithms::BuildCollectiveBench(mesh, kind, o.group, o.bytes, graph);
  }
  if (o.workload == "gemm" && o.chips == 1) {
    return algorithms::BuildLocalGemm(o.gemm_m, o.gemm_n, o.gemm_k, graph);
  }
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                           algorithms::FindAlgorithm(o.algorithm));
  MESHSIM_RETURN_IF_ERROR(CheckAlgorithmFitsWorkload(o, *info));
  if (o.workload == "layer") {
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, RunModel(o));
    MESHSIM_ASSIGN_OR_RETURN(const std::unique_ptr<algorithms::LayerAlgorithm> layer,
                             LayerPlugin(o, run_plan.layer_slices));
    workloads::LayerShape shape =
        workloads::ShapeOf(model, o.batch, o.seq, o.system.chip.element_bytes);
    shape.dropout = o.dropout > 0;
    const algorithms::LayerProblem problem{shape, o.chunks};
    return algorithms::LowerLayer(problem, *layer, mesh, graph);
  }
  const std::unique_ptr<algorithms::Algorithm> algorithm = info->make();
  // Every registry entry has a factory (tests/algorithms/registry_test.cc); null is a bug.
  MESHSIM_CHECK(algorithm != nullptr) << "algorithm '" << o.algorithm << "' has no factory";
  std::vector<algorithms::GemmProblem> problems;
  if (o.workload == "gemm") {
    // A stand-alone GeMM C = A·B in the forward dataflow of the chosen stationary matrix.
    MESHSIM_ASSIGN_OR_RETURN(algorithms::Stationary s,
                             algorithms::ParseStationary(o.dataflow == "auto" ? "os" : o.dataflow));
    algorithms::GemmProblem p;
    p.m = o.gemm_m;
    p.n = o.gemm_n;
    p.k = o.gemm_k;
    p.dataflow = algorithms::FcProblem({}, s, core::Pass::kFwd).dataflow;
    p.label = "gemm";
    problems.push_back(p);
  } else {
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, RunModel(o));
    algorithms::BlockPlan plan{model,
                               o.batch,
                               o.seq,
                               o.pass,
                               o.dataflow,
                               o.slices,
                               mesh,
                               o.system.chip.element_bytes,
                               run_plan.layer_slices};
    MESHSIM_ASSIGN_OR_RETURN(problems, algorithms::BlockProblems(plan));
  }
  MESHSIM_RETURN_IF_ERROR(CheckOpCount(o, mesh, *info, *algorithm, problems));
  return algorithms::LowerProblems(problems, *algorithm, mesh, o.slices,
                                   o.system.chip.element_bytes, graph);
}

// --workload layer and pipeline take a layer plugin, the other distributed workloads a GeMM
// plugin.
absl::Status CheckAlgorithmFitsWorkload(const RunOptions& o,
                                        const algorithms::AlgorithmInfo& info) {
  const bool layer_like = o.workload == "layer" || o.workload == "pipeline";
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
    return absl::InvalidArgumentError(absl::StrCat("--algorithm: '", o.algorithm,
                                                   "' is a layer plugin; it needs --workload "
                                                   "layer or pipeline, not --workload ",
                                                   o.workload));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<algorithms::Mesh> ResolveLayerMesh(const RunOptions& o) {
  if (o.mesh_rows > 0) return algorithms::Mesh{o.mesh_rows, o.mesh_cols};
  const int chips = o.mesh_chips();
  if (o.algorithm == "tp2d") {
    // q × (d·q): the largest q with q² | chips (2D on 16 chips, 2.5D depth 2 on 8).
    int q = 1;
    for (int x = 1; x * x <= chips; ++x) {
      if (chips % (x * x) == 0) q = x;
    }
    return algorithms::Mesh{q, chips / q};
  }
  if (o.algorithm == "atp") {
    // ATP's own choice (§3.5): Eq. 2–4 on the hierarchical communication matrix of the machine
    // the run builds (the same search as `meshsim tune --algorithm atp`, without calibration).
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AtpProblem p, MakeAtpProblem(o));
    MESHSIM_ASSIGN_OR_RETURN(const network::Topology topology, BuildTopology(o));
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::CommMatrix matrix,
                             algorithms::BuildCommMatrix(topology, chips));
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AtpResult result, algorithms::AtpSearch(matrix, p));
    return result.mesh;
  }
  // megatron: DeviceMesh(N, 1), Megatron-LM's mesh.
  return algorithms::Mesh{chips, 1};
}

namespace {

// The logical mesh: 1D algorithms use one ring of every chip of the mesh; 2D ones the given
// mesh, else for MeshSlice on llm the autotuner's mesh, else (or when the tuner has no
// candidate, e.g. chips not 4·C with C ≥ 4) the squarest mesh. Not yet placed.
absl::StatusOr<algorithms::Mesh> ResolveLogicalMesh(const RunOptions& o, bool* one_dimensional) {
  const int chips = o.mesh_chips();
  *one_dimensional = false;
  if (o.workload == "pipeline") {
    // One replica's operator mesh: as given, else N×1 (Megatron's, and ATP's 1D end), or q×q
    // for tp2d when N is a square.
    if (o.mesh_rows > 0) return algorithms::Mesh{o.mesh_rows, o.mesh_cols};
    const int n = o.chips / (o.stages * o.dp);
    if (o.algorithm == "tp2d") {
      int q = 1;
      while ((q + 1) * (q + 1) <= n) ++q;
      if (q * q == n) return algorithms::Mesh{q, q};
    }
    return algorithms::Mesh{n, 1};
  }
  if (o.workload == "layer") {
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    MESHSIM_RETURN_IF_ERROR(CheckAlgorithmFitsWorkload(o, *info));
    if (info->is_layer()) return ResolveLayerMesh(o);
    // A 2D GeMM plugin: as for llm below (the autotuner's mesh for MeshSlice).
  }
  if (o.workload == "llm" || (o.workload == "gemm" && o.chips > 1)) {
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    *one_dimensional = info->one_dimensional;
  }
  if (*one_dimensional) {
    if (o.mesh_rows > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mesh: '", o.mesh_rows, "x", o.mesh_cols, "' is not allowed with --algorithm ",
          o.algorithm, ", which runs on a ring of every chip; use 1x", chips, " or auto"));
    }
    return algorithms::Mesh{1, chips};
  }
  if (o.mesh_rows > 0) return algorithms::Mesh{o.mesh_rows, o.mesh_cols};
  if (UsesAutotuner(o)) {
    absl::StatusOr<algorithms::TuneResult> tuned = AutotuneRun(o, {});
    if (tuned.ok()) return tuned->mesh;
  }
  return algorithms::Mesh::Squarest(chips);
}

// The logical mesh placed on the chips of --placement (if any).
absl::StatusOr<algorithms::Mesh> ResolveMesh(const RunOptions& o, bool* one_dimensional) {
  MESHSIM_ASSIGN_OR_RETURN(algorithms::Mesh mesh, ResolveLogicalMesh(o, one_dimensional));
  if (o.placement.empty()) return mesh;
  std::vector<core::ChipId> chips;
  for (int c : o.placement) chips.push_back(core::ChipId(c));
  return algorithms::Mesh::Placed(mesh.rows, mesh.cols, std::move(chips));
}

// The mesh, and the per-layer S: `layer_slices` when given; for `--slices auto` with MeshSlice
// on llm, the autotuner's S for each layer on that mesh (none when the tuner rejects the mesh:
// the plugin's default and its error then apply); else none (o.slices for every problem).
absl::StatusOr<Plan> ResolvePlan(const RunOptions& o, const std::vector<int>* layer_slices) {
  Plan plan;
  MESHSIM_ASSIGN_OR_RETURN(plan.mesh, ResolveMesh(o, &plan.one_dimensional));
  if (o.workload == "pipeline") {
    MESHSIM_ASSIGN_OR_RETURN(const network::Topology topology, BuildTopology(o));
    plan.hosts = MakeHostModel(topology, o);
    MESHSIM_ASSIGN_OR_RETURN(plan.pipeline, PlanPipelineRun(o, plan.mesh, plan.hosts));
    return plan;
  }
  if (layer_slices != nullptr) {
    plan.layer_slices = *layer_slices;
  } else if (!o.layer_slices.empty()) {
    plan.layer_slices = o.layer_slices;
  } else if (o.slices == 0 && UsesAutotuner(o)) {
    absl::StatusOr<algorithms::TuneResult> tuned = AutotuneRun(o, {plan.mesh});
    if (tuned.ok()) plan.layer_slices = tuned->LayerSlices();
  }
  return plan;
}

// The run's configuration with every `auto` replaced by what was used (CLI.md: the archive and
// `--format json` hold the resolved values): the mesh, per-layer dataflows and slice counts in
// model order (qkv, attn_out, ffn_up, ffn_down), the model's dimensions. Keys the run does not
// read (NotReadBy: the dataflow of a collective, the stages of an llm run) are left out, and so
// is a value the run leaves to a plugin's default (the S of a pipeline stage's plugin) and
// --placement when not given: an unplaced mesh is not the same run as one placed on chips
// 0..n-1 (the machine takes an unplaced mesh's extents). Read back as options (`--config`), it
// gives the same run.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ResolvedConfig(
    const RunOptions& o, const Plan& plan, const core::OpGraph& graph) {
  const absl::StatusOr<const algorithms::AlgorithmInfo*> info =
      algorithms::FindAlgorithm(o.algorithm);
  // A whole layer by a 2D GeMM plugin (gemm_layer.h): its FC GeMMs report as llm's do.
  const bool gemm_layer = o.workload == "layer" && info.ok() && !(*info)->is_layer();
  const bool gemm_like = o.workload == "llm" || (o.workload == "gemm" && o.chips > 1) || gemm_layer;
  std::string dataflow = o.dataflow == "auto" ? "" : o.dataflow, slices, hidden, heads, ffn, layers;
  if (o.workload == "gemm") dataflow = o.dataflow == "auto" ? "os" : o.dataflow;
  if (gemm_like) {
    // Slices actually lowered: the largest slice tag + 1 (per FC layer for llm).
    const bool per_fc = o.workload == "llm" || gemm_layer;
    std::vector<int> per_layer(per_fc ? 4 : 1, 0);
    for (uint32_t i = 0; i < graph.size(); ++i) {
      const core::OpTags& t = graph.op(core::OpId(i)).tags;
      if (per_fc && t.layer < 0) continue;  // The attention core and element-wise ops.
      const size_t l = per_fc ? static_cast<size_t>(t.layer) : 0;
      if (t.slice >= 0 && l < per_layer.size()) per_layer[l] = std::max(per_layer[l], t.slice + 1);
    }
    if (!plan.layer_slices.empty()) per_layer = plan.layer_slices;
    if (std::any_of(per_layer.begin(), per_layer.end(), [](int s) { return s > 0; })) {
      slices = absl::StrJoin(per_layer, ",");
    }
  }
  if (o.workload == "llm" || o.workload == "layer" || o.workload == "pipeline") {
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, RunModel(o));
    hidden = absl::StrCat(model.hidden);
    heads = absl::StrCat(model.heads);
    ffn = absl::StrCat(model.ffn_dim());
    layers = absl::StrCat(model.layers);
    if (o.workload == "llm" || gemm_layer) {
      std::vector<std::string> flows;
      const std::vector<std::string> given = absl::StrSplit(o.dataflow, ',');
      for (const workloads::FcLayerShape& s : workloads::BlockFcLayers(model, o.batch, o.seq)) {
        const algorithms::FcLayer l{s.name, s.index, s.tokens, s.in, s.out, s.column_parallel};
        const std::string& d = given.size() == 1 ? given[0] : given[s.index];
        flows.push_back(d == "auto" ? algorithms::ToString(algorithms::AutoStationary(l)) : d);
      }
      dataflow = absl::StrJoin(flows, ",");
    }
  }
  std::vector<std::pair<std::string, std::string>> config = o.Resolved();
  for (auto& [key, value] : config) {
    if (key == "mesh") value = plan.mesh.ToString();  // The mesh actually used.
    if (key == "dataflow") value = dataflow;
    if (key == "slices" && o.slices == 0) value = slices;  // A given S stays as given.
    if (key == "hidden") value = hidden;
    if (key == "heads") value = heads;
    if (key == "ffn") value = ffn;
    if (key == "layers") value = layers;
  }
  KeepReadKeys(o, config);
  return config;
}

// The progress of a long run on stderr: the makespan is unknown until the end, so it shows what
// is known — events, simulated time, ops finished of all. On a terminal the line is redrawn in
// place at most every 0.25 s once the run has taken 2 s, and cleared at the end; in a log it is
// written once a minute from the first minute on, with the wall time so far.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(const core::Simulator& sim, const core::Executor& exec, Clock::time_point start,
               bool terminal)
      : sim_(sim),
        exec_(exec),
        start_(start),
        terminal_(terminal),
        next_(start + (terminal ? std::chrono::seconds(2) : kLogEvery)) {}
  void Update() {
    const Clock::time_point now = Clock::now();
    if (now < next_) return;
    next_ = now + (terminal_ ? std::chrono::milliseconds(250) : kLogEvery);
    const std::string line = absl::StrFormat("meshsim: %.1f M events, simulated %s, ops %d/%d",
                                             sim_.events_executed() / 1e6, sim_.Now().ToString(),
                                             exec_.finished_count(), exec_.graph().size());
    if (terminal_) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      drawn_ = true;
    } else {
      std::fprintf(stderr, "%s (%.0f s)\n", line.c_str(),
                   std::chrono::duration<double>(now - start_).count());
    }
    std::fflush(stderr);
  }
  void Clear() {
    if (!drawn_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  static constexpr std::chrono::seconds kLogEvery{60};
  const core::Simulator& sim_;
  const core::Executor& exec_;
  Clock::time_point start_;
  bool terminal_;
  Clock::time_point next_;
  bool drawn_ = false;
};

// Runs `graph` on the machine of `o` and fills the record's timeline, edges, counters and base
// metrics (not its config).
absl::StatusOr<formats::RunRecord> RunGraph(const RunOptions& o, const algorithms::Mesh& mesh,
                                            const core::OpGraph& graph,
                                            std::chrono::steady_clock::time_point wall_start) {
  // No chip computes faster than its peak: a graph whose flops need longer than the horizon on
  // every chip at once would only fail there, hours later; it is refused before it starts.
  double flops = 0;
  for (uint32_t i = 0; i < graph.size(); ++i) flops += graph.op(core::OpId(i)).flops();
  const double min_seconds = flops / (double(o.chips) * o.system.chip.PeakFlops());
  if (min_seconds > core::Time::Horizon().seconds()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "simulated time passes the limit of %s: %.4g flop take at least %.4g s at the peak of "
        "all %d chips; the scenario cannot be simulated: lower its sizes",
        core::Time::Horizon().ToString(), flops, min_seconds, o.chips));
  }
  core::Simulator sim;
  core::FairShare fair_share(sim);
  fair_share.set_record_counters(o.keep_timeline);
  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<Machine> machine, BuildMachine(o, mesh, fair_share));
  core::Executor exec(sim, graph);
  machine->Attach(exec);
  // Rows are streamed into the metrics as they are recorded, and kept only if asked for.
  // Only a pipeline's GeMM table reads the GeMMs' busy times (report.cc): other runs skip their
  // per-row cost on this hot path.
  MetricsAccumulator metrics(o.chips, &graph.names().all(), o.workload == "pipeline");
  exec.set_sink(o.keep_timeline ? nullptr : &metrics);
  // The rows and counter samples kept grow with events, not ops: bounded while they grow.
  core::TimelineBudget timeline_budget(o.timeline_budget());
  if (o.keep_timeline) {
    exec.set_timeline_budget(&timeline_budget);
    fair_share.set_timeline_budget(&timeline_budget);
  }
  IssueFromHost(o.system.stack, graph, exec);
  const bool report = o.progress != RunOptions::Progress::kNone;
  ProgressLine progress(sim, exec, wall_start, o.progress == RunOptions::Progress::kTerminal);
  if (report || o.cancel != nullptr) {
    sim.SetProgressHook(
        [&] {
          if (o.cancel != nullptr && o.cancel->load()) sim.Stop();
          if (report) progress.Update();
        },
        1 << 16);
  }
  const absl::Status run_status = exec.Run();
  sim.SetProgressHook(nullptr, 0);
  progress.Clear();
  if (o.cancel != nullptr && o.cancel->load()) {
    return absl::CancelledError(
        absl::StrFormat("cancelled after %d of %d ops", exec.finished_count(), graph.size()));
  }
  if (timeline_budget.exhausted()) {
    return TimelineBudgetError(o, mesh, sim, exec, fair_share.counters().size(), timeline_budget);
  }
  MESHSIM_RETURN_IF_ERROR(run_status);

  formats::RunRecord rec;
  rec.chips = o.chips;
  rec.names = graph.names().all();
  rec.timeline = exec.TakeTimeline();
  rec.edges.reserve(graph.num_deps());
  for (uint32_t i = 0; i < graph.size(); ++i) {
    for (core::OpId d : graph.deps(core::OpId(i))) rec.edges.push_back({d, core::OpId(i)});
  }
  rec.resources = fair_share.ResourceReport();
  rec.counters = fair_share.TakeCounters();

  for (const core::TimelineRow& row : rec.timeline) metrics.Add(row);
  RunMetrics m = metrics.Metrics(o.system.chip.PeakFlops(), exec.makespan());
  rec.gemms = metrics.Gemms();
  m.ops = static_cast<double>(graph.size());
  m.events = static_cast<double>(sim.events_executed());
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rec.metrics = m.Pairs();
  rec.metrics.emplace_back("events_cancelled", static_cast<double>(sim.events_cancelled()));
  rec.metrics.emplace_back("fair_share_solves", static_cast<double>(fair_share.solves()));
  rec.metrics.emplace_back("flows", static_cast<double>(fair_share.flows_started()));
  const uint64_t fp = exec.fingerprint();
  rec.metrics.emplace_back("fingerprint_hi", static_cast<double>(fp >> 32));
  rec.metrics.emplace_back("fingerprint_lo", static_cast<double>(fp & 0xffffffffu));
  return rec;
}

// A pipeline step's metrics: Megatron flops of the step, aggregate and per-chip TFLOPS (the
// resharding paper's Fig. 7 plots the aggregate; 1 TFLOPS = 1e12 flop/s), and per stage its
// layers, microbatches in flight and HBM use per chip.
void AddPipelineMetrics(const algorithms::pipeline::PipelinePlan& plan, double makespan_s,
                        formats::RunRecord& rec) {
  const double flops = algorithms::pipeline::StepFlops(plan.problem);
  rec.metrics.emplace_back("step_time_s", makespan_s);
  rec.metrics.emplace_back("step_flops", flops);
  rec.metrics.emplace_back("tflops", makespan_s > 0 ? flops / makespan_s / 1e12 : 0.0);
  rec.metrics.emplace_back("tflops_per_gpu",
                           makespan_s > 0 ? flops / makespan_s / 1e12 / plan.chips : 0.0);
  rec.metrics.emplace_back("pipeline_messages", static_cast<double>(plan.messages.size()));
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const algorithms::pipeline::StagePlan& st = plan.stages[i];
    const std::string s = absl::StrCat("stage", i, "_");
    rec.metrics.emplace_back(s + "layers", st.layers);
    rec.metrics.emplace_back(s + "in_flight", st.in_flight);
    rec.metrics.emplace_back(s + "weight_bytes", static_cast<double>(st.weight_bytes_per_chip));
    rec.metrics.emplace_back(s + "activation_bytes",
                             static_cast<double>(st.activation_bytes_per_chip));
    rec.metrics.emplace_back(s + "peak_bytes", static_cast<double>(st.peak_bytes_per_chip()));
  }
}

absl::StatusOr<formats::RunRecord> SimulatePlan(const RunOptions& options,
                                                const std::vector<int>* layer_slices) {
  const auto wall_start = std::chrono::steady_clock::now();
  MESHSIM_ASSIGN_OR_RETURN(const Plan plan, ResolvePlan(options, layer_slices));
  const algorithms::Mesh& mesh = plan.mesh;
  RunOptions o = options;
  if (plan.one_dimensional && !o.topology_given) o.topology = "ring";  // Paper §4.3: two links.
  core::OpGraph graph;
  MESHSIM_RETURN_IF_ERROR(BuildWorkload(o, plan, graph));
  MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord rec, RunGraph(o, mesh, graph, wall_start));
  const double makespan_s = rec.Metric("makespan_s");
  // Keep the historical metric order: the run-specific metrics, then the engine counters.
  std::vector<std::pair<std::string, double>> tail(rec.metrics.end() - 5, rec.metrics.end());
  rec.metrics.resize(rec.metrics.size() - 5);
  MESHSIM_ASSIGN_OR_RETURN(rec.config, ResolvedConfig(o, plan, graph));
  if (plan.pipeline.has_value()) {
    AddPipelineMetrics(*plan.pipeline, makespan_s, rec);
    // The whole model is simulated: one step of every layer.
    rec.metrics.emplace_back("model_layers",
                             static_cast<double>(plan.pipeline->problem.stack.layers.size()));
    rec.metrics.emplace_back("model_fc_time_s", makespan_s);
    rec.metrics.emplace_back("chip_peak_flops_per_s", o.system.chip.PeakFlops());
    rec.metrics.insert(rec.metrics.end(), tail.begin(), tail.end());
    return rec;
  }
  // One block is simulated; the model's FC time is that block's times its layer count.
  int64_t layers = 1;
  if (o.workload == "llm" || o.workload == "layer") {
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, RunModel(o));
    layers = model.layers;
  }
  if (o.workload == "layer") {
    // ATP §5's metric: Megatron's layer flops (workloads/layer.h) per GPU per second, one layer
    // simulated. Tera = 1e12 (the paper's Table 2 divides by 2^40).
    const double flops = workloads::LayerFlops(o.batch, o.seq, RunModel(o)->hidden);
    const double seconds = makespan_s;
    rec.metrics.emplace_back("layer_flops", flops);
    rec.metrics.emplace_back("tflops_per_gpu",
                             seconds > 0 ? flops / (o.mesh_chips() * seconds) / 1e12 : 0.0);
  }
  rec.metrics.emplace_back("model_layers", static_cast<double>(layers));
  rec.metrics.emplace_back("model_fc_time_s", makespan_s * layers);
  rec.metrics.emplace_back("chip_peak_flops_per_s", o.system.chip.PeakFlops());
  rec.metrics.insert(rec.metrics.end(), tail.begin(), tail.end());
  return rec;
}

}  // namespace

absl::StatusOr<std::string> ResolvedMesh(const RunOptions& options) {
  bool one_dimensional = false;
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::Mesh mesh, ResolveMesh(options, &one_dimensional));
  return mesh.ToString();
}

absl::Status CheckRun(const RunOptions& options) {
  MESHSIM_ASSIGN_OR_RETURN(const Plan plan, ResolvePlan(options, nullptr));
  core::OpGraph graph;
  return BuildWorkload(options, plan, graph);
}

absl::StatusOr<formats::RunRecord> Simulate(const RunOptions& options) {
  return SimulatePlan(options, nullptr);
}

absl::StatusOr<formats::RunRecord> SimulateGraph(const RunOptions& options,
                                                 const algorithms::Mesh& mesh,
                                                 const core::OpGraph& graph) {
  MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord rec,
                           RunGraph(options, mesh, graph, std::chrono::steady_clock::now()));
  rec.config = options.Resolved();
  KeepReadKeys(options, rec.config);
  return rec;
}

absl::StatusOr<formats::RunRecord> SimulateWithLayerSlices(const RunOptions& options,
                                                           const std::vector<int>& layer_slices) {
  return SimulatePlan(options, &layer_slices);
}

uint64_t Fingerprint(const formats::RunRecord& record) {
  return (static_cast<uint64_t>(record.Metric("fingerprint_hi")) << 32) |
         static_cast<uint64_t>(record.Metric("fingerprint_lo"));
}

}  // namespace meshsim::sim
