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
#include "core/op.h"
#include "core/time.h"

namespace meshsim::core {

// The unit of a chip an activity occupies; a Chrome-trace thread per (kind, index).
enum class UnitKind : uint8_t { kChip, kCore, kNic, kHbm, kVector };

// A row covers a whole op (kOp) or one phase of it.
enum class Phase : uint8_t { kOp, kLaunch, kSync, kTransfer, kCompute };

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

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_TIMELINE_H_
