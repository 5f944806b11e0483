// Tests of the SUMMA plugin (MeshSlice ISCA'25 §2.3.3, Figure 2a, loop unrolled to S, §4.2):
// lowering shape (op counts, flops, received bytes, broadcast roots, the double-buffered
// pipeline, frontier sequencing), simulated small cases against the pipelined-broadcast closed
// form and the reference cost model, and bad input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/registry.h"
#include "core/op_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/algorithms/lowering_testing.h"

namespace meshsim::algorithms {
namespace {

using ::testing::HasSubstr;
using testing_util::DependsOn;
using testing_util::DirectlyDependsOn;
using testing_util::ExpectSequenced;
using testing_util::Find;
using testing_util::FlopsPerChip;
using testing_util::kBwAg;
using testing_util::kDataflows;
using testing_util::kFlops;
using testing_util::kTLaunch;
using testing_util::kTStep;
using testing_util::Lower;
using testing_util::OpCounts;
using testing_util::OpsNamed;
using testing_util::Problem;
using testing_util::ReceivedBytesPerChip;
using testing_util::Simulate;

// The meshes of the op-count sweep: testing_util::kSmallMeshes without 4×2.
const Mesh kMeshes[] = {{2, 2}, {2, 4}, {4, 4}};

// Segments the S panels of a dimension cut into by P owner blocks: S + P − gcd(S, P).
int Segments(int s, int p) { return s + p - std::gcd(s, p); }

TEST(SummaLoweringTest, OpCountsFlopsAndReceivedBytes) {
  const int64_t m = 512, n = 1024, k = 2048, eb = 2;
  for (Dataflow d : kDataflows) {
    for (const Mesh& mesh : kMeshes) {
      const int r = mesh.rows, c = mesh.cols, l = std::lcm(r, c);
      for (int s : {0, l, 2 * l, 2}) {  // 2 < lcm on 2×4 and 4×4: panels span owners.
        SCOPED_TRACE(std::string(ToString(d)) + " " + mesh.ToString() + " S=" + std::to_string(s));
        const int iters = s == 0 ? l : s;
        const core::OpGraph g = Lower("summa", Problem(d, m, n, k, "p"), mesh, s);
        std::map<std::string, int> counts = OpCounts(g);
        // Every iteration: one GeMM per chip; per row (C owners) and per column (R owners) one
        // Broadcast/Reduce per owner segment of the panel: S + P − gcd(S, P) per group.
        EXPECT_EQ(counts["gemm"], iters * r * c);
        const int row_ops = r * Segments(iters, c), col_ops = c * Segments(iters, r);
        if (iters % l == 0) {  // The paper's loop: one op per group and iteration.
          EXPECT_EQ(row_ops, iters * r);
          EXPECT_EQ(col_ops, iters * c);
        }
        switch (d) {
          case Dataflow::kOS:  // bcast A on rows, bcast B on columns.
            EXPECT_EQ(counts["broadcast"], row_ops + col_ops);
            EXPECT_EQ(counts["reduce"], 0);
            break;
          case Dataflow::kLS:  // bcast B on columns, reduce C' on rows.
            EXPECT_EQ(counts["broadcast"], col_ops);
            EXPECT_EQ(counts["reduce"], row_ops);
            break;
          case Dataflow::kRS:  // bcast A on rows, reduce C' on columns.
            EXPECT_EQ(counts["broadcast"], row_ops);
            EXPECT_EQ(counts["reduce"], col_ops);
            break;
        }
        EXPECT_EQ(static_cast<int>(g.size()),
                  counts["gemm"] + counts["broadcast"] + counts["reduce"] + counts["delay"]);

        // Σ flops = 2MNK, equal on every chip.
        const std::vector<double> flops = FlopsPerChip(g, r * c);
        for (double f : flops) EXPECT_DOUBLE_EQ(f, 2.0 * m * n * k / (r * c));

        // Received: every panel piece a chip does not own (broadcast) or, for a reduce, every
        // piece except those owned by the chain's start (the owner's successor in the group):
        //   kOS (C−1)/C·(M/R·K) + (R−1)/R·(K·N/C)
        //   kLS (R−1)/R·(N·K/C) + (C−1)/C·(M/R·N)
        //   kRS (C−1)/C·(K/R·M) + (R−1)/R·(M·N/C)
        double elems = 0;
        switch (d) {
          case Dataflow::kOS:
            elems = (c - 1.0) / c * (m / r * k) + (r - 1.0) / r * (k * (n / c));
            break;
          case Dataflow::kLS:
            elems = (r - 1.0) / r * (n * (k / c)) + (c - 1.0) / c * (m / r * n);
            break;
          case Dataflow::kRS:
            elems = (c - 1.0) / c * (k / r * m) + (r - 1.0) / r * (m * (n / c));
            break;
        }
        for (double b : ReceivedBytesPerChip(g, r * c)) EXPECT_DOUBLE_EQ(b, elems * eb);
      }
    }
  }
}

TEST(SummaLoweringTest, GemmShapesAndTags) {
  const Mesh mesh{2, 4};
  const int64_t m = 512, n = 1024, k = 2048;
  const int s = 8;
  struct Shape {
    Dataflow d;
    int64_t gm, gn, gk;
  };
  // kOS (M/R) × (N/C) × (K/S); kLS (M/R) × (N/S) × (K/C); kRS (M/S) × (N/C) × (K/R).
  for (const Shape& e :
       {Shape{Dataflow::kOS, m / 2, n / 4, k / s}, Shape{Dataflow::kLS, m / 2, n / s, k / 4},
        Shape{Dataflow::kRS, m / s, n / 4, k / 2}}) {
    const core::OpGraph g = Lower("summa", Problem(e.d, m, n, k, "p"), mesh, s);
    std::vector<int> per_slice(s, 0);
    for (uint32_t i = 0; i < g.size(); ++i) {
      const core::Op& op = g.op(core::OpId(i));
      ASSERT_GE(op.tags.slice, 0) << g.Label(core::OpId(i));
      ASSERT_LT(op.tags.slice, s);
      if (op.kind != core::OpKind::kGemm) continue;
      EXPECT_EQ(op.m, e.gm);
      EXPECT_EQ(op.n, e.gn);
      EXPECT_EQ(op.k, e.gk);
      EXPECT_EQ(g.Label(core::OpId(i)), "p.gemm");
      ++per_slice[op.tags.slice];
    }
    for (int x : per_slice) EXPECT_EQ(x, 8);
  }
}

// The broadcast of panel t comes from the chip that owns it: on 2×4 with S = 4 = lcm, the A
// panel t (K/4 wide) is A's column block t (root = column t of the row), the B panel t lies in
// B's row block t/2 (root = row t/2 of the column).
TEST(SummaLoweringTest, BroadcastRootIsThePanelOwner) {
  const Mesh mesh{2, 4};
  const int64_t m = 256, n = 512, k = 1024, eb = 2;
  const core::OpGraph g = Lower("summa", Problem(Dataflow::kOS, m, n, k, "p"), mesh, 4);
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 2; ++i) {
      const core::Op& a = g.op(Find(g, "p.bcast_a", t, i * 4));
      EXPECT_EQ(a.collective, core::CollectiveKind::kBroadcast);
      EXPECT_EQ(a.root, t);
      EXPECT_EQ(a.bytes, m / 2 * (k / 4) * eb);  // M/R × K/S.
      EXPECT_EQ(g.group(a.group)[0].value(), static_cast<uint32_t>(i * 4));
    }
    for (int j = 0; j < 4; ++j) {
      const core::Op& b = g.op(Find(g, "p.bcast_b", t, j));
      EXPECT_EQ(b.root, t / 2);
      EXPECT_EQ(b.bytes, k / 4 * (n / 4) * eb);  // K/S × N/C.
    }
  }
  // S = 2 < lcm: panel t spans A's column blocks 2t and 2t+1 — two row broadcasts per row,
  // rooted at their owners, each of one block; the B panel is B's row block t.
  const core::OpGraph h = Lower("summa", Problem(Dataflow::kOS, m, n, k, "p"), mesh, 2);
  for (int t = 0; t < 2; ++t) {
    std::vector<int> roots;
    for (core::OpId id : OpsNamed(h, "p.bcast_a")) {
      const core::Op& op = h.op(id);
      if (op.tags.slice == t && h.group(op.group)[0].value() == 0) {
        roots.push_back(op.root);
        EXPECT_EQ(op.bytes, m / 2 * (k / 4) * eb);
      }
    }
    EXPECT_THAT(roots, ::testing::ElementsAre(2 * t, 2 * t + 1));
    EXPECT_EQ(h.op(Find(h, "p.bcast_b", t, 0)).root, t);
  }
  // kLS: B panel t of N/S rows from the mesh row owning it; C' panel reduced into the mesh
  // column owning it. kRS: A panel from the owning column, C' into the owning row.
  const core::OpGraph ls = Lower("summa", Problem(Dataflow::kLS, m, n, k, "p"), mesh, 4);
  const core::OpGraph rs = Lower("summa", Problem(Dataflow::kRS, m, n, k, "p"), mesh, 4);
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(ls.op(Find(ls, "p.bcast_b", t, 0)).root, t / 2);  // N/R blocks: 2 panels each.
    EXPECT_EQ(ls.op(Find(ls, "p.reduce_c", t, 0)).root, t);     // N/C blocks: 1 panel each.
    EXPECT_EQ(ls.op(Find(ls, "p.reduce_c", t, 0)).collective, core::CollectiveKind::kReduce);
    EXPECT_EQ(rs.op(Find(rs, "p.bcast_a", t, 0)).root, t);       // M/C blocks.
    EXPECT_EQ(rs.op(Find(rs, "p.reduce_c", t, 0)).root, t / 2);  // M/R blocks.
  }
}

