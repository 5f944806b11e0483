// SUMMA (van de Geijn & Watts; MeshSlice ISCA'25 §2.3.3, Figure 2a) on an R×C mesh, loop
// unrolled to S iterations as the paper runs it (§4.2; reference cost model: "steps = lcm(R, C),
// unrolled to S").
//
// Iterations. SUMMA walks the dimension that the moving shards share — K for kOS, N for kLS, M
// for kRS (the "split" dimension D) — in S panels of width w = D/S; iteration t handles panel
// [t·w, (t+1)·w). The owner of a panel's piece of a moving matrix is the mesh column (for
// row-group traffic) or mesh row (column-group traffic) whose shard holds those indices, and it
// is the broadcast root (Op::root = its position in the group) or the reduce target. S = lcm(R, C)
// (the default, --slices auto) is the paper's loop: every panel lies in one shard in both
// directions. Any S with S | D is allowed: a panel that spans several owners (S not a multiple
// of R or C, e.g. S < lcm(R, C) when consecutive steps are merged) is moved by one broadcast or
// reduce per owner piece (a "segment"), all in the same iteration. Per group and D, the S panels
// and the P owner blocks cut D into S + P − gcd(S, P) segments.
//
// Per iteration t, chip (i, j) (shards as in gemm2d/shards.h; "row" = Mesh::Row(i)):
//   kOS  bcast_a   row i,    A panel  M/R × w   from the column owning it (A blocks of K/C)
//        bcast_b   column j, B panel  w × N/C   from the row owning it    (B blocks of K/R)
//        gemm      C_ij += A_panel·B_panel          (M/R) × (N/C) × w
//   kLS  bcast_b   column j, B panel  w × K/C   (B is N×K) from the row owning it (N/R blocks)
//        gemm      C' = A_ij·B_panelᵀ                (M/R) × w × (K/C)
//        reduce_c  row i, C' (M/R × w) summed into the column owning it (C blocks of N/C)
//   kRS  bcast_a   row i,    A panel  K/R × w   (A is K×M) from the column owning it (M/C)
//        gemm      C' = A_panelᵀ·B_ij                w × (N/C) × (K/R)
//        reduce_c  column j, C' (w × N/C) summed into the row owning it (C blocks of M/R)
// A panel is a contiguous range of the owner's rows or columns, which the DMA reads in place
// (runs of w elements), so unlike MeshSlice's blocked slices no packing copy is emitted.
// Broadcast and Reduce are the network model's pipelined chain in comm.packets packets
// (fill over P − 1 hops, then D − 1 packets of b/D; Figure 3 left); groups of one chip get no op.
//
// Dependencies (software pipelining with double buffering, the pattern MeshSlice also uses):
//   bcast(t, group)   after every bcast(t−1) of the same group (one stream per group and
//                     direction) and gemm(t−2) of every member (the panel buffer it fills was
//                     last read by gemm(t−2)); bcast(0) after the members' frontier. So the
//                     broadcasts of t+1 overlap gemm(t) and never wait for it.
//   gemm(t, c)        after its iteration's broadcasts (both directions), gemm(t−1, c), and for
//                     kLS/kRS every reduce(t−2) of its reduce group (the C' buffer it writes);
//                     gemm(0) after the frontier of c.
//   reduce(t, group)  after gemm(t) of every member and every reduce(t−1) of the group.
//   frontier(c)       kOS gemm(S−1, c); kLS/kRS the reduce(S−1) of its group (a join when the
//                     last panel has several segments). Each ends after all of chip c's ops.
// Cost model (reference): prologue max(bcast_a, bcast_b) (kOS) or bcast + reduce, then
// (S−1)·max(bcasts, comp) + comp, bcast = t_launch + bytes/bw + (P−1)·t_step.
//
// Ops (S | D, lcm(R, C) | S): kOS S·R bcast_a + S·C bcast_b + S·R·C gemm; kLS S·C bcast_b +
// S·R reduce_c + S·R·C gemm; kRS S·R bcast_a + S·C reduce_c + S·R·C gemm. Lowering is
// O(S·(R·C + segments)) ops and deps.
#include "algorithms/gemm2d/summa.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "algorithms/gemm2d/shards.h"
#include "algorithms/lowering_util.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

constexpr char kName[] = "summa";

// The dimension the iterations split, per dataflow.
struct SplitDim {
  const char* name;
  int64_t extent;
};

SplitDim Split(const GemmProblem& p) {
  switch (p.dataflow) {
    case Dataflow::kOS:
      return {"K", p.k};
    case Dataflow::kLS:
      return {"N", p.n};
    case Dataflow::kRS:
      break;
  }
  return {"M", p.m};
}

