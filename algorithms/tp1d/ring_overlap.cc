// Wang-style ring decomposition shared by tp1d and fsdp; the schedule is in the header.
#include "algorithms/tp1d/ring_overlap.h"

#include <algorithm>
#include <span>
#include <vector>

#include "absl/strings/str_format.h"
#include "algorithms/lowering_util.h"

namespace meshsim::algorithms {

absl::StatusOr<FcGemm> ResolveFcGemm(const std::string& algorithm, const GemmProblem& p) {
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: GeMM %dx%dx%d has a non-positive dimension", algorithm, p.m, p.n, p.k));
  }
  FcGemm f;
  if (p.layer.name.empty()) {
    // Stand-alone GeMM C[M×N] = A[M×K]·B[K×N]: A plays the activations, B the weight.
    f.tokens = p.m, f.in = p.k, f.out = p.n;
    f.rows = p.m, f.cols = p.n, f.depth = p.k;
    return f;
  }
  const FcLayer& l = p.layer;
  f.tokens = l.tokens, f.in = l.in, f.out = l.out;
  f.column_parallel = l.column_parallel;
  f.pass = p.pass == core::Pass::kNone ? core::Pass::kFwd : p.pass;
  switch (f.pass) {
    case core::Pass::kBwdData:
      f.rows = l.tokens, f.cols = l.in, f.depth = l.out;
      break;
    case core::Pass::kBwdWeight:
      f.rows = l.in, f.cols = l.out, f.depth = l.tokens;
      break;
    default:
      f.rows = l.tokens, f.cols = l.out, f.depth = l.in;
      break;
  }
  if (p.k == f.depth && p.m == f.rows && p.n == f.cols) return f;
  if (p.k == f.depth && p.m == f.cols && p.n == f.rows) {
    f.transposed = true;
    return f;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s GeMM %dx%dx%d does not match layer %s (T = %d, I = %d, O = %d); expected (M, N, "
      "K) = (%d, %d, %d) or (%d, %d, %d)",
      algorithm, p.label, p.m, p.n, p.k, l.name, l.tokens, l.in, l.out, f.rows, f.cols, f.depth,
      f.cols, f.rows, f.depth));
}

absl::Status CheckRingDivisible(const std::string& algorithm, const GemmProblem& p,
                                const char* what, int64_t value, int chips) {
  if (value % chips == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s = %d is not divisible by P = %d chips on the ring (%s)", algorithm,
                      what, value, chips, p.label.empty() ? "stand-alone GeMM" : p.label));
}

absl::Status CheckRingSlices(const std::string& algorithm, int slices, int chips) {
  if (slices == 0 || (slices >= 1 && slices <= chips && chips % slices == 0)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: --slices %d is not allowed on a ring of P = %d chips; the unrolled iteration count "
      "must divide P (auto = P)",
      algorithm, slices, chips));
}

int64_t RingOverlapOps(RingComm comm, int chips, int slices) {
  const int64_t p = chips;
  if (comm == RingComm::kNone || chips == 1) return p;
  const int64_t s = slices > 0 ? slices : p;
  const int64_t ops = (p - 1) + s * p;  // SendRecv steps and step GeMMs.
  return comm == RingComm::kReduceScatter ? ops + (p - 1) * p : ops;
}

