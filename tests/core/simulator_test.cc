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

TEST(SimulatorTest, RescheduleOrdersLikeCancelAndScheduleAnew) {
  // Two identical schedules; in one the event at 5 us is moved to 2 us and later to 3 us in
  // place, in the other it is cancelled and scheduled anew each time. Equal times run in the
  // same order: the moved event takes a fresh sequence number, as a new schedule would.
  std::vector<int> in_place, anew;
  {
    Simulator sim;
    EventId moved = sim.ScheduleAt(Time::Microseconds(5), [&] { in_place.push_back(0); });
    sim.ScheduleAt(Time::Microseconds(2), [&] { in_place.push_back(1); });
    EXPECT_TRUE(sim.Reschedule(moved, Time::Microseconds(2)));
    sim.ScheduleAt(Time::Microseconds(2), [&] { in_place.push_back(2); });
    sim.ScheduleAt(Time::Microseconds(3), [&] { in_place.push_back(3); });
    sim.ScheduleAt(Time::Microseconds(1), [&] {
      in_place.push_back(4);
      EXPECT_TRUE(sim.Reschedule(moved, Time::Microseconds(3)));
    });
    EXPECT_TRUE(sim.IsPending(moved));
    sim.Run();
    EXPECT_FALSE(sim.IsPending(moved));
    EXPECT_FALSE(sim.Reschedule(moved, Time::Microseconds(9)));  // Already ran.
    EXPECT_EQ(sim.events_rescheduled(), 2u);
    EXPECT_EQ(sim.events_cancelled(), 0u);
  }
  {
    Simulator sim;
    EventId moved = sim.ScheduleAt(Time::Microseconds(5), [&] { anew.push_back(0); });
    sim.ScheduleAt(Time::Microseconds(2), [&] { anew.push_back(1); });
    sim.Cancel(moved);
    moved = sim.ScheduleAt(Time::Microseconds(2), [&] { anew.push_back(0); });
    sim.ScheduleAt(Time::Microseconds(2), [&] { anew.push_back(2); });
    sim.ScheduleAt(Time::Microseconds(3), [&] { anew.push_back(3); });
    sim.ScheduleAt(Time::Microseconds(1), [&] {
      anew.push_back(4);
      sim.Cancel(moved);
      moved = sim.ScheduleAt(Time::Microseconds(3), [&] { anew.push_back(0); });
    });
    sim.Run();
  }
  EXPECT_EQ(in_place, (std::vector<int>{4, 1, 2, 3, 0}));
  EXPECT_EQ(in_place, anew);
}

TEST(SimulatorTest, RescheduleKeepsTheHeapOrderedUnderManyMoves) {
  // Many events moved earlier and later at random: they must still run in (time, last
  // reschedule) order.
  Simulator sim;
  std::vector<EventId> ids;
  std::vector<int64_t> when(200);
  std::vector<std::pair<int64_t, int>> ran;
  for (int i = 0; i < 200; ++i) {
    when[i] = 1000 + (i * 7919) % 500;
    ids.push_back(sim.ScheduleAt(Time::Picoseconds(when[i]), [&, i] {
      ran.push_back({sim.Now().ps(), i});
    }));
  }
  uint64_t x = 12345;
  for (int k = 0; k < 2000; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int i = static_cast<int>((x >> 33) % 200);
    when[i] = 1000 + static_cast<int64_t>((x >> 17) % 500);
    ASSERT_TRUE(sim.Reschedule(ids[i], Time::Picoseconds(when[i])));
  }
  sim.Run();
  ASSERT_EQ(ran.size(), 200u);
  for (size_t k = 0; k < ran.size(); ++k) {
    EXPECT_EQ(ran[k].first, when[ran[k].second]);
    if (k > 0) {
      EXPECT_LE(ran[k - 1].first, ran[k].first);
    }
  }
}

TEST(SimulatorTest, RescheduleFailsOnCancelledAndRefusesPastTheHorizon) {
  Simulator sim;
  int ran = 0;
  EventId a = sim.ScheduleAt(Time::Microseconds(1), [&] { ++ran; });
  EventId b = sim.ScheduleAt(Time::Microseconds(2), [&] { ++ran; });
  sim.Cancel(a);
  EXPECT_FALSE(sim.Reschedule(a, Time::Microseconds(3)));
  EXPECT_FALSE(sim.Reschedule(b, Time::Horizon() + Time::Picoseconds(1)));
  EXPECT_TRUE(sim.horizon_exceeded());
  EXPECT_FALSE(sim.IsPending(b));
  sim.Run();
  EXPECT_EQ(ran, 0);
}

// ScheduleAfterInBatch runs exactly what ScheduleAfter would, in the same order: the same script
// of calls (batched calls for one instant, one interrupted by a plain event at that instant,
// others at other instants, some scheduled from callbacks) gives the same (time, label) trace
// both ways, in fewer events; a Stop() between two batched callbacks (7 and 8) leaves the rest
// pending, and they run, in order, when the run resumes.
TEST(SimulatorTest, BatchedEventsRunAsTheirOwnEventsWould) {
  const auto script = [](bool batched, bool stop_at_7) {
    Simulator sim;
    std::vector<std::pair<int64_t, int>> trace;
    const auto at = [&](int64_t ps, int label) {
      auto cb = [&, label] {
        trace.push_back({sim.Now().ps(), label});
        if (label == 7 && stop_at_7) sim.Stop();
        if (label == 1) {  // Schedules from inside a batch: after every member of its instant.
          if (batched) {
            sim.ScheduleAfterInBatch(Time::Zero(), [&] { trace.push_back({sim.Now().ps(), 10}); });
          } else {
            sim.ScheduleAfter(Time::Zero(), [&] { trace.push_back({sim.Now().ps(), 10}); });
          }
        }
      };
      if (batched) {
        sim.ScheduleAfterInBatch(Time::Picoseconds(ps), cb);
      } else {
        sim.ScheduleAfter(Time::Picoseconds(ps), cb);
      }
    };
    at(5, 1);
    at(5, 2);
    at(7, 3);  // Another instant: ends the first batch.
    at(5, 4);
    sim.ScheduleAfter(Time::Picoseconds(5), [&] { trace.push_back({sim.Now().ps(), 5}); });
    at(5, 6);  // After a plain event of the same instant: a batch of its own.
    at(7, 7);
    at(7, 8);
    sim.Run();
    const uint64_t first_run = sim.events_executed();
    if (stop_at_7) sim.Run();
    return std::make_tuple(trace, first_run, sim.events_executed());
  };
  for (bool stop : {false, true}) {
    const auto [plain, plain_first, plain_events] = script(false, stop);
    const auto [batched, batched_first, batched_events] = script(true, stop);
    EXPECT_EQ(batched, plain) << stop;
    // Plain: 9 events. Batched: {1,2} {4} {5} {6} at 5 ps, {10} after them, {3} {7,8} at 7 ps;
    // stopped after 7, 8 waits as an event of its own.
    EXPECT_EQ(plain_events, 9u);
    EXPECT_EQ(batched_events, stop ? 8u : 7u);
    if (stop) {
      EXPECT_EQ(plain_first, 8u);
      EXPECT_EQ(batched_first, 7u);
    }
  }
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
