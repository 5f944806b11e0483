// Wang et al., "Overlap communication with dependent computation via decomposition in large
// deep learning models" (ASPLOS'23), as the 2D baseline of MeshSlice ISCA'25 (§2.3.4, Figure 4,
// §4.2): Collective 2D GeMM (gemm2d/collective.cc) with ONE of its two collectives decomposed
// into ring SendRecv steps that overlap partial GeMMs; the other stays a blocking collective —
// "Wang lies between MeshSlice and Collective as it partially overlaps one of the two
// collectives" (§5.1.1).
//
// Which collective is decomposed. The one with more ring traffic per chip, (P − 1)·shard, so the
// larger transfer is the hidden one (ties: the AllGather of the moving input):
//   kOS  AG of A over rows (P = C, shard M/R × K/C)  vs  AG of B over columns (P = R, K/R × N/C)
//   kLS  AG of B over columns (P = R, N/R × K/C)     vs  RdS of C' over rows (P = C, M/R × N/C)
//   kRS  AG of A over rows (P = C, K/R × M/C)        vs  RdS of C' over columns (P = R, M/R × N/C)
// A blocking AllGather runs first (every GeMM waits for it: the prologue); a blocking
// ReduceScatter runs after the last GeMM (the epilogue). Neither overlaps another problem: the
// AllGather waits for the frontier even when its operand is early (a weight), where
// collective.cc prefetches it — §4.2: "the prologue or the epilogue is the execution of a
// communication operation that is not overlapped" (results/fig09_weak_scaling, "Wang against
// §4.2").
//
// Decomposed AllGather on a ring of P chips (bidirectional halves, Op::directions = 2, the
// reference cost model's bytes/(2·bw) per step): each shard is split in two halves that travel
// the ring in opposite directions. Step 0 computes on the chip's own shard; SendRecv s
// (s = 1..P−1) passes on the halves received in step s−1 (its own at s = 1), and step s computes
// on the two halves it brought — P steps of one shard's worth of GeMM each, P−1 SendRecvs of a
// shard. Per step, chip (i, j) computes
//   kOS/A (M/R) × (N/C) × (K/C)   kOS/B (M/R) × (N/C) × (K/R)
//   kLS   (M/R) × (N/R) × (K/C)   kRS   (M/C) × (N/C) × (K/R)
// Decomposed ReduceScatter: the running sums of the P output pieces travel instead, as halves in
// both directions. Step s computes the chip's partial for the pieces it will hold after SendRecv
// s into a scratch buffer (gemm, which never waits for the network), SendRecv s passes the sums
// on, and add_c (AccumulateOp) adds the partial in; after step P−1 every chip holds its own
// piece. Step 0's partial is the first running sum. Per step: kLS (M/R) × (N/C) × (K/C), kRS
// (M/R) × (N/C) × (K/R).
//
// Loop unrolling (§4.2): S iterations (--slices, auto = P), S | P; iteration q merges the GeMMs
// of u = P/S consecutive steps (the step dimension grows u-fold: K for kOS, N for kLS, M for
// kRS); the SendRecvs (and adds) stay per step. Ops: P−1 SendRecvs per decomposed ring, S GeMMs
// per chip, one blocking collective per other ring, and for a decomposed ReduceScatter
// (P−1) adds per chip. Every chip receives what it receives under Collective.
//
// Buffers. Like Collective, Wang gathers into the full gathered operand (A_i* of M/R × K, …)
// and reduces from the full partial output (C' of M/R × N, …), step by step: every step has its
// own region, so nothing waits for a buffer to be freed — the SendRecvs of a decomposed
// AllGather never wait for a GeMM, and the GeMMs of a decomposed ReduceScatter never wait for
// the network (tp1d's ring decomposition, tp1d/ring_overlap.h, makes the same choice).
// Dependencies:
//   AllGather   sendrecv(s, ring) after sendrecv(s−1, ring) (the members' frontier for s = 1).
//               gemm(q, c) after the last sendrecv of iteration q on its ring, gemm(q−1, c),
//               and the blocking AllGather of its other ring (kOS); gemm(0): the frontier of c.
//   RdS         gemm(q, c) after the blocking AllGather and gemm(q−1, c) (gemm(0): the
//               frontier of c). sendrecv(s, ring) after the running sums of s−1 on every
//               member: add_c(s−1), or for s = 1 the gemm holding step 0. add_c(s, c) after
//               sendrecv(s) of its ring and the gemm of its iteration.
//   frontier(c) kOS the last gemm; decomposed AG in kLS/kRS the blocking RdS of its other ring;
//               decomposed RdS add_c(P−1, c). Each ends after all of chip c's ops.
// Cost model (reference): blocking collective + P·max(bytes/(2·bw) + t_step + t_launch, comp)
// with comp one step's GeMM.
// Tags: slice = iteration q; the blocking collective, in no iteration, has slice −1.
#include "algorithms/gemm2d/wang.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "algorithms/gemm2d/shards.h"
#include "algorithms/lowering_util.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

