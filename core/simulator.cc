#include "core/simulator.h"

#include <algorithm>

#include "core/check.h"
#include "core/slot_pool.h"

namespace meshsim::core {

EventId Simulator::ScheduleAt(Time when, Callback cb) {
  return ScheduleAtSequence(when, next_seq_++, std::move(cb));
}

EventId Simulator::ScheduleAtSequence(Time when, uint64_t seq, Callback cb) {
  MESHSIM_CHECK(when >= now_) << "event scheduled in the past: " << when << " < now " << now_;
  MESHSIM_CHECK(seq < next_seq_) << "sequence number " << seq << " was not handed out";
  if (when > Time::Horizon()) {  // Refused: the run stops and its owner reports it.
    horizon_exceeded_ = true;
    return EventId();
  }
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
    heap_pos_.push_back(kNotQueued);
  }
  Slot& s = slots_[slot];
  s.cb = std::move(cb);
  s.live = true;
  ++live_;
  HeapPush({when.ps(), seq, slot});
  return EventId(slot, s.generation);
}

void Simulator::ScheduleAfterInBatch(Time delay, Callback cb) {
  const Time when = now_ + delay;
  if (tail_slot_ != kNotQueued && tail_seq_ + 1 == next_seq_ && tail_time_ps_ == when.ps()) {
    Slot& s = slots_[tail_slot_];
    if (s.batch == kNoBatch) s.batch = TakeSlot(free_batches_, batches_);
    batches_[s.batch].push_back(std::move(cb));
    tail_seq_ = next_seq_++;
    return;
  }
  const uint64_t seq = next_seq_++;
  const EventId id = ScheduleAtSequence(when, seq, std::move(cb));
  if (!id.valid()) return;  // Past the horizon: refused.
  tail_slot_ = id.slot_;
  tail_time_ps_ = when.ps();
  tail_seq_ = seq;
}

// 4-ary heap: the children of i are 4i+1 … 4i+4. Sifts move a hole instead of swapping, and
// every entry placed records its index in heap_pos_ (for Reschedule).
void Simulator::HeapPush(const Entry& e) {
  heap_.push_back(e);
  SiftUp(heap_.size() - 1, e);
}

void Simulator::SiftUp(size_t i, Entry e) {
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!Earlier(e, heap_[parent])) break;
    Place(i, heap_[parent]);
    i = parent;
  }
  Place(i, e);
}

void Simulator::SiftDown(size_t i, Entry e) {
  const size_t n = heap_.size();
  while (true) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + 4, n);
    for (size_t c = first + 1; c < end; ++c) {
      if (Earlier(heap_[c], heap_[best])) best = c;
    }
    if (!Earlier(heap_[best], e)) break;
    Place(i, heap_[best]);
    i = best;
  }
  Place(i, e);
}

void Simulator::HeapPopFront() {
  heap_pos_[heap_.front().slot] = kNotQueued;
  const Entry last = heap_.back();
  heap_.pop_back();
  if (heap_.empty()) return;
  SiftDown(0, last);
}

bool Simulator::Reschedule(EventId id, Time when) {
  MESHSIM_CHECK(when >= now_) << "event rescheduled into the past: " << when << " < now " << now_;
  if (!IsPending(id)) return false;
  if (when > Time::Horizon()) {  // Refused as ScheduleAt refuses it: the run stops.
    Cancel(id);
    horizon_exceeded_ = true;
    return false;
  }
  ++rescheduled_;
  const size_t i = heap_pos_[id.slot_];
  Entry e = heap_[i];
  // The fresh sequence number is the one a cancel-and-schedule would have taken, so the order
  // of events is unchanged by updating in place. It is larger than every queued one: the new
  // key is later than the old one unless `when` is earlier.
  const bool earlier = when.ps() < e.time_ps;
  e.time_ps = when.ps();
  e.seq = next_seq_++;
  if (earlier) {
    SiftUp(i, e);
  } else {
    SiftDown(i, e);
  }
  return true;
}

bool Simulator::Cancel(EventId id) {
  if (!IsPending(id)) return false;
  Slot& s = slots_[id.slot_];
  s.live = false;
  s.cb = nullptr;
  --live_;
  ++cancelled_;
  return true;
}

bool Simulator::IsPending(EventId id) const {
  return id.valid() && id.slot_ < slots_.size() && slots_[id.slot_].generation == id.generation_ &&
         slots_[id.slot_].live;
}

void Simulator::RunLoop(int64_t limit_ps) {
  stopped_ = false;
  while (!heap_.empty() && !stopped_ && !horizon_exceeded_) {
    const Entry top = heap_.front();
    if (top.time_ps > limit_ps) break;
    HeapPopFront();
    // The next event's slot is a likely cache miss: start loading it while this one runs.
    if (!heap_.empty()) __builtin_prefetch(&slots_[heap_.front().slot]);
    Slot& s = slots_[top.slot];
    const bool live = s.live;
    Callback cb = std::move(s.cb);
    s.cb = nullptr;
    s.live = false;
    const uint32_t batch = s.batch;
    s.batch = kNoBatch;
    ++s.generation;  // Invalidates the EventId before the callback can reschedule the slot.
    free_slots_.push_back(top.slot);
    if (top.slot == tail_slot_) tail_slot_ = kNotQueued;  // Joined by no later call.
    if (!live) continue;
    --live_;
    MESHSIM_CHECK(top.time_ps >= now_.ps()) << "time went backwards";
    now_ = Time::Picoseconds(top.time_ps);
    ++executed_;
    cb();
    if (batch != kNoBatch) RunBatch(batch, top);
    if (executed_ >= next_progress_) {
      next_progress_ = executed_ + progress_every_;
      progress_();
    }
  }
}

void Simulator::RunBatch(uint32_t batch, const Entry& top) {
  // The callbacks took the sequence numbers after top.seq, one each, in this order.
  std::vector<Callback> cbs = std::move(batches_[batch]);
  batches_[batch].clear();
  free_batches_.push_back(batch);
  for (size_t k = 0; k < cbs.size(); ++k) {
    if (stopped_ || horizon_exceeded_) {
      // Stopped between two of them: the rest stay pending, as their own events would.
      for (size_t j = k; j < cbs.size(); ++j) {
        ScheduleAtSequence(Time::Picoseconds(top.time_ps), top.seq + 1 + j, std::move(cbs[j]));
      }
      return;
    }
    cbs[k]();
  }
}

void Simulator::Run() { RunLoop(INT64_MAX); }

void Simulator::RunUntil(Time limit) {
  MESHSIM_CHECK(limit >= now_) << "RunUntil into the past";
  RunLoop(limit.ps());
  if (!stopped_) now_ = limit;
}

}  // namespace meshsim::core
