// Tests of the Wang plugin (Wang et al. ASPLOS'23 as MeshSlice ISCA'25's 2D baseline, §2.3.4,
// §4.2): which collective is decomposed, lowering shape (op counts, GeMM shapes under loop
// unrolling, flops, received bytes equal to Collective's, dependencies, frontier sequencing),
// simulated small cases against Collective and the reference cost model, and bad input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
using testing_util::DependsOn;
using testing_util::DirectlyDependsOn;
using testing_util::ExpectSequenced;
using testing_util::Find;
using testing_util::FindAll;
using testing_util::FlopsPerChip;
using testing_util::kAnySlice;
using testing_util::kBwAg;
using testing_util::kBwRds;
using testing_util::kBwSrCol;
using testing_util::kBwSrRow;
using testing_util::kFlops;
using testing_util::kSmallMeshes;
using testing_util::kTLaunch;
using testing_util::kTStep;
using testing_util::Lower;
using testing_util::OpCounts;
using testing_util::OpsNamed;
using testing_util::Problem;
using testing_util::ReceivedBytesPerChip;
using testing_util::RingCollectiveSeconds;
using testing_util::Simulate;

// Whether `op` depends on any op labelled `what`.
bool DependsOnAny(const core::OpGraph& g, core::OpId op, const std::string& what) {
  for (core::OpId id : OpsNamed(g, what)) {
    if (id < op && DependsOn(g, op, id)) return true;
  }
  return false;
}

// A case and the schedule the plugin must pick for it: the collective with more ring traffic
// per chip, (P−1)·shard, is decomposed.
struct Expected {
  Dataflow d;
  int64_t m, n, k;
  const char* ring_op;   // "sendrecv_a" / "sendrecv_b" / "sendrecv_c"
  bool ring_rows;        // The decomposed ring is a mesh row.
  const char* blocking;  // "ag_a" / "ag_b" / "rds_c"
};

// On 4×4 (every ring has P = 4, so the shard sizes decide):
//   kOS  A (M/R × K/C) vs B (K/R × N/C): M > N → A on rows, else B on columns; ties → A.
//   kLS  B (N/R × K/C) vs C piece (M/R × N/C): K > M → AG of B on columns, else RdS on rows.
//   kRS  A (K/R × M/C) vs C piece (M/R × N/C): K > N → AG of A on rows, else RdS on columns.
const Expected kCases[] = {
    {Dataflow::kOS, 2048, 512, 1024, "p.sendrecv_a", true, "p.ag_b"},
    {Dataflow::kOS, 512, 2048, 1024, "p.sendrecv_b", false, "p.ag_a"},
    {Dataflow::kOS, 1024, 1024, 1024, "p.sendrecv_a", true, "p.ag_b"},
    {Dataflow::kLS, 512, 1024, 2048, "p.sendrecv_b", false, "p.rds_c"},
    {Dataflow::kLS, 2048, 1024, 512, "p.sendrecv_c", true, "p.ag_b"},
    {Dataflow::kRS, 1024, 512, 2048, "p.sendrecv_a", true, "p.rds_c"},
    {Dataflow::kRS, 1024, 2048, 512, "p.sendrecv_c", false, "p.ag_a"},
};

TEST(WangLoweringTest, DecomposesTheLargerCollective) {
  const Mesh mesh{4, 4};
  for (const Expected& e : kCases) {
    SCOPED_TRACE(std::string(ToString(e.d)) + " " + e.ring_op);
    const core::OpGraph g = Lower("wang", Problem(e.d, e.m, e.n, e.k, "p"), mesh, 0);
    const std::vector<core::OpId> ring = OpsNamed(g, e.ring_op);
    ASSERT_EQ(ring.size(), 4u * 3u);  // 4 rings × (P−1) steps.
    for (core::OpId id : ring) {
      const core::Op& op = g.op(id);
      EXPECT_EQ(op.collective, core::CollectiveKind::kSendRecv);
      EXPECT_EQ(op.directions, 2);  // Halves both ways round the ring.
      const auto members = g.group(op.group);
      EXPECT_EQ(members[1].value() - members[0].value(), e.ring_rows ? 1u : 4u);
    }
    const std::vector<core::OpId> blocking = OpsNamed(g, e.blocking);
    ASSERT_EQ(blocking.size(), 4u);
    for (core::OpId id : blocking) {
      const auto members = g.group(g.op(id).group);
      EXPECT_EQ(members[1].value() - members[0].value(), e.ring_rows ? 4u : 1u);
      EXPECT_EQ(g.op(id).tags.slice, -1);
    }
    const bool rds_ring = std::string(e.ring_op) == "p.sendrecv_c";
    EXPECT_EQ(OpsNamed(g, "p.add_c").size(), rds_ring ? 16u * 3u : 0u);
  }
}

