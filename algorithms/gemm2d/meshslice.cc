// MeshSlice 2D GeMM (ISCA'25 §3.1, Figure 5, §3.1.2, Algorithm 2): every chip slices its
// moving shard (or its output shard) into S sub-shards by blocked slicing — every S-th block of
// B = 8 rows or columns — and runs an S-iteration loop of partial AllGather / ReduceScatter plus
// a partial GeMM, software pipelined so that one slice's collectives overlap another slice's
// GeMM (Figure 4). S = 1 is exactly Collective 2D GeMM (collective.cc).
//
// Per slice s on an R×C mesh, chip (i, j) (shards as in algorithms/gemm2d/shards.h):
//   kOS  copy_a  A_s  = slice_col(A_ij)  M/R × K/(C·S)       (S > 1)
//        ag_a    AG over Mesh::Row(i) of A_s → A' (M/R × K/S)
//        ag_b    AG over Mesh::Col(j) of B_s = slice_row(B_ij) (K/(R·S) × N/C) → B' (K/S × N/C)
//        gemm    C_ij += A'·B': (M/R) × (N/C) × (K/S)
//   kLS  ag_b    AG over Mesh::Col(j) of B_s = slice_row(B_ij) (N/(R·S) × K/C) → B' (N/S × K/C)
//        gemm    C' = A_ij·B'ᵀ: (M/R) × (N/S) × (K/C)
//        rds_c   RdS over Mesh::Row(i) of C' → C_s (M/R × N/(C·S))
//        copy_c  C_s scattered into slice_col(C_ij)             (S > 1)
//   kRS  copy_a  A_s  = slice_col(A_ij)  K/R × M/(C·S)  (A stored K×M)   (S > 1)
//        ag_a    AG over Mesh::Row(i) of A_s → A' (K/R × M/S)
//        gemm    C' = A'ᵀ·B_ij: (M/S) × (N/C) × (K/R)
//        rds_c   RdS over Mesh::Col(j) of C' → C_s (M/(R·S) × N/C), written into slice_row(C_ij)
//
// Slice copies. Shards are row-major. slice_col picks every S-th block of 8 columns: in memory
// that is M/R runs of 8 elements (16 bytes) per block, far too fine for a DMA descriptor per
// run, so the sub-shard is packed into a contiguous buffer by a local copy (Op::Copy of the
// sub-shard's bytes) before it is sent — A in kOS and kRS — or, for the output of kLS, the
// received contiguous C_s is scattered into C_ij's strided column blocks by a copy after the
// ReduceScatter. slice_row picks every S-th block of 8 whole rows: each block is one contiguous
// run of 8·cols elements, so the collective's DMA reads (kOS/kLS B) or the reduction writes
// (kRS C) the blocks in place and no copy is emitted. With S = 1 a slice is the whole shard and
// no copy is emitted at all. The gathered A' / B' and the partial C' are consumed and produced in
// the gathered block order (the GeMM walks its k loop, or writes its output tiles, block by
// block), so they need no copy either. Blocked slicing keeps the math exact only if every sliced
// local length is a multiple of S·8 — then global index x belongs to slice (x/8) mod S on every
// chip and the gathered / reduce-scattered blocks line up (§3.1.2); Check enforces it for:
//   kOS  K/C (A_ij's columns) and K/R (B_ij's rows)
//   kLS  N/R (B_ij's rows) and N/C (C_ij's columns: C_s and the RdS pieces of C')
//   kRS  M/C (A_ij's columns) and M/R (C_ij's rows: C_s and the RdS pieces of C')
// Default S (--slices auto): the largest of 4, 2, 1 that all of them allow.
//
// Dependencies (software pipelining with double buffering: two buffers per gathered or partial
// operand, so at most two slices are in flight):
//   copy_a(s, c)   after copy_a(s−1, c) (one copy stream per chip; copy_a(0) after the
//                  frontier of c) and ag_a(s−2) (its packing buffer is free again).
//   ag_x(s, group) after ag_x(s−1, group) (one collective stream per direction), the slice's
//                  copies on every member (or, without copies at s = 0, the members'
//                  frontier), and gemm(s−2) on every member (its A'/B' buffer is free again).
//                  So ag(s+1) overlaps gemm(s) and never waits for it.
//   gemm(s, c)     after the collectives that gather its inputs in slice s, gemm(s−1, c) (the
//                  chip's FIFO orders them anyway; explicit here), and for kLS/kRS rds_c(s−2)
//                  of its group (the C' buffer it writes is free again).
//   rds_c(s, grp)  after gemm(s) on every member, rds_c(s−1, grp), and for kLS copy_c(s−2) on
//                  every member (its receive buffer is free again).
//   copy_c(s, c)   after rds_c(s) and copy_c(s−1, c).
//   frontier(c)    kOS gemm(S−1, c); kLS copy_c(S−1, c) (rds_c(S−1) of row i when S = 1);
//                  kRS rds_c(S−1) of column j. Each ends after all of chip c's ops.
// This gives the cost model's shape (§3.2.2): prologue (the first slice's collectives), S−1
// steady steps of max(collectives, GeMM), epilogue (the last GeMM, or last ReduceScatter).
#include "algorithms/gemm2d/meshslice.h"

