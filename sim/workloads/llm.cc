// --workload llm: one transformer block's FC layers, forward and backward, each FC GeMM lowered by
// the --algorithm 2D (or 1D) GeMM plugin (algorithms/llm.h); the model's FC time is the block's
// times the model's layer count. MeshSlice's --mesh auto and --slices auto are its autotuner's.
#include "algorithms/llm.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "algorithms/registry.h"
#include "core/status_macros.h"
#include "sim/tuning.h"
#include "sim/workload.h"
#include "sim/workloads/common.h"

namespace meshsim::sim {
namespace {

class Llm : public Workload {
 public:
  bool TunesMeshSlice() const override { return true; }

  bool PerFcLayerLists() const override { return true; }

  std::vector<TensorSize> Tensors(const RunOptions& o) const override {
    return workload_support::ModelTensors(o, /*attention=*/false);
  }

  absl::StatusOr<algorithms::Mesh> LogicalMesh(const RunOptions& o,
                                               bool* one_dimensional) const override {
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    *one_dimensional = info->one_dimensional;
    return MeshOrDefault(o, *one_dimensional);
  }

  absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                     core::OpGraph& graph) const override {
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    MESHSIM_RETURN_IF_ERROR(workload_support::CheckAlgorithmFitsWorkload(o, *info));
    MESHSIM_ASSIGN_OR_RETURN(workloads::ModelShape model, RunModel(o));
    algorithms::BlockPlan block{model,
                                o.batch,
                                o.seq,
                                o.pass,
                                o.dataflow,
                                o.slices,
                                plan.mesh,
                                o.system.chip.element_bytes,
                                plan.layer_slices};
    MESHSIM_ASSIGN_OR_RETURN(const std::vector<algorithms::GemmProblem> problems,
                             algorithms::BlockProblems(block));
    return workload_support::LowerGemmProblems(o, plan.mesh, problems, graph);
  }

  std::string Describe(const RunOptions& o, const algorithms::Mesh& mesh) const override {
    return workload_support::DescribePluginRun(o, mesh);
  }

  absl::Status ResolveConfig(const RunOptions& o, const RunPlan& plan, const core::OpGraph& graph,
                             ResolvedValues& values) const override {
    values.slices = workload_support::SlicesLowered(graph, plan, true);
    MESHSIM_RETURN_IF_ERROR(workload_support::ModelDimensions(o, values));
    MESHSIM_ASSIGN_OR_RETURN(values.dataflow, workload_support::FcDataflows(o));
    return absl::OkStatus();
  }

  // One block is simulated; the model's FC time is that block's times its layer count.
  absl::Status AddMetrics(const RunOptions& o, const RunPlan& plan, double makespan_s,
                          formats::RunRecord& rec) const override {
    MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));
    rec.metrics.emplace_back("model_layers", static_cast<double>(model.layers));
    rec.metrics.emplace_back("model_fc_time_s", makespan_s * model.layers);
    return absl::OkStatus();
  }
};

}  // namespace

const Workload& LlmWorkload() {
  static const Llm w;
  return w;
}

}  // namespace meshsim::sim