TEST(WangLoweringTest, OpCountsGemmShapesFlopsAndReceivedBytes) {
  const int64_t eb = 2;
  for (const Mesh& mesh : kSmallMeshes) {
    for (const Expected& e : kCases) {
      const int r = mesh.rows, c = mesh.cols;
      const core::OpGraph probe = Lower("wang", Problem(e.d, e.m, e.n, e.k, "p"), mesh, 0);
      // The decomposed ring follows from the SendRecvs the default lowering emits.
      bool rows = true;
      for (uint32_t i = 0; i < probe.size(); ++i) {
        const core::Op& op = probe.op(core::OpId(i));
        if (op.collective == core::CollectiveKind::kSendRecv) {
          const auto mem = probe.group(op.group);
          rows = mem[1].value() - mem[0].value() == 1;
        }
      }
      const int ring = rows ? c : r, rings = rows ? r : c;
      for (int s : {0, ring, ring / 2, 1}) {
        SCOPED_TRACE(std::string(ToString(e.d)) + " " + mesh.ToString() + " " + e.ring_op +
                     " S=" + std::to_string(s));
        const int iters = s == 0 ? ring : s, u = ring / iters;
        const core::OpGraph g = Lower("wang", Problem(e.d, e.m, e.n, e.k, "p"), mesh, s);
        std::map<std::string, int> counts = OpCounts(g);
        // (P−1) SendRecvs per decomposed ring, S GeMMs per chip, one blocking collective per
        // other ring; a decomposed ReduceScatter adds (P−1) accumulates per chip.
        EXPECT_EQ(counts["sendrecv"], rings * (ring - 1));
        EXPECT_EQ(counts["gemm"], iters * r * c);
        const int blocking = counts["allgather"] + counts["reducescatter"];
        EXPECT_EQ(blocking, rows ? c : r);
        const bool rds_ring = !OpsNamed(g, "p.sendrecv_c").empty();
        EXPECT_EQ(counts["copy"], rds_ring ? r * c * (ring - 1) : 0);
        EXPECT_EQ(static_cast<int>(g.size()),
                  counts["sendrecv"] + counts["gemm"] + blocking + counts["copy"]);

        // One step's GeMM grown u-fold along the stepped dimension.
        int64_t gm = e.m / r, gn = e.n / c, gk = e.k;
        switch (e.d) {
          case Dataflow::kOS:  // (M/R) × (N/C) × (u·K/P)
            gk = u * e.k / ring;
            break;
          case Dataflow::kLS:  // (M/R) × (u·N/R) × (K/C) or (M/R) × (u·N/C) × (K/C)
            gn = u * e.n / ring, gk = e.k / c;
            break;
          case Dataflow::kRS:  // (u·M/C) × (N/C) × (K/R) or (u·M/R) × (N/C) × (K/R)
            gm = u * e.m / ring, gk = e.k / r;
            break;
        }
        for (uint32_t i = 0; i < g.size(); ++i) {
          const core::Op& op = g.op(core::OpId(i));
          if (op.kind != core::OpKind::kGemm) continue;
          EXPECT_EQ(op.m, gm);
          EXPECT_EQ(op.n, gn);
          EXPECT_EQ(op.k, gk);
        }
        for (double f : FlopsPerChip(g, r * c)) {
          EXPECT_DOUBLE_EQ(f, 2.0 * e.m * e.n * e.k / (r * c));
        }
        // Every chip receives exactly what it receives under Collective:
        //   kOS (C−1)·a + (R−1)·b;  kLS (R−1)·b + (C−1)·c;  kRS (C−1)·a + (R−1)·c.
        double want = 0;
        const double a =
            e.d == Dataflow::kRS ? double(e.k / r) * (e.m / c) : double(e.m / r) * (e.k / c);
        const double b =
            e.d == Dataflow::kLS ? double(e.n / r) * (e.k / c) : double(e.k / r) * (e.n / c);
        const double cp = double(e.m / r) * (e.n / c);
        switch (e.d) {
          case Dataflow::kOS:
            want = (c - 1) * a + (r - 1) * b;
            break;
          case Dataflow::kLS:
            want = (r - 1) * b + (c - 1) * cp;
            break;
          case Dataflow::kRS:
            want = (c - 1) * a + (r - 1) * cp;
            break;
        }
        const std::vector<double> got = ReceivedBytesPerChip(g, r * c);
        const std::vector<double> collective = ReceivedBytesPerChip(
            Lower("collective", Problem(e.d, e.m, e.n, e.k, "p"), mesh, 0), r * c);
        for (int x = 0; x < r * c; ++x) {
          EXPECT_DOUBLE_EQ(got[x], want * eb);
          EXPECT_DOUBLE_EQ(got[x], collective[x]);
        }
      }
    }
  }
}