#include <array>
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

constexpr char kName[] = "meshslice";
constexpr int kBlock = 8;  // Algorithm 2's block B on TPUs (128×8 memory chunks).
constexpr int kDefaultSlices[] = {4, 2, 1};

// A local length that blocked slicing splits into S sub-shards of blocks of kBlock.
struct SlicedDim {
  const char* name;  // "K/C"
  int64_t value;
  const char* what;  // Which shard's rows or columns.
};

// Precondition: CheckShardable(...) is OK.
std::array<SlicedDim, 2> SlicedDims(const GemmProblem& p, const Mesh& mesh) {
  switch (p.dataflow) {
    case Dataflow::kOS:
      return {
          {{"K/C", p.k / mesh.cols, "A_ij's columns"}, {"K/R", p.k / mesh.rows, "B_ij's rows"}}};
    case Dataflow::kLS:
      return {
          {{"N/R", p.n / mesh.rows, "B_ij's rows"}, {"N/C", p.n / mesh.cols, "C_ij's columns"}}};
    case Dataflow::kRS:
      break;
  }
  return {{{"M/C", p.m / mesh.cols, "A_ij's columns"}, {"M/R", p.m / mesh.rows, "C_ij's rows"}}};
}

// The slice count to use: `slices`, or the default for 0; InvalidArgument if not allowed.
absl::StatusOr<int> ResolveSlices(const GemmProblem& p, const Mesh& mesh, int slices) {
  MESHSIM_RETURN_IF_ERROR(CheckShardable(kName, p, mesh));
  if (slices < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --slices %d is not allowed; use auto or a count S >= 1", kName, slices));
  }
  const std::array<SlicedDim, 2> dims = SlicedDims(p, mesh);
  const auto fits = [&](int s) {
    for (const SlicedDim& d : dims) {
      if (d.value % (int64_t{s} * kBlock) != 0) return false;
    }
    return true;
  };
  if (slices == 0) {
    for (int s : kDefaultSlices) {
      if (fits(s)) return s;
    }
    for (const SlicedDim& d : dims) {
      if (d.value % kBlock != 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: --slices auto finds no S in {4, 2, 1}: %s = %d (%s, dataflow %s, mesh %s) is "
            "not a multiple of the block %d",
            kName, d.name, d.value, d.what, ToString(p.dataflow), mesh.ToString(), kBlock));
      }
    }
    return absl::InternalError("meshslice: no default slice count");  // Unreachable: S = 1 fits.
  }
  if (!fits(slices)) {
    for (const SlicedDim& d : dims) {
      const std::string what = absl::StrFormat("%s (%s, dataflow %s, mesh %s)", d.name, d.what,
                                               ToString(p.dataflow), mesh.ToString());
      MESHSIM_RETURN_IF_ERROR(CheckSlices(kName, what, d.value, slices, kBlock));
    }
  }
  return slices;
}

