// Tests of the Collective 2D GeMM plugin (MeshSlice §2.3.4, Figure 2b): lowering shape (op
// counts, flops, received bytes, dependencies, frontier), simulated small cases against the
// MeshSlice cost model, and bad input.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "algorithms/algorithm.h"
#include "algorithms/llm.h"
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
using testing_util::FindAll;
using testing_util::FlopsPerChip;
using testing_util::kAnySlice;
using testing_util::kDataflows;
using testing_util::kSmallMeshes;
using testing_util::Lower;
using testing_util::OpCounts;
using testing_util::Problem;
using testing_util::ReceivedBytesPerChip;
using testing_util::ReduceScatterSeconds;
using testing_util::Simulate;

TEST(CollectiveLoweringTest, OpCountsFlopsAndReceivedBytes) {
  const int64_t m = 512, n = 1024, k = 2048, eb = 2;
  for (Dataflow d : kDataflows) {
    for (const Mesh& mesh : kSmallMeshes) {
      SCOPED_TRACE(std::string(ToString(d)) + " on " + mesh.ToString());
      const int64_t r = mesh.rows, c = mesh.cols, chips = mesh.chips();
      const core::OpGraph g = Lower("collective", Problem(d, m, n, k), mesh, 0);
      const std::map<std::string, int> counts = OpCounts(g);
      // One GeMM per chip; one collective per row (C chips each) or column (R chips each).
      EXPECT_EQ(counts.at("gemm"), chips);
      EXPECT_EQ(counts.count("copy"), 0u);
      switch (d) {
        case Dataflow::kOS:  // AG of A per row + AG of B per column.
          EXPECT_EQ(counts.at("allgather"), r + c);
          EXPECT_EQ(counts.count("reducescatter"), 0u);
          break;
        case Dataflow::kLS:  // AG of B per column, RdS of C' per row.
          EXPECT_EQ(counts.at("allgather"), c);
          EXPECT_EQ(counts.at("reducescatter"), r);
          break;
        case Dataflow::kRS:  // AG of A per row, RdS of C' per column.
          EXPECT_EQ(counts.at("allgather"), r);
          EXPECT_EQ(counts.at("reducescatter"), c);
          break;
      }
      EXPECT_EQ(g.size(), static_cast<size_t>(chips + r + c));  // Nothing else.

      // Σ flops = 2MNK, equally split.
      const std::vector<double> flops = FlopsPerChip(g, chips);
      for (double f : flops) EXPECT_DOUBLE_EQ(f, 2.0 * m * n * k / chips);

      // Received elements per chip:
      //   OS: (C−1)·(M/R)(K/C) [A along the row] + (R−1)·(K/R)(N/C) [B along the column]
      //   LS: (R−1)·(N/R)(K/C) [B along the column] + (C−1)·(M/R)(N/C) [C' RdS along the row]
      //   RS: (C−1)·(K/R)(M/C) [A along the row] + (R−1)·(M/R)(N/C) [C' RdS along the column]
      double expected = 0;
      switch (d) {
        case Dataflow::kOS:
          expected = (c - 1) * (m / r) * (k / c) + (r - 1) * (k / r) * (n / c);
          break;
        case Dataflow::kLS:
          expected = (r - 1) * (n / r) * (k / c) + (c - 1) * (m / r) * (n / c);
          break;
        case Dataflow::kRS:
          expected = (c - 1) * (k / r) * (m / c) + (r - 1) * (m / r) * (n / c);
          break;
      }
      for (double b : ReceivedBytesPerChip(g, chips)) EXPECT_DOUBLE_EQ(b, expected * eb);
    }
  }
}

