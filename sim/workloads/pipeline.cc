// --workload pipeline: a whole model's training step over pipeline stages on disjoint chips,
// with DP replicas and cross-mesh resharding (algorithms/pipeline/pipeline.h,
// docs/pipelines.md): planned on the machine's hosts, each stage checked against hbm.capacity.
#include "algorithms/pipeline/pipeline.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "algorithms/reshard/reshard.h"
#include "core/status_macros.h"
#include "network/topology.h"
#include "sim/machine.h"
#include "sim/tuning.h"
#include "sim/workload.h"
#include "sim/workloads/common.h"
#include "workloads/stack.h"

namespace meshsim::sim {
namespace {

using workload_support::LayerPlugin;

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
  for (workloads::LayerShape& layer : p.stack.layers) {
    workload_support::SetLayerKernels(o, layer);
  }
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

class Pipeline : public Workload {
 public:
  bool TakesLayerPlugins() const override { return true; }

  // Stage i on chips i*n..(i+1)*n-1, n = --dp x the operator mesh's chips.
  absl::Status CheckChips(const RunOptions& o) const override {
    if (!o.placement.empty()) {
      return InvalidOption("placement", FormatPlacement(o.placement),
                           "--workload pipeline places stage i on chips i*n..(i+1)*n-1 itself "
                           "(n = --dp x the mesh's chips); drop --placement");
    }
    if (o.chips % (o.stages * o.dp) == 0) return absl::OkStatus();
    return InvalidOption(
        "stages", absl::StrCat(o.stages),
        absl::StrFormat("--stages x --dp = %d must divide --chips %d", o.stages * o.dp, o.chips));
  }

  // --mesh is one replica's operator mesh: stages x dp x mesh = chips.
  absl::Status CheckMesh(const RunOptions& o, const std::string& value,
                         int64_t cells) const override {
    if (cells * o.stages * o.dp == o.chips) return absl::OkStatus();
    return InvalidOption("mesh", value,
                         absl::StrFormat("the operator mesh of each replica: R*C = %d must equal "
                                         "--chips %d / (--stages %d x --dp %d)",
                                         cells, o.chips, o.stages, o.dp));
  }

  // One microbatch per replica of each of --microbatches; Megatron's operator parallelism in a
  // stage.
  void ResolveDefaults(RunOptions& o) const override {
    o.batch = int64_t{o.microbatches} * o.dp;
    o.algorithm = "megatron";
  }

  bool RunsUShapedModels() const override { return true; }

  absl::Status Validate(const RunOptions& o) const override {
    if (o.batch % o.microbatches != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--microbatches: '%d' is not allowed; it must divide --batch %d",
                          o.microbatches, o.batch));
    }
    MESHSIM_RETURN_IF_ERROR(workload_support::CheckChunksDivideBatch(o));
    if (o.pass != "train") {
      return absl::InvalidArgumentError(
          absl::StrCat("--pass: '", o.pass,
                       "' is not allowed; --workload pipeline runs a training step; use "
                       "train"));
    }
    return absl::OkStatus();
  }

  std::vector<TensorSize> Tensors(const RunOptions& o) const override {
    return workload_support::ModelTensors(o, /*attention=*/true);
  }

  // Transfers overlap only when receives are posted apart from the program (stack.p2p async);
  // the seed only seeds the randomized schedulers.
  std::string NotRead(const std::string& key, const RunOptions& o) const override {
    if (key == "overlap" && o.system.stack.p2p == "paired") {
      return absl::StrCat("does not apply with stack.p2p.mode paired (--stack ",
                          o.system.stack_name,
                          "): a receive is where the receiver's program posts it; it is read "
                          "with stack.p2p.mode async");
    }
    if (key == "seed") return NotReadByScheduler(key, o.reshard_scheduler, "reshard-scheduler");
    if (key == "matrix") {
      return "does not apply to --workload pipeline: a stage replica runs the --mesh given (or "
             "N x 1); it is read by --workload layer with --mesh auto";
    }
    return "";
  }

  // One replica's operator mesh: as given, else N×1 (Megatron's, and ATP's 1D end), or q×q for
  // tp2d when N is a square.
  absl::StatusOr<algorithms::Mesh> LogicalMesh(const RunOptions& o,
                                               bool* one_dimensional) const override {
    *one_dimensional = false;
    if (o.mesh_rows > 0) return algorithms::Mesh{o.mesh_rows, o.mesh_cols};
    const int n = o.chips / (o.stages * o.dp);
    if (o.algorithm == "tp2d") {
      int q = 1;
      while ((q + 1) * (q + 1) <= n) ++q;
      if (q * q == n) return algorithms::Mesh{q, q};
    }
    return algorithms::Mesh{n, 1};
  }

  absl::Status Plan(const RunOptions& o, const std::vector<int>* layer_slices,
                    RunPlan& plan) const override {
    MESHSIM_ASSIGN_OR_RETURN(const network::Topology topology, BuildTopology(o));
    plan.hosts = MakeHostModel(topology, o);
    MESHSIM_ASSIGN_OR_RETURN(plan.pipeline, PlanPipelineRun(o, plan.mesh, plan.hosts));
    return absl::OkStatus();
  }

  absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                     core::OpGraph& graph) const override {
    MESHSIM_ASSIGN_OR_RETURN(const std::unique_ptr<algorithms::LayerAlgorithm> layer,
                             LayerPlugin(o));
    return algorithms::pipeline::LowerPipeline(*plan.pipeline, *layer, plan.hosts, graph);
  }

  // Every stage replica's operator mesh (the DP reduction over replicas, once per step, is not
  // checked).
  RingMeshes Rings(const RunOptions& o, const RunPlan& plan) const override {
    RingMeshes r;
    for (const algorithms::pipeline::StagePlan& st : plan.pipeline->stages) {
      r.meshes.insert(r.meshes.end(), st.replicas.begin(), st.replicas.end());
    }
    return r;
  }

  std::string Fewer() const override { return "chips, layers or microbatches"; }

  absl::Status ResolveConfig(const RunOptions& o, const RunPlan& plan, const core::OpGraph& graph,
                             ResolvedValues& values) const override {
    return workload_support::ModelDimensions(o, values);
  }

  // The whole model is simulated: one step of every layer.
  absl::Status AddMetrics(const RunOptions& o, const RunPlan& plan, double makespan_s,
                          formats::RunRecord& rec) const override {
    AddPipelineMetrics(*plan.pipeline, makespan_s, rec);
    rec.metrics.emplace_back("model_layers",
                             static_cast<double>(plan.pipeline->problem.stack.layers.size()));
    rec.metrics.emplace_back("model_fc_time_s", makespan_s);
    return absl::OkStatus();
  }

  bool TracksGemmBusyTime() const override { return true; }
};

}  // namespace

const Workload& PipelineWorkload() {
  static const Pipeline w;
  return w;
}

}  // namespace meshsim::sim