constexpr char kName[] = "wang";

enum class Grow { kM, kN, kK };

// The schedule one problem gets: which collective is decomposed, and the other one.
struct Plan {
  bool ring_rows = true;        // The decomposed ring is a mesh row (else a column).
  bool ring_reduce = false;     // The decomposed collective is the ReduceScatter.
  int ring = 1;                 // P.
  int64_t ring_elems = 0;       // Per chip per SendRecv: the shard or the output piece.
  const char* ring_what = "a";  // Matrix moving on the ring: "a", "b" or "c".
  core::CollectiveKind blocking = core::CollectiveKind::kAllGather;
  int64_t blocking_elems = 0;  // Shard (AllGather) or piece (ReduceScatter) per chip.
  const char* blocking_what = "ag_b";
  int64_t m = 0, n = 0, k = 0;  // One step's GeMM.
  Grow grow = Grow::kK;
  const char* dim = "K";  // The dimension the steps walk, for messages.
  int64_t dim_extent = 0;
};

// Precondition: CheckShardable(...) is OK.
Plan MakePlan(const GemmProblem& p, const Mesh& mesh) {
  const Shards sh = LocalShards(p, mesh);
  const int64_t r = mesh.rows, c = mesh.cols;
  Plan pl;
  switch (p.dataflow) {
    case Dataflow::kOS:
      if ((c - 1) * sh.a_elems() >= (r - 1) * sh.b_elems()) {
        pl = {true,         false,   mesh.cols,
              sh.a_elems(), "a",     core::CollectiveKind::kAllGather,
              sh.b_elems(), "ag_b",  p.m / r,
              p.n / c,      p.k / c, Grow::kK,
              "K",          p.k};
      } else {
        pl = {false,        false,   mesh.rows,
              sh.b_elems(), "b",     core::CollectiveKind::kAllGather,
              sh.a_elems(), "ag_a",  p.m / r,
              p.n / c,      p.k / r, Grow::kK,
              "K",          p.k};
      }
      break;
    case Dataflow::kLS:
      if ((r - 1) * sh.b_elems() >= (c - 1) * sh.c_elems()) {
        pl = {false,        false,   mesh.rows,
              sh.b_elems(), "b",     core::CollectiveKind::kReduceScatter,
              sh.c_elems(), "rds_c", p.m / r,
              p.n / r,      p.k / c, Grow::kN,
              "N",          p.n};
      } else {
        pl = {true,         true,    mesh.cols,
              sh.c_elems(), "c",     core::CollectiveKind::kAllGather,
              sh.b_elems(), "ag_b",  p.m / r,
              p.n / c,      p.k / c, Grow::kN,
              "N",          p.n};
      }
      break;
    case Dataflow::kRS:
      if ((c - 1) * sh.a_elems() >= (r - 1) * sh.c_elems()) {
        pl = {true,         false,   mesh.cols,
              sh.a_elems(), "a",     core::CollectiveKind::kReduceScatter,
              sh.c_elems(), "rds_c", p.m / c,
              p.n / c,      p.k / r, Grow::kM,
              "M",          p.m};
      } else {
        pl = {false,        true,    mesh.rows,
              sh.c_elems(), "c",     core::CollectiveKind::kAllGather,
              sh.a_elems(), "ag_a",  p.m / r,
              p.n / c,      p.k / r, Grow::kM,
              "M",          p.m};
      }
      break;
  }
  return pl;
}

absl::StatusOr<int> ResolveSlices(const GemmProblem& p, const Mesh& mesh, int slices) {
  MESHSIM_RETURN_IF_ERROR(CheckShardable(kName, p, mesh));
  const Plan pl = MakePlan(p, mesh);
  const int s = slices == 0 ? pl.ring : slices;
  if (s < 1 || s > pl.ring || pl.ring % s != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --slices %d is not allowed: the %s along mesh %s walks %s = %d in P = %d "
        "SendRecv steps (dataflow %s, mesh %s); S must divide %d",
        kName, slices, pl.ring_reduce ? "ReduceScatter of C'" : "AllGather of the moving input",
        pl.ring_rows ? "rows" : "columns", pl.dim, pl.dim_extent, pl.ring, ToString(p.dataflow),
        mesh.ToString(), pl.ring));
  }
  return s;
}