TEST(CollectiveLoweringTest, GemmShapesAndTags) {
  const Mesh mesh{2, 4};
  struct Want {
    Dataflow d;
    int64_t m, n, k;  // Local GeMM of M=512, N=1024, K=2048 on 2x4.
  };
  for (const Want& w : {Want{Dataflow::kOS, 256, 256, 2048}, Want{Dataflow::kLS, 256, 1024, 512},
                        Want{Dataflow::kRS, 512, 256, 1024}}) {
    const core::OpGraph g = Lower("collective", Problem(w.d, 512, 1024, 2048, "qkv.fwd"), mesh, 0);
    for (uint32_t i = 0; i < g.size(); ++i) {
      const core::Op& op = g.op(core::OpId(i));
      const std::string label = g.Label(core::OpId(i));
      EXPECT_THAT(
          label, ::testing::AnyOf("qkv.fwd.ag_a", "qkv.fwd.ag_b", "qkv.fwd.gemm", "qkv.fwd.rds_c"));
      EXPECT_EQ(op.tags.slice, -1);
      if (op.kind != core::OpKind::kGemm) continue;
      EXPECT_EQ(op.m, w.m) << ToString(w.d);
      EXPECT_EQ(op.n, w.n) << ToString(w.d);
      EXPECT_EQ(op.k, w.k) << ToString(w.d);
    }
  }
}

TEST(CollectiveLoweringTest, GemmWaitsForItsCollectivesAndReduceScatterForItsGemms) {
  const Mesh mesh{2, 4};
  for (Dataflow d : kDataflows) {
    SCOPED_TRACE(ToString(d));
    const core::OpGraph g = Lower("collective", Problem(d, 512, 1024, 2048), mesh, 0);
    for (int i = 0; i < mesh.rows; ++i) {
      for (int j = 0; j < mesh.cols; ++j) {
        const int c = i * mesh.cols + j;
        const std::vector<core::OpId> gemm = FindAll(g, "gemm", kAnySlice, c);
        ASSERT_EQ(gemm.size(), 1u);
        const std::vector<core::OpId> ag_a = FindAll(g, "ag_a", kAnySlice, c),
                                      ag_b = FindAll(g, "ag_b", kAnySlice, c);
        const std::vector<core::OpId> rds = FindAll(g, "rds_c", kAnySlice, c);
        // Each chip is in exactly one AG per moving input and at most one RdS.
        EXPECT_EQ(ag_a.size(), d == Dataflow::kLS ? 0u : 1u);
        EXPECT_EQ(ag_b.size(), d == Dataflow::kRS ? 0u : 1u);
        EXPECT_EQ(rds.size(), d == Dataflow::kOS ? 0u : 1u);
        for (core::OpId ag : ag_a) {
          EXPECT_TRUE(DirectlyDependsOn(g, gemm[0], ag));
          EXPECT_EQ(g.group(g.op(ag).group).size(), static_cast<size_t>(mesh.cols));  // A row.
        }
        for (core::OpId ag : ag_b) {
          EXPECT_TRUE(DirectlyDependsOn(g, gemm[0], ag));
          EXPECT_EQ(g.group(g.op(ag).group).size(), static_cast<size_t>(mesh.rows));  // A column.
        }
        for (core::OpId r : rds) {
          // The RdS waits for the GeMM of every member (checked from each member's side).
          EXPECT_TRUE(DirectlyDependsOn(g, r, gemm[0]));
          EXPECT_EQ(g.group(g.op(r).group).size(),
                    static_cast<size_t>(d == Dataflow::kLS ? mesh.cols : mesh.rows));
        }
      }
    }
  }
}

// Two problems lowered back to back through one context: every op of the second depends on
// the frontier the first left for each of its chips, and the frontier covers all of a chip's ops.
TEST(CollectiveLoweringTest, FrontierSequencesProblems) {
  const Mesh mesh{2, 4};
  for (Dataflow d : kDataflows) {
    SCOPED_TRACE(ToString(d));
    ExpectChainedThroughFrontier("collective", Problem(d, 512, 1024, 2048, "first"),
                                 Problem(d, 512, 1024, 2048, "second"), mesh, 0);
  }
}

