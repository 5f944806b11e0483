#include "sim/workload_registry.h"

#include <algorithm>

#include "core/check.h"
#include "sim/options.h"
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
  // The typed options (WorkloadInfo::params); dropout is the layer's and the pipeline's.
  using core::ParamType;
  const core::ParamSpec dropout = {
      .key = "dropout",
      .type = ParamType::kDouble,
      .description =
          "dropout probability (< 1) of each layer, as Megatron-LM's GPT applies it; "
          "> 0 runs the dropout kernels, whose cost does not depend on it",
      .default_value = "0",
      .min = 0,
      .max = 1};
  const auto flag = [](std::string key, std::string default_value, std::string description) {
    return core::ParamSpec{.key = std::move(key),
                           .type = ParamType::kBool,
                           .description = std::move(description),
                           .default_value = std::move(default_value)};
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
       &CollectiveWorkload,
       {{.key = "group",
         .type = ParamType::kEnum,
         .description = "the chips of each collective group",
         .default_value = "row",
         .choices = {"row", "col", "all"}},
        {.key = "max-flows",
         .type = ParamType::kInt,
         .description = "refuse the run when one step would start more network flows at once "
                        "(auto: from the memory limit)",
         .default_value = "auto",
         .min = 1,
         .max = double(int64_t{1} << 40)}}},
      {"chain",
       "smoke test: a wavefront of --steps delays of --step-time on a ring of --chips",
       {"steps", "step-time", "placement"},
       &ChainWorkload,
       {{.key = "steps",
         .type = ParamType::kInt,
         .description = "steps per chip",
         .default_value = "8",
         .min = 1,
         .max = 1 << 24},
        {.key = "step-time",
         .type = ParamType::kDouble,
         .unit = core::Unit::kSeconds,
         .description = "duration of one step",
         .default_value = "10us",
         .min = 1e-12,
         .max = 1e3}}},
      {"layer",
       "one whole transformer layer, forward + backward (FC GeMMs, attention core, element-wise "
       "ops), by a layer plugin: atp, megatron, tp2d",
       with(model, {"chunks", "dropout", "placement", "algorithm", "dataflow", "slices"}),
       &LayerWorkload,
       {dropout}},
      {"pipeline",
       "a whole model's training step over pipeline stages on disjoint chips, with DP replicas "
       "and cross-mesh resharding (docs/pipelines.md)",
       with(model, {"stages", "dp", "microbatches", "schedule", "overlap", "delay-dw", "recompute",
                    "reshard", "reshard-scheduler", "seed", "chunks", "dropout", "algorithm",
                    "dataflow", "slices"}),
       &PipelineWorkload,
       {{.key = "stages",
         .type = ParamType::kInt,
         .description = "pipeline stages, each on its own chips",
         .default_value = "2",
         .min = 1,
         .max = 1024},
        {.key = "dp",
         .type = ParamType::kInt,
         .description = "data-parallel replicas per stage",
         .default_value = "1",
         .min = 1,
         .max = kMaxChips},
        {.key = "microbatches",
         .type = ParamType::kInt,
         .description = "microbatches per step; must divide --batch",
         .default_value = "8",
         .min = 1,
         .max = 4096},
        {.key = "schedule",
         .type = ParamType::kEnum,
         .description = "the pipeline schedule",
         .default_value = "eager-1f1b",
         .choices = {"gpipe", "1f1b", "eager-1f1b"}},
        flag("overlap", "1",
             "cross-stage transfers start as soon as their data is ready (0: when the receiving "
             "stage reaches them)"),
        flag("delay-dw", "0", "backward-weight delaying"),
        flag("recompute", "0", "activation recomputation"),
        {.key = "reshard",
         .type = ParamType::kEnum,
         .description = "the cross-mesh resharding strategy",
         .default_value = "broadcast",
         .choices = {"send-recv", "local-allgather", "global-allgather", "broadcast", "signal"}},
        {.key = "reshard-scheduler",
         .type = ParamType::kEnum,
         .description = "the resharding scheduler",
         .default_value = "ensemble",
         .choices = {"naive", "load-balance", "dfs", "greedy", "ensemble"}},
        {.key = "seed",
         .type = ParamType::kInt,
         .description = "seed of the randomized greedy resharding scheduler (greedy, ensemble)",
         .default_value = "1",
         .min = 0,
         .max = double(int64_t{1} << 62)},
        dropout}},
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

const core::ParamSpec* WorkloadParam(const std::string& key) {
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    for (const core::ParamSpec& p : w.params) {
      if (p.key == key) return &p;
    }
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

std::vector<std::string> WorkloadsWhere(bool (Workload::*rule)() const) {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    if ((w.plugin().*rule)()) names.push_back(w.name);
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
