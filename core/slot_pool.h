// Slots reused through a free list: pools of records (flow groups, completion batches, collective
// runs) whose indices are handed out and given back.
//
// Example:
//   std::vector<Run> runs;  std::vector<uint32_t> free_runs;
//   const uint32_t slot = TakeSlot(free_runs, runs);  // ... later: free_runs.push_back(slot);
#ifndef MESHSIM_CORE_SLOT_POOL_H_
#define MESHSIM_CORE_SLOT_POOL_H_

#include <cstdint>
#include <vector>

namespace meshsim::core {

// The slot given back last (its record as it was left), else a new default-constructed record
// appended to `items`. O(1) amortized.
template <typename T>
uint32_t TakeSlot(std::vector<uint32_t>& free, std::vector<T>& items) {
  if (!free.empty()) {
    const uint32_t slot = free.back();
    free.pop_back();
    return slot;
  }
  items.emplace_back();
  return static_cast<uint32_t>(items.size() - 1);
}

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_SLOT_POOL_H_
