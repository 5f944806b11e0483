// Cannon's algorithm (Cannon 1969; MeshSlice ISCA'25 §2.3.2, Figure 4) on an n×n mesh: skew the
// moving shards once, then n iterations of a local GeMM overlapped with one-hop SendRecv shifts
// (Op::root = the shift; a SendRecv moves every member's buffer to member m + shift).
//
// kOS (the classic form; chip (i, j), blocks of M/n × K/n, K/n × N/n):
//   skew_a(i)    row i shifts A left by i (shift −i), i ≥ 1; now chip (i, j) holds A_{i,i+j}
//   skew_b(j)    column j shifts B up by j (shift −j), j ≥ 1;         holds B_{i+j,j}
//   gemm(t, c)   C_ij += A_{i,i+j+t}·B_{i+j+t,j}: (M/n) × (N/n) × (K/n), t = 0..n−1
//   shift_a(t)   row i shifts A left by 1 for iteration t = 1..n−1 (overlaps gemm(t−1))
//   shift_b(t)   column j shifts B up by 1
// Indices are mod n. Ops: 2(n−1) skews, 2n(n−1) shifts, n³ GeMMs.
//
// kLS (C = A·Bᵀ, A stationary) and kRS (C = Aᵀ·B, B stationary) are the systolic variants in
// which the partial output travels. kLS: C_il = Σ_j A_ij·B_ljᵀ over row i. Chip (i, j) holds
// A_ij for good and, in iteration t, the B block and the running sum of output column block
// l = i + j + t: B moves up its column (B_lj starts at chip (l, j): skew_b as in kOS) and the
// running sum moves left along the row, so each sum visits every chip of its row once and
// meets the right B there. The sum needs no skew (it starts at zero) but ends, after iteration
// n−1, on column l − i + 1 instead of l: one un-skew shift by i − 1 (rows i ≠ 1) puts C in
// place. kRS is the transpose: A moves left along rows (skew_a as in kOS), running sums of
// C_{l,j} (l = i + j + t) move up columns, un-skew by j − 1 in columns j ≠ 1.
//   gemm(t, c)   P_t = A_ij·B_ljᵀ (kLS) or A_ilᵀ·B_ij (kRS): (M/n) × (N/n) × (K/n), into a
//                scratch buffer; gemm(0) writes the running sum itself
//   shift_c(t)   the running sums (M/n × N/n) move one hop, t = 1..n−1
//   add_c(t, c)  sum += P_t (AccumulateOp: HBM read 2, write 1, beside the GeMM queue)
//   unskew_c     the final shift to C's owner
// Computing P_t apart from the sum keeps the GeMMs off the sum's critical path: gemm(t+1)
// overlaps shift_c(t+1) (the cost model's n·max(shift, comp)); accumulating in the GeMM itself
// would serialise GeMM → shift → GeMM. Ops: 2(n−1) + 2n(n−1) SendRecvs (skew, input shifts,
// sum shifts, un-skew), n³ GeMMs, n²(n−1) adds.
//
// Dependencies (double buffering: two buffers per moving block, two scratch P buffers):
//   skew(g)           after the frontier of the group's members.
//   shift_in(t, g)    after the op that delivered iteration t−1's block to the group (skew or
//                     shift; the members' frontier for the unskewed row/column 0) and
//                     gemm(t−2) on every member (the buffer it fills was last read then). It
//                     does not wait for gemm(t−1), which reads the block it forwards.
//   gemm(t, c)        after the delivery of its blocks for t, gemm(t−1, c) (gemm(0): the
//                     frontier of c), and for kLS/kRS add_c(t−2, c) (its scratch buffer).
//   shift_c(t, g)     after the running sums of t−1 on every member: add_c(t−1) (gemm(0)).
//   add_c(t, c)       after gemm(t, c) and shift_c(t) of its group.
//   unskew_c(g)       after add_c(n−1) of every member.
//   frontier(c)       kOS gemm(n−1, c); kLS/kRS unskew_c of its group, else add_c(n−1, c).
// Cost model (reference): max(skew_a, skew_b) + n·max(shift, comp).
#include "algorithms/gemm2d/cannon.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_format.h"
#include "algorithms/gemm2d/shards.h"
#include "algorithms/lowering_util.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

constexpr char kName[] = "cannon";

class Lowering {
 public:
  Lowering(const GemmProblem& p, LoweringContext& ctx)
      : p_(p),
        ctx_(ctx),
        g_(ctx.graph),
        n_(ctx.mesh.rows),
        eb_(ctx.element_bytes),
        sh_(LocalShards(p, ctx.mesh)),
        groups_(BuildRowColGroups(ctx.mesh, ctx.graph)) {
    gemm_tags_ = KindTags(ctx_, p_, "gemm");
    const int chips = n_ * n_;
    gemm_.assign(chips, core::OpId());
    gemm_prev_.assign(chips, core::OpId());
    gemm_prev2_.assign(chips, core::OpId());
  }

