#include "core/executor.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

using ::testing::HasSubstr;

// Records the order in which ops start and finishes each after a fixed 1 ns.
class OrderRunner : public OpRunner {
 public:
  void Start(OpId id, const Op& op, Executor& exec) override {
    started.push_back(id.value());
    exec.sim().ScheduleAfter(Time::Nanoseconds(1), [&exec, id] { exec.Finish(id); });
  }
  std::vector<uint32_t> started;
};

// Never finishes anything: a runner bug the hang report must expose.
class StuckRunner : public OpRunner {
 public:
  void Start(OpId, const Op&, Executor&) override {}
  std::string DescribeWait(OpId) const override { return "waiting for a flow that never ends"; }
};

TEST(ExecutorTest, DelayChainRunsInDependencyOrder) {
  // a (5 ns) → b (7 ns) and a → c (2 ns); d waits for b and c: d starts at 12 ns, ends at 13.
  Simulator sim;
  OpGraph g;
  OpId a = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(5)));
  OpId b = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(7)), {a});
  OpId c = g.Add(Op::Delay(ChipId(1), Time::Nanoseconds(2)), {a});
  OpId d = g.Add(Op::Delay(ChipId(1), Time::Nanoseconds(1)), {b, c});
  Executor exec(sim, g);
  DelayRunner delays;
  exec.SetRunner(OpKind::kDelay, &delays);
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_EQ(exec.start_time(b), Time::Nanoseconds(5));
  EXPECT_EQ(exec.end_time(c), Time::Nanoseconds(7));
  EXPECT_EQ(exec.start_time(d), Time::Nanoseconds(12));
  EXPECT_EQ(exec.makespan(), Time::Nanoseconds(13));
  ASSERT_EQ(exec.timeline().size(), 4u);
  EXPECT_EQ(exec.timeline().back().op, d);
  EXPECT_EQ(exec.timeline().back().chip, ChipId(1));
}

TEST(ExecutorTest, ReleaseTimesHoldReadyOpsBack) {
  // a (5 ns) → b (1 ns) with b released at 20 ns: b starts at 20 (not 5); c (no deps, released
  // at 3 ns) starts at 3; an op released before its dependencies finish starts when they do.
  Simulator sim;
  OpGraph g;
  OpId a = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(5)));
  OpId b = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(1)), {a});
  OpId c = g.Add(Op::Delay(ChipId(1), Time::Nanoseconds(4)));
  OpId d = g.Add(Op::Delay(ChipId(1), Time::Nanoseconds(1)), {c});
  Executor exec(sim, g);
  DelayRunner delays;
  exec.SetRunner(OpKind::kDelay, &delays);
  exec.set_release_times(
      {Time::Zero(), Time::Nanoseconds(20), Time::Nanoseconds(3), Time::Nanoseconds(2)});
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_EQ(exec.start_time(a), Time::Zero());
  EXPECT_EQ(exec.start_time(b), Time::Nanoseconds(20));
  EXPECT_EQ(exec.start_time(c), Time::Nanoseconds(3));
  EXPECT_EQ(exec.start_time(d), Time::Nanoseconds(7));
  EXPECT_EQ(exec.makespan(), Time::Nanoseconds(21));
}

TEST(ExecutorTest, ReadyOpsStartInIdOrder) {
  // Ops 1..4 all depend on op 0 only, so they become ready together and start by id.
  Simulator sim;
  OpGraph g;
  OpId root = g.Add(Op::Delay(ChipId(0), Time::Zero()));
  for (int i = 0; i < 4; ++i) g.Add(Op::Delay(ChipId(i), Time::Zero()), {root});
  // Op 5 has no deps and is ready at time 0 with op 0.
  g.Add(Op::Delay(ChipId(0), Time::Zero()));
  Executor exec(sim, g);
  OrderRunner runner;
  exec.SetRunner(OpKind::kDelay, &runner);
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_EQ(runner.started, (std::vector<uint32_t>{0, 5, 1, 2, 3, 4}));
}

