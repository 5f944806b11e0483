// tp1d: sequence-parallel Megatron on a ring, collectives decomposed Wang-style. Lowering tests
// (op counts, flops, received bytes, dependency shape) and small simulated cases on `ring`.
#include "algorithms/tp1d/tp1d.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/dataflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/algorithms/lowering_testing.h"

namespace meshsim::algorithms {
namespace {

using core::OpId;
using core::OpKind;
using core::Pass;
using ::testing::HasSubstr;
using testing_util::Ancestors;
using testing_util::Block;
using testing_util::ComputeSeconds;
using testing_util::Count;
using testing_util::ExpectFollowsFrontier;
using testing_util::ExpectFrontierCovers;
using testing_util::FlopsPerChip;
using testing_util::kPasses;
using testing_util::Lower;
using testing_util::OpCounts;
using testing_util::OpsOfKind;
using testing_util::Problem;
using testing_util::ReceivedBytesPerChip;
using testing_util::RingSendRecvSeconds;
using testing_util::SendRecvs;
using testing_util::Simulate;
using testing_util::SimulateBlockingRing;

class Tp1dLoweringTest : public ::testing::TestWithParam<int> {};

// Every layer and pass at P = 4, 8, 16 with S = auto (= P): counts, flops, bytes, step GeMMs.
TEST_P(Tp1dLoweringTest, EveryLayerAndPass) {
  const int p = GetParam();
  const Mesh ring{1, p};
  const int64_t t = 512, e = 2;
  for (const FcLayer& l : Block(t, 128)) {
    for (Pass pass : kPasses) {
      const GemmProblem prob = Problem(l, pass);
      SCOPED_TRACE(prob.label);
      const core::OpGraph g = Lower("tp1d", prob, ring, 0);
      const bool col = l.column_parallel;
      const bool local = !col && pass == Pass::kBwdWeight;  // Y' kept from bwd-data.
      const bool reduce = col ? pass == Pass::kBwdData : pass == Pass::kFwd;
      const auto counts = OpCounts(g);
      // P−1 bidirectional SendRecv steps per decomposed collective, P step GeMMs per chip, and
      // a partial-sum accumulate per chip per step of a ReduceScatter.
      EXPECT_EQ(Count(counts, "sendrecv"), local ? 0 : p - 1);
      EXPECT_EQ(Count(counts, "gemm"), local ? p : p * p);
      EXPECT_EQ(Count(counts, "copy"), reduce ? p * (p - 1) : 0);
      EXPECT_EQ(g.size(),
                size_t(Count(counts, "sendrecv") + Count(counts, "gemm") + Count(counts, "copy")));
      for (OpId id : SendRecvs(g)) {
        EXPECT_EQ(g.op(id).directions, 2);
        EXPECT_EQ(g.group(g.op(id).group).size(), size_t(p));
      }

      // Per-chip flops are equal and sum to exactly 2·M·N·K (no redundant compute).
      const std::vector<double> flops = FlopsPerChip(g, p);
      double sum = 0;
      for (double f : flops) {
        EXPECT_EQ(f, flops[0]);
        sum += f;
      }
      EXPECT_EQ(sum, 2.0 * prob.m * prob.n * prob.k);

      // Received bytes per chip: (P−1)·(T/P)·I·e when X (column-parallel: fwd and bwd-weight
      // gather X, bwd-data reduce-scatters X') moves; (P−1)·(T/P)·O·e when Y or Y' moves
      // (row-parallel fwd and bwd-data); 0 for the row-parallel bwd-weight.
      const double moved = local ? 0 : double(t / p) * (col ? l.in : l.out) * e;
      for (double r : ReceivedBytesPerChip(g, p)) EXPECT_EQ(r, (p - 1) * moved);

      // The step GeMM of the banner table (natural orientation; the Table 1 cell may transpose).
      const core::Op& step = g.op(OpsOfKind(g, OpKind::kGemm)[0]);
      int64_t rows = 0, cols = 0, depth = 0;
      if (col && pass == Pass::kFwd) rows = t / p, cols = l.out / p, depth = l.in;
      if (col && pass == Pass::kBwdData) rows = t / p, cols = l.in, depth = l.out / p;
      if (col && pass == Pass::kBwdWeight) rows = l.in, cols = l.out / p, depth = t / p;
      if (!col && pass == Pass::kFwd) rows = t / p, cols = l.out, depth = l.in / p;
      if (!col && pass == Pass::kBwdData) rows = t / p, cols = l.in / p, depth = l.out;
      if (!col && pass == Pass::kBwdWeight) rows = l.in / p, cols = l.out, depth = t;
      const bool transposed = prob.m != (pass == Pass::kBwdWeight ? l.in : t);
      EXPECT_EQ(step.m, transposed ? cols : rows);
      EXPECT_EQ(step.n, transposed ? rows : cols);
      EXPECT_EQ(step.k, depth);
    }
  }
}

// AllGather (column-parallel forward): SendRecv t+1 waits only for SendRecv t, never for a
// GeMM; the step-t GeMM waits for SendRecv t but not t+1.
TEST_P(Tp1dLoweringTest, AllGatherStepsNeverWaitForGemms) {
  const int p = GetParam();
  const core::OpGraph g = Lower("tp1d", Problem(Block(512, 128)[0], Pass::kFwd), Mesh{1, p}, 0);
  const std::vector<OpId> sr = SendRecvs(g);
  ASSERT_EQ(sr.size(), size_t(p - 1));
  for (int t = 1; t < p - 1; ++t) {
    ASSERT_EQ(g.deps(sr[t]).size(), 1u);
    EXPECT_EQ(g.deps(sr[t])[0], sr[t - 1]);
    const std::vector<bool> before = Ancestors(g, sr[t]);
    for (OpId gemm : OpsOfKind(g, OpKind::kGemm)) EXPECT_FALSE(before[gemm.value()]);
  }
  for (OpId gemm : OpsOfKind(g, OpKind::kGemm)) {
    const int step = g.op(gemm).tags.slice;  // Step = iteration at S = P.
    const std::vector<bool> before = Ancestors(g, gemm);
    if (step >= 1) {
      EXPECT_TRUE(before[sr[step - 1].value()]);  // sr[i] is SendRecv step i+1.
    }
    if (step + 1 <= p - 1) {
      EXPECT_FALSE(before[sr[step].value()]);
    }
  }
}

// ReduceScatter (row-parallel forward): the GeMM of step t+1 runs beside SendRecv t+1 — the
// SendRecv waits for the accumulate of step t on every chip, never for a later GeMM.
TEST_P(Tp1dLoweringTest, ReduceScatterStepsOverlapTheNextGemm) {
  const int p = GetParam();
  const core::OpGraph g = Lower("tp1d", Problem(Block(512, 128)[1], Pass::kFwd), Mesh{1, p}, 0);
  const std::vector<OpId> sr = SendRecvs(g);
  ASSERT_EQ(sr.size(), size_t(p - 1));
  for (int t = 1; t <= p - 1; ++t) {  // sr[t−1] is SendRecv step t, carrying step t−1's sums.
    const std::vector<bool> before = Ancestors(g, sr[t - 1]);
    EXPECT_EQ(g.deps(sr[t - 1]).size(), size_t(p));  // The rendezvous of every chip.
    for (OpId gemm : OpsOfKind(g, OpKind::kGemm)) {
      EXPECT_EQ(before[gemm.value()], g.op(gemm).tags.slice < t) << "step " << t;
    }
  }
  // Each chip's GeMMs form a chain that no communication interrupts.
  for (OpId gemm : OpsOfKind(g, OpKind::kGemm)) {
    for (OpId d : g.deps(gemm)) EXPECT_EQ(g.op(d).kind, OpKind::kGemm);
  }
}

INSTANTIATE_TEST_SUITE_P(Tp1dRings, Tp1dLoweringTest, ::testing::Values(4, 8, 16));

TEST(Tp1dTest, UnrolledIterationsMergeStepGemms) {
  const int p = 8;
  const FcLayer qkv = Block(512, 128)[0];
  for (int s : {1, 2, 4, 8}) {
    SCOPED_TRACE(s);
    for (Pass pass : kPasses) {
      const GemmProblem prob = Problem(qkv, pass);
      const core::OpGraph g = Lower("tp1d", prob, Mesh{1, p}, s);
      const auto counts = OpCounts(g);
      EXPECT_EQ(Count(counts, "sendrecv"), p - 1);  // A ring step moves one hop regardless.
      EXPECT_EQ(Count(counts, "gemm"), s * p);
      double sum = 0;
      for (double f : FlopsPerChip(g, p)) sum += f;
      EXPECT_EQ(sum, 2.0 * prob.m * prob.n * prob.k);
    }
    // Forward: the iteration GeMM covers u = P/S token chunks.
    const core::OpGraph g = Lower("tp1d", Problem(qkv, Pass::kFwd), Mesh{1, p}, s);
    const core::Op& first = g.op(OpsOfKind(g, OpKind::kGemm)[0]);
    EXPECT_EQ(first.m, 512 / p * (p / s));
    EXPECT_EQ(first.n, 3 * 128 / p);
  }
}

// A stand-alone GeMM is the forward of a column-parallel layer with T = M, I = K, O = N.
TEST(Tp1dTest, StandAloneGemmIsAColumnParallelForward) {
  const int p = 4;
  GemmProblem prob;
  prob.m = 1024, prob.n = 512, prob.k = 256;
  prob.label = "gemm";
  const core::OpGraph g = Lower("tp1d", prob, Mesh{1, p}, 0);
  EXPECT_EQ(Count(OpCounts(g), "sendrecv"), p - 1);
  // Received per chip: (P−1)·(M/P)·K·e.
  for (double r : ReceivedBytesPerChip(g, p)) EXPECT_EQ(r, 3.0 * 256 * 256 * 2);
  for (double f : FlopsPerChip(g, p)) EXPECT_EQ(f, 2.0 * 1024 * 512 * 256 / p);
}

// The frontier: the second problem's ops on a chip all come after the first problem's.
TEST(Tp1dTest, ProblemsAreSequencedThroughTheFrontier) {
  const int p = 4;
  core::OpGraph g;
  std::unique_ptr<Algorithm> algo = MakeTp1d();
  LoweringContext ctx{g, Mesh{1, p}, 2, 0, std::vector<OpId>(p)};
  const std::vector<FcLayer> block = Block(512, 128);
  ASSERT_TRUE(algo->Lower(Problem(block[0], Pass::kFwd), ctx).ok());
  const size_t first_size = g.size();
  const std::vector<OpId> mid = ctx.frontier;
  ASSERT_TRUE(algo->Lower(Problem(block[1], Pass::kFwd), ctx).ok());
  // The last frontier covers both problems; the second problem follows the first's frontier.
  ASSERT_NO_FATAL_FAILURE(ExpectFrontierCovers(g, ctx.frontier, 0));
  ExpectFollowsFrontier(g, mid, static_cast<uint32_t>(first_size));
}

// A Table 1 cell that transposes the pass (W-stationary bwd-data: (I, T, O)) gets n × m GeMMs.
TEST(Tp1dTest, TransposedProblemEmitsTransposedGemms) {
  const int p = 4;
  const FcLayer qkv = Block(512, 128)[0];
  const GemmProblem prob = FcProblem(qkv, Stationary::kW, Pass::kBwdData);
  ASSERT_EQ(prob.m, qkv.in);
  const core::OpGraph g = Lower("tp1d", prob, Mesh{1, p}, 0);
  const core::Op& step = g.op(OpsOfKind(g, OpKind::kGemm)[0]);
  EXPECT_EQ(step.m, qkv.in);  // Natural: T/P × I × O/P.
  EXPECT_EQ(step.n, 512 / p);
  EXPECT_EQ(step.k, 3 * 128 / p);
}

TEST(Tp1dTest, CheckRejectsWhatDoesNotDivide) {
  std::unique_ptr<Algorithm> algo = MakeTp1d();
  const Mesh ring{1, 8};
  const auto check = [&](const GemmProblem& prob, int slices) {
    return algo->Check(prob, ring, slices);
  };
  // Tokens.
  absl::Status s = check(Problem({"qkv", 0, 100, 128, 384, true}, Pass::kFwd), 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tp1d: tokens T = 100 is not divisible by P = 8"));
  // The split weight dimension: O for column-parallel, I for row-parallel layers.
  s = check(Problem({"qkv", 0, 512, 128, 36, true}, Pass::kFwd), 0);
  EXPECT_THAT(s.message(), HasSubstr("output features O = 36"));
  s = check(Problem({"attn_out", 1, 512, 36, 128, false}, Pass::kBwdData), 0);
  EXPECT_THAT(s.message(), HasSubstr("input features I = 36"));
  // Slices must divide P.
  s = check(Problem(Block(512, 128)[0], Pass::kFwd), 3);
  EXPECT_THAT(s.message(), HasSubstr("--slices 3"));
  EXPECT_TRUE(check(Problem(Block(512, 128)[0], Pass::kFwd), 4).ok());
  // A GeMM that is not the pass's GeMM of its layer.
  GemmProblem wrong = Problem(Block(512, 128)[0], Pass::kFwd);
  wrong.k = 64;
  s = check(wrong, 0);
  EXPECT_THAT(s.message(), HasSubstr("does not match layer qkv"));
  // A stand-alone GeMM is checked as a column-parallel forward: M and N split by P.
  GemmProblem gemm;
  gemm.m = 1001, gemm.n = 64, gemm.k = 64;
  EXPECT_THAT(check(gemm, 0).message(), HasSubstr("tokens T = 1001"));
}

// --- Simulated on a ring of tpuv4 chips (two links each, 30 GB/s per direction). ---

// Wang et al.'s cost model for P iterations, with one step's SendRecv sr (RingSendRecvSeconds)
// and GeMM comp (ComputeSeconds): P·max(sr, comp).
double WangModel(int p, double sr, double comp) { return p * std::max(sr, comp); }

// Column-parallel forward: step GeMM T/P × O/P × I, SendRecv of T/P × I. comp/transfer =
// (O/P)·60e9/249e12, so O/P = 1024, 4096, 16384 run communication-bound, balanced and
// compute-bound.
TEST(Tp1dSimTest, AllGatherOverlapBeatsBlockingAndTracksWangModel) {
  struct Case {
    int p;
    int64_t o_per_chip;
  };
  for (const Case& c :
       {Case{4, 1024}, Case{4, 4096}, Case{8, 4096}, Case{16, 4096}, Case{4, 16384}}) {
    const int p = c.p;
    SCOPED_TRACE(testing::Message() << "P = " << p << ", O/P = " << c.o_per_chip);
    const int64_t tp = 2048, i = 4096, op = c.o_per_chip;  // T/P, I, O/P.
    const FcLayer l{"qkv", 0, tp * p, i, op * p, true};
    const double sim =
        Simulate(Lower("tp1d", Problem(l, Pass::kFwd), Mesh{1, p}, 0), Mesh{1, p}, {}, "ring");
    const double blocking =
        SimulateBlockingRing(p, core::CollectiveKind::kAllGather, tp * i * 2, tp * p, op, i);
    const double sr = RingSendRecvSeconds(tp * i * 2.0), comp = ComputeSeconds(tp, op, i);
    const double model = WangModel(p, sr, comp);
    // The schedule's own critical path: GeMM t starts when SendRecv t (done at t·sr) and GeMM
    // t−1 are, so it ends at max_t (t·sr + (P−t)·comp) = max((P−1)·sr + comp, P·comp).
    const double schedule = std::max((p - 1) * sr + comp, p * comp);
    std::printf(
        "tp1d qkv.fwd P=%d O/P=%lld: simulated %.1f us, blocking %.1f us, Wang model "
        "%.1f us, ratio %.3f\n",
        p, static_cast<long long>(op), sim * 1e6, blocking * 1e6, model * 1e6, sim / model);
    // Overlap works where it can: the blocking version is one AllGather (one launch, P−1 steps)
    // then the whole GeMM, 100 µs + (P−1)·(sr − 100 µs) + P·comp. Decomposing pays P−2 extra
    // launches, so it wins only when the hidden compute exceeds them (not at P = 4, O/P = 1024,
    // where the two tie).
    const double blocking_model = 100e-6 + (p - 1) * (sr - 100e-6) + p * comp;
    EXPECT_NEAR(blocking / blocking_model, 1.0, 0.06);
    if (blocking_model > 1.1 * schedule) {
      EXPECT_LT(sim, blocking);
    }
    // Within 6% of the critical path: the simulated GeMM runs at ≈ 241 TFLOPS rather than the
    // model's 249 (+3.3% when compute-bound) and shares HBM with the NIC.
    EXPECT_NEAR(sim / schedule, 1.0, 0.06);
    // Hence the Wang model's band: from (P−1)/P (communication-bound, the last step has no
    // SendRecv) to 1.06 (compute-bound, GeMM efficiency).
    EXPECT_GT(sim / model, (p - 1.0) / p);
    EXPECT_LT(sim / model, 1.06);
  }
}

// Row-parallel forward: partial sums reduce-scattered step by step. The model has no term for
// the first GeMM, which nothing hides, nor for the accumulates (3 bytes of HBM per byte
// received at 1.2 TB/s, ≈ 11% of a step here): the critical path is comp + (P−1)·(sr + add).
TEST(Tp1dSimTest, ReduceScatterOverlapBeatsBlockingAndTracksWangModel) {
  for (int p : {4, 8}) {
    SCOPED_TRACE(p);
    const int64_t tp = 2048, ip = 4096, o = 4096;  // T/P, I/P, O.
    const FcLayer l{"attn_out", 1, tp * p, ip * p, o, false};
    const double sim =
        Simulate(Lower("tp1d", Problem(l, Pass::kFwd), Mesh{1, p}, 0), Mesh{1, p}, {}, "ring");
    const double blocking =
        SimulateBlockingRing(p, core::CollectiveKind::kReduceScatter, tp * o * 2, tp * p, o, ip);
    const double sr = RingSendRecvSeconds(tp * o * 2.0), comp = ComputeSeconds(tp, o, ip);
    const double add = 3.0 * tp * o * 2 / 1.2e12;
    const double model = WangModel(p, sr, comp);
    const double schedule = std::max(comp + (p - 1) * (sr + add), p * comp + add);
    std::printf(
        "tp1d attn_out.fwd P=%d: simulated %.1f us, blocking %.1f us, Wang model %.1f "
        "us, ratio %.3f\n",
        p, sim * 1e6, blocking * 1e6, model * 1e6, sim / model);
    EXPECT_LT(sim, 0.8 * blocking);  // Blocking: P·comp + 100 µs + (P−1)·(sr − 100 µs + add).
    EXPECT_NEAR(sim / schedule, 1.0, 0.06);
    EXPECT_GT(sim / model, 1.0);
    EXPECT_LT(sim / model, 1.15);
  }
}

}  // namespace
}  // namespace meshsim::algorithms
