#include "core/simulator.h"

#include <vector>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

TEST(SimulatorTest, RunsEventsInTimeOrder) {
  Simulator sim;
  std::vector<int> order;
  sim.ScheduleAt(Time::Microseconds(3), [&] { order.push_back(3); });
  sim.ScheduleAt(Time::Microseconds(1), [&] { order.push_back(1); });
  sim.ScheduleAt(Time::Microseconds(2), [&] { order.push_back(2); });
  sim.Run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(sim.Now(), Time::Microseconds(3));
  EXPECT_EQ(sim.events_executed(), 3u);
}

TEST(SimulatorTest, EqualTimesRunFifo) {
  Simulator sim;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i)
    sim.ScheduleAt(Time::Nanoseconds(7), [&, i] { order.push_back(i); });
  // An event scheduled at Now() from a callback runs after those already queued for that time.
  sim.ScheduleAt(Time::Nanoseconds(7),
                 [&] { sim.ScheduleAfter(Time::Zero(), [&] { order.push_back(1000); }); });
  sim.ScheduleAt(Time::Nanoseconds(7), [&] { order.push_back(100); });
  sim.Run();
  ASSERT_EQ(order.size(), 102u);
  for (int i = 0; i <= 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(order.back(), 1000);
}

TEST(SimulatorTest, CancelPreventsRunAndIsIdempotent) {
  Simulator sim;
  int ran = 0;
  EventId a = sim.ScheduleAt(Time::Microseconds(1), [&] { ran += 1; });
  EventId b = sim.ScheduleAt(Time::Microseconds(2), [&] { ran += 10; });
  EXPECT_TRUE(sim.IsPending(a));
  EXPECT_TRUE(sim.Cancel(a));
  EXPECT_FALSE(sim.Cancel(a));
  EXPECT_FALSE(sim.IsPending(a));
  EXPECT_EQ(sim.pending(), 1u);
  sim.Run();
  EXPECT_EQ(ran, 10);
  EXPECT_FALSE(sim.Cancel(b));  // Already ran.
  EXPECT_EQ(sim.events_executed(), 1u);
}

TEST(SimulatorTest, StaleIdDoesNotCancelAReusedSlot) {
  Simulator sim;
  int ran = 0;
  EventId a = sim.ScheduleAt(Time::Microseconds(1), [&] { ++ran; });
  sim.Run();
  EventId b = sim.ScheduleAt(Time::Microseconds(2), [&] { ++ran; });  // Reuses a's slot.
  EXPECT_FALSE(sim.Cancel(a));
  EXPECT_TRUE(sim.IsPending(b));
  sim.Run();
  EXPECT_EQ(ran, 2);
}

TEST(SimulatorTest, CallbackCanCancelALaterEvent) {
  Simulator sim;
  bool later_ran = false;
  EventId later = sim.ScheduleAt(Time::Microseconds(5), [&] { later_ran = true; });
  sim.ScheduleAt(Time::Microseconds(1), [&] { EXPECT_TRUE(sim.Cancel(later)); });
  sim.Run();
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(sim.Now(), Time::Microseconds(1));
}

TEST(SimulatorTest, RunUntilStopsAtLimitAndAdvancesClock) {
  Simulator sim;
  std::vector<int> order;
  sim.ScheduleAt(Time::Microseconds(1), [&] { order.push_back(1); });
  sim.ScheduleAt(Time::Microseconds(2), [&] { order.push_back(2); });  // At the limit: runs.
  sim.ScheduleAt(Time::Microseconds(3), [&] { order.push_back(3); });
  sim.RunUntil(Time::Microseconds(2));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(sim.Now(), Time::Microseconds(2));
  sim.RunUntil(Time::Microseconds(10));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(sim.Now(), Time::Microseconds(10));
}

TEST(SimulatorTest, StopReturnsAfterCurrentCallback) {
  Simulator sim;
  int ran = 0;
  sim.ScheduleAt(Time::Microseconds(1), [&] {
    ++ran;
    sim.Stop();
  });
  sim.ScheduleAt(Time::Microseconds(2), [&] { ++ran; });
  sim.Run();
  EXPECT_EQ(ran, 1);
  sim.Run();
  EXPECT_EQ(ran, 2);
}

TEST(SimulatorTest, EventPastTheHorizonIsRefusedAndStopsTheRun) {
  Simulator sim;
  int ran = 0;
  sim.ScheduleAt(Time::Seconds(1), [&] {
    ++ran;
    // 1 s + a duration that reaches past 10^6 s: refused, not an int64 overflow.
    EXPECT_FALSE(sim.ScheduleAfter(Time::Horizon(), [&] { ++ran; }).valid());
  });
  sim.ScheduleAt(Time::Seconds(2), [&] { ++ran; });
  sim.Run();
  EXPECT_TRUE(sim.horizon_exceeded());
  EXPECT_EQ(ran, 1);  // The run stops at once: the event at 2 s does not run.
}

TEST(SimulatorDeathTest, SchedulingInThePastIsFatal) {
  Simulator sim;
  sim.ScheduleAt(Time::Microseconds(2), [] {});
  sim.Run();
  EXPECT_DEATH(sim.ScheduleAt(Time::Microseconds(1), [] {}), "in the past");
}

}  // namespace
}  // namespace meshsim::core
