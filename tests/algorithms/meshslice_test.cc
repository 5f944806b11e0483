// Tests of the MeshSlice plugin (ISCA'25 §3.1, Figure 5): lowering shape (op counts, flops,
// received and copied bytes, the software-pipelining dependencies), simulated small cases
// against the MeshSlice cost model (§3.2.2), overlap against Collective, and bad input.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "algorithms/algorithm.h"
#include "algorithms/registry.h"
#include "core/op_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/algorithms/lowering_testing.h"

namespace meshsim::algorithms {
namespace {

using ::testing::HasSubstr;
using testing_util::AllGatherSeconds;
using testing_util::ComputeSeconds;
using testing_util::DependsOn;
using testing_util::DirectlyDependsOn;
using testing_util::ExpectChainedThroughFrontier;
using testing_util::Find;
using testing_util::FlopsPerChip;
using testing_util::kDataflows;
using testing_util::kSmallMeshes;
using testing_util::Lower;
using testing_util::OpCounts;
using testing_util::Problem;
using testing_util::ReceivedBytesPerChip;
using testing_util::ReduceScatterSeconds;
using testing_util::Simulate;

TEST(MeshSliceLoweringTest, OpCountsFlopsAndBytes) {
  const int64_t m = 512, n = 1024, k = 2048, eb = 2;
  for (Dataflow d : kDataflows) {
    for (const Mesh& mesh : kSmallMeshes) {
      const core::OpGraph collective = Lower("collective", Problem(d, m, n, k), mesh, 0);
      const std::vector<double> collective_bytes = ReceivedBytesPerChip(collective, mesh.chips());
      for (int s : {1, 2, 4}) {
        SCOPED_TRACE(absl::StrCat(ToString(d), " on ", mesh.ToString(), " S = ", s));
        const int r = mesh.rows, c = mesh.cols, chips = mesh.chips();
        const core::OpGraph g = Lower("meshslice", Problem(d, m, n, k), mesh, s);
        const std::map<std::string, int> counts = OpCounts(g);
        // Per slice: one GeMM per chip, one collective per row or column, and (S > 1) one
        // copy per chip — packing slice_col(A_ij) in OS/RS, scattering C_s in LS.
        const int copies = s > 1 ? s * chips : 0;
        EXPECT_EQ(counts.at("gemm"), s * chips);
        EXPECT_EQ(counts.count("copy") ? counts.at("copy") : 0, copies);
        switch (d) {
          case Dataflow::kOS:  // S·R AGs along rows (A) + S·C along columns (B).
            EXPECT_EQ(counts.at("allgather"), s * (r + c));
            EXPECT_EQ(counts.count("reducescatter"), 0u);
            break;
          case Dataflow::kLS:  // S·C AGs along columns (B), S·R RdS along rows (C').
            EXPECT_EQ(counts.at("allgather"), s * c);
            EXPECT_EQ(counts.at("reducescatter"), s * r);
            break;
          case Dataflow::kRS:  // S·R AGs along rows (A), S·C RdS along columns (C').
            EXPECT_EQ(counts.at("allgather"), s * r);
            EXPECT_EQ(counts.at("reducescatter"), s * c);
            break;
        }
        EXPECT_EQ(g.size(), static_cast<size_t>(s * (chips + r + c) + copies));

        // Σ flops = 2MNK, equally split: each chip 2MNK/chips.
        for (double f : FlopsPerChip(g, chips)) EXPECT_DOUBLE_EQ(f, 2.0 * m * n * k / chips);

        // Slicing does not change traffic: every chip receives what it does in Collective —
        // OS (C−1)(M/R)(K/C) + (R−1)(K/R)(N/C), LS (R−1)(N/R)(K/C) + (C−1)(M/R)(N/C),
        // RS (C−1)(K/R)(M/C) + (R−1)(M/R)(N/C) elements (checked in collective_test.cc).
        const std::vector<double> bytes = ReceivedBytesPerChip(g, chips);
        for (int x = 0; x < chips; ++x) EXPECT_DOUBLE_EQ(bytes[x], collective_bytes[x]);

        // The copies of a chip move its whole sliced shard once: A_ij = M/R·K/C (OS),
        // C_ij = M/R·N/C (LS), A_ij = K/R·M/C (RS) elements.
        std::vector<int64_t> copied(chips, 0);
        for (uint32_t i = 0; i < g.size(); ++i) {
          const core::Op& op = g.op(core::OpId(i));
          if (op.kind == core::OpKind::kCopy) copied[op.chip.value()] += op.bytes;
        }
        const int64_t shard = d == Dataflow::kOS   ? (m / r) * (k / c)
                              : d == Dataflow::kLS ? (m / r) * (n / c)
                                                   : (k / r) * (m / c);
        for (int64_t b : copied) EXPECT_EQ(b, s > 1 ? shard * eb : 0);
      }
    }
  }
}

TEST(MeshSliceLoweringTest, GemmShapesAndTags) {
  const Mesh mesh{2, 4};
  struct Want {
    Dataflow d;
    int64_t m, n, k;  // Local partial GeMM of M=512, N=1024, K=2048 on 2x4 with S = 4.
    std::vector<std::string> labels;
  };
  const Want wants[] = {
      {Dataflow::kOS, 256, 256, 512, {"l.copy_a", "l.ag_a", "l.ag_b", "l.gemm"}},    // K/S
      {Dataflow::kLS, 256, 256, 512, {"l.ag_b", "l.gemm", "l.rds_c", "l.copy_c"}},   // N/S
      {Dataflow::kRS, 128, 256, 1024, {"l.copy_a", "l.ag_a", "l.gemm", "l.rds_c"}},  // M/S
  };
  for (const Want& w : wants) {
    const core::OpGraph g = Lower("meshslice", Problem(w.d, 512, 1024, 2048, "l"), mesh, 4);
    std::map<std::string, std::vector<int>> per_slice;
    for (uint32_t i = 0; i < g.size(); ++i) {
      const core::Op& op = g.op(core::OpId(i));
      const std::string label = g.Label(core::OpId(i));
      EXPECT_THAT(w.labels, ::testing::Contains(label)) << ToString(w.d);
      ASSERT_GE(op.tags.slice, 0);
      ASSERT_LT(op.tags.slice, 4);
      per_slice[label].resize(4);
      ++per_slice[label][op.tags.slice];
      if (op.kind != core::OpKind::kGemm) continue;
      EXPECT_EQ(op.m, w.m) << ToString(w.d);
      EXPECT_EQ(op.n, w.n) << ToString(w.d);
      EXPECT_EQ(op.k, w.k) << ToString(w.d);
    }
    // Every kind of op appears equally often in every slice.
    for (const auto& [label, counts] : per_slice) {
      EXPECT_THAT(counts, ::testing::Each(counts[0])) << label;
    }
  }
}

// S = 1 is Collective: the same ops (kinds, sizes, groups) in the same order with the same
// dependencies, only tagged slice 0.
TEST(MeshSliceLoweringTest, OneSliceIsCollective) {
  for (Dataflow d : kDataflows) {
    for (const Mesh& mesh : kSmallMeshes) {
      SCOPED_TRACE(absl::StrCat(ToString(d), " on ", mesh.ToString()));
      const core::OpGraph a = Lower("meshslice", Problem(d, 512, 1024, 2048), mesh, 1);
      const core::OpGraph b = Lower("collective", Problem(d, 512, 1024, 2048), mesh, 0);
      ASSERT_EQ(a.size(), b.size());
      for (uint32_t i = 0; i < a.size(); ++i) {
        const core::Op &x = a.op(core::OpId(i)), &y = b.op(core::OpId(i));
        EXPECT_EQ(x.kind, y.kind);
        EXPECT_EQ(x.collective, y.collective);
        EXPECT_EQ(x.chip, y.chip);
        EXPECT_EQ(x.bytes, y.bytes);
        EXPECT_EQ(x.m, y.m);
        EXPECT_EQ(x.n, y.n);
        EXPECT_EQ(x.k, y.k);
        EXPECT_EQ(a.Label(core::OpId(i)), b.Label(core::OpId(i)));
        if (x.kind == core::OpKind::kCollective) {
          const auto ga = a.group(x.group), gb = b.group(y.group);
          EXPECT_TRUE(std::equal(ga.begin(), ga.end(), gb.begin(), gb.end()));
        }
        const auto da = a.deps(core::OpId(i)), db = b.deps(core::OpId(i));
        std::vector<core::OpId> sa(da.begin(), da.end()), sb(db.begin(), db.end());
        std::sort(sa.begin(), sa.end());
        std::sort(sb.begin(), sb.end());
        EXPECT_EQ(sa, sb) << "op " << i;
      }
    }
  }
}

// Software pipelining (meshslice.cc banner): the AllGathers of slice s+1 wait for those of
// slice s and for the GeMMs of slice s−1 — never for the GeMMs of slice s — and GeMM s waits
// for both AllGathers of slice s.
TEST(MeshSliceLoweringTest, OutputStationaryPipelineDependencies) {
  const Mesh mesh{2, 4};
  const int S = 4;
  const core::OpGraph g = Lower("meshslice", Problem(Dataflow::kOS, 512, 1024, 2048), mesh, S);
  for (int c = 0; c < mesh.chips(); ++c) {
    for (int s = 0; s < S; ++s) {
      const core::OpId gemm = Find(g, "gemm", s, c);
      const core::OpId ag_a = Find(g, "ag_a", s, c), ag_b = Find(g, "ag_b", s, c);
      const core::OpId copy_a = Find(g, "copy_a", s, c);
      EXPECT_TRUE(DirectlyDependsOn(g, gemm, ag_a));
      EXPECT_TRUE(DirectlyDependsOn(g, gemm, ag_b));
      EXPECT_TRUE(DirectlyDependsOn(g, ag_a, copy_a));  // A_s is packed before it is sent.
      EXPECT_FALSE(DependsOn(g, ag_b, copy_a));         // B_s needs no copy.
      if (s == 0) continue;
      EXPECT_TRUE(DirectlyDependsOn(g, gemm, Find(g, "gemm", s - 1, c)));
      EXPECT_TRUE(DirectlyDependsOn(g, ag_a, Find(g, "ag_a", s - 1, c)));
      EXPECT_TRUE(DirectlyDependsOn(g, ag_b, Find(g, "ag_b", s - 1, c)));
      // Any chip's GeMM of slice s−1 (not only c's): the AG of slice s overlaps it.
      for (int x = 0; x < mesh.chips(); ++x) {
        EXPECT_FALSE(DependsOn(g, ag_a, Find(g, "gemm", s - 1, x)));
        EXPECT_FALSE(DependsOn(g, ag_b, Find(g, "gemm", s - 1, x)));
      }
      if (s >= 2) {  // Double buffering: the buffer GeMM s−2 read is free again.
        EXPECT_TRUE(DirectlyDependsOn(g, ag_a, Find(g, "gemm", s - 2, c)));
        EXPECT_TRUE(DirectlyDependsOn(g, ag_b, Find(g, "gemm", s - 2, c)));
        EXPECT_TRUE(DependsOn(g, copy_a, Find(g, "ag_a", s - 2, c)));
        EXPECT_FALSE(DependsOn(g, copy_a, Find(g, "ag_a", s - 1, c)));
      }
    }
  }
}

TEST(MeshSliceLoweringTest, LeftAndRightStationaryPipelineDependencies) {
  const Mesh mesh{4, 2};
  const int S = 4;
  for (Dataflow d : {Dataflow::kLS, Dataflow::kRS}) {
    SCOPED_TRACE(ToString(d));
    const bool ls = d == Dataflow::kLS;
    const char* ag_what = ls ? "ag_b" : "ag_a";
    const core::OpGraph g = Lower("meshslice", Problem(d, 512, 1024, 2048), mesh, S);
    for (int c = 0; c < mesh.chips(); ++c) {
      for (int s = 0; s < S; ++s) {
        const core::OpId gemm = Find(g, "gemm", s, c), ag = Find(g, ag_what, s, c);
        const core::OpId rds = Find(g, "rds_c", s, c);
        EXPECT_TRUE(DirectlyDependsOn(g, gemm, ag));
        EXPECT_TRUE(DirectlyDependsOn(g, rds, gemm));  // RdS s waits for GeMM s of its members.
        EXPECT_EQ(g.group(g.op(rds).group).size(), static_cast<size_t>(ls ? mesh.cols : mesh.rows));
        if (ls) {  // C_s is scattered into C_ij's strided columns after the RdS.
          EXPECT_TRUE(DirectlyDependsOn(g, Find(g, "copy_c", s, c), rds));
        } else {  // A_s is packed before the AG.
          EXPECT_TRUE(DirectlyDependsOn(g, ag, Find(g, "copy_a", s, c)));
        }
        if (s + 1 < S) {
          const core::OpId next_ag = Find(g, ag_what, s + 1, c);
          EXPECT_TRUE(DirectlyDependsOn(g, next_ag, ag));
          for (int x = 0; x < mesh.chips(); ++x) {
            EXPECT_FALSE(DependsOn(g, next_ag, Find(g, "gemm", s, x)));
          }
          // GeMM s+1 does not wait for RdS s: the RdS of one slice overlaps the next GeMM.
          EXPECT_FALSE(DependsOn(g, Find(g, "gemm", s + 1, c), rds));
          EXPECT_TRUE(DirectlyDependsOn(g, Find(g, "rds_c", s + 1, c), rds));
        }
        if (s >= 2) {  // C' double buffer: GeMM s writes the buffer RdS s−2 read.
          EXPECT_TRUE(DirectlyDependsOn(g, gemm, Find(g, "rds_c", s - 2, c)));
        }
      }
    }
  }
}

TEST(MeshSliceLoweringTest, FrontierSequencesProblems) {
  const Mesh mesh{2, 4};
  for (Dataflow d : kDataflows) {
    for (int slices : {1, 4}) {
      SCOPED_TRACE(absl::StrCat(ToString(d), " S = ", slices));
      ExpectChainedThroughFrontier("meshslice", Problem(d, 512, 1024, 2048, "first"),
                                   Problem(d, 512, 1024, 2048, "second"), mesh, slices);
    }
  }
}

TEST(MeshSliceLoweringTest, DefaultSliceCountIsTheLargestOfFourTwoOne) {
  const auto slices_of = [](const core::OpGraph& g) {
    int s = 0;
    for (uint32_t i = 0; i < g.size(); ++i) s = std::max(s, g.op(core::OpId(i)).tags.slice + 1);
    return s;
  };
  const Mesh mesh{2, 2};
  // OS slices K/C = K/R = K/2: 512 allows 4; 48 allows 2 (not 4); 24 allows only 1.
  EXPECT_EQ(slices_of(Lower("meshslice", Problem(Dataflow::kOS, 64, 64, 1024), mesh, 0)), 4);
  EXPECT_EQ(slices_of(Lower("meshslice", Problem(Dataflow::kOS, 64, 64, 2 * 16 * 3), mesh, 0)), 2);
  EXPECT_EQ(slices_of(Lower("meshslice", Problem(Dataflow::kOS, 64, 64, 2 * 8 * 3), mesh, 0)), 1);
  // LS slices N/R and N/C; RS slices M/C and M/R.
  EXPECT_EQ(slices_of(Lower("meshslice", Problem(Dataflow::kLS, 48, 2 * 16 * 3, 48), mesh, 0)), 2);
  EXPECT_EQ(slices_of(Lower("meshslice", Problem(Dataflow::kRS, 2 * 8 * 5, 48, 48), mesh, 0)), 1);
}

// One slice's collectives and GeMM, per the terms of the simulation-fitted MeshSlice cost model
// (reference/meshslice-calibration.md; AllGatherSeconds etc. in lowering_testing.h), bf16.
struct SliceCost {
  double x = 0, w = 0;  // The two collectives (OS: AG_A, AG_B; LS: AG_B, RdS_C; RS: AG_A, RdS_C).
  double comp = 0;
};

SliceCost SliceCosts(const GemmProblem& p, const Mesh& mesh, int s) {
  const double r = mesh.rows, c = mesh.cols, m = p.m, n = p.n, k = p.k, eb = 2;
  switch (p.dataflow) {
    case Dataflow::kOS:  // A_s: M/R × K/(C·S) along the row; B_s: K/(R·S) × N/C along the column.
      return {AllGatherSeconds(c, m / r * k / (c * s) * eb),
              AllGatherSeconds(r, k / (r * s) * n / c * eb), ComputeSeconds(m / r, n / c, k / s)};
    case Dataflow::kLS:  // B_s: N/(R·S) × K/C along the column; C_s: M/R × N/(C·S) along the row.
      return {AllGatherSeconds(r, n / (r * s) * k / c * eb),
              ReduceScatterSeconds(c, m / r * n / (c * s) * eb),
              ComputeSeconds(m / r, n / s, k / c)};
    case Dataflow::kRS:  // A_s: K/R × M/(C·S) along the row; C_s: M/(R·S) × N/C along the column.
      return {AllGatherSeconds(c, k / r * m / (c * s) * eb),
              ReduceScatterSeconds(r, m / (r * s) * n / c * eb),
              ComputeSeconds(m / s, n / c, k / r)};
  }
  return {};
}

// §3.2.2, prologue + (S−1)·steady + epilogue:
//   OS:     T = max(AG_A, AG_B) + (S−1)·max(AG_A, AG_B, comp) + comp
//   LS/RS:  T = (AG + RdS) + comp + (S−1)·max(AG, RdS, comp)
double MeshSliceModelSeconds(const GemmProblem& p, const Mesh& mesh, int s) {
  const SliceCost t = SliceCosts(p, mesh, s);
  const double steady = std::max({t.x, t.w, t.comp});
  if (p.dataflow == Dataflow::kOS) return std::max(t.x, t.w) + (s - 1) * steady + t.comp;
  return t.x + t.w + t.comp + (s - 1) * steady;
}

// The same slices run one after the other without overlap: S·(collectives + comp).
double SerialModelSeconds(const GemmProblem& p, const Mesh& mesh, int s) {
  const SliceCost t = SliceCosts(p, mesh, s);
  return s * ((p.dataflow == Dataflow::kOS ? std::max(t.x, t.w) : t.x + t.w) + t.comp);
}

struct TimedCase {
  GemmProblem p;
  Mesh mesh;
};

// Local GeMMs have k ≥ 8192 in every slice, so the simulated chip runs them within ~2% of the
// model's 249 TFLOPS (a 2048×2048×2048 GeMM runs at ≈217 TFLOPS in the tiled chip model).
std::vector<TimedCase> TimedCases() {
  return {
      {Problem(Dataflow::kOS, 8192, 8192, 32768), {4, 4}},    // Communication-bound.
      {Problem(Dataflow::kOS, 16384, 16384, 32768), {4, 4}},  // Compute-bound.
      {Problem(Dataflow::kOS, 8192, 16384, 65536), {4, 8}},   // AG_A ≠ AG_B.
      {Problem(Dataflow::kLS, 8192, 8192, 32768), {4, 4}},    // AG-bound.
      {Problem(Dataflow::kLS, 32768, 8192, 32768), {4, 4}},   // Compute-bound.
      {Problem(Dataflow::kRS, 8192, 8192, 32768), {4, 4}},    // AG-bound.
      {Problem(Dataflow::kRS, 8192, 32768, 32768), {4, 4}},   // Compute-bound.
  };
}

TEST(MeshSliceTimelineTest, MatchesCostModelWithinFivePercent) {
  for (const TimedCase& c : TimedCases()) {
    for (int s : {1, 2, 4}) {
      SCOPED_TRACE(absl::StrCat(ToString(c.p.dataflow), " ", c.p.m, "x", c.p.n, "x", c.p.k, " on ",
                                c.mesh.ToString(), " S = ", s));
      const double t = Simulate(Lower("meshslice", c.p, c.mesh, s), c.mesh);
      const double model = MeshSliceModelSeconds(c.p, c.mesh, s);
      EXPECT_NEAR(t / model, 1.0, 0.05) << "simulated " << t * 1e6 << " us, model " << model * 1e6;
      // The check can fail: without overlap the time would be ≥ 10% longer than the model.
      if (s > 1) {
        EXPECT_GT(SerialModelSeconds(c.p, c.mesh, s) / model, 1.10);
      }
    }
  }
}

// Figure 4: overlapping both directions beats Collective's serial collectives + GeMM — on the
// communication-bound cases too, where the extra launches of S slices are paid back.
TEST(MeshSliceTimelineTest, FourSlicesBeatCollective) {
  for (const TimedCase& c : TimedCases()) {
    SCOPED_TRACE(absl::StrCat(ToString(c.p.dataflow), " ", c.p.m, "x", c.p.n, "x", c.p.k, " on ",
                              c.mesh.ToString()));
    const double collective = Simulate(Lower("collective", c.p, c.mesh, 0), c.mesh);
    const double meshslice = Simulate(Lower("meshslice", c.p, c.mesh, 4), c.mesh);
    EXPECT_LT(meshslice, 0.95 * collective) << meshslice * 1e6 << " vs " << collective * 1e6;
  }
}

TEST(MeshSliceCheckTest, RejectsSliceCountsTheBlocksDoNotAllow) {
  auto algo = (*FindAlgorithm("meshslice"))->make();
  // OS on 4x4, K = 4096: K/C = K/R = 1024 = 8·128; S = 3 does not divide it.
  absl::Status s = algo->Check(Problem(Dataflow::kOS, 4096, 4096, 4096), Mesh{4, 4}, 3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("meshslice"));
  EXPECT_THAT(s.message(), HasSubstr("--slices 3"));
  EXPECT_THAT(s.message(), HasSubstr("K/C"));
  EXPECT_THAT(s.message(), HasSubstr("1024"));
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
  EXPECT_TRUE(algo->Check(Problem(Dataflow::kOS, 4096, 4096, 4096), Mesh{4, 4}, 128).ok());
  EXPECT_FALSE(algo->Check(Problem(Dataflow::kOS, 4096, 4096, 4096), Mesh{4, 4}, 256).ok());

  // OS on 2x8, K = 512: K/C = 64 allows S = 8 but K/R = 256 is checked too; K = 384: K/C = 48
  // allows S = 2 only, K/R = 192 allows 8.
  s = algo->Check(Problem(Dataflow::kOS, 512, 512, 384), Mesh{2, 8}, 4);
  EXPECT_THAT(s.message(), HasSubstr("K/C"));
  EXPECT_THAT(s.message(), HasSubstr("= 48"));
  s = algo->Check(Problem(Dataflow::kOS, 512, 512, 384), Mesh{8, 2}, 4);
  EXPECT_THAT(s.message(), HasSubstr("K/R"));

  // LS slices N/R (B's rows) and N/C (C's columns); RS slices M/C (A's columns) and M/R.
  s = algo->Check(Problem(Dataflow::kLS, 512, 384, 512), Mesh{2, 8}, 4);
  EXPECT_THAT(s.message(), HasSubstr("N/C"));
  s = algo->Check(Problem(Dataflow::kLS, 512, 384, 512), Mesh{8, 2}, 4);
  EXPECT_THAT(s.message(), HasSubstr("N/R"));
  s = algo->Check(Problem(Dataflow::kRS, 384, 512, 512), Mesh{2, 8}, 4);
  EXPECT_THAT(s.message(), HasSubstr("M/C"));
  s = algo->Check(Problem(Dataflow::kRS, 384, 512, 512), Mesh{8, 2}, 4);
  EXPECT_THAT(s.message(), HasSubstr("M/R"));
  EXPECT_THAT(s.message(), HasSubstr("rs"));

  s = algo->Check(Problem(Dataflow::kOS, 512, 512, 512), Mesh{2, 2}, -1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--slices -1"));

  // auto finds nothing when a sliced dimension is not a multiple of the block.
  s = algo->Check(Problem(Dataflow::kOS, 512, 512, 2 * 12), Mesh{2, 2}, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--slices auto"));
  EXPECT_THAT(s.message(), HasSubstr("K/C = 12"));
}

TEST(MeshSliceCheckTest, RejectsMeshesThatDoNotDivideTheMatrices) {
  auto algo = (*FindAlgorithm("meshslice"))->make();
  absl::Status s = algo->Check(Problem(Dataflow::kOS, 1024, 1000, 1024), Mesh{2, 16}, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("meshslice"));
  EXPECT_THAT(s.message(), HasSubstr("N = 1000"));
  EXPECT_THAT(s.message(), HasSubstr("2x16"));
}

}  // namespace
}  // namespace meshsim::algorithms
