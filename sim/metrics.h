// Run metrics derived from the timeline (DESIGN.md §7, CLI.md JSON contract). Everything here is
// computed from what the simulated machine did — rows and their times — never from a formula.
//
//   flop_utilization = Σ GeMM flops / (chips × chip peak × makespan)
//   comm.launch_s / sync_s / transfer_s = Σ over chips of the phase rows of transfer and
//       collective ops, divided by chips (per-chip average, overlapped or not)
//   comm.exposed_s = per-chip average of |∪ comm op intervals \ ∪ compute op intervals|
//       (compute = GeMM and vector ops)
//   bytes_sent_per_chip = Σ bytes of comm op rows / chips
//   compute_s = per-chip average of |∪ compute op intervals| (time some core computes)
#ifndef MESHSIM_SIM_METRICS_H_
#define MESHSIM_SIM_METRICS_H_

#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "core/timeline.h"

namespace meshsim::sim {

struct RunMetrics {
  double makespan_s = 0;
  double flops = 0;
  double flop_utilization = 0;
  int chips = 0;
  double comm_launch_s = 0, comm_sync_s = 0, comm_transfer_s = 0, comm_exposed_s = 0;
  double compute_s = 0;
  double bytes_sent_per_chip = 0;
  double ops = 0;
  double events = 0;
  double wall_s = 0;

  // As ordered (key, value) pairs with the CLI.md JSON names ("comm.launch_s", ...).
  std::vector<std::pair<std::string, double>> Pairs() const;
};

// One distributed GeMM of a run (rows sharing a layer and a pass), for per-GeMM reports.
struct GemmSpan {
  std::string label;  // e.g. "qkv.fwd"
  int32_t layer = -1;
  core::Pass pass = core::Pass::kNone;
  core::Time start, end;
  double flops = 0;
};

// The GeMM problems of a timeline in start order: rows grouped by (layer, pass), labelled by the
// part of their name before the last '.' ("qkv.fwd.gemm" → "qkv.fwd"). Rows without a layer
// and pass are grouped under their label prefix alone.
std::vector<GemmSpan> GemmSpans(const std::vector<core::TimelineRow>& timeline,
                                const std::vector<std::string>& names);

// Derives the metrics of a run from its timeline. `peak_flops` is one chip's peak.
RunMetrics ComputeMetrics(const std::vector<core::TimelineRow>& timeline, int chips,
                          double peak_flops, core::Time makespan);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_METRICS_H_
