// 1D tensor parallelism as sequence-parallel Megatron (MeshSlice §2.1 and §4.3; Korthikanti et
// al., "Reducing Activation Recomputation in Large Transformer Models"), on a ring of P chips,
// with every AllGather/ReduceScatter decomposed Wang-style into P−1 bidirectional SendRecv steps
// overlapped with partial GeMMs (§2.3.4; schedule and dependency pattern in ring_overlap.h).
//
// Sharding. Outside the FC layers activations are split by tokens (T/P rows per chip). W is split
// by output features for column-parallel layers (qkv, ffn_up: W_j is I × O/P) and by input
// features for row-parallel ones (attn_out, ffn_down: W_j is I/P × O), so the activations
// between a column- and a row-parallel layer are split by features and never move.
//
// Per pass, in the natural orientation rows × cols (depth) of ring_overlap.h; a problem that
// MeshSlice Table 1 transposed gets the same GeMMs emitted n × m. "Step GeMM" is one of the P
// partial GeMMs per chip; an unrolled iteration multiplies its starred dimension by u = P/S.
// "Moved" is what each chip sends per SendRecv step (half to each neighbour).
//
//   layer pass        GeMM         collective                    step GeMM            moved
//   col   fwd         Y  T×O (I)   AG of X over T, before        T/P* × O/P × I       T/P × I
//   col   bwd-data    X' T×I (O)   RdS of X' over T, after       T/P* × I × O/P       T/P × I
//   col   bwd-weight  W' I×O (T)   AG of X over T (= depth)      I × O/P × T/P*       T/P × I
//   row   fwd         Y  T×O (I)   RdS of Y over T, after        T/P* × O × I/P       T/P × O
//   row   bwd-data    X' T×I (O)   AG of Y' over T, before       T/P* × I/P × O       T/P × O
//   row   bwd-weight  W' I×O (T)   none: Y' kept from bwd-data   I/P × O × T, once    —
//
// Megatron-SP re-gathers X in the backward pass rather than keeping the forward copy; that AG
// feeds only the weight gradient, so it is charged to the column-parallel bwd-weight GeMM. The
// gathered Y' of a row-parallel bwd-data feeds both backward GeMMs and is kept. Each chip
// receives (P−1)/P of the moved matrix per decomposed collective: (P−1)·(T/P)·I elements for a
// column-parallel forward, (P−1)·(T/P)·O for a row-parallel one. Per-chip flops are 2·M·N·K/P.
//
// A stand-alone GeMM (no FcLayer) is the forward of a column-parallel layer with T = M, I = K,
// O = N: AG of A's row shards, B split by columns.
#include "algorithms/tp1d/tp1d.h"

#include "algorithms/tp1d/ring_overlap.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

constexpr char kName[] = "tp1d";

// The ring schedule of `f` on P chips; preconditions checked by Divisible and CheckRingSlices.
RingPlan Plan(const FcGemm& f, int64_t chips) {
  const int64_t t = f.tokens, i = f.in, o = f.out, p = chips;
  RingPlan plan;
  if (f.column_parallel) {
    switch (f.pass) {
      case core::Pass::kBwdData:
        plan = {RingComm::kReduceScatter, t / p, i, o / p, GemmDim::kRows, t / p * i};
        break;
      case core::Pass::kBwdWeight:
        plan = {RingComm::kAllGather, i, o / p, t / p, GemmDim::kDepth, t / p * i};
        break;
      default:
        plan = {RingComm::kAllGather, t / p, o / p, i, GemmDim::kRows, t / p * i};
        break;
    }
  } else {
    switch (f.pass) {
      case core::Pass::kBwdData:
        plan = {RingComm::kAllGather, t / p, i / p, o, GemmDim::kRows, t / p * o};
        break;
      case core::Pass::kBwdWeight:
        plan = {RingComm::kNone, i / p, o, t, GemmDim::kRows, 0};
        break;
      default:
        plan = {RingComm::kReduceScatter, t / p, o, i / p, GemmDim::kRows, t / p * o};
        break;
    }
  }
  plan.transposed = f.transposed;
  return plan;
}

// What the plugin shards over the ring must divide by P.
absl::Status Divisible(const FcGemm& f, const GemmProblem& p, int chips) {
  MESHSIM_RETURN_IF_ERROR(CheckRingDivisible(kName, p, "tokens T", f.tokens, chips));
  return f.column_parallel ? CheckRingDivisible(kName, p, "output features O", f.out, chips)
                           : CheckRingDivisible(kName, p, "input features I", f.in, chips);
}

}  // namespace

std::unique_ptr<Algorithm> MakeTp1d() {
  return std::make_unique<RingOverlapAlgorithm<kName, Divisible, Plan>>();
}

AlgorithmInfo Tp1dPlugin() {
  return {
      .name = "tp1d",
      .description =
          "1D tensor parallelism (sequence-parallel Megatron) on a ring of every "
          "chip, collectives decomposed into SendRecv steps overlapped with partial "
          "GeMMs (Wang-style)",
      .params = {SlicesParam("unrolled iterations S: must divide the chip count (auto = P); "
                             "merges P/S step GeMMs, the SendRecv steps stay P-1"),
                 DataflowParam("any: the problem is read in the FC layer's own orientation")},
      .one_dimensional = true,
      .make = MakeTp1d,
  };
}

}  // namespace meshsim::algorithms