// Decomposed AllGather (kOS, A on rows of 4, S = 2: iterations of steps {0, 1} and {2, 3}):
// the SendRecv chain never waits for a GeMM; gemm(q) waits for the last SendRecv of its
// iteration, gemm(q−1) and the blocking AllGather of B.
TEST(WangLoweringTest, DecomposedAllGatherDependencies) {
  const Mesh mesh{4, 4};
  const core::OpGraph g = Lower("wang", Problem(Dataflow::kOS, 2048, 512, 1024, "p"), mesh, 2);
  for (int c = 0; c < 16; ++c) {
    const std::vector<core::OpId> q0 = FindAll(g, "p.sendrecv_a", 0, c);
    const std::vector<core::OpId> q1 = FindAll(g, "p.sendrecv_a", 1, c);
    ASSERT_EQ(q0.size(), 1u);  // Step 1 (step 0 is the chip's own shard).
    ASSERT_EQ(q1.size(), 2u);  // Steps 2 and 3.
    EXPECT_TRUE(DirectlyDependsOn(g, q1[0], q0[0]));
    EXPECT_TRUE(DirectlyDependsOn(g, q1[1], q1[0]));
    for (core::OpId sr : {q0[0], q1[0], q1[1]}) EXPECT_FALSE(DependsOnAny(g, sr, "p.gemm"));
    const core::OpId g0 = Find(g, "p.gemm", 0, c), g1 = Find(g, "p.gemm", 1, c);
    const core::OpId ag = Find(g, "p.ag_b", -1, c);
    EXPECT_TRUE(DirectlyDependsOn(g, g0, q0[0]));
    EXPECT_TRUE(DirectlyDependsOn(g, g0, ag));
    EXPECT_TRUE(DirectlyDependsOn(g, g1, q1[1]));
    EXPECT_TRUE(DirectlyDependsOn(g, g1, g0));
    EXPECT_FALSE(DependsOn(g, q0[0], ag));  // The ring starts beside the blocking AllGather.
  }
}

