// The machinery tp1d and fsdp share: reading an FC-layer GeMM problem in the layer's own terms
// (T, I, O), and lowering one ring AllGather or ReduceScatter decomposed Wang-style into SendRecv
// steps overlapped with partial GeMMs (MeshSlice §2.3.4 and §4.3; Wang et al., ASPLOS'23).
//
// Natural orientation. Whatever MeshSlice dataflow produced the problem (Table 1 may transpose
// it), a pass of Y[T×O] = X[T×I]·W[I×O] computes one matrix of rows × cols by a contraction of
// depth:   fwd  Y  = X·W     T × O, depth I
//          bwd-data  X' = Y'·Wᵀ    T × I, depth O
//          bwd-weight W' = Xᵀ·Y'   I × O, depth T
// A problem whose (M, N) is (cols, rows) is `transposed`: its per-chip GeMMs are emitted n × m.
//
// Ring schedule on P chips (ring = mesh.All(), i.e. chips 0..P−1 for the 1D mesh {1, P}). The
// collective is split along one dimension (`stepped`) into P steps; step 0 works on what the chip
// holds, step t ≥ 1 on what arrived by SendRecv t. Every SendRecv is bidirectional (directions
// = 2): each chip sends half of its step buffer to each ring neighbour, so a step uses both of its
// links (paper §4.3) and after P−1 steps every half has visited every chip. S unrolled
// iterations (S | P, default P) merge u = P/S consecutive steps into one GeMM.
//
//   AllGather:      SR_1 ← frontier(all);  SR_t ← SR_{t−1}          (never waits for a GeMM)
//                   G_i(c) ← SR_{last step of i}, G_{i−1}(c)
//   ReduceScatter:  G_i(c) ← G_{i−1}(c)                           (compute runs ahead)
//                   SR_1 ← G_0(all);  SR_t ← ADD_{t−1}(all)        (a partial sum travels on)
//                   ADD_t(c) ← SR_t, G_{iteration of t}(c)
// ADD_t is the accumulate of the received partial sum (AccumulateOp, algorithms/lowering_util.h).
// Each chip's frontier becomes its last GeMM (AllGather) or its last ADD (ReduceScatter).
//
// Ops per problem: (P−1) SendRecv, S·P GeMM, (P−1)·P ADD (ReduceScatter only). Deps: O(1) per
// op, except a ReduceScatter SendRecv, which waits for all P chips (the collective's rendezvous).
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(FcGemm fc, ResolveFcGemm("tp1d", p));
//   RingPlan plan{RingComm::kAllGather, fc.tokens / P, fc.out / P, fc.in, GemmDim::kRows,
//                 fc.tokens / P * fc.in, fc.transposed};
//   MESHSIM_RETURN_IF_ERROR(LowerRingOverlap(plan, p, ctx));
#ifndef MESHSIM_ALGORITHMS_TP1D_RING_OVERLAP_H_
#define MESHSIM_ALGORITHMS_TP1D_RING_OVERLAP_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {

// A problem read as one pass of an FC layer.
struct FcGemm {
  int64_t tokens = 0, in = 0, out = 0;  // T, I, O.
  bool column_parallel = true;
  core::Pass pass = core::Pass::kFwd;     // kNone is read as kFwd.
  bool transposed = false;                // The problem's (M, N) is (cols, rows).
  int64_t rows = 0, cols = 0, depth = 0;  // Natural orientation (see the banner).
};

// The problem in layer terms. A problem without an FcLayer (a stand-alone GeMM) is the forward
// pass of a column-parallel layer with T = M, I = K, O = N. InvalidArgument when a dimension is
// not positive or (M, N, K) is not the pass's GeMM of the layer, e.g.
// "tp1d: qkv.bwd_weight GeMM 8x8x8 does not match layer qkv (T = 64, I = 16, O = 48); expected
// (M, N, K) = (16, 48, 64) or (48, 16, 64)".
absl::StatusOr<FcGemm> ResolveFcGemm(const std::string& algorithm, const GemmProblem& p);

