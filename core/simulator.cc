#include "core/simulator.h"

#include <algorithm>

#include "core/check.h"

namespace meshsim::core {

EventId Simulator::ScheduleAt(Time when, Callback cb) {
  MESHSIM_CHECK(when >= now_) << "event scheduled in the past: " << when << " < now " << now_;
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[slot];
  s.cb = std::move(cb);
  s.live = true;
  ++live_;
  heap_.push_back({when.ps(), next_seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later);
  return EventId(slot, s.generation);
}

bool Simulator::Cancel(EventId id) {
  if (!IsPending(id)) return false;
  Slot& s = slots_[id.slot_];
  s.live = false;
  s.cb = nullptr;
  --live_;
  return true;
}

bool Simulator::IsPending(EventId id) const {
  return id.valid() && id.slot_ < slots_.size() && slots_[id.slot_].generation == id.generation_ &&
         slots_[id.slot_].live;
}

void Simulator::RunLoop(int64_t limit_ps) {
  stopped_ = false;
  while (!heap_.empty() && !stopped_) {
    const Entry top = heap_.front();
    if (top.time_ps > limit_ps) break;
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    heap_.pop_back();
    Slot& s = slots_[top.slot];
    const bool live = s.live;
    Callback cb = std::move(s.cb);
    s.cb = nullptr;
    s.live = false;
    ++s.generation;  // Invalidates the EventId before the callback can reschedule the slot.
    free_slots_.push_back(top.slot);
    if (!live) continue;
    --live_;
    MESHSIM_CHECK(top.time_ps >= now_.ps()) << "time went backwards";
    now_ = Time::Picoseconds(top.time_ps);
    ++executed_;
    cb();
  }
}

void Simulator::Run() { RunLoop(INT64_MAX); }

void Simulator::RunUntil(Time limit) {
  MESHSIM_CHECK(limit >= now_) << "RunUntil into the past";
  RunLoop(limit.ps());
  if (!stopped_) now_ = limit;
}

}  // namespace meshsim::core