// Builds the ops of one problem. Op ids are kept per slice (S × chips), so slice s can depend
// on slices s−1 and s−2; every dependency list is bounded by the group size, so lowering is
// O(S · chips · max(R, C)).
class Lowering {
 public:
  Lowering(const GemmProblem& p, LoweringContext& ctx, int slices)
      : p_(p),
        ctx_(ctx),
        g_(ctx.graph),
        rows_(ctx.mesh.rows),
        cols_(ctx.mesh.cols),
        chips_(ctx.mesh.chips()),
        s_(slices),
        eb_(ctx.element_bytes),
        sh_(LocalShards(p, ctx.mesh)),
        groups_(BuildRowColGroups(ctx.mesh, ctx.graph)) {}

  void Run() {
    switch (p_.dataflow) {
      case Dataflow::kOS:
        return LowerOS();
      case Dataflow::kLS:
        return LowerLS();
      case Dataflow::kRS:
        return LowerRS();
    }
  }

 private:
  // Per-slice op ids: [s · n + x] for x a chip, row or column.
  using Ids = std::vector<core::OpId>;

  int Chip(int i, int j) const { return i * cols_ + j; }

  // The tags of op kind `what` (KindTags), or none when `emitted` is false: a kind's name is
  // interned only when the problem has such ops.
  core::OpTags TagsIf(bool emitted, const char* what) {
    return emitted ? KindTags(ctx_, p_, what) : core::OpTags();
  }

  // deps_ += the ids of slice s in `ids` (n per slice) for every chip of `members`.
  void DepOnMembers(const Ids& ids, int s, const std::vector<core::ChipId>& members) {
    for (core::ChipId c : members) deps_.push_back(ids[size_t(s) * chips_ + ctx_.mesh.Local(c)]);
  }