  void Run() {
    if (p_.dataflow == Dataflow::kOS) {
      RunOS();
    } else {
      RunSystolicSum();
    }
  }

 private:
  // A stream of blocks moving along rows (A) or columns (B): skewed, then shifted by one hop.
  struct InputStream {
    bool along_rows;
    int64_t bytes;
    core::OpTags skew_tags, shift_tags;
    std::vector<core::OpId> data;  // Per group: the op that delivered the current block.
  };

  int Chip(int i, int j) const { return i * n_ + j; }
  const std::vector<core::ChipId>& Members(bool along_rows, int g) const {
    return along_rows ? groups_.row_members[g] : groups_.col_members[g];
  }
  core::GroupId Group(bool along_rows, int g) const {
    return along_rows ? groups_.row[g] : groups_.col[g];
  }

  InputStream MakeInput(bool along_rows, int64_t elems, const char* skew, const char* shift) {
    return {along_rows, elems * eb_, KindTags(ctx_, p_, skew), KindTags(ctx_, p_, shift),
            std::vector<core::OpId>(n_)};
  }

  // Group g shifts by −g (g ≥ 1): block (g, x) moves to x − g, Cannon's initial alignment.
  void Skew(InputStream& in) {
    for (int grp = 1; grp < n_; ++grp) {
      deps_.clear();
      AppendAfter(ctx_, Members(in.along_rows, grp), deps_);
      in.data[grp] = g_.Add(
          Tagged(SendRecvOp(Group(in.along_rows, grp), in.bytes, -grp), in.skew_tags, 0), deps_);
    }
  }

  // The one-hop shift that brings iteration t's blocks; called after gemm(t−1) was added, with
  // gemm_prev_ = gemm(t−2).
  void Shift(InputStream& in, int t) {
    for (int grp = 0; grp < n_; ++grp) {
      deps_.clear();
      const std::vector<core::ChipId>& members = Members(in.along_rows, grp);
      if (in.data[grp].valid()) {
        deps_.push_back(in.data[grp]);
      } else {
        AppendAfter(ctx_, members, deps_);
      }
      for (core::ChipId m : members) {
        const core::OpId prev = gemm_prev_[ctx_.mesh.Local(m)];
        if (prev.valid()) deps_.push_back(prev);
      }
      in.data[grp] = g_.Add(
          Tagged(SendRecvOp(Group(in.along_rows, grp), in.bytes, -1), in.shift_tags, t), deps_);
    }
  }

  // Rotates the per-chip GeMM ids: gemm_prev_ = gemm(t−1), gemm_prev2_ = gemm(t−2).
  void RotateGemms() {
    std::swap(gemm_prev2_, gemm_prev_);
    std::swap(gemm_prev_, gemm_);
  }

  void AddGemm(int i, int j, int t, const InputStream* rows, const InputStream* cols,
               core::OpId scratch_free) {
    const int chip = Chip(i, j);
    deps_.clear();
    if (rows != nullptr && rows->data[i].valid()) deps_.push_back(rows->data[i]);
    if (cols != nullptr && cols->data[j].valid()) deps_.push_back(cols->data[j]);
    if (gemm_prev_[chip].valid()) deps_.push_back(gemm_prev_[chip]);
    if (scratch_free.valid()) deps_.push_back(scratch_free);
    if (t == 0) AppendAfter(ctx_, ctx_.mesh.Chip(chip), deps_);
    gemm_[chip] =
        g_.Add(Tagged(core::Op::Gemm(ctx_.mesh.Chip(chip), p_.m / n_, p_.n / n_, p_.k / n_),
                      gemm_tags_, t),
               deps_);
  }

  void RunOS() {
    InputStream a = MakeInput(true, sh_.a_elems(), "skew_a", "shift_a");
    InputStream b = MakeInput(false, sh_.b_elems(), "skew_b", "shift_b");
    Skew(a);
    Skew(b);
    for (int t = 0; t < n_; ++t) {
      if (g_.full()) return;  // Cannon::Lower reports it.
      if (t > 0) {
        Shift(a, t);  // gemm_prev_ is gemm(t−2) here: the shift overlaps gemm(t−1).
        Shift(b, t);
      }
      RotateGemms();
      for (int i = 0; i < n_; ++i) {
        for (int j = 0; j < n_; ++j) AddGemm(i, j, t, &a, &b, core::OpId());
      }
    }
    for (int c = 0; c < n_ * n_; ++c) ctx_.SetFrontier(ctx_.mesh.Chip(c), gemm_[c]);
  }