// S for `slices` (0 = lcm(R, C)); InvalidArgument unless S ≥ 1 divides the split dimension.
absl::StatusOr<int> ResolveSlices(const GemmProblem& p, const Mesh& mesh, int slices) {
  MESHSIM_RETURN_IF_ERROR(CheckShardable(kName, p, mesh));
  const SplitDim d = Split(p);
  if (slices < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --slices %d is not allowed; use auto (lcm(R, C) = %d) or a count S >= 1 that "
        "divides %s = %d",
        kName, slices, std::lcm(mesh.rows, mesh.cols), d.name, d.extent));
  }
  // CheckShardable makes R and C divide the split dimension, hence lcm(R, C) does too.
  const int s = slices == 0 ? std::lcm(mesh.rows, mesh.cols) : slices;
  if (d.extent % s != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --slices %d does not divide %s = %d; each of the S iterations handles a %s/S-wide "
        "panel (dataflow %s, mesh %s)",
        kName, s, d.name, d.extent, d.name, ToString(p.dataflow), mesh.ToString()));
  }
  return s;
}

// One communication stream: per iteration, per group along one mesh direction, one Broadcast
// (before the GeMM) or Reduce (after it) per owner segment of the panel.
struct Stream {
  bool along_rows;  // Groups are Mesh::Row(i) (else Mesh::Col(j)).
  bool reduce;      // Reduce of the partial output (else Broadcast of an input panel).
  int64_t block;    // Owner blocks of the split dimension: member x owns [x·block, (x+1)·block).
  int64_t per_index;  // Elements per index of the split dimension (the panel's other side).
  core::OpTags tags;
  // Op ids per group for iterations t, t−1, t−2 (rotated each iteration).
  std::vector<std::vector<core::OpId>> cur, prev, prev2;
};

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
        groups_(BuildRowColGroups(ctx.mesh, ctx.graph)) {
    gemm_tags_ = KindTags(ctx_, p_, "gemm");
  }

  void Run() {
    const int64_t w = Split(p_).extent / s_;
    const int r = rows_, c = cols_;
    switch (p_.dataflow) {
      case Dataflow::kOS:
        AddStream(true, false, p_.k / c, p_.m / r, "bcast_a");
        AddStream(false, false, p_.k / r, p_.n / c, "bcast_b");
        gm_ = p_.m / r, gn_ = p_.n / c, gk_ = w;
        break;
      case Dataflow::kLS:
        AddStream(false, false, p_.n / r, p_.k / c, "bcast_b");
        AddStream(true, true, p_.n / c, p_.m / r, "reduce_c");
        gm_ = p_.m / r, gn_ = w, gk_ = p_.k / c;
        break;
      case Dataflow::kRS:
        AddStream(true, false, p_.m / c, p_.k / r, "bcast_a");
        AddStream(false, true, p_.m / r, p_.n / c, "reduce_c");
        gm_ = w, gn_ = p_.n / c, gk_ = p_.k / r;
        break;
    }
    const int chips = r * c;
    gemm_.assign(chips, core::OpId()), gemm_prev_.assign(chips, core::OpId());
    gemm_prev2_.assign(chips, core::OpId());
    for (int t = 0; t < s_; ++t) {
      if (g_.full()) return;  // SlicedAlgorithm::Lower reports it.
      // Rotate: gemm_prev_ = gemm(t−1), gemm_prev2_ = gemm(t−2); likewise each stream.
      std::swap(gemm_prev2_, gemm_prev_);
      std::swap(gemm_prev_, gemm_);
      for (Stream& st : streams_) {
        std::swap(st.prev2, st.prev);
        std::swap(st.prev, st.cur);
        if (!st.reduce) Communicate(st, t, w);
      }
      for (int i = 0; i < r; ++i) {
        for (int j = 0; j < c; ++j) AddGemm(i, j, t);
      }
      for (Stream& st : streams_) {
        if (st.reduce) Communicate(st, t, w);
      }
    }
    SetFrontier();
  }

 private:
  int Chip(int i, int j) const { return i * cols_ + j; }
  int NumGroups(const Stream& st) const { return st.along_rows ? rows_ : cols_; }
  const std::vector<core::ChipId>& Members(const Stream& st, int group) const {
    return st.along_rows ? groups_.row_members[group] : groups_.col_members[group];
  }
  int GroupOf(const Stream& st, int i, int j) const { return st.along_rows ? i : j; }

  void AddStream(bool along_rows, bool reduce, int64_t block, int64_t per_index, const char* what) {
    Stream st{along_rows, reduce, block, per_index, KindTags(ctx_, p_, what), {}, {}, {}};
    const int n = NumGroups(st);
    st.cur.resize(n), st.prev.resize(n), st.prev2.resize(n);
    streams_.push_back(std::move(st));
  }

  // The broadcasts (or reduces) of iteration t in every group of `st`.
  void Communicate(Stream& st, int t, int64_t w) {
    const int64_t begin = t * w, end = begin + w;
    for (int grp = 0; grp < NumGroups(st); ++grp) {
      std::vector<core::OpId>& out = st.cur[grp];
      out.clear();
      const std::vector<core::ChipId>& members = Members(st, grp);
      if (members.size() < 2) continue;
      deps_.assign(st.prev[grp].begin(), st.prev[grp].end());
      for (core::ChipId m : members) {
        // Broadcast: the panel buffer was last read by gemm(t−2). Reduce: needs gemm(t).
        const int local = ctx_.mesh.Local(m);
        const core::OpId dep = st.reduce ? gemm_[local] : gemm_prev2_[local];
        if (dep.valid()) deps_.push_back(dep);
      }
      if (t == 0) AppendAfter(ctx_, members, deps_);
      const core::GroupId group = st.along_rows ? groups_.row[grp] : groups_.col[grp];
      const core::CollectiveKind kind =
          st.reduce ? core::CollectiveKind::kReduce : core::CollectiveKind::kBroadcast;
      for (int64_t x = begin; x < end;) {
        const int64_t owner = x / st.block;
        const int64_t stop = std::min(end, (owner + 1) * st.block);
        core::Op op = core::Op::Collective(kind, group, (stop - x) * st.per_index * eb_);
        op.root = static_cast<int32_t>(owner);
        out.push_back(g_.Add(Tagged(op, st.tags, t), deps_));
        x = stop;
      }
    }
  }

  void AddGemm(int i, int j, int t) {
    const int chip = Chip(i, j);
    deps_.clear();
    for (const Stream& st : streams_) {
      const int grp = GroupOf(st, i, j);
      const std::vector<core::OpId>& ids = st.reduce ? st.prev2[grp] : st.cur[grp];
      deps_.insert(deps_.end(), ids.begin(), ids.end());
    }
    if (gemm_prev_[chip].valid()) deps_.push_back(gemm_prev_[chip]);
    if (t == 0) AppendAfter(ctx_, ctx_.mesh.Chip(chip), deps_);
    gemm_[chip] =
        g_.Add(Tagged(core::Op::Gemm(ctx_.mesh.Chip(chip), gm_, gn_, gk_), gemm_tags_, t), deps_);
  }

  void SetFrontier() {
    const Stream* red = nullptr;
    for (const Stream& st : streams_) {
      if (st.reduce) red = &st;
    }
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        const core::ChipId chip = ctx_.mesh.At(i, j);
        const std::vector<core::OpId>* last = red ? &red->cur[GroupOf(*red, i, j)] : nullptr;
        ctx_.SetFrontier(chip, (last == nullptr || last->empty())
                                   ? gemm_[Chip(i, j)]
                                   : EndOfChip(ctx_, chip, *last, p_));
      }
    }
  }

  const GemmProblem& p_;
  LoweringContext& ctx_;
  core::OpGraph& g_;
  const int rows_, cols_, s_;
  const int64_t eb_;
  const RowColGroups groups_;
  core::OpTags gemm_tags_;
  int64_t gm_ = 0, gn_ = 0, gk_ = 0;  // The per-iteration GeMM.
  std::vector<Stream> streams_;
  std::vector<core::OpId> gemm_, gemm_prev_, gemm_prev2_;  // Per chip: iterations t, t−1, t−2.
  std::vector<core::OpId> deps_;                           // Scratch.
};

}  // namespace

std::unique_ptr<Algorithm> MakeSumma() {
  return std::make_unique<SlicedAlgorithm<ResolveSlices, Lowering>>();
}

AlgorithmInfo SummaPlugin() {
  return {
      .name = "summa",
      .description =
          "SUMMA (Fig. 2a): per iteration a pipelined broadcast (and reduce) along "
          "rows and columns, loop unrolled to S iterations",
      .params = {SlicesParam("iterations S (auto = lcm(R, C)); S must divide K, N or M (os, ls, "
                             "rs)"),
                 DataflowParam(
                     "os, ls or rs (Table 1); auto = per FC layer, its largest matrix stationary")},
      .make = MakeSumma,
  };
}

}  // namespace meshsim::algorithms
