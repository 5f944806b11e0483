// Lowers the FC layers of one transformer block — or one stand-alone GeMM — with an algorithm
// plugin, one problem after another (each problem starts on a chip when that chip finished the
// previous one).
//
// Training order: the four forward GeMMs in model order, then for each layer in reverse order
// its backward-data and backward-weight GeMMs. Each GeMM's dataflow comes from MeshSlice
// Table 1 for the layer's stationary matrix: AutoStationary (phase 1 of the autotuner) or the one
// forced by --dataflow os|ls|rs.
//
// Example:
//   BlockPlan plan{.model = gpt3, .batch = 128, .seq = 2048, .pass = "train",
//                  .dataflow = "auto", .slices = 8, .mesh = {16, 16}};
//   MESHSIM_ASSIGN_OR_RETURN(std::vector<GemmProblem> gemms, LowerBlock(plan, *algo, graph));
#ifndef MESHSIM_ALGORITHMS_LLM_H_
#define MESHSIM_ALGORITHMS_LLM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "algorithms/mesh.h"
#include "core/op_graph.h"
#include "workloads/transformer.h"

namespace meshsim::algorithms {

struct BlockPlan {
  workloads::ModelShape model;
  int64_t batch = 1;
  int64_t seq = 2048;
  std::string pass = "train";  // fwd, bwd, train
  // auto, os, ls, rs, or one of os, ls, rs per FC layer in FcLayer::index order ("os,ls,os,ls").
  std::string dataflow = "auto";
  int slices = 0;  // 0 = each plugin's default
  Mesh mesh;
  int element_bytes = 2;
  // Per-layer S indexed by FcLayer::index (qkv, attn_out, ffn_up, ffn_down), e.g. the
  // autotuner's choice; empty = `slices` for every problem. Non-empty: one entry per FC layer,
  // each an S ≥ 1, or 0 for `slices`.
  std::vector<int> layer_slices;
};

// The GeMM problems of the block in execution order. With plan.layer_slices, each problem's
// GemmProblem::slices is its layer's entry. InvalidArgument for a bad pass, dataflow, or a
// layer_slices of the wrong length or with a negative entry.
absl::StatusOr<std::vector<GemmProblem>> BlockProblems(const BlockPlan& plan);

// Checks and lowers `problems` in order with `algorithm` into `graph`, each with S =
// GemmProblem::slices when set, else `slices`. Errors name the GeMM (e.g.
// "qkv.fwd: meshslice: ..."). ResourceExhausted (OpGraph::CheckSize) once the graph passes its
// op budget: checked after every problem, and by the plugins inside their loops.
absl::Status LowerProblems(const std::vector<GemmProblem>& problems, const Algorithm& algorithm,
                           const Mesh& mesh, int slices, int element_bytes, core::OpGraph& graph);

// The ops LowerProblems would append, by the plugin's closed form (Algorithm::CountOps) with
// each problem's S chosen as LowerProblems does; -1 when the plugin gives none or a problem
// fails its Check (the lowering then reports why). O(problems), builds nothing.
int64_t CountProblemOps(const std::vector<GemmProblem>& problems, const Algorithm& algorithm,
                        const Mesh& mesh, int slices);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_LLM_H_
