#include "sim/workload_registry.h"

#include <algorithm>

#include "core/check.h"
#include "sim/workload.h"

namespace meshsim::sim {

// The plugins (sim/workloads/NAME.cc).
const Workload& LlmWorkload();
const Workload& GemmWorkload();
const Workload& CollectiveWorkload();
const Workload& ChainWorkload();
const Workload& LayerWorkload();
const Workload& PipelineWorkload();
const Workload& StreamWorkload();

const std::vector<WorkloadInfo>& WorkloadRegistry() {
  // The options of a transformer model and its batch, read by every workload built from one.
  const std::vector<std::string> model = {"model",  "hidden", "heads", "ffn",
                                          "layers", "batch",  "seq",   "pass"};
  const auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  static const auto* registry = new std::vector<WorkloadInfo>{
      {"llm", "one transformer block's FC layers, forward and backward, by a 2D GeMM plugin",
       with(model, {"placement", "algorithm", "dataflow", "slices"}), &LlmWorkload},
      {"gemm",
       "a GeMM: local on --chips 1, else distributed by --algorithm",
       {"gemm", "placement", "algorithm", "dataflow", "slices"},
       &GemmWorkload},
      {"collective",
       "one collective per mesh group, all at once",
       {"collective", "group", "bytes", "max-flows", "placement"},
       &CollectiveWorkload},
      {"chain",
       "smoke test: a wavefront of --steps delays of --step-time on a ring of --chips",
       {"steps", "step-time", "placement"},
       &ChainWorkload},
      {"layer",
       "one whole transformer layer, forward + backward (FC GeMMs, attention core, element-wise "
       "ops), by a layer plugin: atp, megatron, tp2d",
       with(model, {"chunks", "dropout", "placement", "algorithm", "dataflow", "slices"}),
       &LayerWorkload},
      {"pipeline",
       "a whole model's training step over pipeline stages on disjoint chips, with DP replicas "
       "and cross-mesh resharding (docs/pipelines.md)",
       with(model, {"stages", "dp", "microbatches", "schedule", "overlap", "delay-dw", "recompute",
                    "reshard", "reshard-scheduler", "seed", "chunks", "dropout", "algorithm",
                    "dataflow", "slices"}),
       &PipelineWorkload},
      {"stream",
       "every chip copies --bytes HBM to HBM at once: a memory-bandwidth microbenchmark",
       {"bytes", "placement"},
       &StreamWorkload},
  };
  return *registry;
}

const WorkloadInfo* FindWorkload(const std::string& name) {
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

std::vector<std::string> WorkloadsReading(const std::string& key) {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    if (std::find(w.reads.begin(), w.reads.end(), key) != w.reads.end()) names.push_back(w.name);
  }
  return names;
}

std::vector<std::string> ReportedMetricsOf(const std::string& name) {
  const WorkloadInfo* w = FindWorkload(name);
  return w == nullptr ? std::vector<std::string>{} : w->plugin().ReportedMetrics();
}

const Workload& WorkloadOf(const RunOptions& o) {
  const WorkloadInfo* w = FindWorkload(o.workload);
  // ResolveRunOptions accepts only registered names.
  MESHSIM_CHECK(w != nullptr) << "unknown workload '" << o.workload << "'";
  return w->plugin();
}

}  // namespace meshsim::sim