// Software pipelining with double buffering: bcast(t) waits for bcast(t−1) of its group and
// gemm(t−2) of its members, never for gemm(t−1); gemm(t) waits for both broadcasts of t.
TEST(SummaLoweringTest, OutputStationaryDoubleBuffering) {
  const Mesh mesh{2, 2};
  const core::OpGraph g = Lower("summa", Problem(Dataflow::kOS, 256, 256, 1024, "p"), mesh, 4);
  for (int t = 0; t < 4; ++t) {
    for (int c = 0; c < 4; ++c) {
      const int i = c / 2, j = c % 2;
      const core::OpId gemm = Find(g, "p.gemm", t, c);
      const core::OpId a = Find(g, "p.bcast_a", t, c), b = Find(g, "p.bcast_b", t, c);
      EXPECT_TRUE(DirectlyDependsOn(g, gemm, a));
      EXPECT_TRUE(DirectlyDependsOn(g, gemm, b));
      if (t >= 1) {
        EXPECT_TRUE(DirectlyDependsOn(g, gemm, Find(g, "p.gemm", t - 1, c)));
        EXPECT_TRUE(DirectlyDependsOn(g, a, Find(g, "p.bcast_a", t - 1, c)));
        EXPECT_FALSE(DependsOn(g, a, Find(g, "p.gemm", t - 1, c)));
        EXPECT_FALSE(DependsOn(g, b, Find(g, "p.gemm", t - 1, c)));
      }
      if (t >= 2) {
        // Both chips of the row must have finished gemm(t−2) before its A buffer is refilled.
        for (int x = 0; x < 2; ++x) {
          EXPECT_TRUE(DirectlyDependsOn(g, a, Find(g, "p.gemm", t - 2, i * 2 + x)));
          EXPECT_TRUE(DirectlyDependsOn(g, b, Find(g, "p.gemm", t - 2, x * 2 + j)));
        }
      }
    }
  }
}

