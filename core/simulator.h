// The discrete-event engine: a clock and one queue of callbacks ordered by (time, insertion).
//
// Events at equal times run in the order they were scheduled, so every run is deterministic.
// There is no global simulator: whoever needs the clock is handed a `Simulator&`.
//
// Example:
//   Simulator sim;
//   EventId e = sim.ScheduleAfter(Time::Microseconds(5), [&] { std::cout << sim.Now(); });
//   sim.Cancel(e);   // O(1); the callback never runs
//   sim.Run();
//
// Implementation: a 4-ary min-heap of 24-byte (time, sequence, slot) entries (half the depth of a
// binary heap, and the four children share a cache line pair); callbacks live in a slot pool
// reused through a free list, so steady-state scheduling does not allocate (callbacks with up
// to 16 bytes of captures are stored inline by std::function). Each slot knows its entry's heap
// index, so `Reschedule` moves a pending event in place instead of leaving a cancelled entry
// behind (the fair-share solver reschedules a flow's completion whenever its rate changes).
#ifndef MESHSIM_CORE_SIMULATOR_H_
#define MESHSIM_CORE_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "core/time.h"

namespace meshsim::core {

// Identifies a scheduled event for cancellation. Stale ids (already run or cancelled) are
// harmless: Cancel returns false.
class EventId {
 public:
  constexpr EventId() = default;
  constexpr bool valid() const { return slot_ != kNone; }
  friend constexpr bool operator==(EventId, EventId) = default;

 private:
  friend class Simulator;
  static constexpr uint32_t kNone = UINT32_MAX;
  constexpr EventId(uint32_t slot, uint32_t generation) : slot_(slot), generation_(generation) {}
  uint32_t slot_ = kNone;
  uint32_t generation_ = 0;
};

class Simulator {
 public:
  using Callback = std::function<void()>;

  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // The current simulated time. O(1).
  Time Now() const { return now_; }

  // Runs `cb` at absolute time `when`. Precondition (fatal): when >= Now(). O(log n).
  EventId ScheduleAt(Time when, Callback cb);
  // Runs `cb` at Now() + delay. Precondition (fatal): delay >= 0. O(log n).
  EventId ScheduleAfter(Time delay, Callback cb) { return ScheduleAt(now_ + delay, std::move(cb)); }

  // Hands out the next n insertion sequence numbers without scheduling anything and returns the
  // first. With ScheduleAtSequence, a caller that schedules one event in place of n consecutive
  // ones (the fair-share solver's flow groups) can later schedule the n at the positions they
  // would have had. O(1).
  uint64_t ReserveSequence(uint64_t n) {
    const uint64_t first = next_seq_;
    next_seq_ += n;
    return first;
  }
  // ScheduleAt with a sequence number handed out earlier (by ReserveSequence; each used once):
  // the event runs among equal-time events as if it had been scheduled when `seq` was handed
  // out. Precondition (fatal): when >= Now(), seq < every number not yet handed out. O(log n).
  EventId ScheduleAtSequence(Time when, uint64_t seq, Callback cb);

  // ScheduleAfter for an event that is never cancelled or moved (no id). Consecutive such calls
  // for one instant, with no other sequence number handed out between them, share one heap
  // entry and run in call order: among that instant's events no other can come between them,
  // so this is the order their own events would have run in (chips in step: every core's tile
  // ends at one picosecond). O(1) when it joins the previous call's entry, else O(log n).
  void ScheduleAfterInBatch(Time delay, Callback cb);

  // Prevents a pending event from running; false if it already ran or was cancelled. O(1):
  // the heap entry stays and is skipped when popped.
  bool Cancel(EventId id);
  // Moves pending event `id` to absolute time `when`, keeping its callback and id. The event is
  // ordered exactly as if it had been cancelled and its callback scheduled anew at `when`: it
  // takes the next insertion sequence number, so it runs after every event already scheduled
  // for `when`. Returns false, changing nothing, if `id` is not pending. Past Time::Horizon()
  // the event is cancelled and refused as in ScheduleAt, and false is returned. Precondition
  // (fatal): when >= Now(). O(log n), in place: no heap entry is left behind.
  bool Reschedule(EventId id, Time when);
  bool IsPending(EventId id) const;

