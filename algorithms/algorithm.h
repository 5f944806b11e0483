// The algorithm plugin interface: lower one distributed GeMM problem into ops of an OpGraph.
//
// A plugin builds a graph; it never touches the clock. The simulator discovers overlap, stalls
// and contention by running the graph on the machine model. Each plugin's file defines its
// registry entry (AlgorithmInfo: name, description, typed parameters, factory); builtin.cc lists
// those entries, one line each, and `meshsim list algorithms` prints them.
//
// Matrices and sharding (MeshSlice §2.3.1, Figure 1, Table 1). On an R×C mesh, chip (i, j) is
// ChipId(i·C + j) and holds shard (i, j) of every matrix: rows of a matrix are split over mesh
// rows, columns over mesh columns. Per dataflow, with C[M×N]:
//   kOS  C = A·B,    A: M×K, B: K×N.  C stays; A moves along rows (AG_col), B along columns.
//   kLS  C = A·Bᵀ,   A: M×K, B stored N×K.  A stays; B moves along columns (AG_row), partial
//                    C is reduce-scattered along rows (RdS_col).
//   kRS  C = Aᵀ·B,   A stored K×M, B: K×N.  B stays; A moves along rows (AG_col), partial C is
//                    reduce-scattered along columns (RdS_row).
// "Along rows" = within a mesh row, over the row's C chips (group Mesh::Row(i)); "along columns"
// = within a mesh column (group Mesh::Col(j)).
//
// Chips. The mesh is placed on physical chips (mesh.h): plugins loop over mesh positions and
// name chips only through ctx.mesh (Chip(local), At(r, c), Row, Col, All), so the same lowering
// runs on chips 0..R·C−1 or on any subset of a larger machine.
//
// Sequencing. `frontier[c]` (indexed by physical chip id, over the whole machine) is the op after
// which chip c may start this problem (invalid = no constraint). A plugin makes every op that
// touches chip c depend, directly or transitively, on frontier[c], and on return sets
// frontier[c] to one op that finishes after all of chip c's work for this problem (add a
// zero-length Op::Delay as a join when there are several).
//
// Example (a plugin that computes its local shard with no communication):
//   absl::Status Lower(const GemmProblem& p, LoweringContext& ctx) const override {
//     for (int c = 0; c < ctx.mesh.chips(); ++c) {
//       const core::ChipId chip = ctx.mesh.Chip(c);
//       core::Op g = core::Op::Gemm(chip, p.m / ctx.mesh.rows, p.n / ctx.mesh.cols, p.k);
//       ctx.Tag(g, p, "gemm");
//       ctx.SetFrontier(chip, ctx.graph.Add(g, ctx.After(chip)));
//     }
//     return absl::OkStatus();
//   }
#ifndef MESHSIM_ALGORITHMS_ALGORITHM_H_
#define MESHSIM_ALGORITHMS_ALGORITHM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "algorithms/mesh.h"
#include "core/op.h"
#include "core/op_graph.h"
#include "core/params.h"

namespace meshsim::algorithms {

enum class Dataflow { kOS, kLS, kRS };
const char* ToString(Dataflow d);  // "os", "ls", "rs"

// The FC layer a GeMM belongs to: Y[T×O] = X[T×I]·W[I×O] (tokens T = batch·seq).
struct FcLayer {
  std::string name;  // "qkv", "attn_out", "ffn_up", "ffn_down"
  int index = -1;    // Position in the block (0..3).
  int64_t tokens = 0, in = 0, out = 0;
  // Megatron 1D TP: column-parallel layers (qkv, ffn_up) split W by output features,
  // row-parallel layers (attn_out, ffn_down) by input features.
  bool column_parallel = true;
};

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  Dataflow dataflow = Dataflow::kOS;
  core::Pass pass = core::Pass::kNone;
  FcLayer layer;      // Empty name for a stand-alone GeMM (--workload gemm).
  std::string label;  // e.g. "qkv.fwd"; prefix of op names.
  // This problem's slice count S (the autotuner's per-layer choice); 0 = the run's (the
  // `slices` argument of LowerProblems, itself 0 = plugin default). LowerProblems sets
  // LoweringContext::slices to it while checking and lowering this problem.
  int slices = 0;
  // Operands already available when the problem lowered just before this one started (a weight;
  // in backward-weight, both operands, which its backward-data predecessor also consumes). A
  // plugin may move them while that predecessor runs (LoweringContext::prior_frontier): the
  // prefetch a compiler's latency-hiding scheduler issues. Set by FcProblem for BlockProblems'
  // order; false for stand-alone GeMMs (--workload gemm).
  bool a_early = false, b_early = false;
};

struct LoweringContext {
  core::OpGraph& graph;
  Mesh mesh;  // 1D plugins get Mesh{1, chips}: one ring of every chip.
  int element_bytes = 2;
  int slices = 0;  // S: MeshSlice slices / unrolled iterations; 0 = plugin default.
  std::vector<core::OpId> frontier;  // Per physical chip; see the banner.
  // Per chip, where the previous problem's compute could begin (empty for the first problem,
  // or when the caller lowers problems one by one): operands marked GemmProblem::a_early/b_early
  // may be moved after it instead of after `frontier`. LowerProblems fills it from
  // `compute_ready` of the previous problem, or, for chips it left invalid, the frontier as it
  // was when the previous problem started.
  std::vector<core::OpId> prior_frontier;
  // Set by a plugin (optional, per chip): the op after which this problem's local compute may
  // start — e.g. the exposed AllGather its GeMM waits for — so that the next problem's
  // prefetch overlaps that compute rather than this problem's own exposed collectives.
  // LowerProblems clears it before each problem.
  std::vector<core::OpId> compute_ready;

