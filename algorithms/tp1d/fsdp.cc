// Fully-sharded data parallelism, ZeRO-3 style (MeshSlice §4.3; Zhao et al., "PyTorch FSDP"),
// on a ring of P chips, with the weight AllGathers and the gradient ReduceScatter decomposed
// Wang-style into P−1 bidirectional SendRecv steps overlapped with partial GeMMs (§2.3.4;
// schedule and dependency pattern in ring_overlap.h).
//
// Sharding. Each chip processes T/P tokens (data parallelism) and owns 1/P of every weight:
// W_j = the I × O/P column block j of W. A layer's full W exists on a chip only transiently,
// chunk by chunk, while its GeMM consumes it; the weight gradient leaves each chip reduced to
// the chip's own I × O/P block.
//
// Per pass, in the natural orientation rows × cols (depth) of ring_overlap.h (a problem that
// MeshSlice Table 1 transposed gets the same GeMMs emitted n × m). "Step GeMM" is one of the P
// partial GeMMs per chip; an unrolled iteration multiplies its starred dimension by u = P/S.
// "Moved" is what each chip sends per SendRecv step (half to each neighbour).
//
//   pass        GeMM         collective                          step GeMM          moved
//   fwd         Y  T×O (I)   AG of W over O, before              T/P × O/P* × I     I × O/P
//   bwd-data    X' T×I (O)   AG of W over O (= depth), before    T/P × I × O/P*     I × O/P
//   bwd-weight  W' I×O (T)   RdS of W' over O, after             I × O/P* × T/P     I × O/P
//
// Column- and row-parallel layers are treated alike. The forward gather is repeated in the
// backward pass (ZeRO-3 frees the gathered W after use). Each chip receives (P−1)·I·O/P elements
// per decomposed collective, and its flops are 2·M·N·K/P.
//
// A stand-alone GeMM (no FcLayer) is a forward with T = M, I = K, O = N: A's rows are the
// tokens, B the sharded weight.
#include "algorithms/tp1d/fsdp.h"

#include "algorithms/tp1d/ring_overlap.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

constexpr char kName[] = "fsdp";

// The ring schedule of `f` on P chips; preconditions checked by Divisible and CheckRingSlices.
RingPlan Plan(const FcGemm& f, int64_t chips) {
  const int64_t t = f.tokens, i = f.in, o = f.out, p = chips;
  RingPlan plan;
  switch (f.pass) {
    case core::Pass::kBwdData:
      plan = {RingComm::kAllGather, t / p, i, o / p, GemmDim::kDepth, i * (o / p)};
      break;
    case core::Pass::kBwdWeight:
      plan = {RingComm::kReduceScatter, i, o / p, t / p, GemmDim::kCols, i * (o / p)};
      break;
    default:
      plan = {RingComm::kAllGather, t / p, o / p, i, GemmDim::kCols, i * (o / p)};
      break;
  }
  plan.transposed = f.transposed;
  return plan;
}

// What the plugin shards over the ring must divide by P.
absl::Status Divisible(const FcGemm& f, const GemmProblem& p, int chips) {
  MESHSIM_RETURN_IF_ERROR(CheckRingDivisible(kName, p, "tokens T", f.tokens, chips));
  return CheckRingDivisible(kName, p, "output features O", f.out, chips);
}

}  // namespace

std::unique_ptr<Algorithm> MakeFsdp() {
  return std::make_unique<RingOverlapAlgorithm<kName, Divisible, Plan>>();
}

AlgorithmInfo FsdpPlugin() {
  return {
      .name = "fsdp",
      .description =
          "Fully-sharded data parallelism on a ring of every chip: weights gathered "
          "(and gradients reduce-scattered) by SendRecv steps overlapped with partial "
          "GeMMs",
      .params = {SlicesParam("unrolled iterations S: must divide the chip count (auto = P)"),
                 DataflowParam("any: the problem is read in the FC layer's own orientation")},
      .one_dimensional = true,
      .make = MakeFsdp,
  };
}

}  // namespace meshsim::algorithms