// In the terms of the simulation-fitted MeshSlice cost model (reference/meshslice-calibration.md;
// AllGatherSeconds etc. in lowering_testing.h): our Collective overlaps nothing — both
// AllGathers run concurrently and then the GeMM, so
//   OS: T = max(AG_A, AG_B) + comp(M/R, N/C, K)
//   LS: T = AG_B + comp(M/R, N, K/C) + RdS_C      RS: T = AG_A + comp(M, N/C, K/R) + RdS_C
// (the reference's Collective formula, AGx + max(comp, AGw), assumes one collective overlaps
// the GeMM, which Figure 2b's pseudocode does not do).
double CollectiveModelSeconds(const GemmProblem& p, const Mesh& mesh) {
  const double r = mesh.rows, c = mesh.cols, m = p.m, n = p.n, k = p.k, eb = 2;
  switch (p.dataflow) {
    case Dataflow::kOS:
      return std::max(AllGatherSeconds(c, m / r * k / c * eb),
                      AllGatherSeconds(r, k / r * n / c * eb)) +
             ComputeSeconds(m / r, n / c, k);
    case Dataflow::kLS:
      return AllGatherSeconds(r, n / r * k / c * eb) + ComputeSeconds(m / r, n, k / c) +
             ReduceScatterSeconds(c, m / r * n / c * eb);
    case Dataflow::kRS:
      return AllGatherSeconds(c, k / r * m / c * eb) + ComputeSeconds(m, n / c, k / r) +
             ReduceScatterSeconds(r, m / r * n / c * eb);
  }
  return 0;
}