  // Runs events until the queue is empty or Stop() is called from a callback.
  void Run();
  // Runs every event with time <= limit, then sets Now() to `limit` (if not stopped earlier).
  void RunUntil(Time limit);
  // Makes Run/RunUntil return after the current callback.
  void Stop() { stopped_ = true; }
  // True once an event was scheduled past Time::Horizon(): it was refused (ScheduleAt returned
  // an invalid id) and Run/RunUntil return at once. The owner turns this into an error.
  bool horizon_exceeded() const { return horizon_exceeded_; }

  // Calls `hook` after every `every` executed events (from inside Run/RunUntil, between two
  // events), e.g. for a progress line. It must not schedule or cancel events, so a run with a
  // hook is identical to one without. An empty hook removes it. Cost: one compare per event.
  void SetProgressHook(Callback hook, uint64_t every) {
    progress_ = std::move(hook);
    progress_every_ = every == 0 ? 1 : every;
    next_progress_ = progress_ ? executed_ + progress_every_ : UINT64_MAX;
  }

  // Events executed so far (cancelled ones excluded).
  uint64_t events_executed() const { return executed_; }
  // Events scheduled and neither run nor cancelled.
  size_t pending() const { return live_; }
  // Events cancelled so far (each leaves a heap entry that is skipped when popped).
  uint64_t events_cancelled() const { return cancelled_; }
  // Successful Reschedule calls so far.
  uint64_t events_rescheduled() const { return rescheduled_; }

 private:
  struct Entry {
    int64_t time_ps;
    uint64_t seq;
    uint32_t slot;
  };
  struct Slot {
    Callback cb;
    uint32_t generation = 0;
    uint32_t batch = kNoBatch;  // Callbacks that run after cb (ScheduleAfterInBatch).
    bool live = false;
  };
  static constexpr uint32_t kNoBatch = UINT32_MAX;
  // Branches on ties: a 128-bit key, as the fill heap uses, measured slower here.
  static bool Earlier(const Entry& a, const Entry& b) {
    return a.time_ps != b.time_ps ? a.time_ps < b.time_ps : a.seq < b.seq;
  }
  static constexpr uint32_t kNotQueued = UINT32_MAX;
  // Stores `e` at heap index i and records i as its slot's position.
  void Place(size_t i, const Entry& e) {
    heap_[i] = e;
    heap_pos_[e.slot] = static_cast<uint32_t>(i);
  }
  void HeapPush(const Entry& e);
  void HeapPopFront();
  // Moves the hole at index i up (towards the root) until `e` fits, then places `e` there.
  void SiftUp(size_t i, Entry e);
  // Moves the hole at index i down until `e` fits, then places `e` there.
  void SiftDown(size_t i, Entry e);
  // Runs events with time <= limit_ps until the heap is empty or Stop() is called.
  void RunLoop(int64_t limit_ps);
  // The callbacks batched behind the event `top` just ran (ScheduleAfterInBatch).
  void RunBatch(uint32_t batch, const Entry& top);

  Time now_;
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
  uint64_t cancelled_ = 0;
  uint64_t rescheduled_ = 0;
  size_t live_ = 0;
  bool stopped_ = false;
  bool horizon_exceeded_ = false;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  // Heap index of each slot's entry (kNotQueued once popped). Kept apart from the slots: every
  // sift writes it, and 4 bytes per slot stay in cache where the slots would not.
  std::vector<uint32_t> heap_pos_;
  std::vector<uint32_t> free_slots_;
  // ScheduleAfterInBatch: the callbacks of each batched entry after its first, free lists, and
  // the entry the next call may join (its slot, time and last sequence number).
  std::vector<std::vector<Callback>> batches_;
  std::vector<uint32_t> free_batches_;
  uint32_t tail_slot_ = kNotQueued;
  int64_t tail_time_ps_ = 0;
  uint64_t tail_seq_ = 0;
  Callback progress_;
  uint64_t progress_every_ = 1;
  uint64_t next_progress_ = UINT64_MAX;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_SIMULATOR_H_