class Lowering {
 public:
  Lowering(const GemmProblem& p, LoweringContext& ctx, int slices)
      : p_(p),
        ctx_(ctx),
        g_(ctx.graph),
        rows_(ctx.mesh.rows),
        cols_(ctx.mesh.cols),
        s_(slices),
        eb_(ctx.element_bytes),
        pl_(MakePlan(p, ctx.mesh)),
        u_(pl_.ring / slices),
        groups_(BuildRowColGroups(ctx.mesh, ctx.graph)) {
    const int chips = rows_ * cols_;
    gemm_tags_ = KindTags(ctx_, p_, "gemm");
    sr_tags_ = KindTags(ctx_, p_, std::string("sendrecv_") + pl_.ring_what);
    blocking_tags_ = KindTags(ctx_, p_, pl_.blocking_what);
    gemm_.assign(chips, core::OpId());
    const int rings = pl_.ring_rows ? rows_ : cols_;
    const int others = pl_.ring_rows ? cols_ : rows_;
    sr_.assign(rings, core::OpId());
    blocking_.assign(others, core::OpId());
    // One step's GeMM grown u-fold: the GeMM of one unrolled iteration.
    gm_ = pl_.m, gn_ = pl_.n, gk_ = pl_.k;
    (pl_.grow == Grow::kM ? gm_ : pl_.grow == Grow::kN ? gn_ : gk_) *= u_;
  }

