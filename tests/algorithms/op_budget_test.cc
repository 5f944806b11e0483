// The op budget (core/op_graph.h set_max_ops): plugins whose op count grows faster than the chips
// stop inside their loops once the graph passes it, and tp1d/fsdp count their ops in closed form
// (Algorithm::CountOps) so that sim/ refuses a run before lowering it.
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/llm.h"
#include "algorithms/registry.h"
#include "core/op_graph.h"
#include "gtest/gtest.h"
#include "tests/algorithms/lowering_testing.h"
#include "workloads/transformer.h"

namespace meshsim::algorithms {
namespace {

using core::Pass;
using testing_util::Block;
using testing_util::kPasses;
using testing_util::Lower;
using testing_util::Problem;

std::unique_ptr<Algorithm> Make(const std::string& name) {
  absl::StatusOr<const AlgorithmInfo*> info = FindAlgorithm(name);
  EXPECT_TRUE(info.ok()) << info.status();
  return (*info)->make();
}

// The closed form of ring_overlap.h equals what the lowering builds, for every layer and pass
// (AllGather, ReduceScatter and tp1d's local row-parallel bwd-weight) and every allowed S:
//   AG: (P−1) + S·P    RS: (P−1) + S·P + (P−1)·P    none: P.
TEST(OpBudgetTest, RingPluginsCountTheirOpsExactly) {
  for (const std::string name : {"tp1d", "fsdp"}) {
    const std::unique_ptr<Algorithm> algo = Make(name);
    for (int p : {1, 2, 4, 8}) {
      for (int s : {0, 1, 2, 4, 8}) {
        if (s > p || (s > 0 && p % s != 0)) continue;
        for (const FcLayer& l : Block(512, 128)) {
          for (Pass pass : kPasses) {
            const GemmProblem prob = Problem(l, pass);
            SCOPED_TRACE(name + " " + prob.label + " P=" + std::to_string(p) +
                         " S=" + std::to_string(s));
            const core::OpGraph g = Lower(name, prob, Mesh{1, p}, s);
            EXPECT_EQ(algo->CountOps(prob, Mesh{1, p}, s), static_cast<int64_t>(g.size()));
          }
        }
      }
    }
  }
  // S does not remove a ReduceScatter's adds: at P = 8, S = 1 still has (P−1)·P = 56 of them.
  const GemmProblem rs = Problem(Block(512, 128)[0], Pass::kBwdData);  // tp1d: RdS of X'.
  EXPECT_EQ(Make("tp1d")->CountOps(rs, Mesh{1, 8}, 1), 7 + 8 + 56);
  EXPECT_EQ(Make("tp1d")->CountOps(rs, Mesh{1, 8}, 8), 7 + 64 + 56);
}

// A whole training block: CountProblemOps is the size of the graph LowerProblems builds; a plugin
// without a closed form gives -1.
TEST(OpBudgetTest, ProblemCountMatchesALoweredBlock) {
  BlockPlan plan;
  plan.model = workloads::CustomModel(256, 2, 1024, 1).value();
  plan.batch = 4;
  plan.seq = 256;
  plan.mesh = Mesh{1, 8};
  const std::vector<GemmProblem> problems = BlockProblems(plan).value();
  ASSERT_EQ(problems.size(), 12u);
  for (const std::string name : {"tp1d", "fsdp"}) {
    for (int s : {0, 1, 4}) {
      SCOPED_TRACE(name + " S=" + std::to_string(s));
      const std::unique_ptr<Algorithm> algo = Make(name);
      core::OpGraph g;
      ASSERT_TRUE(LowerProblems(problems, *algo, plan.mesh, s, 2, g).ok());
      EXPECT_EQ(CountProblemOps(problems, *algo, plan.mesh, s), static_cast<int64_t>(g.size()));
    }
  }
  EXPECT_EQ(CountProblemOps(problems, *Make("summa"), Mesh{2, 4}, 0), -1);
  // A problem its Check refuses (S = 3 does not divide P = 8): no count, the lowering says why.
  EXPECT_EQ(CountProblemOps(problems, *Make("tp1d"), plan.mesh, 3), -1);
}

// The ReduceScatter of tp1d at S = 1 appends (P−1)·P adds in one unrolled iteration: the budget
// is checked per ring step (every P + 1 ops), so the graph stops within one step of it instead of
// finishing the P² adds.
TEST(OpBudgetTest, RingLoweringStopsWithinAStepOfTheBudget) {
  const int p = 32;
  const GemmProblem rs = Problem(Block(1024, 128)[0], Pass::kBwdData);
  const int64_t full = Make("tp1d")->CountOps(rs, Mesh{1, p}, 1);
  ASSERT_EQ(full, 31 + 32 + 31 * 32);
  for (size_t budget : {1u, 100u, 500u}) {
    SCOPED_TRACE(budget);
    core::OpGraph g;
    g.set_max_ops(budget);
    const absl::Status s = LowerProblems({rs}, *Make("tp1d"), Mesh{1, p}, 1, 2, g);
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_GT(g.size(), budget);
    EXPECT_LE(g.size(), budget + p + 1);  // One SendRecv and its P adds past the budget.
  }
  // Under the budget nothing changes.
  core::OpGraph g;
  g.set_max_ops(full);
  EXPECT_TRUE(LowerProblems({rs}, *Make("tp1d"), Mesh{1, p}, 1, 2, g).ok());
  EXPECT_EQ(static_cast<int64_t>(g.size()), full);
}

// The 2D plugins whose op count grows with S (or with the mesh side for Cannon) stop at the top
// of an iteration: far fewer ops than the whole problem, and ResourceExhausted.
TEST(OpBudgetTest, SlicedPluginsStopAtTheNextIteration) {
  struct Case {
    std::string name;
    Mesh mesh;
    int slices;
  };
  for (const Case& c : {Case{"summa", {4, 4}, 16}, Case{"wang", {4, 4}, 4},
                        Case{"meshslice", {4, 4}, 8}, Case{"cannon", {8, 8}, 0}}) {
    for (Dataflow d : testing_util::kDataflows) {
      SCOPED_TRACE(c.name + " " + ToString(d));
      const GemmProblem prob = Problem(d, 4096, 4096, 4096, "p");
      const size_t full = Lower(c.name, prob, c.mesh, c.slices).size();
      core::OpGraph g;
      g.set_max_ops(1);
      const absl::Status s = LowerProblems({prob}, *Make(c.name), c.mesh, c.slices, 2, g);
      EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
      EXPECT_LT(g.size(), full / 2) << "full problem: " << full;
    }
  }
}

// A plugin without loops to check (one collective per direction) is stopped by LowerProblems
// after the problem that passed the budget.
TEST(OpBudgetTest, LowerProblemsChecksAfterEveryProblem) {
  const GemmProblem prob = Problem(Dataflow::kOS, 512, 512, 512, "p");
  core::OpGraph g;
  g.set_max_ops(1);
  const absl::Status s =
      LowerProblems({prob, prob, prob}, *Make("collective"), Mesh{2, 2}, 0, 2, g);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(g.size(), Lower("collective", prob, Mesh{2, 2}, 0).size());  // The first only.
}

}  // namespace
}  // namespace meshsim::algorithms