absl::Status LowerRingOverlap(const RingPlan& plan, const GemmProblem& p, LoweringContext& ctx) {
  const std::vector<core::ChipId> ring = ctx.mesh.All();
  const int chips = static_cast<int>(ring.size());
  std::vector<core::OpId> last(chips);  // Per ring position: the chip's latest op here.
  for (int c = 0; c < chips; ++c) {
    const std::vector<core::OpId> after = ctx.After(ring[c]);
    last[c] = after.empty() ? core::OpId() : after[0];
  }

  // One prototype per op kind, tagged once; the loops only change chip and slice.
  const auto gemm_op = [&](int64_t steps) {
    int64_t r = plan.rows, c = plan.cols, d = plan.depth;
    if (plan.stepped == GemmDim::kRows) r *= steps;
    if (plan.stepped == GemmDim::kCols) c *= steps;
    if (plan.stepped == GemmDim::kDepth) d *= steps;
    core::Op g =
        plan.transposed ? core::Op::Gemm(ring[0], c, r, d) : core::Op::Gemm(ring[0], r, c, d);
    ctx.Tag(g, p, "gemm");
    return g;
  };
  const auto finish = [&](const std::vector<core::OpId>& ops) {
    for (int c = 0; c < chips; ++c) ctx.SetFrontier(ring[c], ops[c]);
  };

  if (plan.comm == RingComm::kNone || chips == 1) {
    core::Op g = gemm_op(1);
    for (int c = 0; c < chips; ++c) {
      g.chip = ring[c];
      last[c] = ctx.graph.Add(g, ctx.After(ring[c]));
    }
    finish(last);
    return absl::OkStatus();
  }

  const int iterations = ctx.slices > 0 ? ctx.slices : chips;
  const int unroll = chips / iterations;  // Steps per iteration.
  const core::GroupId group = ctx.graph.AddGroup(ring);
  // Half of the buffer to each neighbour (Wang's bidirectional halves; the shift is unused).
  core::Op sr = SendRecvOp(group, plan.shard_elems * ctx.element_bytes, 0, 2);
  ctx.Tag(sr, p, "sendrecv");
  core::Op g = gemm_op(unroll);

  // The graph grows by O(P) ops per step; the budget is checked as often (OpGraph::full).
  if (plan.comm == RingComm::kAllGather) {
    core::OpId prev_sr;
    for (int i = 0; i < iterations; ++i) {
      if (ctx.graph.full()) return ctx.graph.CheckSize();
      // The steps that bring this iteration's chunks; they wait only for the previous step.
      for (int t = std::max(1, i * unroll); t < (i + 1) * unroll; ++t) {
        sr.tags.slice = i;
        prev_sr =
            prev_sr.valid() ? ctx.graph.Add(sr, {prev_sr}) : ctx.graph.Add(sr, ctx.After(ring));
      }
      g.tags.slice = i;
      for (int c = 0; c < chips; ++c) {
        g.chip = ring[c];
        core::OpId deps[2];
        int n = 0;
        if (prev_sr.valid()) deps[n++] = prev_sr;
        if (last[c].valid()) deps[n++] = last[c];
        last[c] = ctx.graph.Add(g, std::span<const core::OpId>(deps, n));
      }
    }
    finish(last);
    return absl::OkStatus();
  }

  // ReduceScatter: a partial sum of one piece leaves each chip per step; the receiver adds its
  // own partial of that piece (computed by this iteration's GeMM) and sends it on.
  const int64_t piece_bytes = plan.shard_elems * ctx.element_bytes;
  core::Op add = AccumulateOp(ring[0], piece_bytes);
  ctx.Tag(add, p, "add");
  std::vector<core::OpId> gemm(chips), ready(chips);
  for (int i = 0; i < iterations; ++i) {
    if (ctx.graph.full()) return ctx.graph.CheckSize();
    g.tags.slice = i;
    for (int c = 0; c < chips; ++c) {
      g.chip = ring[c];
      const core::OpId prev = i == 0 ? last[c] : gemm[c];
      gemm[c] = prev.valid() ? ctx.graph.Add(g, {prev}) : ctx.graph.Add(g);
    }
    if (i == 0) ready = gemm;
    for (int t = std::max(1, i * unroll); t < (i + 1) * unroll; ++t) {
      if (ctx.graph.full()) return ctx.graph.CheckSize();
      sr.tags.slice = i;
      add.tags.slice = i;
      const core::OpId step = ctx.graph.Add(sr, ready);
      for (int c = 0; c < chips; ++c) {
        add.chip = ring[c];
        ready[c] = ctx.graph.Add(add, {step, gemm[c]});
      }
    }
  }
  finish(ready);
  return absl::OkStatus();
}

}  // namespace meshsim::algorithms