// InvalidArgument "<algorithm>: <what> = <value> is not divisible by P = <chips> chips on the
// ring (<label>)" unless value % chips == 0.
absl::Status CheckRingDivisible(const std::string& algorithm, const GemmProblem& p,
                                const char* what, int64_t value, int chips);

// InvalidArgument unless slices == 0 (auto = P) or 1 ≤ slices ≤ P with P % slices == 0.
absl::Status CheckRingSlices(const std::string& algorithm, int slices, int chips);

enum class RingComm { kNone, kAllGather, kReduceScatter };
enum class GemmDim { kRows, kCols, kDepth };

// One problem's ring schedule, in the natural orientation.
struct RingPlan {
  RingComm comm = RingComm::kNone;
  // The per-chip GeMM of one step (kNone: the chip's whole GeMM).
  int64_t rows = 0, cols = 0, depth = 0;
  GemmDim stepped = GemmDim::kRows;  // Grows by u = P/S in an unrolled iteration.
  int64_t shard_elems = 0;  // Elements a chip sends per SendRecv: the shard or partial-sum piece.
  bool transposed = false;
};

// The ops LowerRingOverlap appends on a ring of `chips` with `slices` S (0 = P), from the
// banner: (P−1) SendRecv + S·P GeMM, plus (P−1)·P ADD for a ReduceScatter; P GeMMs for kNone
// (or P = 1). S does not change the ADD count: on many chips it dominates.
int64_t RingOverlapOps(RingComm comm, int chips, int slices);

// Appends the schedule of the banner for every chip of ctx.mesh.All(). Preconditions: the
// plan's dimensions are positive and CheckRingSlices(ctx.slices, P) is OK.
// Cost: O(S·P + P²) ops and deps. ResourceExhausted (OpGraph::CheckSize) as soon as the graph
// passes its op budget, checked every O(P) ops.
absl::Status LowerRingOverlap(const RingPlan& plan, const GemmProblem& p, LoweringContext& ctx);

// The Algorithm of a 1D ring plugin (tp1d, fsdp): the problem resolved in layer terms
// (ResolveFcGemm, named `Name`), `Divisible(f, p, chips)` for what the plugin shards over the
// ring (CheckRingDivisible per dimension), the slice count (CheckRingSlices), and the plugin's
// schedule `Plan(f, chips)` lowered by LowerRingOverlap and counted by RingOverlapOps.
//
// Example:
//   std::unique_ptr<Algorithm> MakeFsdp() {
//     return std::make_unique<RingOverlapAlgorithm<kName, Divisible, Plan>>();
//   }
template <const char* Name, absl::Status (*Divisible)(const FcGemm&, const GemmProblem&, int chips),
          RingPlan (*Plan)(const FcGemm&, int64_t chips)>
class RingOverlapAlgorithm : public Algorithm {
 public:
  absl::Status Check(const GemmProblem& p, const Mesh& mesh, int slices) const override {
    MESHSIM_ASSIGN_OR_RETURN(const FcGemm f, ResolveFcGemm(Name, p));
    MESHSIM_RETURN_IF_ERROR(Divisible(f, p, mesh.chips()));
    return CheckRingSlices(Name, slices, mesh.chips());
  }

  absl::Status Lower(const GemmProblem& p, LoweringContext& ctx) const override {
    MESHSIM_ASSIGN_OR_RETURN(const FcGemm f, ResolveFcGemm(Name, p));
    return LowerRingOverlap(Plan(f, ctx.mesh.chips()), p, ctx);
  }

  int64_t CountOps(const GemmProblem& p, const Mesh& mesh, int slices) const override {
    const absl::StatusOr<FcGemm> f = ResolveFcGemm(Name, p);
    if (!f.ok()) return -1;
    return RingOverlapOps(Plan(*f, mesh.chips()).comm, mesh.chips(), slices);
  }
};

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_TP1D_RING_OVERLAP_H_
