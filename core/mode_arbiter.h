// Mutual exclusion between two kinds of work on a chip, for hardware that cannot overlap them:
// TPUv4 runs an AllGather/ReduceScatter and a GeMM on the same chip one after the other (only
// SendRecv is asynchronous; MeshSlice §5.3). An op asks for a mode on a set of chips; it starts
// once none of those chips runs work of the other mode. Any number of ops of the same mode may
// run together, unless collectives are exclusive (the constructor's flag): then a chip also runs
// one collective at a time, as with synchronous collectives that a program issues one by one.
//
// Requests are served in the order they were made, per chip: a request is granted when, on each
// of its chips, no op of the other mode runs and no earlier request of the other mode waits.
// Waiting only for earlier requests means waits never form a cycle: no deadlock.
//
// Example:
//   ModeArbiter arbiter(num_chips);
//   arbiter.Acquire({chip}, ModeArbiter::kCompute, [&] { StartGemm(); });
//   ...  arbiter.Release({chip}, ModeArbiter::kCompute);   // when the GeMM ends
#ifndef MESHSIM_CORE_MODE_ARBITER_H_
#define MESHSIM_CORE_MODE_ARBITER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "core/ids.h"

namespace meshsim::core {

class ModeArbiter {
 public:
  enum Mode : uint8_t { kCompute = 0, kCollective = 1 };

  // `exclusive_collectives`: at most one kCollective op per chip at a time (served in request
  // order, like the modes).
  explicit ModeArbiter(int chips, bool exclusive_collectives = false)
      : running_(chips), waiting_(chips), exclusive_collectives_(exclusive_collectives) {}

  // Calls `start` (now, or from a later Release) once every chip of `chips` may run `mode`.
  // Cost: O(|chips|) when granted at once; a Release re-examines the waiting requests.
  void Acquire(std::span<const ChipId> chips, Mode mode, std::function<void()> start);
  // Ends one op of `mode` on `chips` (the same set it acquired).
  void Release(std::span<const ChipId> chips, Mode mode);

  size_t waiting() const { return requests_.size(); }

 private:
  struct Request {
    std::vector<ChipId> chips;
    Mode mode;
    std::function<void()> start;
  };
  bool Grantable(uint64_t seq, const Request& r) const;

  std::vector<std::array<int, 2>> running_;                 // Per chip: ops running per mode.
  std::vector<std::array<std::set<uint64_t>, 2>> waiting_;  // Per chip and mode: request seqs.
  std::map<uint64_t, Request> requests_;                    // Waiting, by request order.
  uint64_t next_seq_ = 0;
  bool exclusive_collectives_ = false;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_MODE_ARBITER_H_