TEST(ExecutorTest, CollectiveWaitsForEveryMember) {
  // A collective op depends on each member's last op: it starts at the slowest arrival (9 ns).
  Simulator sim;
  OpGraph g;
  OpId a = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(3)));
  OpId b = g.Add(Op::Delay(ChipId(1), Time::Nanoseconds(9)));
  GroupId grp = g.AddGroup({ChipId(0), ChipId(1)});
  OpId coll = g.Add(Op::Collective(CollectiveKind::kAllGather, grp, 64), {a, b});
  Executor exec(sim, g);
  DelayRunner delays;
  OrderRunner colls;
  exec.SetRunner(OpKind::kDelay, &delays);
  exec.SetRunner(OpKind::kCollective, &colls);
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_EQ(exec.start_time(coll), Time::Nanoseconds(9));
}

TEST(ExecutorTest, MissingRunnerIsAnErrorBeforeRunning) {
  Simulator sim;
  OpGraph g;
  g.Add(Op::Gemm(ChipId(0), 8, 8, 8));
  Executor exec(sim, g);
  absl::Status s = exec.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("no runner for 'gemm'"));
  EXPECT_EQ(sim.events_executed(), 0u);
}

TEST(ExecutorTest, HangReportListsStuckAndWaitingOps) {
  Simulator sim;
  OpGraph g;
  OpId a = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(4)));
  OpId stuck = g.Add(Op::Gemm(ChipId(2), 8, 8, 8), {a});
  g.Add(Op::Delay(ChipId(2), Time::Nanoseconds(1)), {stuck});
  Executor exec(sim, g);
  DelayRunner delays;
  StuckRunner never;
  exec.SetRunner(OpKind::kDelay, &delays);
  exec.SetRunner(OpKind::kGemm, &never);
  absl::Status s = exec.Run();
  ASSERT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("2 of 3 ops unfinished (1 running, 1 waiting)"));
  EXPECT_THAT(s.message(), HasSubstr("op 1 'gemm' on chip 2: started at 4.000 ns, waiting for a "
                                     "flow that never ends"));
  EXPECT_THAT(s.message(), HasSubstr("op 2 'delay' on chip 2: waits for op 1"));
}

TEST(ExecutorTest, HangReportNamesTheStreamAndTheQueueAnOpWaitsFor) {
  // A collective that never begins (its runner is stuck), then on chip 0 an op held by the queue
  // behind it and an op held by the stream behind that one.
  Simulator sim;
  OpGraph g;
  const OpId c =
      g.Add(Op::Collective(CollectiveKind::kAllReduce, g.AddGroup({ChipId(0), ChipId(1)}), 8));
  const OpId held = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(1)));
  const OpId next = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(1)));
  Executor exec(sim, g);
  DelayRunner delays;
  StuckRunner never;
  exec.SetRunner(OpKind::kDelay, &delays);
  exec.SetRunner(OpKind::kCollective, &never);
  exec.set_order_edges({{held, next}});
  exec.set_begin_edges({{c, held, ChipId(0)}});
  absl::Status s = exec.Run();
  ASSERT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(),
              HasSubstr("op 1 'delay' on chip 0: waits for the queue's collective 0 on chip 0 to "
                        "begin"));
  EXPECT_THAT(s.message(), HasSubstr("op 2 'delay' on chip 0: waits for its stream's op 1"));
}

uint64_t ChainFingerprint() {
  Simulator sim;
  OpGraph g;
  std::vector<OpId> prev;
  for (int step = 0; step < 20; ++step) {
    std::vector<OpId> cur;
    for (int c = 0; c < 8; ++c) {
      std::vector<OpId> deps;
      if (!prev.empty()) deps = {prev[c], prev[(c + 7) % 8]};
      cur.push_back(g.Add(Op::Delay(ChipId(c), Time::Nanoseconds(1 + (c * 7 + step) % 5)), deps));
    }
    prev = cur;
  }
  Executor exec(sim, g);
  DelayRunner delays;
  exec.SetRunner(OpKind::kDelay, &delays);
  EXPECT_TRUE(exec.Run().ok());
  return exec.fingerprint();
}