  // kLS / kRS: one input stream, running sums along the other direction.
  void RunSystolicSum() {
    const bool ls = p_.dataflow == Dataflow::kLS;
    // kLS: B moves along columns, sums along rows; kRS: A along rows, sums along columns.
    InputStream in = ls ? MakeInput(false, sh_.b_elems(), "skew_b", "shift_b")
                        : MakeInput(true, sh_.a_elems(), "skew_a", "shift_a");
    const bool sum_rows = ls;
    const int64_t c_bytes = sh_.c_elems() * eb_;
    const core::OpTags shift_c_tags = KindTags(ctx_, p_, "shift_c");
    const core::OpTags add_tags = KindTags(ctx_, p_, "add_c");
    const core::OpTags unskew_tags = KindTags(ctx_, p_, "unskew_c");
    const int chips = n_ * n_;
    // Per chip: the op after which the running sum of iteration t (acc) is complete, and the
    // adds of t, t−1, t−2 (add_c(t−2) frees gemm(t)'s scratch buffer).
    std::vector<core::OpId> acc(chips), add(chips), add_prev(chips), add_prev2(chips);
    std::vector<core::OpId> sum_shift(n_);
    Skew(in);
    for (int t = 0; t < n_; ++t) {
      if (g_.full()) return;  // Cannon::Lower reports it.
      if (t > 0) Shift(in, t);
      RotateGemms();
      std::swap(add_prev2, add_prev);
      std::swap(add_prev, add);
      for (int i = 0; i < n_; ++i) {
        for (int j = 0; j < n_; ++j) {
          AddGemm(i, j, t, ls ? nullptr : &in, ls ? &in : nullptr, add_prev2[Chip(i, j)]);
        }
      }
      if (t == 0) {
        acc = gemm_;
        continue;
      }
      for (int h = 0; h < n_; ++h) {
        deps_.clear();
        for (core::ChipId m : Members(sum_rows, h)) deps_.push_back(acc[ctx_.mesh.Local(m)]);
        sum_shift[h] =
            g_.Add(Tagged(SendRecvOp(Group(sum_rows, h), c_bytes, -1), shift_c_tags, t), deps_);
      }
      for (int i = 0; i < n_; ++i) {
        for (int j = 0; j < n_; ++j) {
          const int chip = Chip(i, j);
          add[chip] = g_.Add(Tagged(AccumulateOp(ctx_.mesh.Chip(chip), c_bytes), add_tags, t),
                             {gemm_[chip], sum_shift[sum_rows ? i : j]});
          acc[chip] = add[chip];
        }
      }
    }
    for (int h = 0; h < n_; ++h) {
      const std::vector<core::ChipId>& members = Members(sum_rows, h);
      const int shift = ((h - 1) % n_ + n_) % n_;  // Sum of block l sits on l − h + 1.
      if (shift == 0) {
        for (core::ChipId m : members) ctx_.SetFrontier(m, acc[ctx_.mesh.Local(m)]);
        continue;
      }
      deps_.clear();
      for (core::ChipId m : members) deps_.push_back(acc[ctx_.mesh.Local(m)]);
      const core::OpId unskew = g_.Add(
          Tagged(SendRecvOp(Group(sum_rows, h), c_bytes, shift), unskew_tags, n_ - 1), deps_);
      for (core::ChipId m : members) ctx_.SetFrontier(m, unskew);
    }
  }

  const GemmProblem& p_;
  LoweringContext& ctx_;
  core::OpGraph& g_;
  const int n_;
  const int64_t eb_;
  const Shards sh_;
  const RowColGroups groups_;
  core::OpTags gemm_tags_;
  std::vector<core::OpId> gemm_, gemm_prev_, gemm_prev2_;  // Per chip: iterations t, t−1, t−2.
  std::vector<core::OpId> deps_;                           // Scratch.
};

class Cannon : public Algorithm {
 public:
  absl::Status Check(const GemmProblem& p, const Mesh& mesh, int /*slices*/) const override {
    if (mesh.rows != mesh.cols) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: mesh %s is not square", kName, mesh.ToString()));
    }
    return CheckShardable(kName, p, mesh);
  }

  absl::Status Lower(const GemmProblem& p, LoweringContext& ctx) const override {
    MESHSIM_RETURN_IF_ERROR(Check(p, ctx.mesh, ctx.slices));
    Lowering(p, ctx).Run();
    return ctx.graph.CheckSize();  // Run stops early once the graph passes its op budget.
  }
};

}  // namespace

std::unique_ptr<Algorithm> MakeCannon() { return std::make_unique<Cannon>(); }

AlgorithmInfo CannonPlugin() {
  return {
      .name = "cannon",
      .description = "Cannon: initial skew, then SendRecv shifts overlapped with partial GeMMs",
      .params = {DataflowParam(
          "os, ls or rs (Table 1); auto = per FC layer, its largest matrix stationary")},
      .make = MakeCannon,
      .mesh = "square meshes only",
  };
}

}  // namespace meshsim::algorithms