  // frontier[chip] as a dependency list (empty when invalid).
  std::vector<core::OpId> After(core::ChipId chip) const;
  // The frontier of every chip of `members` (a collective's rendezvous).
  std::vector<core::OpId> After(const std::vector<core::ChipId>& members) const;
  // The same over prior_frontier.
  std::vector<core::OpId> AfterPrior(const std::vector<core::ChipId>& members) const;
  // Call before lowering each problem (or other op) of a sequence: sets prior_frontier to where
  // the previous one's compute could begin — its compute_ready, else the frontier when it
  // started, which `start` carries between calls — and clears compute_ready.
  void NextProblem(std::vector<core::OpId>& start);
  // Sets name ("<label>.<what>"), layer, pass and slice tags on `op`.
  void Tag(core::Op& op, const GemmProblem& p, const std::string& what, int slice = -1);
  // Sets frontier[chip] (growing the table when the chip is beyond it).
  void SetFrontier(core::ChipId chip, core::OpId op);
  // A zero-length op on `chip` after every op of `deps`: the single frontier op of a chip whose
  // work ends in several ops.
  core::OpId Join(core::ChipId chip, const std::vector<core::OpId>& deps, const GemmProblem& p);
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  // Preconditions on the problem, mesh and slice count; InvalidArgument naming what is wrong
  // and what is allowed (e.g. "cannon: mesh 4x8 is not square").
  virtual absl::Status Check(const GemmProblem& p, const Mesh& mesh, int slices) const = 0;
  // Appends the problem's ops. Called only after Check succeeded. A plugin whose op count grows
  // faster than the chips checks ctx.graph.full() in its loops and returns
  // ctx.graph.CheckSize() (core/op_graph.h: the op budget).
  virtual absl::Status Lower(const GemmProblem& p, LoweringContext& ctx) const = 0;
  // The number of ops Lower appends for `p` on `mesh` with `slices` (0 = the plugin's default),
  // in closed form without building them, or -1 when the plugin gives none. sim/ refuses a run
  // whose graph would pass its op budget by it before lowering anything. Precondition: Check
  // succeeded. O(1).
  virtual int64_t CountOps(const GemmProblem& /*p*/, const Mesh& /*mesh*/, int /*slices*/) const {
    return -1;
  }
};

class LayerAlgorithm;  // layer_algorithm.h: lowers one whole transformer layer.

// Makes a plugin configured by its parameters (AlgorithmInfo::params, resolved by the registry:
// registry.h ResolveParams). Called with no argument it passes the declared defaults (set by
// the registry), so `info->make()` is the plugin as `meshsim run` makes it without --param.
// Built from a function taking the values, or from one taking none (a plugin without
// parameters, e.g. MakeCollective).
template <typename T>
class PluginFactory {
 public:
  using Fn = std::function<std::unique_ptr<T>(const core::ParamValues&)>;
  PluginFactory() = default;
  PluginFactory(std::nullptr_t) {}               // NOLINT: no factory of this kind.
  PluginFactory(std::unique_ptr<T> (*make)()) {  // NOLINT: a plugin without parameters.
    if (make != nullptr) fn_ = [make](const core::ParamValues&) { return make(); };
  }
  template <typename F>
  requires std::is_invocable_r_v < std::unique_ptr<T>,
  const F&, const core::ParamValues& > PluginFactory(F make) : fn_(std::move(make)) {}  // NOLINT

  std::unique_ptr<T> operator()(const core::ParamValues& params) const { return fn_(params); }
  std::unique_ptr<T> operator()() const { return fn_(defaults_); }
  explicit operator bool() const { return static_cast<bool>(fn_); }
  // The registry's: the values operator()() passes.
  void set_defaults(core::ParamValues defaults) { defaults_ = std::move(defaults); }

 private:
  Fn fn_;
  core::ParamValues defaults_;
};

// The parameters a plugin may declare that are also run options resolved by sim/ for every
// plugin alike (a value per FC layer, the autotuner's choice): their values reach the plugin in
// GemmProblem::dataflow and ::slices (LoweringContext::slices), not in the ParamValues of its
// factory. A plugin declares them to say that it reads them and what they mean for it.
inline bool IsRunLevelParam(const std::string& key) { return key == "dataflow" || key == "slices"; }

// The declarations of the run-level parameters, with what they mean for the declaring plugin:
// slices (int 1 to 4096, default auto) and dataflow (enum os, ls, rs, default auto).
core::ParamSpec SlicesParam(std::string description);
core::ParamSpec DataflowParam(std::string description);

struct AlgorithmInfo {
  std::string name;
  std::string description;
  // Its typed parameters: `--param KEY=VALUE`, or `--KEY VALUE` where a run option of that name
  // exists (--slices, --dataflow, --chunks). The registry checks them (ParamValues::Defaults);
  // `meshsim list algorithms` prints each with its type, range and default; a run option
  // declared by no plugin of the run is refused.
  std::vector<core::ParamSpec> params;
  bool one_dimensional = false;  // Runs on a ring of every chip (topology ring, mesh 1×chips).
  // Exactly one factory is set: `make` for a GeMM plugin (--workload llm, gemm), `make_layer`
  // for a layer plugin (--workload layer).
  PluginFactory<Algorithm> make;
  PluginFactory<LayerAlgorithm> make_layer;
  // The meshes it runs on, when it constrains --mesh beyond R·C = chips (for `list`).
  std::string mesh;

  bool is_layer() const { return static_cast<bool>(make_layer); }
  bool Declares(const std::string& key) const {
    for (const core::ParamSpec& p : params) {
      if (p.key == key) return true;
    }
    return false;
  }
};

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_ALGORITHM_H_