// Decomposed ReduceScatter (kLS, C' on rows of 4, S = 4): the GeMMs never wait for the network
// after the blocking AllGather; sendrecv(s) carries the sums of add_c(s−1) (gemm(0) for s = 1)
// of every member; add_c(s) joins sendrecv(s) and gemm(s). A decomposed AllGather in kLS ends
// with the blocking ReduceScatter after the members' last GeMM.
TEST(WangLoweringTest, DecomposedReduceScatterDependencies) {
  const Mesh mesh{4, 4};
  const core::OpGraph g = Lower("wang", Problem(Dataflow::kLS, 2048, 1024, 512, "p"), mesh, 0);
  for (int c = 0; c < 16; ++c) {
    const int i = c / 4;
    for (int q = 0; q < 4; ++q) {
      const core::OpId gemm = Find(g, "p.gemm", q, c);
      EXPECT_FALSE(DependsOnAny(g, gemm, "p.sendrecv_c"));
      EXPECT_TRUE(DirectlyDependsOn(g, gemm, Find(g, "p.ag_b", -1, c)));
      if (q == 0) continue;
      const core::OpId sr = Find(g, "p.sendrecv_c", q, c), add = Find(g, "p.add_c", q, c);
      EXPECT_TRUE(DirectlyDependsOn(g, add, sr));
      EXPECT_TRUE(DirectlyDependsOn(g, add, gemm));
      for (int x = 0; x < 4; ++x) {
        const int member = i * 4 + x;
        EXPECT_TRUE(DirectlyDependsOn(
            g, sr, q == 1 ? Find(g, "p.gemm", 0, member) : Find(g, "p.add_c", q - 1, member)));
      }
    }
  }
  const core::OpGraph h = Lower("wang", Problem(Dataflow::kLS, 512, 1024, 2048, "p"), mesh, 0);
  for (int c = 0; c < 16; ++c) {
    const core::OpId rds = Find(h, "p.rds_c", -1, c);
    for (int x = 0; x < 4; ++x) {
      EXPECT_TRUE(DirectlyDependsOn(h, rds, Find(h, "p.gemm", 3, c / 4 * 4 + x)));
    }
    EXPECT_FALSE(DependsOnAny(h, Find(h, "p.sendrecv_b", 3, c), "p.gemm"));
  }
}

TEST(WangLoweringTest, FrontierSequencesProblems) {
  for (const Expected& e : kCases) {
    for (const Mesh& mesh : {Mesh{2, 4}, Mesh{4, 4}, Mesh{1, 4}, Mesh{4, 1}}) {
      ExpectSequenced("wang", Problem(e.d, e.m, e.n, e.k, "p"), mesh, 0);
    }
    ExpectSequenced("wang", Problem(e.d, e.m, e.n, e.k, "p"), Mesh{4, 4}, 2);
  }
}

// MeshSlice §4.2: "For Wang, the prologue or the epilogue is the execution of a communication
// operation that is not overlapped". Unlike Collective (collective.cc), which gathers an early
// operand while the previous problem runs, Wang's blocking AllGather of the weight B waits for
// the previous problem's frontier even when B is early: on the same pair of problems, Wang's
// b.ag_b depends on a's last GeMM, Collective's does not.
TEST(WangLoweringTest, BlockingAllGatherWaitsForThePreviousProblem) {
  const Mesh mesh{4, 4};
  // kOS, M > N: A (M/R × K/C) has the larger ring traffic and is decomposed; B stays blocking.
  GemmProblem first = Problem(Dataflow::kOS, 65536, 32768, 2048, "a");
  GemmProblem second = Problem(Dataflow::kOS, 65536, 32768, 2048, "b");
  first.b_early = second.b_early = true;
  for (const char* name : {"wang", "collective"}) {
    core::OpGraph g;
    ASSERT_TRUE(
        LowerProblems({first, second}, *(*FindAlgorithm(name))->make(), mesh, 0, 2, g).ok());
    const bool wang = std::string(name) == "wang";
    for (int chip = 0; chip < mesh.chips(); ++chip) {
      const core::OpId ag_b = Find(g, "b.ag_b", kAnySlice, chip);
      const std::vector<core::OpId> gemms_a = FindAll(g, "a.gemm", kAnySlice, chip);
      ASSERT_FALSE(gemms_a.empty());
      EXPECT_EQ(DependsOn(g, ag_b, gemms_a.back()), wang) << name << " chip " << chip;
    }
  }
}

// --- Simulated on a 4×4 torus of tpuv4 chips. ---

// Reference cost model (reference/meshslice-calibration.md); constants in lowering_testing.h.
// Reference Wang: the blocking collective + P·max(bytes/(2·bw) + t_step + t_launch, comp/P).
double WangReference(double blocking, double ring_bytes, double bw_sr, int p, double comp) {
  return blocking + p * std::max(ring_bytes / (2 * bw_sr) + kTStep + kTLaunch, comp / p);
}

