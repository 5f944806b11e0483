#include "core/op_graph.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

using ::testing::ElementsAre;

TEST(OpGraphTest, AddRecordsOpsDepsAndChips) {
  OpGraph g;
  OpId a = g.Add(Op::Gemm(ChipId(0), 8, 16, 32));
  OpId b = g.Add(Op::Gemm(ChipId(3), 8, 16, 32));
  GroupId grp = g.AddGroup({ChipId(0), ChipId(3)});
  OpId c = g.Add(Op::Collective(CollectiveKind::kAllGather, grp, 1024), {a, b});
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g.num_deps(), 2u);
  EXPECT_THAT(g.deps(c), ElementsAre(a, b));
  EXPECT_TRUE(g.deps(a).empty());
  EXPECT_THAT(g.ChipsOf(c), ElementsAre(ChipId(0), ChipId(3)));
  EXPECT_THAT(g.ChipsOf(b), ElementsAre(ChipId(3)));
  EXPECT_EQ(g.num_chips(), 4);
  EXPECT_DOUBLE_EQ(g.op(a).flops(), 2.0 * 8 * 16 * 32);
  EXPECT_EQ(g.Label(c), "allgather");
}

TEST(OpGraphTest, GroupsAndNamesAreInterned) {
  OpGraph g;
  GroupId a = g.AddGroup({ChipId(0), ChipId(1)});
  GroupId b = g.AddGroup({ChipId(0), ChipId(1)});
  GroupId c = g.AddGroup({ChipId(1), ChipId(0)});  // Different ring order: a different group.
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(g.num_groups(), 2u);
  NameId n1 = g.Intern("qkv.fwd");
  NameId n2 = g.Intern("qkv.fwd");
  EXPECT_EQ(n1, n2);
  Op op = Op::Delay(ChipId(0), Time::Nanoseconds(1));
  op.tags.name = n1;
  EXPECT_EQ(g.Label(g.Add(op)), "qkv.fwd");
}

// The op budget: Add never fails; full() turns true at budget + 1 ops and CheckSize says so.
TEST(OpGraphTest, BudgetIsPassedAtOneOpMore) {
  OpGraph g;
  EXPECT_EQ(g.max_ops(), 0u);
  for (int i = 0; i < 5; ++i) g.Add(Op::Gemm(ChipId(0), 8, 8, 8));
  EXPECT_FALSE(g.full());  // No budget.
  g.set_max_ops(6);
  g.Add(Op::Gemm(ChipId(0), 8, 8, 8));
  EXPECT_FALSE(g.full());
  EXPECT_TRUE(g.CheckSize().ok());
  g.Add(Op::Gemm(ChipId(0), 8, 8, 8));
  EXPECT_EQ(g.size(), 7u);
  EXPECT_TRUE(g.full());
  EXPECT_EQ(g.CheckSize().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(g.CheckSize().message(), "the op graph passes its budget of 6 ops");
}

TEST(OpGraphDeathTest, RejectsDependencyOnAFutureOp) {
  OpGraph g;
  g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(1)));
  EXPECT_DEATH(g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(1)), {OpId(1)}), "does not exist");
  EXPECT_DEATH(g.AddGroup({ChipId(1), ChipId(1)}), "twice");
}

}  // namespace
}  // namespace meshsim::core