// A stored golden value, not a run compared with itself in one process: a change to the
// executor's ordering (or to the hash) shows up here.
TEST(ExecutorTest, DeterminismFingerprint) {
  EXPECT_EQ(ChainFingerprint(), 15055368020598127299ull);
}

// A full container doubles while the capacities of all containers sharing the budget stay
// within it (which also bounds the copy: the old rows and their copy), and the budget is
// exhausted once it cannot.
TEST(TimelineBudgetTest, ContainersDoubleWhileTheirCapacitiesFit) {
  TimelineBudget budget(2048 * 64);
  std::vector<TimelineRow> rows;
  ASSERT_TRUE(budget.Grow(rows));
  EXPECT_EQ(rows.capacity(), 1024u);
  EXPECT_EQ(budget.committed_bytes(), 1024 * 64);
  rows.resize(1024);
  ASSERT_TRUE(budget.Grow(rows));  // 2048 rows: exactly the budget.
  EXPECT_EQ(rows.capacity(), 2048u);
  EXPECT_EQ(budget.committed_bytes(), 2048 * 64);
  EXPECT_FALSE(budget.exhausted());
  rows.resize(2048);
  EXPECT_FALSE(budget.Grow(rows));  // 4096 would not fit.
  EXPECT_TRUE(budget.exhausted());
  EXPECT_EQ(rows.capacity(), 2048u);
  // Rows and counter samples share one budget.
  TimelineBudget shared(1024 * 64 + 2048 * 24);
  std::vector<TimelineRow> more;
  std::vector<CounterSample> samples;
  ASSERT_TRUE(shared.Grow(more));
  ASSERT_TRUE(shared.Grow(samples));
  samples.resize(1024);
  ASSERT_TRUE(shared.Grow(samples));
  EXPECT_EQ(shared.committed_bytes(), shared.max_bytes());
  more.resize(1024);
  EXPECT_FALSE(shared.Grow(more));
  EXPECT_EQ(more.capacity(), 1024u);
}

// With a timeline budget, a run whose rows would pass it stops: rows beyond the budget are
// dropped, the simulator is stopped, Run reports the unfinished ops. A budget the rows fit in
// changes nothing.
TEST(ExecutorTest, TimelineBudgetStopsTheRunWhenTheRowsWouldPassIt) {
  OpGraph g;
  OpId prev = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(1)));
  for (int i = 1; i < 20000; ++i) prev = g.Add(Op::Delay(ChipId(0), Time::Nanoseconds(1)), {prev});
  {
    Simulator sim;
    Executor exec(sim, g);
    DelayRunner delays;
    exec.SetRunner(OpKind::kDelay, &delays);
    TimelineBudget budget(32768 * 64);
    exec.set_timeline_budget(&budget);
    ASSERT_TRUE(exec.Run().ok());
    EXPECT_FALSE(budget.exhausted());
    EXPECT_EQ(exec.timeline().size(), 20000u);
    EXPECT_EQ(exec.makespan(), Time::Nanoseconds(20000));
  }
  Simulator sim;
  Executor exec(sim, g);
  DelayRunner delays;
  exec.SetRunner(OpKind::kDelay, &delays);
  TimelineBudget budget(10000 * 64);
  exec.set_timeline_budget(&budget);
  const absl::Status s = exec.Run();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(budget.exhausted());
  EXPECT_LE(budget.committed_bytes(), budget.max_bytes());
  // 1024, 2048, 4096, 8192 rows fit in 10000; 16384 would not.
  EXPECT_EQ(exec.timeline().size(), 8192u);
  // Stopped at once: the op whose row did not fit is the last one finished.
  EXPECT_EQ(exec.finished_count(), exec.timeline().size() + 1);
}

}  // namespace
}  // namespace meshsim::core
