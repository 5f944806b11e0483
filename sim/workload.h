// A workload plugin: what one `meshsim run --workload NAME` simulates, from its resolved options
// to its op graph and its own metrics. Each lives in one file of sim/workloads/ and is
// registered by one line of sim/workload_registry.cc, which also declares the options it reads;
// sim/run.cc runs any of them the same way (docs/plugins.md, "Adding a workload"):
//
//   ... ResolveRunOptions reads the options, asking the run's workload for its rules:
//       CheckChips, CheckMesh, ResolveDefaults, PerFcLayerLists, TunesMeshSlice,
//       TakesLayerPlugins, RunsUShapedModels, Validate, Tensors, NotRead ...
//   w.LogicalMesh(options)            the mesh its chips form (run.cc places it)
//   w.Plan(options, ..., plan)        what else it lowers on that mesh
//   w.Lower(options, plan, graph)     the op graph, within the op budget
//   ... simulate on the machine ...
//   w.ResolveConfig(...)              what its `auto` options became, for the record's config
//   w.AddMetrics(...)                 its metrics beside the engine's
//
// Example: sim/workloads/chain.cc, the smallest (a wavefront of delays on a ring of chips).
#ifndef MESHSIM_SIM_WORKLOAD_H_
#define MESHSIM_SIM_WORKLOAD_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "algorithms/mesh.h"
#include "algorithms/pipeline/pipeline.h"
#include "algorithms/reshard/reshard.h"
#include "core/op_graph.h"
#include "formats/run_record.h"
#include "sim/options.h"

namespace meshsim::sim {

// What a run lowers besides its options: the logical mesh (placed on --placement by run.cc),
// and what the workload planned on it.
struct RunPlan {
  algorithms::Mesh mesh;
  bool one_dimensional = false;   // A 1D plugin: one ring of every chip (run.cc: --topology ring).
  std::vector<int> layer_slices;  // Indexed by FcLayer::index; empty = --slices everywhere.
  // --workload pipeline: the stages and messages (mesh = one replica's operator mesh).
  std::optional<algorithms::pipeline::PipelinePlan> pipeline;
  algorithms::reshard::HostModel hosts;
};

// The meshes whose row and column groups a run's collectives ring over, placed on their chips
// (sim/ring_check.h warns when those rings are not rings of the machine).
struct RingMeshes {
  std::vector<algorithms::Mesh> meshes;
  bool rows = true, cols = true;  // Which of their groups ring.
};

// The values of a run's resolved config that only the lowered run knows (run.cc sets the mesh);
// empty = leave the option's value as given.
struct ResolvedValues {
  std::string dataflow, slices, hidden, heads, ffn, layers;
};

// One matrix a run's options size, bounded by kMaxTensorBytes before anything is lowered
// (Workload::Tensors): "the <what> would take N bytes", naming the first of `keys` given.
struct TensorSize {
  const char* what;
  std::vector<const char*> keys;  // The options that size it; the last when none is given.
  double bytes;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // --- The workload's rules for ResolveRunOptions (sim/options.cc), in the order it asks. ---

  // What the workload requires of --chips and --placement once its own options (stages, dp, ...)
  // are read: InvalidArgument naming the option. Default: nothing.
  virtual absl::Status CheckChips(const RunOptions& o) const { return absl::OkStatus(); }

  // A --mesh RxC given as `value`, R·C = `cells`: InvalidArgument for --mesh unless the workload
  // lays a mesh of that size. Default: R·C = o.mesh_chips(), --chips or the --placement's chips.
  virtual absl::Status CheckMesh(const RunOptions& o, const std::string& value,
                                 int64_t cells) const;

  // The defaults of the options the workload sets otherwise than RunOptions does (--batch,
  // --algorithm), before they are read: --chips, --mesh and its own options are resolved.
  // Default: --batch = half the mesh's chips, at least 1.
  virtual void ResolveDefaults(RunOptions& o) const;

  // Whether --dataflow and --slices take one value per FC layer of a block (qkv, attn_out,
  // ffn_up, ffn_down) besides one value. Default: one value only.
  virtual bool PerFcLayerLists() const { return false; }

  // Whether --algorithm meshslice with --mesh auto and --slices auto takes MeshSlice's autotuner's
  // mesh and per-FC-layer S (MeshOrDefault, PlanLayerSlices). Default: no, the squarest mesh and
  // the plugin's default S.
  virtual bool TunesMeshSlice() const { return false; }

  // Whether --algorithm takes a layer plugin (atp, megatron, tp2d) or a 2D GeMM plugin for the
  // FC GeMMs of a whole layer; otherwise a GeMM plugin only (CheckAlgorithmFitsWorkload).
  virtual bool TakesLayerPlugins() const { return false; }

