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

#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/time.h"
#include "core/timeline.h"
#include "formats/run_record.h"

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

// The GeMM problems of a timeline in start order: rows grouped by (layer, pass), labelled by the
// part of their name before the last '.' ("qkv.fwd.gemm" → "qkv.fwd"). Rows without a layer
// and pass are grouped under their label prefix alone.
std::vector<formats::GemmSpan> GemmSpans(std::span<const core::TimelineRow> timeline,
                                         const std::vector<std::string>& names);

// Fills GemmSpan::share of every span (see sim/run_record.h): walking the spans in order of
// their ends, each gets the time from the previous end (0 for the first) to its own.
void SetGemmShares(std::vector<formats::GemmSpan>& spans);

// Derives the metrics of a run from its timeline. `peak_flops` is one chip's peak.
RunMetrics ComputeMetrics(std::span<const core::TimelineRow> timeline, int chips, double peak_flops,
                          core::Time makespan);

// The metrics and GeMM spans of a run, streamed from its rows in recording order, so that a run
// need not keep its timeline (millions of rows at thousands of chips). ComputeMetrics and
// GemmSpans are this class over a stored timeline: both ways give bit-identical results. Memory:
// 16 bytes per op row (kOp) of a comm or compute op, for the exposed-time interval unions, and
// per GeMM span and chip its disjoint busy intervals (GemmSpan::busy, chip_busy).
//
// Example:
//   MetricsAccumulator acc(chips, &graph.names().all());
//   exec.set_sink(&acc);  ... exec.Run() ...
//   RunMetrics m = acc.Metrics(peak_flops, exec.makespan());
class MetricsAccumulator : public core::TimelineSink {
 public:
  // `names` (indexed by TimelineRow::name) must outlive the accumulator; null = no GeMM spans.
  // `gemm_busy`: also keep each GeMM's busy intervals (GemmSpan::busy, chips, chip_busy), which
  // cost a hash lookup and an interval merge per compute row; without, those fields stay zero.
  MetricsAccumulator(int chips, const std::vector<std::string>* names, bool gemm_busy = true);

  void Add(const core::TimelineRow& row) override;

  // The metrics of the rows added so far. Sorts the interval lists: call once, at the end.
  RunMetrics Metrics(double peak_flops, core::Time makespan);
  // GemmSpans of the rows added so far.
  std::vector<formats::GemmSpan> Gemms() const;

 private:
  using Interval = std::pair<int64_t, int64_t>;
  // Label index of name `id` ("qkv.fwd.gemm" → "qkv.fwd"), −1 if it has none.
  int32_t LabelOf(uint32_t id);

  int chips_;
  const std::vector<std::string>* names_;
  bool gemm_busy_;
  double flops_ = 0, launch_ = 0, sync_ = 0, transfer_ = 0, bytes_ = 0;  // ps for the phases.
  std::vector<std::vector<Interval>> comm_, compute_;
  std::vector<int32_t> label_of_name_;  // −2 = not looked up yet.
  std::vector<std::string> labels_;
  absl::flat_hash_map<std::string, size_t> label_index_;
  std::vector<formats::GemmSpan> spans_;
  // Per span: disjoint busy intervals sorted by start, and which chips computed it.
  std::vector<std::vector<Interval>> busy_;
  absl::flat_hash_map<std::pair<size_t, uint32_t>, std::vector<Interval>> span_chip_busy_;
  absl::flat_hash_map<std::tuple<int32_t, int, int32_t>, size_t> span_index_;
};

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_METRICS_H_
