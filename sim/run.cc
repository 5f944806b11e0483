#include "sim/run.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "algorithms/autotune/autotuner.h"
#include "algorithms/dataflow.h"
#include "algorithms/llm.h"
#include "algorithms/microbench.h"
#include "algorithms/registry.h"
#include "algorithms/smoke.h"
#include "core/check.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "core/status_macros.h"
#include "sim/machine.h"
#include "sim/metrics.h"
#include "sim/tune.h"
#include "workloads/transformer.h"

namespace meshsim::sim {

namespace {

// The model of an llm run: a built-in one, or the custom shape of --hidden/--heads/...
absl::StatusOr<workloads::ModelShape> Model(const RunOptions& o) {
  if (o.model == "custom") return workloads::CustomModel(o.hidden, o.heads, o.ffn, o.layers);
  return workloads::FindModel(o.model);
}

// What a run lowers besides its options: the logical mesh and, for MeshSlice on the llm
// workload, the per-layer slice counts.
struct Plan {
  algorithms::Mesh mesh;
  bool one_dimensional = false;
  std::vector<int> layer_slices;  // Indexed by FcLayer::index; empty = o.slices everywhere.
};

// `--mesh auto` and `--slices auto` mean the autotuner's choice for MeshSlice on the llm
// workload (CLI.md); other algorithms and workloads keep the squarest mesh and the plugin's
// default S.
bool UsesAutotuner(const RunOptions& o) {
  return o.workload == "llm" && o.algorithm == "meshslice";
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

absl::Status BuildWorkload(const RunOptions& o, const Plan& run_plan, core::OpGraph& graph) {
  const algorithms::Mesh& mesh = run_plan.mesh;
  if (o.workload == "chain") {
    return algorithms::BuildChain({.chips = o.chips, .steps = o.steps, .step = o.step_time}, graph);
  }
  if (o.workload == "collective") {
    MESHSIM_ASSIGN_OR_RETURN(core::CollectiveKind kind, algorithms::ParseCollective(o.collective));
    return algorithms::BuildCollectiveBench(mesh, kind, o.group, o.bytes, graph);
  }
  if (o.workload == "gemm" && o.chips == 1) {
    return algorithms::BuildLocalGemm(o.gemm_m, o.gemm_n, o.gemm_k, graph);
  }
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                           algorithms::FindAlgorithm(o.algorithm));
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
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, Model(o));
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
  return algorithms::LowerProblems(problems, *algorithm, mesh, o.slices,
                                   o.system.chip.element_bytes, graph);
}

// The logical mesh: 1D algorithms use one ring of every chip of the mesh; 2D ones the given
// mesh, else for MeshSlice on llm the autotuner's mesh, else (or when the tuner has no
// candidate, e.g. chips not 4·C with C ≥ 4) the squarest mesh. Not yet placed.
absl::StatusOr<algorithms::Mesh> ResolveLogicalMesh(const RunOptions& o, bool* one_dimensional) {
  const int chips = o.mesh_chips();
  *one_dimensional = false;
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
  if (layer_slices != nullptr) {
    plan.layer_slices = *layer_slices;
  } else if (o.slices == 0 && UsesAutotuner(o)) {
    absl::StatusOr<algorithms::TuneResult> tuned = AutotuneRun(o, {plan.mesh});
    if (tuned.ok()) plan.layer_slices = tuned->LayerSlices();
  }
  return plan;
}

// The progress line of a long run on a terminal, redrawn in place on stderr at most every
// 0.25 s once the run has taken 2 s: the makespan is unknown until the end, so it shows what
// is known — events, simulated time, ops finished of all.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(const core::Simulator& sim, const core::Executor& exec, Clock::time_point start)
      : sim_(sim), exec_(exec), next_(start + std::chrono::seconds(2)) {}
  void Update() {
    const Clock::time_point now = Clock::now();
    if (now < next_) return;
    next_ = now + std::chrono::milliseconds(250);
    const std::string line = absl::StrFormat(
        "meshsim: %.1f M events, simulated %s, ops %d/%d", sim_.events_executed() / 1e6,
        sim_.Now().ToString(), exec_.finished_count(), exec_.graph().size());
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  void Clear() {
    if (!drawn_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  const core::Simulator& sim_;
  const core::Executor& exec_;
  Clock::time_point next_;
  bool drawn_ = false;
};

absl::StatusOr<RunRecord> SimulatePlan(const RunOptions& options,
                                       const std::vector<int>* layer_slices) {
  const auto wall_start = std::chrono::steady_clock::now();
  MESHSIM_ASSIGN_OR_RETURN(const Plan plan, ResolvePlan(options, layer_slices));
  const algorithms::Mesh& mesh = plan.mesh;
  RunOptions o = options;
  if (plan.one_dimensional && !o.topology_given) o.topology = "ring";  // Paper §4.3: two links.
  core::OpGraph graph;
  MESHSIM_RETURN_IF_ERROR(BuildWorkload(o, plan, graph));

  core::Simulator sim;
  core::FairShare fair_share(sim);
  fair_share.set_record_counters(o.keep_timeline);
  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<Machine> machine, BuildMachine(o, mesh, fair_share));
  core::Executor exec(sim, graph);
  machine->Attach(exec);
  // Rows are streamed into the metrics as they are recorded, and kept only if asked for.
  MetricsAccumulator metrics(o.chips, &graph.names().all());
  exec.set_sink(o.keep_timeline ? nullptr : &metrics);
  ProgressLine progress(sim, exec, wall_start);
  if (o.progress) sim.SetProgressHook([&progress] { progress.Update(); }, 1 << 16);
  const absl::Status run_status = exec.Run();
  sim.SetProgressHook(nullptr, 0);
  progress.Clear();
  MESHSIM_RETURN_IF_ERROR(run_status);

  RunRecord rec;
  rec.chips = o.chips;
  rec.config = o.Resolved();
  for (auto& [key, value] : rec.config) {
    if (key == "mesh") value = mesh.ToString();  // The mesh actually used.
    // Per-layer S actually used, in model order (qkv, attn_out, ffn_up, ffn_down).
    if (key == "slices" && !plan.layer_slices.empty()) {
      value = absl::StrJoin(plan.layer_slices, ",");
    }
  }
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
  // One block is simulated; the model's FC time is that block's times its layer count.
  int64_t layers = 1;
  if (o.workload == "llm") {
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, Model(o));
    layers = model.layers;
  }
  rec.metrics.emplace_back("model_layers", static_cast<double>(layers));
  rec.metrics.emplace_back("model_fc_time_s", exec.makespan().seconds() * layers);
  rec.metrics.emplace_back("chip_peak_flops", o.system.chip.PeakFlops());
  rec.metrics.emplace_back("events_cancelled", static_cast<double>(sim.events_cancelled()));
  rec.metrics.emplace_back("fair_share_solves", static_cast<double>(fair_share.solves()));
  rec.metrics.emplace_back("flows", static_cast<double>(fair_share.flows_started()));
  const uint64_t fp = exec.fingerprint();
  rec.metrics.emplace_back("fingerprint_hi", static_cast<double>(fp >> 32));
  rec.metrics.emplace_back("fingerprint_lo", static_cast<double>(fp & 0xffffffffu));
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

absl::StatusOr<RunRecord> Simulate(const RunOptions& options) {
  return SimulatePlan(options, nullptr);
}

absl::StatusOr<RunRecord> SimulateWithLayerSlices(const RunOptions& options,
                                                  const std::vector<int>& layer_slices) {
  return SimulatePlan(options, &layer_slices);
}

uint64_t Fingerprint(const RunRecord& record) {
  return (static_cast<uint64_t>(record.Metric("fingerprint_hi")) << 32) |
         static_cast<uint64_t>(record.Metric("fingerprint_lo"));
}

}  // namespace meshsim::sim
