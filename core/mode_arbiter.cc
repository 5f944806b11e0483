#include "core/mode_arbiter.h"

#include "core/check.h"

namespace meshsim::core {

bool ModeArbiter::Grantable(uint64_t seq, const Request& r) const {
  const int other = 1 - r.mode;
  const bool exclusive = exclusive_collectives_ && r.mode == kCollective;
  for (ChipId c : r.chips) {
    if (running_[c.value()][other] > 0) return false;
    const auto& waits = waiting_[c.value()][other];
    if (!waits.empty() && *waits.begin() < seq) return false;
    if (exclusive) {
      if (running_[c.value()][kCollective] > 0) return false;
      const auto& same = waiting_[c.value()][kCollective];
      if (!same.empty() && *same.begin() < seq) return false;
    }
  }
  return true;
}

void ModeArbiter::Acquire(std::span<const ChipId> chips, Mode mode, std::function<void()> start) {
  const uint64_t seq = next_seq_++;
  Request r{std::vector<ChipId>(chips.begin(), chips.end()), mode, std::move(start)};
  if (Grantable(seq, r)) {
    for (ChipId c : r.chips) ++running_[c.value()][mode];
    r.start();
    return;
  }
  for (ChipId c : r.chips) waiting_[c.value()][mode].insert(seq);
  requests_.emplace(seq, std::move(r));
}

void ModeArbiter::Release(std::span<const ChipId> chips, Mode mode) {
  for (ChipId c : chips) {
    MESHSIM_CHECK(running_[c.value()][mode] > 0) << "ModeArbiter: release without acquire";
    --running_[c.value()][mode];
  }
  // Grant, in request order, everything that became possible; start them after the scan so that
  // a start that acquires or releases does not disturb it.
  std::vector<std::function<void()>> starts;
  for (auto it = requests_.begin(); it != requests_.end();) {
    if (!Grantable(it->first, it->second)) {
      ++it;
      continue;
    }
    for (ChipId c : it->second.chips) {
      waiting_[c.value()][it->second.mode].erase(it->first);
      ++running_[c.value()][it->second.mode];
    }
    starts.push_back(std::move(it->second.start));
    it = requests_.erase(it);
  }
  for (auto& start : starts) start();
}

}  // namespace meshsim::core
