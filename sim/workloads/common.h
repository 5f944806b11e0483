// Helpers the workload plugins share (sim/workloads/*.cc): the run's autotuner, its layer
// plugin, the GeMM plugins' lowering within the op budget, and the resolved config's values.
// Internal to sim/.
#ifndef MESHSIM_SIM_WORKLOADS_COMMON_H_
#define MESHSIM_SIM_WORKLOADS_COMMON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "algorithms/autotune/autotuner.h"
#include "algorithms/layer_algorithm.h"
#include "algorithms/mesh.h"
#include "algorithms/registry.h"
#include "core/op_graph.h"
#include "sim/options.h"
#include "sim/workload.h"

namespace meshsim::sim::workload_support {

// `--mesh auto` and `--slices auto` mean the autotuner's choice for MeshSlice on the workloads
// whose plugin says so (Workload::TunesMeshSlice: llm, layer; CLI.md); other algorithms and
// workloads keep the squarest mesh and the plugin's default S.
bool UsesAutotuner(const RunOptions& o);

// The autotuner on `meshes` (empty = its candidates) with the run's cost model; an error when
// it has no valid candidate (callers then fall back to the non-tuned behaviour, whose lowering
// reports the plugin's precondition).
absl::StatusOr<algorithms::TuneResult> AutotuneRun(const RunOptions& o,
                                                   std::vector<algorithms::Mesh> meshes);

// A workload that takes layer plugins (Workload::TakesLayerPlugins: layer, pipeline) takes a
// layer plugin or a 2D GeMM plugin, the other distributed workloads a GeMM plugin:
// InvalidArgument naming what is allowed.
absl::Status CheckAlgorithmFitsWorkload(const RunOptions& o, const algorithms::AlgorithmInfo& info);

// The layer plugin of a layer or pipeline run: a layer plugin, or a 2D GeMM plugin for the FC
// GeMMs with the rest of the layer local (gemm_layer.h), each FC layer with its S of
// `layer_slices` (empty: --slices).
absl::StatusOr<std::unique_ptr<algorithms::LayerAlgorithm>> LayerPlugin(
    const RunOptions& o, const std::vector<int>& layer_slices = {});

// The run's plugin made by `factory` (AlgorithmInfo::make or make_layer of `info`, the run's
// algorithm) with the run's resolved parameters (RunOptions::params); with the declared defaults
// when they were not resolved for it (options not from ResolveRunOptions).
template <typename T>
std::unique_ptr<T> MakePlugin(const algorithms::PluginFactory<T>& factory, const RunOptions& o,
                              const algorithms::AlgorithmInfo& info) {
  for (const core::ParamSpec& spec : info.params) {
    if (!algorithms::IsRunLevelParam(spec.key) && o.params.Find(spec.key) == nullptr) {
      return factory();
    }
  }
  return factory(o.params);
}

// The kernels the run's program launches around a layer's GeMMs (workloads/layer.h): Megatron-LM's
// dropout kernels (--dropout > 0) and, where the stack's softmax is unfused
// (stack.kernel.fused_softmax = 0), the attention's scaling and mask (--workload layer, pipeline).
void SetLayerKernels(const RunOptions& o, workloads::LayerShape& shape);

// A layer plugin's `chunks` parameter (LayerProblem::chunks, ATP §4.1) must divide --batch:
// InvalidArgument naming both otherwise (--workload layer, pipeline).
absl::Status CheckChunksDivideBatch(const RunOptions& o);

// The matrices a transformer model's run sizes (Workload::Tensors): the activations of a block,
// and with `attention` the attention scores of a whole layer.
std::vector<TensorSize> ModelTensors(const RunOptions& o, bool attention);

// "63.2 M" for counts of a million and more, else the integer.
std::string Count(int64_t n);

// "(--max-ops 1000)" when given, else where the default came from: "(--max-ops; default: half
// of the 23.5 GiB of physical memory at ~200 B per op)"; `share` is what follows "default: ".
std::string BudgetSource(const RunOptions& o, const char* key, int64_t given,
                         const std::string& share);

// Lowers `problems` with the run's GeMM plugin on `mesh`: refused before lowering when the
// plugin's closed form (Algorithm::CountOps) says the graph would pass the op budget, for a
// plugin that reads --slices with the count at S = 1 beside it (ResourceExhausted).
absl::Status LowerGemmProblems(const RunOptions& o, const algorithms::Mesh& mesh,
                               const std::vector<algorithms::GemmProblem>& problems,
                               core::OpGraph& graph);

// "--algorithm X on mesh RxC", after "--workload W " unless W is the default (kDefaultWorkload,
// llm): a GeMM or layer plugin's run, for the budget errors.
std::string DescribePluginRun(const RunOptions& o, const algorithms::Mesh& mesh);

// The S actually lowered: the largest slice tag + 1 per FC layer (`per_fc`: four values in model
// order) or of the one GeMM; plan.layer_slices when the plan fixed them; "" when none.
std::string SlicesLowered(const core::OpGraph& graph, const RunPlan& plan, bool per_fc);

// The model's dimensions (hidden, heads, ffn, layers) of a model workload's run.
absl::Status ModelDimensions(const RunOptions& o, ResolvedValues& values);

// Each FC layer's dataflow in model order ("os,ls,os,ls"), `auto` replaced by the phase-1 rule.
absl::StatusOr<std::string> FcDataflows(const RunOptions& o);

}  // namespace meshsim::sim::workload_support

#endif  // MESHSIM_SIM_WORKLOADS_COMMON_H_
