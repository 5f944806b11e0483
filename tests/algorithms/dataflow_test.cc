#include "algorithms/dataflow.h"

#include "algorithms/llm.h"
#include "gtest/gtest.h"

namespace meshsim::algorithms {
namespace {

FcLayer Layer(const char* name, int64_t t, int64_t i, int64_t o) {
  return {name, 0, t, i, o, true};
}

TEST(DataflowTest, PhaseOneRuleKeepsTheLargestMatrixStationary) {
  // GPT-3 at 256 chips: T = 128·2048 = 262144 tokens, H = 12288.
  const int64_t t = 262144, h = 12288;
  EXPECT_EQ(AutoStationary(Layer("qkv", t, h, 3 * h)), Stationary::kY);
  EXPECT_EQ(AutoStationary(Layer("attn_out", t, h, h)), Stationary::kX);
  EXPECT_EQ(AutoStationary(Layer("ffn_up", t, h, 4 * h)), Stationary::kY);
  EXPECT_EQ(AutoStationary(Layer("ffn_down", t, 4 * h, h)), Stationary::kX);
  // Few tokens: the weight is the largest matrix.
  EXPECT_EQ(AutoStationary(Layer("qkv", 1024, h, 3 * h)), Stationary::kW);
}

TEST(DataflowTest, TableOneShapesMatchTheReference) {
  // Y-stationary QKV: fwd (T, 3H, H) OS, bwd-data (T, H, 3H) LS, bwd-weight (H, 3H, T) RS.
  const FcLayer qkv = Layer("qkv", 4096, 1024, 3072);
  GemmProblem f = FcProblem(qkv, Stationary::kY, core::Pass::kFwd);
  EXPECT_EQ(f.dataflow, Dataflow::kOS);
  EXPECT_EQ(std::tuple(f.m, f.n, f.k), std::tuple(4096, 3072, 1024));
  GemmProblem d = FcProblem(qkv, Stationary::kY, core::Pass::kBwdData);
  EXPECT_EQ(d.dataflow, Dataflow::kLS);
  EXPECT_EQ(std::tuple(d.m, d.n, d.k), std::tuple(4096, 1024, 3072));
  GemmProblem w = FcProblem(qkv, Stationary::kY, core::Pass::kBwdWeight);
  EXPECT_EQ(w.dataflow, Dataflow::kRS);
  EXPECT_EQ(std::tuple(w.m, w.n, w.k), std::tuple(1024, 3072, 4096));
  // X-stationary: LS(X, Wᵀ) (T, O, I); OS(Y', Wᵀ) (T, I, O); RS(Y', X) (O, I, T).
  const FcLayer ao = Layer("attn_out", 4096, 2048, 1024);
  EXPECT_EQ(FcProblem(ao, Stationary::kX, core::Pass::kFwd).dataflow, Dataflow::kLS);
  GemmProblem xw = FcProblem(ao, Stationary::kX, core::Pass::kBwdWeight);
  EXPECT_EQ(std::tuple(xw.m, xw.n, xw.k), std::tuple(1024, 2048, 4096));
  // W-stationary: RS(Xᵀ, W) (T, O, I); LS(W, Y') (I, T, O); OS(Xᵀ, Y') (I, O, T).
  GemmProblem wd = FcProblem(ao, Stationary::kW, core::Pass::kBwdData);
  EXPECT_EQ(wd.dataflow, Dataflow::kLS);
  EXPECT_EQ(std::tuple(wd.m, wd.n, wd.k), std::tuple(2048, 4096, 1024));
  EXPECT_EQ(FcProblem(ao, Stationary::kW, core::Pass::kBwdWeight).dataflow, Dataflow::kOS);
}

TEST(DataflowTest, EveryCellConservesTheLayersFlops) {
  const FcLayer l = Layer("x", 512, 256, 768);
  for (Stationary s : {Stationary::kY, Stationary::kX, Stationary::kW}) {
    for (core::Pass p : {core::Pass::kFwd, core::Pass::kBwdData, core::Pass::kBwdWeight}) {
      const GemmProblem g = FcProblem(l, s, p);
      EXPECT_EQ(g.m * g.n * g.k, l.tokens * l.in * l.out);
    }
  }
}

TEST(DataflowTest, TrainingBlockOrder) {
  BlockPlan plan;
  plan.model = {"m", "", 1024, 8, 0, 2};
  plan.batch = 4;
  plan.seq = 256;
  auto problems = BlockProblems(plan);
  ASSERT_TRUE(problems.ok());
  ASSERT_EQ(problems->size(), 12u);
  EXPECT_EQ((*problems)[0].label, "qkv.fwd");
  EXPECT_EQ((*problems)[3].label, "ffn_down.fwd");
  EXPECT_EQ((*problems)[4].label, "ffn_down.bwd-data");
  EXPECT_EQ((*problems)[5].label, "ffn_down.bwd-weight");
  EXPECT_EQ((*problems)[11].label, "qkv.bwd-weight");
  plan.pass = "fwd";
  EXPECT_EQ(BlockProblems(plan)->size(), 4u);
  plan.pass = "bwd";
  EXPECT_EQ(BlockProblems(plan)->size(), 8u);
  plan.dataflow = "os";
  EXPECT_EQ((*BlockProblems(plan))[0].dataflow, Dataflow::kLS);  // ffn_down bwd-data of Y-stn.
}

}  // namespace
}  // namespace meshsim::algorithms
