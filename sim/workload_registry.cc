#include "sim/workload_registry.h"

#include <algorithm>

namespace meshsim::sim {

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
       with(model, {"placement", "algorithm", "dataflow", "slices"})},
      {"gemm",
       "a GeMM: local on --chips 1, else distributed by --algorithm",
       {"gemm", "placement", "algorithm", "dataflow", "slices"}},
      {"collective",
       "one collective per mesh group, all at once",
       {"collective", "group", "bytes", "max-flows", "placement"}},
      {"chain",
       "smoke test: a wavefront of --steps delays of --step-time on a ring of --chips",
       {"steps", "step-time", "placement"}},
      {"layer",
       "one whole transformer layer, forward + backward (FC GeMMs, attention core, element-wise "
       "ops), by a layer plugin: atp, megatron, tp2d",
       with(model, {"chunks", "dropout", "placement", "algorithm", "dataflow", "slices"})},
      {"pipeline",
       "a whole model's training step over pipeline stages on disjoint chips, with DP replicas "
       "and cross-mesh resharding (docs/pipelines.md)",
       with(model, {"stages", "dp", "microbatches", "schedule", "overlap", "delay-dw", "recompute",
                    "reshard", "reshard-scheduler", "seed", "chunks", "dropout", "algorithm",
                    "dataflow", "slices"})},
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

}  // namespace meshsim::sim