  // Whether it runs a U-shaped model (ModelShape::unet_levels > 0: the U-Transformer, whose
  // layers differ and skip across the stack); --model of one is refused otherwise.
  virtual bool RunsUShapedModels() const { return false; }

  // What the workload requires of the resolved options, beyond each option's own range:
  // InvalidArgument, one line naming the option ("--gemm: required by --workload gemm ...").
  // Called by ResolveRunOptions once every option is read.
  virtual absl::Status Validate(const RunOptions& o) const { return absl::OkStatus(); }

  // The matrices the validated options size, each bounded by kMaxTensorBytes before any int64
  // byte or flop count of the lowering can overflow. Default: none.
  virtual std::vector<TensorSize> Tensors(const RunOptions& o) const { return {}; }

  // Why the workload does not read option `key` although no declaration refuses it (the
  // registry's entry, a plugin's parameters): one NotReadBy clause, "does not apply to ...; it
  // is read ...", or "" when it reads it. Default: "".
  virtual std::string NotRead(const std::string& key, const RunOptions& o) const { return ""; }

  // --- The run (sim/run.cc). ---

  // The logical mesh of the run, not yet placed (run.cc places it on --placement);
  // `*one_dimensional` = a 1D plugin's ring of every chip (run.cc then defaults --topology to a
  // ring). Default: MeshOrDefault(o, false).
  virtual absl::StatusOr<algorithms::Mesh> LogicalMesh(const RunOptions& o,
                                                       bool* one_dimensional) const;

  // The rest of the plan on the placed `plan.mesh`. `layer_slices`, when not null, fixes the FC
  // layers' S (`meshsim tune --validate`). Default: PlanLayerSlices.
  virtual absl::Status Plan(const RunOptions& o, const std::vector<int>* layer_slices,
                            RunPlan& plan) const;

  // Appends the run's ops to `graph`, whose op budget is set (a plugin stops as soon as the
  // graph is full; run.cc turns that into the budget error).
  virtual absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                             core::OpGraph& graph) const = 0;

  // The meshes the run's collectives ring over (RingMeshes). Default: the rows and columns of
  // the run's mesh.
  virtual RingMeshes Rings(const RunOptions& o, const RunPlan& plan) const { return {{plan.mesh}}; }

  // What sized the run, for the budget errors: "--algorithm tp1d on mesh 1x64".
  virtual std::string Describe(const RunOptions& o, const algorithms::Mesh& mesh) const {
    return "--workload " + o.workload;
  }
  // What to lower when a run is over its op budget: "use fewer <this>, or raise --max-ops".
  virtual std::string Fewer() const { return "chips or another algorithm or mesh"; }

  // The resolved config's values the lowered run decided (banner); `values` arrives with the
  // dataflow as given (empty for auto) and nothing else.
  virtual absl::Status ResolveConfig(const RunOptions& o, const RunPlan& plan,
                                     const core::OpGraph& graph, ResolvedValues& values) const {
    return absl::OkStatus();
  }

  // The workload's metrics, after the engine's: at least `model_layers` and `model_fc_time_s`
  // (the model's FC time: the simulated part scaled to the whole model). Default: one layer.
  virtual absl::Status AddMetrics(const RunOptions& o, const RunPlan& plan, double makespan_s,
                                  formats::RunRecord& rec) const {
    rec.metrics.emplace_back("model_layers", 1.0);
    rec.metrics.emplace_back("model_fc_time_s", makespan_s);
    return absl::OkStatus();
  }

  // The metrics AddMetrics adds that `meshsim run` prints (a "name  value" line in the table,
  // a key in the JSON) besides those every report shows.
  virtual std::vector<std::string> ReportedMetrics() const { return {}; }

  // Whether the run's metrics need each GeMM's busy intervals (report.cc's pipeline GeMM table).
  virtual bool TracksGemmBusyTime() const { return false; }
};

// The workload a run's options name (--workload); they were validated against the registry, so
// an unknown name is a bug (fatal).
const Workload& WorkloadOf(const RunOptions& o);

// --- Shared by the workload plugins (sim/workloads/common.cc). ---

// The usual logical mesh: a ring of every chip when `one_dimensional` (refusing a --mesh with more
// rows), else --mesh as given, else for MeshSlice on llm/layer the autotuner's mesh, else (or when
// the tuner has no candidate, e.g. chips not 4·C with C ≥ 4) the squarest.
absl::StatusOr<algorithms::Mesh> MeshOrDefault(const RunOptions& o, bool one_dimensional);

// The usual rest of a plan: the FC layers' S — `layer_slices` when given, else --slices' list,
// else for `--slices auto` with MeshSlice on llm/layer the autotuner's S on plan.mesh (none when
// the tuner rejects the mesh: the plugin's default and its error then apply).
absl::Status PlanLayerSlices(const RunOptions& o, const std::vector<int>* layer_slices,
                             RunPlan& plan);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_WORKLOAD_H_