// kLS / kRS: reduce(t) after gemm(t) of every member and reduce(t−1); gemm(t) writes the C'
// buffer that reduce(t−2) drained.
TEST(SummaLoweringTest, StationaryInputDoubleBuffering) {
  const Mesh mesh{2, 2};
  for (Dataflow d : {Dataflow::kLS, Dataflow::kRS}) {
    const core::OpGraph g = Lower("summa", Problem(d, 256, 1024, 256, "p"), mesh, 4);
    for (int t = 0; t < 4; ++t) {
      for (int c = 0; c < 4; ++c) {
        const int i = c / 2, j = c % 2;
        const core::OpId red = Find(g, "p.reduce_c", t, c);
        for (int x = 0; x < 2; ++x) {
          const int member = d == Dataflow::kLS ? i * 2 + x : x * 2 + j;
          EXPECT_TRUE(DirectlyDependsOn(g, red, Find(g, "p.gemm", t, member)));
        }
        if (t >= 1) {
          EXPECT_TRUE(DirectlyDependsOn(g, red, Find(g, "p.reduce_c", t - 1, c)));
        }
        if (t >= 2) {
          EXPECT_TRUE(
              DirectlyDependsOn(g, Find(g, "p.gemm", t, c), Find(g, "p.reduce_c", t - 2, c)));
        }
        if (t >= 1) {  // The next broadcast overlaps this GeMM.
          const char* bcast = d == Dataflow::kLS ? "p.bcast_b" : "p.bcast_a";
          EXPECT_FALSE(DependsOn(g, Find(g, bcast, t, c), Find(g, "p.gemm", t - 1, c)));
        }
      }
    }
  }
}

