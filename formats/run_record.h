// RunRecord: everything one simulated run leaves behind, in memory.
//
// It is what the HDF5 writer stores (one group per run, docs/hdf5.md), what the HDF5 reader
// returns, and what the Chrome-trace exporter and the reports read — so `meshsim trace` on a file
// gives the same trace as `meshsim run --trace`.
#ifndef MESHSIM_FORMATS_RUN_RECORD_H_
#define MESHSIM_FORMATS_RUN_RECORD_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/op.h"
#include "core/time.h"
#include "core/timeline.h"

namespace meshsim::formats {

// A dependency edge of the op graph: `to` could not start before `from` ended.
struct DepEdge {
  core::OpId from;
  core::OpId to;
};

// How a resolved config value is stored in HDF5 and printed in JSON: an integer or a real number
// when its text is exactly how meshsim prints that number (so reading it back gives the same
// text), otherwise text ("4x4", "gpt3", "os,ls,os,rs").
enum class ConfigValueType { kInteger, kReal, kText };
ConfigValueType TypeOfConfigValue(const std::string& text);

// One distributed GeMM of a run (rows sharing a layer and a pass), for per-GeMM reports.
//
// `start`/`end` bound every op of the GeMM, so the spans of GeMMs that overlap (a prefetched
// AllGather issued during the previous GeMM, a software-pipelined schedule) overlap too.
// `share` splits the run among its GeMMs instead: the time from the latest end of the GeMMs
// that finished before this one (or the run's start) to this one's end. The shares of a run add
// up to the last GeMM's end, and flops / (chips × peak × share) is a GeMM's utilization as part
// of the run rather than alone (results/fig11_gemm_shapes reads Figure 11 both ways).
struct GemmSpan {
  std::string label;  // e.g. "qkv.fwd"
  int32_t layer = -1;
  core::Pass pass = core::Pass::kNone;
  core::Time start, end;
  double flops = 0;
  core::Time share;
  // The time during which some chip computed this GeMM (the union of its rows with flops), the
  // same summed over the chips (each chip's union) and the chips that did. A pipeline runs each
  // GeMM once per microbatch on one stage's chips, so there `start`..`end` spans the step and
  // flops / (peak × chip_busy) is the utilization. Derived from the rows, not stored in the
  // archive (zero when read from one).
  core::Time busy, chip_busy;
  int32_t chips = 0;
};

struct RunRecord {
  std::string name = "run";
  int chips = 0;
  // Every resolved option and system parameter, in a stable order, as text.
  std::vector<std::pair<std::string, std::string>> config;
  // A sweep run's swept keys as the experiment wrote them ("auto", "os"), when they differ from
  // the resolved config: /summary and the sweep's tables show these, so runs group by what was
  // asked. Not stored in the run's group.
  std::vector<std::pair<std::string, std::string>> requested;
  // Scalar results, e.g. {"makespan_s", 1.2e-3}, in a stable order.
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::string> names;  // Indexed by TimelineRow::name.
  core::TimelineRows timeline;     // Empty when the run kept no rows.
  // The GeMM spans of the run (sim/metrics.h), filled by Simulate and by reading an archive
  // (its `gemms` table; an archive written before that table derives them from its timeline).
  std::vector<GemmSpan> gemms;
  std::vector<DepEdge> edges;
  std::vector<core::ResourceInfo> resources;  // Indexed by CounterSample::resource.
  core::CounterSamples counters;
  // Why the run failed (`sweep --keep-going` stores such runs: config, no metrics, no timeline);
  // empty for a run that finished. Stored as the run group's attribute `error`.
  std::string error;
  // What the run found doubtful in its own setup, one line each (sim/ring_check.h: mesh rings
  // that are not rings of the machine); printed on stderr by `meshsim run` and `sweep`, a
  // `warnings` list in JSON, the run group's attribute `warnings` (lines joined by newlines).
  std::vector<std::string> warnings;

  // Frees the timeline, the edges, the counter samples and the op names once they are written
  // (compare, sweep): config, metrics, GeMM spans and resources stay for the printed summary.
  void ReleaseTimeline() {
    std::vector<std::string>().swap(names);
    core::TimelineRows().swap(timeline);
    std::vector<DepEdge>().swap(edges);
    core::CounterSamples().swap(counters);
  }

  // Value of metric `key`, or `fallback` when absent.
  double Metric(const std::string& key, double fallback = 0) const {
    for (const auto& [k, v] : metrics)
      if (k == key) return v;
    return fallback;
  }
};

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_RUN_RECORD_H_
