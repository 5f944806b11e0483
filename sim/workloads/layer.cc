// --workload layer: one whole transformer layer, forward and backward (workloads/layer.h), by a
// layer plugin (atp, megatron, tp2d) or a 2D GeMM plugin for its FC GeMMs with the rest local
// (algorithms/gemm_layer.h); ATP §5's metric, Megatron's layer flops per GPU per second.
#include "workloads/layer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "algorithms/autotune/atp_tuner.h"
#include "algorithms/layer_algorithm.h"
#include "algorithms/registry.h"
#include "core/status_macros.h"
#include "network/topology.h"
#include "sim/machine.h"
#include "sim/run.h"
#include "sim/tuning.h"
#include "sim/workload.h"
#include "sim/workloads/common.h"

namespace meshsim::sim {

namespace {

// A whole layer by a 2D GeMM plugin (gemm_layer.h): its FC GeMMs report as llm's do.
bool GemmLayer(const RunOptions& o) {
  const absl::StatusOr<const algorithms::AlgorithmInfo*> info =
      algorithms::FindAlgorithm(o.algorithm);
  return info.ok() && !(*info)->is_layer();
}

class Layer : public Workload {
 public:
  bool TakesLayerPlugins() const override { return true; }

  bool TunesMeshSlice() const override { return true; }

  // ATP §5's batch.
  void ResolveDefaults(RunOptions& o) const override { o.batch = 4; }

  bool PerFcLayerLists() const override { return true; }

  absl::Status Validate(const RunOptions& o) const override {
    MESHSIM_RETURN_IF_ERROR(workload_support::CheckChunksDivideBatch(o));
    if (o.pass == "train") return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "--pass: '", o.pass,
        "' is not allowed; --workload layer runs a whole layer forward and backward; use train"));
  }

  std::vector<TensorSize> Tensors(const RunOptions& o) const override {
    return workload_support::ModelTensors(o, /*attention=*/true);
  }

  // ATP's search reading chooses the mesh of --mesh auto only.
  std::string NotRead(const std::string& key, const RunOptions& o) const override {
    if (key == "matrix" && o.mesh_rows > 0) {
      return "does not apply with --mesh D1xD2: it is how ATP's search chooses the mesh of "
             "--mesh auto";
    }
    return "";
  }

  absl::StatusOr<algorithms::Mesh> LogicalMesh(const RunOptions& o,
                                               bool* one_dimensional) const override {
    *one_dimensional = false;
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    MESHSIM_RETURN_IF_ERROR(workload_support::CheckAlgorithmFitsWorkload(o, *info));
    if (info->is_layer()) return ResolveLayerMesh(o);
    return MeshOrDefault(o, false);  // A 2D GeMM plugin: as for llm (MeshSlice's autotuner).
  }

  absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                     core::OpGraph& graph) const override {
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    MESHSIM_RETURN_IF_ERROR(workload_support::CheckAlgorithmFitsWorkload(o, *info));
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, RunModel(o));
    MESHSIM_ASSIGN_OR_RETURN(const std::unique_ptr<algorithms::LayerAlgorithm> layer,
                             workload_support::LayerPlugin(o, plan.layer_slices));
    workloads::LayerShape shape =
        workloads::ShapeOf(model, o.batch, o.seq, o.system.chip.element_bytes);
    workload_support::SetLayerKernels(o, shape);
    const algorithms::LayerProblem problem{shape};  // Its chunks: the plugin's parameter.
    return algorithms::LowerLayer(problem, *layer, plan.mesh, graph);
  }

  std::string Describe(const RunOptions& o, const algorithms::Mesh& mesh) const override {
    return workload_support::DescribePluginRun(o, mesh);
  }

  absl::Status ResolveConfig(const RunOptions& o, const RunPlan& plan, const core::OpGraph& graph,
                             ResolvedValues& values) const override {
    if (GemmLayer(o)) values.slices = workload_support::SlicesLowered(graph, plan, true);
    MESHSIM_RETURN_IF_ERROR(workload_support::ModelDimensions(o, values));
    if (GemmLayer(o)) {
      MESHSIM_ASSIGN_OR_RETURN(values.dataflow, workload_support::FcDataflows(o));
    }
    return absl::OkStatus();
  }

  // ATP §5's metric: Megatron's layer flops (workloads/layer.h) per GPU per second, one layer
  // simulated. Tera = 1e12 (the paper's Table 2 divides by 2^40).
  absl::Status AddMetrics(const RunOptions& o, const RunPlan& plan, double makespan_s,
                          formats::RunRecord& rec) const override {
    MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));
    const double flops = workloads::LayerFlops(o.batch, o.seq, model.hidden);
    rec.metrics.emplace_back("layer_flops", flops);
    rec.metrics.emplace_back("tflops_per_gpu",
                             makespan_s > 0 ? flops / (o.mesh_chips() * makespan_s) / 1e12 : 0.0);
    rec.metrics.emplace_back("model_layers", static_cast<double>(model.layers));
    rec.metrics.emplace_back("model_fc_time_s", makespan_s * model.layers);
    return absl::OkStatus();
  }
};

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
    // ATP's own choice (§3.5): Eq. 2–4 on the communication matrix of the machine the run
    // builds, read as the plugin's `matrix` says (the same search as `meshsim tune --algorithm
    // atp --atp-matrix ...`); `measured` simulates every mesh's all-reduces first (§5.3).
    MESHSIM_ASSIGN_OR_RETURN(algorithms::AtpProblem p, MakeAtpProblem(o));
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AtpMatrix reading,
                             algorithms::ParseAtpMatrix(o.params.Text("matrix")));
    if (reading == algorithms::AtpMatrix::kMeasured) {
      MESHSIM_RETURN_IF_ERROR(MeasureAtpBandwidths(o, p));
    }
    MESHSIM_ASSIGN_OR_RETURN(const network::Topology topology, BuildTopology(o));
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::CommMatrix matrix,
                             algorithms::BuildCommMatrix(topology, chips, reading));
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AtpResult result, algorithms::AtpSearch(matrix, p));
    return result.mesh;
  }
  // megatron: DeviceMesh(N, 1), Megatron-LM's mesh.
  return algorithms::Mesh{chips, 1};
}

const Workload& LayerWorkload() {
  static const Layer w;
  return w;
}

}  // namespace meshsim::sim