TEST(SummaLoweringTest, FrontierSequencesProblems) {
  for (Dataflow d : kDataflows) {
    ExpectSequenced("summa", Problem(d, 256, 512, 1024, "p"), Mesh{2, 4}, 0);
    ExpectSequenced("summa", Problem(d, 256, 512, 1024, "p"), Mesh{2, 4}, 2);  // Joins (kLS/kRS).
    ExpectSequenced("summa", Problem(d, 256, 512, 1024, "p"), Mesh{1, 4}, 0);  // No column ops.
  }
}

// --- Simulated on a 4×4 torus of tpuv4 chips. ---

// The reference cost model's constants: lowering_testing.h. The tpuv4 network model: links of
// 30 GB/s per direction, 1 µs per hop, t_sync = 5 µs once per hop of a pipelined Broadcast of
// D = 8 packets (network_model.h).
constexpr double kLinkBw = 30e9, kHopLatency = 1e-6, kHopSync = 5e-6;
constexpr int kPackets = 8;

// Reference: a pipelined broadcast of b bytes on a ring of n, t_launch + b/bw + (n−1)·t_step.
double CostModelBcast(double bytes, int n) { return kTLaunch + bytes / kBwAg + (n - 1) * kTStep; }
// The network model's chain (network_model.h), one link per hop: the first packet crosses n−1
// hops, the D−1 others follow one packet time apart:
// t_launch + (n−1)·(t_sync + latency + b/(D·bw)) + (D−1)·b/(D·bw).
double ChainBcast(double bytes, int n) {
  const double packet = bytes / kPackets / kLinkBw;
  return kTLaunch + (n - 1) * (kHopSync + kHopLatency + packet) + (kPackets - 1) * packet;
}

// Seconds of one (m, n, k) GeMM per chip, simulated alone.
double SimulatedGemm(const Mesh& mesh, int64_t m, int64_t n, int64_t k) {
  core::OpGraph g;
  for (int c = 0; c < mesh.chips(); ++c) g.Add(core::Op::Gemm(core::ChipId(c), m, n, k));
  return Simulate(g, mesh);
}

// SUMMA kOS on 4×4, 8192³: panels of (M/R × K/S) and (K/S × N/C) bytes on rings of 4.
// Prologue + steady state + epilogue (§3.2.2 shape): T = b + (S−1)·max(b, comp) + comp, with b
// the broadcast time. With the network model's chain b the simulation is within 3% (the
// remainder: HBM sharing and GeMM edge effects). Against the reference's idealised broadcast
// (t_launch + b/60 GB/s + 3·t_step) it is slower by design: the chain moves b·(n+D−2)/D over one
// 30 GB/s link direction (2.5× the reference's transfer time at n = 4, D = 8); its fixed costs
// (t_launch and 3 hop latencies) are below the reference's (t_launch + 3·t_step), so
// 1 < sim / reference < 2.5 < 10/3 — reported, not tuned.
TEST(SummaTimelineTest, MatchesPipelinedBroadcastAndReportsCostModelRatio) {
  const Mesh mesh{4, 4};
  const int64_t m = 8192, n = 8192, k = 8192, eb = 2;
  double last = 0;
  for (int s : {4, 8, 16}) {
    const double panel = double(m / 4) * (k / s) * eb;  // A and B panels are equal here.
    const double comp_sim = SimulatedGemm(mesh, m / 4, n / 4, k / s);
    const double comp_ref = 2.0 * (m / 4) * (n / 4) * (k / s) / kFlops;
    const double chain = ChainBcast(panel, 4), ideal = CostModelBcast(panel, 4);
    const double t_chain = chain + (s - 1) * std::max(chain, comp_sim) + comp_sim;
    const double t_ref = ideal + (s - 1) * std::max(ideal, comp_ref) + comp_ref;
    const double t = Simulate(Lower("summa", Problem(Dataflow::kOS, m, n, k, "p"), mesh, s), mesh);
    std::printf(
        "summa os 4x4 8192^3 S=%d: sim %.0f us, chain model %.0f us, reference %.0f us, "
        "sim/reference %.2f\n",
        s, t * 1e6, t_chain * 1e6, t_ref * 1e6, t / t_ref);
    ::testing::Test::RecordProperty("summa_os_S" + std::to_string(s) + "_sim_over_reference",
                                    std::to_string(t / t_ref));
    EXPECT_NEAR(t, t_chain, 0.03 * t_chain) << "S = " << s;
    EXPECT_GT(t / t_ref, 1.0);
    EXPECT_LT(t / t_ref, 10.0 / 3.0);
    // More iterations: more launches and synchronisations, same traffic — slower (§2.3.3).
    EXPECT_GT(t, last) << "S = " << s;
    last = t;
  }
}