  void Run() {
    const bool blocking_first = pl_.blocking == core::CollectiveKind::kAllGather;
    if (blocking_first) AddBlocking();
    if (pl_.ring_reduce) {
      RunReduceScatter();
    } else {
      RunAllGather();
    }
    if (g_.full()) return;  // Stopped early: SlicedAlgorithm::Lower reports it.
    if (!blocking_first) AddBlocking();
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        const int chip = Chip(i, j);
        const core::OpId rds = blocking_first ? core::OpId() : blocking_[Other(i, j)];
        ctx_.SetFrontier(ctx_.mesh.Chip(chip), rds.valid() ? rds : last_[chip]);
      }
    }
  }

 private:
  int Chip(int i, int j) const { return i * cols_ + j; }
  int Ring(int i, int j) const { return pl_.ring_rows ? i : j; }
  int Other(int i, int j) const { return pl_.ring_rows ? j : i; }
  const std::vector<core::ChipId>& RingMembers(int g) const {
    return pl_.ring_rows ? groups_.row_members[g] : groups_.col_members[g];
  }
  core::GroupId RingGroup(int g) const { return pl_.ring_rows ? groups_.row[g] : groups_.col[g]; }

  // The non-decomposed collective on every ring of the other direction: before the first GeMM
  // (AllGather) or after the last one (ReduceScatter; last_ holds each chip's last op).
  void AddBlocking() {
    const bool first = pl_.blocking == core::CollectiveKind::kAllGather;
    const int others = static_cast<int>(blocking_.size());
    for (int o = 0; o < others; ++o) {
      const std::vector<core::ChipId>& members =
          pl_.ring_rows ? groups_.col_members[o] : groups_.row_members[o];
      if (members.size() < 2) continue;
      deps_.clear();
      if (first) {
        AppendAfter(ctx_, members, deps_);
      } else {
        for (core::ChipId m : members) deps_.push_back(last_[ctx_.mesh.Local(m)]);
      }
      const core::GroupId group = pl_.ring_rows ? groups_.col[o] : groups_.row[o];
      blocking_[o] =
          g_.Add(Tagged(core::Op::Collective(pl_.blocking, group, pl_.blocking_elems * eb_),
                        blocking_tags_, -1),
                 deps_);
    }
  }

  // Appends the GeMM of iteration q on every chip; `extra` (per chip, may be invalid) is one
  // more dependency.
  void AddGemms(int q, const std::vector<core::OpId>* extra) {
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        const int chip = Chip(i, j);
        deps_.clear();
        if (blocking_[Other(i, j)].valid()) deps_.push_back(blocking_[Other(i, j)]);
        if (gemm_[chip].valid()) deps_.push_back(gemm_[chip]);  // gemm(q−1).
        if (extra != nullptr && (*extra)[chip].valid()) deps_.push_back((*extra)[chip]);
        if (q == 0) AppendAfter(ctx_, ctx_.mesh.Chip(chip), deps_);
        gemm_[chip] = g_.Add(
            Tagged(core::Op::Gemm(ctx_.mesh.Chip(chip), gm_, gn_, gk_), gemm_tags_, q), deps_);
      }
    }
  }

  void RunAllGather() {
    const int64_t bytes = pl_.ring_elems * eb_;
    std::vector<core::OpId> ring_data(rows_ * cols_);  // Per chip: its iteration's last SendRecv.
    for (int q = 0; q < s_; ++q) {
      if (g_.full()) return;  // SlicedAlgorithm::Lower reports it.
      for (int s = q * u_; s < (q + 1) * u_; ++s) {
        if (s == 0) continue;  // Step 0 uses the chip's own shard.
        for (int g = 0; g < static_cast<int>(sr_.size()); ++g) {
          deps_.clear();
          if (sr_[g].valid()) {
            deps_.push_back(sr_[g]);
          } else {
            AppendAfter(ctx_, RingMembers(g), deps_);
          }
          sr_[g] = g_.Add(Tagged(SendRecvOp(RingGroup(g), bytes, 1, 2), sr_tags_, q), deps_);
        }
      }
      for (int i = 0; i < rows_; ++i) {
        for (int j = 0; j < cols_; ++j) ring_data[Chip(i, j)] = sr_[Ring(i, j)];
      }
      AddGemms(q, &ring_data);
    }
    last_ = gemm_;
  }

  void RunReduceScatter() {
    const int64_t bytes = pl_.ring_elems * eb_;
    const core::OpTags add_tags = KindTags(ctx_, p_, "add_c");
    std::vector<core::OpId> acc;  // Per chip: the op completing its current running sum.
    for (int q = 0; q < s_; ++q) {
      AddGemms(q, nullptr);
      for (int s = q * u_; s < (q + 1) * u_; ++s) {
        if (g_.full()) return;  // u·P adds per iteration: checked per step.
        if (s == 0) {
          acc = gemm_;  // Step 0's partial is the first running sum.
          continue;
        }
        for (int g = 0; g < static_cast<int>(sr_.size()); ++g) {
          deps_.clear();
          for (core::ChipId m : RingMembers(g)) deps_.push_back(acc[ctx_.mesh.Local(m)]);
          sr_[g] = g_.Add(Tagged(SendRecvOp(RingGroup(g), bytes, 1, 2), sr_tags_, q), deps_);
        }
        for (int i = 0; i < rows_; ++i) {
          for (int j = 0; j < cols_; ++j) {
            const int chip = Chip(i, j);
            acc[chip] = g_.Add(Tagged(AccumulateOp(ctx_.mesh.Chip(chip), bytes), add_tags, q),
                               {sr_[Ring(i, j)], gemm_[chip]});
          }
        }
      }
    }
    last_ = acc;
  }

  const GemmProblem& p_;
  LoweringContext& ctx_;
  core::OpGraph& g_;
  const int rows_, cols_, s_;
  const int64_t eb_;
  const Plan pl_;
  const int u_;  // Steps per unrolled iteration.
  const RowColGroups groups_;
  core::OpTags gemm_tags_, sr_tags_, blocking_tags_;
  int64_t gm_ = 0, gn_ = 0, gk_ = 0;
  std::vector<core::OpId> gemm_;      // Per chip: its latest GeMM.
  std::vector<core::OpId> sr_;        // Per decomposed ring: its latest SendRecv.
  std::vector<core::OpId> blocking_;  // Per other ring: the blocking collective.
  std::vector<core::OpId> last_;      // Per chip: its last op before the blocking RdS.
  std::vector<core::OpId> deps_;      // Scratch.
};

}  // namespace

std::unique_ptr<Algorithm> MakeWang() {
  return std::make_unique<SlicedAlgorithm<ResolveSlices, Lowering>>();
}

AlgorithmInfo WangPlugin() {
  return {
      .name = "wang",
      .description =
          "Wang et al.: one direction's collective decomposed into bidirectional "
          "SendRecv steps overlapped with partial GeMMs, the other direction a "
          "blocking collective",
      .params = {SlicesParam("unrolled iterations S (auto = P, the decomposed ring's length); S "
                             "must divide P"),
                 DataflowParam(
                     "os, ls or rs (Table 1); auto = per FC layer, its largest matrix stationary")},
      .make = MakeWang,
  };
}

}  // namespace meshsim::algorithms
