// Small pieces the plugins share while lowering (gemm2d/ and tp1d/): the mesh's row and column
// groups interned once, op kinds tagged once (ctx.Tag formats and interns a string, so it runs
// once per kind, not per op), the ring SendRecv, the local accumulate of a received partial sum,
// the incoming frontier as dependencies, the one-op frontier of a chip, and the Check/Lower
// wrapper of a plugin with a slice count.
//
// Example:
//   RowColGroups groups = BuildRowColGroups(ctx.mesh, ctx.graph);
//   const core::OpTags gemm_tags = KindTags(ctx, p, "gemm");
//   core::OpId g = ctx.graph.Add(Tagged(core::Op::Gemm(chip, m, n, k), gemm_tags, t), deps);
//   core::OpId sr = ctx.graph.Add(Tagged(SendRecvOp(groups.row[i], bytes, -1), sr_tags, t), deps);
#ifndef MESHSIM_ALGORITHMS_LOWERING_UTIL_H_
#define MESHSIM_ALGORITHMS_LOWERING_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "algorithms/mesh.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/op_graph.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {

// Mesh::Row(i) / Mesh::Col(j) and their interned group ids (rows first, then columns). Cost:
// O(chips).
struct RowColGroups {
  std::vector<std::vector<core::ChipId>> row_members, col_members;
  std::vector<core::GroupId> row, col;
};
RowColGroups BuildRowColGroups(const Mesh& mesh, core::OpGraph& graph);

// The tags ctx.Tag(op, p, what) sets, computed once per op kind.
core::OpTags KindTags(LoweringContext& ctx, const GemmProblem& p, const std::string& what);

// `op` carrying `tags` with slice (iteration) `slice`; Tagged(op, KindTags(ctx, p, what), s)
// equals ctx.Tag(op, p, what, s).
inline core::Op Tagged(core::Op op, const core::OpTags& tags, int slice) {
  op.tags = tags;
  op.tags.slice = slice;
  return op;
}

// A SendRecv on `group`: with directions = 1 member m sends `bytes` to member m + shift (mod P);
// with directions = 2 it sends bytes/2 to each ring neighbour (the shift is stored in Op::root
// but unused). Precondition (directions = 1): the shift is not a multiple of the group size
// (that SendRecv would move nothing).
core::Op SendRecvOp(core::GroupId group, int64_t bytes, int shift, int directions = 1);

// Adding a received partial sum of `bytes` into a local one: read both operands, write the sum.
// A kCopy of bytes + ⌊bytes/2⌋ (1.5·bytes), i.e. an HBM flow of 3·bytes (3·bytes − 1 when bytes
// is odd) — the traffic the network model charges a reduction step, and, like that reduction,
// beside the cores' GeMM queue. The one definition of the ADD of a Wang-style decomposed
// ReduceScatter (gemm2d/wang.cc, tp1d/ring_overlap.cc) and of Cannon's running sums
// (gemm2d/cannon.cc).
core::Op AccumulateOp(core::ChipId chip, int64_t bytes);

// deps += ctx.After(chip), or ctx.After(members): the frontier a chip's op, or a collective of
// `members`, starts after.
void AppendAfter(const LoweringContext& ctx, core::ChipId chip, std::vector<core::OpId>& deps);
void AppendAfter(const LoweringContext& ctx, const std::vector<core::ChipId>& members,
                 std::vector<core::OpId>& deps);

// The frontier op of `chip` given the ops that end its work: the op itself when there is one,
// else a zero-length join after all of them (ctx.Join). Precondition: `last` is not empty.
core::OpId EndOfChip(LoweringContext& ctx, core::ChipId chip, const std::vector<core::OpId>& last,
                     const GemmProblem& p);

// The Algorithm of a plugin whose Check and Lower both start by resolving the slice count:
// `Resolve(p, mesh, slices)` returns S (InvalidArgument, one line, when the problem, mesh or
// --slices is not allowed), and `Lowering(p, ctx, S).Run()` appends the ops. Run stops early
// (at the top of an iteration) once ctx.graph is full(); Lower then returns CheckSize().
//
// Example:
//   std::unique_ptr<Algorithm> MakeSumma() {
//     return std::make_unique<SlicedAlgorithm<ResolveSlices, Lowering>>();
//   }
template <absl::StatusOr<int> (*Resolve)(const GemmProblem&, const Mesh&, int), typename Lowering>
class SlicedAlgorithm : public Algorithm {
 public:
  absl::Status Check(const GemmProblem& p, const Mesh& mesh, int slices) const override {
    return Resolve(p, mesh, slices).status();
  }

  absl::Status Lower(const GemmProblem& p, LoweringContext& ctx) const override {
    MESHSIM_ASSIGN_OR_RETURN(const int s, Resolve(p, ctx.mesh, ctx.slices));
    Lowering(p, ctx, s).Run();
    return ctx.graph.CheckSize();
  }
};

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_LOWERING_UTIL_H_