// kLS / kRS: prologue bcast + reduce, steady max(bcast, reduce, comp), as in the reference;
// each Reduce is the broadcast chain reversed plus the reductions' HBM traffic, and reduce(t)
// waits for gemm(t), so SUMMA-LS is a chain of S reduces after the first broadcast and GeMM.
TEST(SummaTimelineTest, StationaryInputsReportCostModelRatio) {
  const Mesh mesh{4, 4};
  const int64_t m = 8192, n = 8192, k = 8192, eb = 2;
  const int s = 4;
  const double panel = double(m / 4) * (n / s) * eb;
  const double comp_ref = 2.0 * (m / 4) * (n / s) * (k / 4) / kFlops;
  const double ideal = CostModelBcast(panel, 4);  // Reduce has the same form (RdS constants
                                                  // differ only in bw: 50 vs 60 GB/s).
  const double ideal_reduce = kTLaunch + panel / 50e9 + 3 * kTStep;
  const double t_ref =
      ideal + ideal_reduce + comp_ref + (s - 1) * std::max({ideal, ideal_reduce, comp_ref});
  const double chain = ChainBcast(panel, 4);
  for (Dataflow d : {Dataflow::kLS, Dataflow::kRS}) {
    const double t = Simulate(Lower("summa", Problem(d, m, n, k, "p"), mesh, s), mesh);
    std::printf("summa %s 4x4 8192^3 S=%d: sim %.0f us, reference %.0f us, sim/reference %.2f\n",
                ToString(d), s, t * 1e6, t_ref * 1e6, t / t_ref);
    // At least the first broadcast plus S reduce chains; at most 10/3 of the reference.
    EXPECT_GT(t, chain + s * chain);
    EXPECT_LT(t / t_ref, 10.0 / 3.0);
  }
}

TEST(SummaCheckTest, RejectsSliceCountsThatDoNotDivideThePanelDimension) {
  auto algo = (*FindAlgorithm("summa"))->make();
  absl::Status s = algo->Check(Problem(Dataflow::kOS, 512, 512, 4096, "p"), Mesh{2, 2}, 3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("summa"));
  EXPECT_THAT(s.message(), HasSubstr("--slices 3"));
  EXPECT_THAT(s.message(), HasSubstr("K = 4096"));
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);
  s = algo->Check(Problem(Dataflow::kLS, 512, 768, 4096, "p"), Mesh{2, 2}, 5);
  EXPECT_THAT(s.message(), HasSubstr("N = 768"));
  s = algo->Check(Problem(Dataflow::kRS, 640, 512, 4096, "p"), Mesh{2, 2}, 3);
  EXPECT_THAT(s.message(), HasSubstr("M = 640"));
  s = algo->Check(Problem(Dataflow::kOS, 512, 512, 4096, "p"), Mesh{2, 2}, -1);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--slices -1"));
  s = algo->Check(Problem(Dataflow::kOS, 100, 512, 4096, "p"), Mesh{3, 2}, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("M = 100"));
  // Allowed: any S dividing the dimension, e.g. 2 on a 2×4 mesh (lcm 4).
  EXPECT_TRUE(algo->Check(Problem(Dataflow::kOS, 512, 512, 4096, "p"), Mesh{2, 4}, 2).ok());
}

}  // namespace
}  // namespace meshsim::algorithms