// A communication-heavy kOS GeMM, 32768×8192×4096 on 4×4: A shards of 16 MB (AllGather over
// rows ≈ 0.92 ms) against 0.55 ms of GeMM per chip. Collective exposes the A AllGather; Wang
// hides it behind the partial GeMMs except for its last SendRecv step, and the B AllGather
// (4 MB shards) it leaves blocking runs beside the SendRecv ring.
TEST(WangTimelineTest, FasterThanCollectiveWhenCommunicationHeavy) {
  const Mesh mesh{4, 4};
  const GemmProblem p = Problem(Dataflow::kOS, 32768, 8192, 4096, "p");
  const double collective = Simulate(Lower("collective", p, mesh, 0), mesh);
  const double wang = Simulate(Lower("wang", p, mesh, 0), mesh);
  const double ag_a = RingCollectiveSeconds(8192.0 * 1024 * 2, kBwAg, 4);
  const double comp = 2.0 * 8192 * 2048 * 4096 / kFlops;
  std::printf(
      "os 4x4 32768x8192x4096: collective %.0f us, wang %.0f us (AG_A %.0f us, comp "
      "%.0f us)\n",
      collective * 1e6, wang * 1e6, ag_a * 1e6, comp * 1e6);
  EXPECT_GT(ag_a, comp);  // Communication-heavy.
  EXPECT_LT(wang, 0.9 * collective);
}

// Against the reference model. The reference serialises the blocking collective before P
// SendRecv steps; the simulation runs P−1 SendRecvs (step 0 computes on the local shard) and,
// for a blocking AllGather, starts them beside it on the other direction's links — so it is
// faster, by up to the blocking AllGather plus one step. With a blocking ReduceScatter the
// steps come first and the simulation adds the network model's reduction traffic. The ratios
// are printed for the report; the band [0.6, 1.2] only rules out a broken schedule.
TEST(WangTimelineTest, ReportsCostModelRatio) {
  const Mesh mesh{4, 4};
  struct Case {
    Dataflow d;
    int64_t m, n, k;
    double blocking, ring_bytes, bw_sr;
  };
  // 32768×8192×4096: kOS decomposes A (16 MB shards, rows), B's AG blocks (4 MB).
  // 8192×8192×32768 kLS: AG of B (N/R × K/C = 32 MB) on columns decomposed; RdS of C (8 MB).
  // 8192×8192×32768 kRS: AG of A (K/R × M/C = 32 MB) on rows decomposed; RdS of C (8 MB).
  const Case cases[] = {
      {Dataflow::kOS, 32768, 8192, 4096, RingCollectiveSeconds(1024.0 * 2048 * 2, kBwAg, 4),
       8192.0 * 1024 * 2, kBwSrRow},
      {Dataflow::kLS, 8192, 8192, 32768, RingCollectiveSeconds(2048.0 * 2048 * 2, kBwRds, 4),
       2048.0 * 8192 * 2, kBwSrCol},
      {Dataflow::kRS, 8192, 8192, 32768, RingCollectiveSeconds(2048.0 * 2048 * 2, kBwRds, 4),
       8192.0 * 2048 * 2, kBwSrRow},
  };
  for (const Case& e : cases) {
    const double comp = 2.0 * e.m * e.n * e.k / 16 / kFlops;
    const double ref = WangReference(e.blocking, e.ring_bytes, e.bw_sr, 4, comp);
    const double t = Simulate(Lower("wang", Problem(e.d, e.m, e.n, e.k, "p"), mesh, 0), mesh);
    std::printf("wang %s 4x4 %ldx%ldx%ld: sim %.0f us, reference %.0f us, sim/reference %.2f\n",
                ToString(e.d), static_cast<long>(e.m), static_cast<long>(e.n),
                static_cast<long>(e.k), t * 1e6, ref * 1e6, t / ref);
    ::testing::Test::RecordProperty(std::string("wang_") + ToString(e.d) + "_sim_over_reference",
                                    std::to_string(t / ref));
    EXPECT_GT(t / ref, 0.6);
    EXPECT_LT(t / ref, 1.2);
  }
}