  // copy_a(s, c) for every chip: the packing copy of slice_col(A_ij) (kOS, kRS; S > 1).
  void PackA(int s, const core::OpTags& tags, const Ids& ag_a, Ids& copy_a) {
    const int64_t bytes = sh_.a_elems() / s_ * eb_;
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        const int c = Chip(i, j);
        deps_.clear();
        if (s == 0) {
          AppendAfter(ctx_, ctx_.mesh.Chip(c), deps_);
        } else {
          deps_.push_back(copy_a[size_t(s - 1) * chips_ + c]);
        }
        if (s >= 2) deps_.push_back(ag_a[size_t(s - 2) * rows_ + i]);
        copy_a[size_t(s) * chips_ + c] =
            g_.Add(Tagged(core::Op::Copy(ctx_.mesh.Chip(c), bytes), tags, s), deps_);
      }
    }
  }

  // The moving A of kOS and kRS: per slice, the packing copies of slice_col(A_ij) (S > 1) and
  // the AllGathers of A_s along the rows.
  struct AStream {
    core::OpTags copy_tags, ag_tags;
    Ids copy, ag;  // [s · chips + c], [s · rows + i].
  };
  AStream MakeAStream() {
    return {TagsIf(s_ > 1, "copy_a"), KindTags(ctx_, p_, "ag_a"),
            Ids(s_ > 1 ? size_t(s_) * chips_ : 0), Ids(size_t(s_) * rows_)};
  }
  // Slice s of `a`: copy_a(s) on every chip, then ag_a(s) on every row.
  void MoveA(int s, const Ids& gemm, AStream& a) {
    if (s_ > 1) PackA(s, a.copy_tags, a.ag, a.copy);
    Gather(s, sh_.a_elems() / s_ * eb_, a.ag_tags, groups_.row, groups_.row_members,
           s_ > 1 ? &a.copy : nullptr, gemm, a.ag);
  }

  // The AllGathers of slice s over `groups` (members `members`): after the previous slice's
  // AllGather of the group, this slice's packing copies (or the members' frontier), and
  // gemm(s−2) on the members.
  void Gather(int s, int64_t bytes, const core::OpTags& tags,
              const std::vector<core::GroupId>& groups,
              const std::vector<std::vector<core::ChipId>>& members, const Ids* copies,
              const Ids& gemm, Ids& ag) {
    const int n = static_cast<int>(groups.size());
    for (int x = 0; x < n; ++x) {
      deps_.clear();
      if (copies != nullptr) {
        DepOnMembers(*copies, s, members[x]);
      } else if (s == 0) {
        AppendAfter(ctx_, members[x], deps_);
      }
      if (s >= 1) deps_.push_back(ag[size_t(s - 1) * n + x]);
      if (s >= 2) DepOnMembers(gemm, s - 2, members[x]);
      ag[size_t(s) * n + x] = g_.Add(
          Tagged(core::Op::Collective(core::CollectiveKind::kAllGather, groups[x], bytes), tags, s),
          deps_);
    }
  }

  // gemm(s, c) on every chip (i, j): after slice s's AllGather of its row (`row_ag`: A in kOS
  // and kRS) and of its column (`col_ag`: B in kOS and kLS), gemm(s−1, c) (the chip's FIFO orders
  // them anyway; explicit here), and, for kLS/kRS, rds_c(s−2) of its group (`rds`, per row when
  // `rds_rows`): the C' buffer it writes is free again.
  void Compute(int s, int64_t m, int64_t n, int64_t k, const core::OpTags& tags, const Ids* row_ag,
               const Ids* col_ag, const Ids* rds, bool rds_rows, Ids& gemm) {
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        const int c = Chip(i, j);
        deps_.clear();
        if (row_ag != nullptr) deps_.push_back((*row_ag)[size_t(s) * rows_ + i]);
        if (col_ag != nullptr) deps_.push_back((*col_ag)[size_t(s) * cols_ + j]);
        if (s >= 1) deps_.push_back(gemm[size_t(s - 1) * chips_ + c]);
        if (rds != nullptr && s >= 2) {
          deps_.push_back(rds_rows ? (*rds)[size_t(s - 2) * rows_ + i]
                                   : (*rds)[size_t(s - 2) * cols_ + j]);
        }
        gemm[size_t(s) * chips_ + c] =
            g_.Add(Tagged(core::Op::Gemm(ctx_.mesh.Chip(c), m, n, k), tags, s), deps_);
      }
    }
  }

  // The ReduceScatters of slice s: after gemm(s) on every member, the previous slice's
  // ReduceScatter of the group and (kLS) copy_c(s−2) on the members.
  void Scatter(int s, const core::OpTags& tags, const std::vector<core::GroupId>& groups,
               const std::vector<std::vector<core::ChipId>>& members, const Ids& gemm,
               const Ids* copy_c, Ids& rds) {
    const int64_t bytes = sh_.c_elems() / s_ * eb_;
    const int n = static_cast<int>(groups.size());
    for (int x = 0; x < n; ++x) {
      deps_.clear();
      DepOnMembers(gemm, s, members[x]);
      if (s >= 1) deps_.push_back(rds[size_t(s - 1) * n + x]);
      if (copy_c != nullptr && s >= 2) DepOnMembers(*copy_c, s - 2, members[x]);
      rds[size_t(s) * n + x] = g_.Add(
          Tagged(core::Op::Collective(core::CollectiveKind::kReduceScatter, groups[x], bytes), tags,
                 s),
          deps_);
    }
  }

  void LowerOS() {
    AStream a = MakeAStream();
    Ids ag_b(size_t(s_) * cols_), gemm(size_t(s_) * chips_);
    const core::OpTags ag_b_tags = KindTags(ctx_, p_, "ag_b");
    const core::OpTags gemm_tags = KindTags(ctx_, p_, "gemm");
    const int64_t m = p_.m / rows_, n = p_.n / cols_, k = p_.k / s_;
    for (int s = 0; s < s_; ++s) {
      if (g_.full()) return;  // SlicedAlgorithm::Lower reports it.
      MoveA(s, gemm, a);
      Gather(s, sh_.b_elems() / s_ * eb_, ag_b_tags, groups_.col, groups_.col_members, nullptr,
             gemm, ag_b);
      Compute(s, m, n, k, gemm_tags, &a.ag, &ag_b, nullptr, false, gemm);
    }
    for (int c = 0; c < chips_; ++c) {
      ctx_.SetFrontier(ctx_.mesh.Chip(c), gemm[size_t(s_ - 1) * chips_ + c]);
    }
  }

  void LowerLS() {
    Ids gemm(size_t(s_) * chips_), copy_c(s_ > 1 ? size_t(s_) * chips_ : 0);
    Ids ag_b(size_t(s_) * cols_), rds(size_t(s_) * rows_);
    const core::OpTags ag_b_tags = KindTags(ctx_, p_, "ag_b");
    const core::OpTags gemm_tags = KindTags(ctx_, p_, "gemm");
    const core::OpTags rds_tags = KindTags(ctx_, p_, "rds_c");
    const core::OpTags copy_tags = TagsIf(s_ > 1, "copy_c");
    const int64_t m = p_.m / rows_, n = p_.n / s_, k = p_.k / cols_;
    const int64_t copy_bytes = sh_.c_elems() / s_ * eb_;
    for (int s = 0; s < s_; ++s) {
      if (g_.full()) return;  // SlicedAlgorithm::Lower reports it.
      Gather(s, sh_.b_elems() / s_ * eb_, ag_b_tags, groups_.col, groups_.col_members, nullptr,
             gemm, ag_b);
      Compute(s, m, n, k, gemm_tags, nullptr, &ag_b, &rds, true, gemm);
      Scatter(s, rds_tags, groups_.row, groups_.row_members, gemm, s_ > 1 ? &copy_c : nullptr, rds);
      if (s_ > 1) {
        for (int i = 0; i < rows_; ++i) {
          for (int j = 0; j < cols_; ++j) {
            const int c = Chip(i, j);
            deps_.assign({rds[size_t(s) * rows_ + i]});
            if (s >= 1) deps_.push_back(copy_c[size_t(s - 1) * chips_ + c]);
            copy_c[size_t(s) * chips_ + c] =
                g_.Add(Tagged(core::Op::Copy(ctx_.mesh.Chip(c), copy_bytes), copy_tags, s), deps_);
          }
        }
      }
    }
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        const int c = Chip(i, j);
        ctx_.SetFrontier(ctx_.mesh.Chip(c), s_ > 1 ? copy_c[size_t(s_ - 1) * chips_ + c]
                                                   : rds[size_t(s_ - 1) * rows_ + i]);
      }
    }
  }

  void LowerRS() {
    AStream a = MakeAStream();
    Ids gemm(size_t(s_) * chips_), rds(size_t(s_) * cols_);
    const core::OpTags gemm_tags = KindTags(ctx_, p_, "gemm");
    const core::OpTags rds_tags = KindTags(ctx_, p_, "rds_c");
    const int64_t m = p_.m / s_, n = p_.n / cols_, k = p_.k / rows_;
    for (int s = 0; s < s_; ++s) {
      if (g_.full()) return;  // SlicedAlgorithm::Lower reports it.
      MoveA(s, gemm, a);
      Compute(s, m, n, k, gemm_tags, &a.ag, nullptr, &rds, false, gemm);
      Scatter(s, rds_tags, groups_.col, groups_.col_members, gemm, nullptr, rds);
    }
    for (int i = 0; i < rows_; ++i) {
      for (int j = 0; j < cols_; ++j) {
        ctx_.SetFrontier(ctx_.mesh.At(i, j), rds[size_t(s_ - 1) * cols_ + j]);
      }
    }
  }

  const GemmProblem& p_;
  LoweringContext& ctx_;
  core::OpGraph& g_;
  const int rows_, cols_, chips_;
  const int s_;  // S, the slice count.
  const int64_t eb_;
  const Shards sh_;
  const RowColGroups groups_;
  std::vector<core::OpId> deps_;  // Scratch dependency list, reused for every op.
};

}  // namespace

std::unique_ptr<Algorithm> MakeMeshSlice() {
  return std::make_unique<SlicedAlgorithm<ResolveSlices, Lowering>>();
}

AlgorithmInfo MeshSlicePlugin() {
  return {
      .name = "meshslice",
      .description =
          "MeshSlice (ISCA'25 §3.1, Fig. 5): slices the shards into S sub-shards; partial "
          "AllGather/ReduceScatter in both directions, software pipelined with the partial GeMMs",
      .params = {SlicesParam("S, the slice count: S·8 must divide every sliced local dimension "
                             "(auto = the largest of 4, 2, 1 that does)"),
                 DataflowParam(
                     "os, ls or rs (Table 1); auto = per FC layer, its largest matrix stationary")},
      .make = MakeMeshSlice,
  };
}

}  // namespace meshsim::algorithms