// Local GeMMs have k ≥ 8192 so the simulated chip runs them near the model's 249 TFLOPS.
TEST(CollectiveTimelineTest, MatchesCostModelWithinFivePercent) {
  struct Case {
    GemmProblem p;
    Mesh mesh;
  };
  const Case cases[] = {
      {Problem(Dataflow::kOS, 8192, 8192, 32768), {4, 4}},    // Communication-heavy.
      {Problem(Dataflow::kOS, 16384, 16384, 32768), {4, 4}},  // Compute-heavy.
      {Problem(Dataflow::kOS, 8192, 16384, 65536), {4, 8}},   // AG_A ≠ AG_B.
      {Problem(Dataflow::kLS, 8192, 8192, 32768), {4, 4}},
      {Problem(Dataflow::kLS, 32768, 8192, 32768), {4, 4}},
      {Problem(Dataflow::kRS, 8192, 8192, 32768), {4, 4}},
      {Problem(Dataflow::kRS, 8192, 32768, 32768), {4, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(ToString(c.p.dataflow), " ", c.p.m, "x", c.p.n, "x", c.p.k, " on ",
                              c.mesh.ToString()));
    const double t = Simulate(Lower("collective", c.p, c.mesh, 0), c.mesh);
    const double model = CollectiveModelSeconds(c.p, c.mesh);
    EXPECT_NEAR(t / model, 1.0, 0.05) << "simulated " << t * 1e6 << " us, model " << model * 1e6;
  }
}

// Sequencing through the frontier: two problems back to back take the sum of their times.
TEST(CollectiveTimelineTest, ChainedProblemsDoNotOverlap) {
  const Mesh mesh{4, 4};
  const GemmProblem p = Problem(Dataflow::kLS, 8192, 8192, 32768);
  auto algo = (*FindAlgorithm("collective"))->make();
  core::OpGraph g;
  LoweringContext ctx{g, mesh, 2, 0, std::vector<core::OpId>(mesh.MachineChips())};
  ASSERT_TRUE(algo->Lower(p, ctx).ok());
  ASSERT_TRUE(algo->Lower(p, ctx).ok());
  const double one = Simulate(Lower("collective", p, mesh, 0), mesh);
  EXPECT_NEAR(Simulate(g, mesh), 2 * one, 0.01 * one);
}

// Prefetch across problems (reference "Collective 2D GeMM": one collective hidden): with an early
// B, LowerProblems lets the second (LS) problem's AllGather of B start after the frontier at the
// start of the first (RS) problem — its prior frontier — not after the first problem's ops; the
// GeMM still waits for the chip's own frontier. The first problem's collectives run on the rows
// (AG of A) and columns (RdS, after its GeMM), so the prefetch on the columns overlaps its AG and
// GeMM: the pair takes about one AllGather of B less than the two problems one after the other.
TEST(CollectiveLoweringTest, EarlyOperandIsGatheredWhileThePreviousProblemRuns) {
  const Mesh mesh{4, 4};
  GemmProblem first = Problem(Dataflow::kRS, 8192, 8192, 32768, "a");
  GemmProblem second = Problem(Dataflow::kLS, 8192, 8192, 32768, "b");
  second.b_early = true;
  core::OpGraph g;
  ASSERT_TRUE(
      LowerProblems({first, second}, *(*FindAlgorithm("collective"))->make(), mesh, 0, 2, g).ok());
  for (int chip = 0; chip < mesh.chips(); ++chip) {
    const core::OpId ag_b = Find(g, "b.ag_b", kAnySlice, chip);
    const core::OpId gemm_b = Find(g, "b.gemm", kAnySlice, chip);
    const core::OpId rds_a = Find(g, "a.rds_c", kAnySlice, chip);
    EXPECT_FALSE(DependsOn(g, ag_b, rds_a)) << "chip " << chip;
    EXPECT_TRUE(DirectlyDependsOn(g, gemm_b, rds_a)) << "chip " << chip;
    EXPECT_TRUE(DirectlyDependsOn(g, gemm_b, ag_b)) << "chip " << chip;
  }
  const double chained = Simulate(Lower("collective", first, mesh, 0), mesh) +
                         Simulate(Lower("collective", second, mesh, 0), mesh);
  const double ag = AllGatherSeconds(mesh.rows, 8192.0 / 4 * 32768 / 4 * 2);
  const double t = Simulate(g, mesh);
  EXPECT_LT(t, chained - 0.5 * ag);
  EXPECT_GT(t, chained - 1.05 * ag);
}

// After an OS problem whose B is prefetched, the next problem's prefetch waits for the OS
// problem's exposed AllGather of A (LoweringContext::compute_ready) — it overlaps that GeMM,
// not that AllGather — and not for its GeMM.
TEST(CollectiveLoweringTest, PrefetchStartsWhereThePreviousGemmCanStart) {
  const Mesh mesh{4, 2};
  GemmProblem first = Problem(Dataflow::kOS, 512, 1024, 2048, "a");
  GemmProblem second = Problem(Dataflow::kLS, 512, 1024, 2048, "b");
  first.b_early = second.b_early = true;
  core::OpGraph g;
  ASSERT_TRUE(
      LowerProblems({first, second}, *(*FindAlgorithm("collective"))->make(), mesh, 0, 2, g).ok());
  for (int chip = 0; chip < mesh.chips(); ++chip) {
    const core::OpId ag_b = Find(g, "b.ag_b", kAnySlice, chip);
    EXPECT_TRUE(DirectlyDependsOn(g, ag_b, Find(g, "a.ag_a", kAnySlice, chip))) << chip;
    EXPECT_FALSE(DependsOn(g, ag_b, Find(g, "a.gemm", kAnySlice, chip))) << chip;
  }
}

TEST(CollectiveCheckTest, RejectsMeshesThatDoNotDivideTheMatrices) {
  auto algo = (*FindAlgorithm("collective"))->make();
  absl::Status s = algo->Check(Problem(Dataflow::kOS, 100, 1024, 1024), Mesh{3, 4}, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("collective"));
  EXPECT_THAT(s.message(), HasSubstr("M = 100"));
  EXPECT_THAT(s.message(), HasSubstr("3x4"));
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);

  // kLS stores B as N×K: N is split over the mesh rows.
  s = algo->Check(Problem(Dataflow::kLS, 1024, 1020, 1024), Mesh{8, 2}, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("N = 1020"));

  s = algo->Check(Problem(Dataflow::kRS, 1024, 1024, 0), Mesh{2, 2}, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);

  // Any slice count is accepted (and ignored).
  EXPECT_TRUE(algo->Check(Problem(Dataflow::kRS, 1024, 1024, 1024), Mesh{2, 2}, 3).ok());
}

}  // namespace
}  // namespace meshsim::algorithms