// The same pair simulated, in closed form. One problem: 65536×32768×2048 kOS on 4×4, chip
// (i, j) computes (M/R)·(N/C)·K = 16384·8192·2048 in P = 4 steps of K/4 = 512; the decomposed
// SendRecv step of A (16384·512·2 B = 16 MiB, halves both ways at 30 GB/s: 280 µs + 105 µs) is
// shorter than a step's GeMM (552 µs at 249 TFLOPS), so a problem lasts its blocking AllGather
// of B, AG_B = t_launch + 3·(8 MiB/60 GB/s + t_step) = 537 µs, plus its GeMMs:
//   t(one) ≈ AG_B + 2·(M/R)·(N/C)·K / 249 TFLOPS = 537 + 2208 µs.
// Because the second problem's AG_B is not overlapped with the first (§4.2), the pair takes
//   t(pair) = 2·t(one),
// where Collective gathers the second problem's B behind the first one's GeMM (printed).
TEST(WangTimelineTest, BlockingAllGatherIsExposedOncePerProblem) {
  const Mesh mesh{4, 4};
  GemmProblem first = Problem(Dataflow::kOS, 65536, 32768, 2048, "a");
  GemmProblem second = Problem(Dataflow::kOS, 65536, 32768, 2048, "b");
  first.b_early = second.b_early = true;
  const double ag_b = AllGatherSeconds(4, 2048.0 / 4 * 32768 / 4 * 2);
  const double comp = 2.0 * (65536 / 4) * (32768 / 4) * 2048 / kFlops;
  const double one = Simulate(Lower("wang", first, mesh, 0), mesh);
  core::OpGraph g;
  ASSERT_TRUE(
      LowerProblems({first, second}, *(*FindAlgorithm("wang"))->make(), mesh, 0, 2, g).ok());
  const double pair = Simulate(g, mesh);
  core::OpGraph gc;
  ASSERT_TRUE(
      LowerProblems({first, second}, *(*FindAlgorithm("collective"))->make(), mesh, 0, 2, gc).ok());
  const double collective_pair = Simulate(gc, mesh);
  std::printf(
      "wang os 4x4 65536x32768x2048: one %.0f us (AG_B %.0f + comp %.0f), pair %.0f us; "
      "collective pair %.0f us\n",
      one * 1e6, ag_b * 1e6, comp * 1e6, pair * 1e6, collective_pair * 1e6);
  EXPECT_NEAR(one, ag_b + comp, 0.05 * (ag_b + comp));
  EXPECT_NEAR(pair, 2 * one, 0.01 * one);
}

TEST(WangCheckTest, RejectsSliceCountsThatDoNotDivideTheRing) {
  auto algo = (*FindAlgorithm("wang"))->make();
  // kOS on 4×4 decomposes K over P = 4 steps along rows: S ∈ {1, 2, 4}.
  absl::Status s = algo->Check(Problem(Dataflow::kOS, 2048, 512, 1024, "p"), Mesh{4, 4}, 3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("wang"));
  EXPECT_THAT(s.message(), HasSubstr("--slices 3"));
  EXPECT_THAT(s.message(), HasSubstr("K = 1024"));
  EXPECT_THAT(s.message(), HasSubstr("P = 4"));
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
  s = algo->Check(Problem(Dataflow::kOS, 2048, 512, 1024, "p"), Mesh{4, 4}, 8);
  EXPECT_THAT(s.message(), HasSubstr("--slices 8"));
  s = algo->Check(Problem(Dataflow::kLS, 2048, 1024, 512, "p"), Mesh{2, 4}, 3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("N = 1024"));
  s = algo->Check(Problem(Dataflow::kOS, 2048, 512, 1024, "p"), Mesh{4, 4}, -2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  s = algo->Check(Problem(Dataflow::kRS, 2048, 512, 1002, "p"), Mesh{4, 4}, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("K = 1002"));
  for (int ok : {0, 1, 2, 4}) {
    EXPECT_TRUE(algo->Check(Problem(Dataflow::kOS, 2048, 512, 1024, "p"), Mesh{4, 4}, ok).ok());
  }
}

}  // namespace
}  // namespace meshsim::algorithms
