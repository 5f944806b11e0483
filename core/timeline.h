// The record of what happened in a run: one row per op per chip, plus one row per phase of an op
// (launch, sync, transfer, compute), and rate samples of every bandwidth resource.
//
// Runners append rows through the executor; sim/ writes them to HDF5 and Chrome traces. Rows are
// plain data (64 bytes) so that a 256-chip step with ~10^5 ops stays well under a GiB.
//
// Example (a runner recording the sync phase of a collective on chip 3):
//   timeline.Add({.start = t0, .end = t1, .op = id, .chip = ChipId{3},
//                 .kind = OpKind::kCollective, .phase = Phase::kSync,
//                 .unit_kind = UnitKind::kNic});
#ifndef MESHSIM_CORE_TIMELINE_H_
#define MESHSIM_CORE_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/large_vector.h"
#include "core/op.h"
#include "core/time.h"

namespace meshsim::core {

// The unit of a chip an activity occupies; a Chrome-trace thread per (kind, index).
enum class UnitKind : uint8_t { kChip, kCore, kNic, kHbm, kVector, kHost };

// A row covers a whole op (kOp) or one phase of it.
// kHost: the host issuing the op (the framework's time, stack.host.op_overhead); kInterference:
// a GeMM running narrower waves while communication kernels hold some of its cores (unit kChip),
// or a communication kernel waiting for cores a GeMM keeps (unit kNic); kQueue: an op ready to
// run but held in the GPU's one work queue behind a collective issued before it that has not
// begun (stack.kernel.single_queue; unit kChip, or kNic for a collective).
enum class Phase : uint8_t {
  kOp,
  kLaunch,
  kSync,
  kTransfer,
  kCompute,
  kHost,
  kInterference,
  kQueue
};

const char* ToString(UnitKind unit);
const char* ToString(Phase phase);

struct TimelineRow {
  Time start;
  Time end;
  int64_t bytes = 0;  // Bytes this chip sent (transfer/collective) or moved (copy), this row.
  double flops = 0;   // Flops this chip executed in this row.
  OpId op;
  ChipId chip;
  NameId name;  // Label; invalid = the op kind's name.
  int32_t layer = -1;
  int16_t slice = -1;  // OpTags::slice (MeshSlice S ≤ 4096, ATP chunks ≤ 4).
  OpKind kind = OpKind::kDelay;
  Phase phase = Phase::kOp;
  Pass pass = Pass::kNone;
  UnitKind unit_kind = UnitKind::kChip;
  uint16_t unit_index = 0;
  CollectiveKind collective = CollectiveKind::kNone;
  uint8_t task = 0;  // Pipeline stage, microbatch and task of the op (OpTags).
  int16_t stage = -1;
  int16_t microbatch = -1;
};
static_assert(sizeof(TimelineRow) == 64, "rows are kept by the million; keep them one line");

// A run's kept rows and samples: millions of them, grown without copies (core/large_vector.h).
using TimelineRows = LargeVector<TimelineRow>;

// A capacity resource of the fair-share solver, described for reports and traces.
enum class ResourceKind : uint8_t { kHbm, kLink, kDma, kOther };
const char* ToString(ResourceKind kind);

struct ResourceInfo {
  std::string name;  // e.g. "chip3.hbm", "link 3->4"
  ResourceKind kind = ResourceKind::kOther;
  ChipId chip;  // Owning chip (the source chip of a link), if any.
  ChipId peer;  // Destination chip of a link, if any.
  double capacity_bytes_per_s = 0;
  double bytes = 0;  // Total bytes carried over the run.
  Time busy;         // Total time with at least one flow.
};

// Receives timeline rows as runners record them, in recording order. An executor with a sink
// keeps no rows itself: a long run's metrics can be streamed instead of stored (sim/metrics.h).
class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void Add(const TimelineRow& row) = 0;
};

// The total allocated rate of a resource from `time` until its next sample.
struct CounterSample {
  Time time;
  ResourceId resource;
  double rate_bytes_per_s = 0;
};
using CounterSamples = LargeVector<CounterSample>;

// The memory a run's kept timeline may take: the executor's rows and the fair-share solver's
// counter samples share one budget of bytes. Rows grow with events, not with ops (a collective
// of P members records a sync and a transfer row per member per step: P²-ish rows per ring
// collective), and samples with rate changes, so neither the op count nor a closed form bounds
// them; the containers ask the budget whenever they are full instead (O(log n) times per run,
// never per row).
//
// A container doubles its capacity (from 1024 elements) while the capacities of all containers
// stay within `max_bytes`; that sum bounds their resident memory at all times, the copy of a
// growth included (the old buffer and the copied half of the new one: twice the old capacity,
// the new one). When a container cannot double, the budget is exhausted: the container stops
// growing, its owner drops the record and stops the simulator, and the caller reports the run
// as too large (sim/run.cc).
//
// Example:
//   TimelineBudget budget(int64_t{1} << 30);
//   exec.set_timeline_budget(&budget);
//   fair_share.set_timeline_budget(&budget);
//   exec.Run();                 // stopped early when...
//   if (budget.exhausted()) ... // ...the timeline would pass 1 GiB
class TimelineBudget {
 public:
  explicit TimelineBudget(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // Doubles the capacity of `v` (full: size() == capacity(); to 1024 elements from empty)
  // within the budget; false, and exhausted() from now on, when that would pass it.
  // O(v.size()): the copy.
  template <typename Table>
  bool Grow(Table& v) {
    const size_t before = v.capacity();
    const size_t want = NewCapacity(before, sizeof(typename Table::value_type));
    if (want == 0) return false;
    v.reserve(want);
    committed_bytes_ +=
        static_cast<int64_t>((v.capacity() - before) * sizeof(typename Table::value_type));
    return true;
  }

  bool exhausted() const { return exhausted_; }
  int64_t max_bytes() const { return max_bytes_; }
  // The capacity, in bytes, of the containers grown through this budget.
  int64_t committed_bytes() const { return committed_bytes_; }

 private:
  // The capacity a full container of `capacity` elements of `element_bytes` may double to, or 0.
  size_t NewCapacity(size_t capacity, size_t element_bytes);

  int64_t max_bytes_;
  int64_t committed_bytes_ = 0;
  bool exhausted_ = false;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_TIMELINE_H_
