// Trace exporter: writes a RunRecord as Trace Event Format JSON (Perfetto UI at
// https://ui.perfetto.dev, chrome://tracing) or as Perfetto's native protobuf trace (Perfetto UI,
// trace_processor), about 3x smaller for the same content; see TraceFormat.
//
// Layout (details in docs/traces.md):
//   - one process per chip ("chip N", pid = N + 1) plus a process "cluster" for rows and
//     resources without a chip;
//   - one thread per unit of a chip ("core 0", "nic 2", "hbm", "vector 0"), split into lanes
//     ("nic 0", "nic 0 #2", ...) when op rows on that unit overlap without nesting;
//   - a complete ("X") event per timeline row; phase rows nest inside their op's row;
//   - flow arrows for dependency edges that cross chips;
//   - counter tracks with the utilization (%) of every bandwidth resource.
// Times are exact decimal microseconds, by default rounded to whole nanoseconds so that the slices
// nest exactly in Perfetto (see TraceTimeResolution).
//
// Both formats show the same processes, threads, slices, arrows and counter tracks (one exporter
// decides what the trace shows; sim/trace_encoder.h is the seam to the two encoders).
//
// The file is streamed: events are formatted into a fixed buffer and written as they are produced,
// so memory stays O(rows) for the sort indices regardless of the JSON size. It is written to
// `path.tmp.<pid>` and renamed over `path` on success, so a failed export never leaves a partial
// file behind.
//
// Example:
//   RunRecord run = ...;  // from the simulator or ReadRunRecord()
//   ChromeTraceOptions options;
//   options.flows = false;
//   absl::Status s = WriteChromeTrace(run, "/tmp/step.json", options);
//   if (!s.ok()) std::cerr << s.message() << "\n";
#ifndef MESHSIM_FORMATS_CHROME_TRACE_H_
#define MESHSIM_FORMATS_CHROME_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/run_record.h"

namespace meshsim::formats {

// How timestamps and durations are written (always as decimal microseconds, exactly).
enum class TraceTimeResolution {
  // Each row's start and end are rounded to the nearest nanosecond, then dur = end - start.
  // Perfetto stores nanoseconds and rounds `ts` and `dur` separately; it drops a slice that
  // partially overlaps its parent or neighbour, which separately rounded picosecond values often
  // cause (by 1 ns). Rounding both ends first is monotone, so nesting survives exactly.
  kNanosecond,
  // Exact picoseconds: `ts` and `dur` are ps / 1e6 with up to six decimals. Best for scripts and
  // chrome://tracing; Perfetto may drop some slices (see kNanosecond).
  kPicosecond,
};

// The file format of a trace.
enum class TraceFormat {
  // Trace Event Format, JSON object form ("traceEvents", "otherData"). Any viewer, any script.
  kJson,
  // Perfetto's protobuf trace: a stream of length-delimited TracePackets (sim/perfetto_trace.proto)
  // with interned names. Timestamps are whole nanoseconds (resolution is always kNanosecond).
  // The run facts that JSON keeps in otherData are the arguments of an instant event "meshsim
  // run" at time 0 on a track of that name.
  kPerfetto,
};

// "json" or "perfetto".
const char* ToString(TraceFormat format);

// The format for a trace written to `path`: `format` when given ("json" or "perfetto"), else by
// the extension (".json" is JSON, ".pftrace" and ".perfetto-trace" are Perfetto; any case).
// InvalidArgument naming the key, the value and what is allowed: an unknown `format`, one that
// contradicts a ".json"/".pftrace"/".perfetto-trace" name, a name without one of those
// extensions when `format` is empty (it once silently meant JSON), and an HDF5 archive name
// (".h5", ".hdf5", ".he5") whatever the format. An empty `path` (no trace) gives JSON.
absl::StatusOr<TraceFormat> ResolveTraceFormat(const std::string& path_key, const std::string& path,
                                               const std::string& format_key,
                                               const std::string& format);

// What WriteChromeTrace emits besides the op-level rows, which are always written.
struct ChromeTraceOptions {
  // Write phase rows (launch/sync/transfer/compute) as slices nested in their op's slice.
  bool phases = true;
  // Budget of phase rows: a large run has one sync and one transfer row per collective step and
  // chip (hundreds of MB of JSON); above the budget phase rows are left out and otherData says
  // so (the op rows, and the phase sums in the run's metrics, remain). < 0 = no budget.
  int64_t max_phase_rows = 200000;
  // Write flow arrows for dependency edges between ops on different chips.
  bool flows = true;
  // Write counter tracks (utilization in percent) from RunRecord::counters.
  bool counters = true;
  // Also write a second counter track per resource with the allocated rate in GB/s.
  bool counter_rates = false;
  // Budget of counter samples. A large run changes link rates at every collective step (millions
  // of samples, hundreds of MB of JSON); above the budget every track is written as its average
  // over equal time buckets, the bucket chosen so that the tracks fit (otherData records it).
  // < 0 = always exact.
  int64_t max_counter_samples = 400000;
  // At most this many arrows are written; otherData records when the cap was hit. < 0 = no cap.
  int64_t max_flows = 100000;
  // A chip whose op rows use more than this many cores (a GPU: one core per SM, 80-132 of them,
  // each with a row of every GeMM) is drawn with one "compute" thread — one slice per op, from
  // its first start to its last end on the chip, flops and bytes summed — and a counter track
  // "chipN.sms busy" with the number of busy cores over time (exact when the samples fit
  // max_counter_samples, else averaged over buckets like the other counters). < 0 = every core
  // its own thread (TPU chips have 2 cores and are always drawn per core).
  int64_t max_core_threads = 8;
  // Budget of op slices (after the GPU merge above). Above it the op rows of the highest-numbered
  // chips are left out, whole chips at a time, until the rest fits; otherData.slices says how
  // many rows of how many chips. < 0 = no budget.
  int64_t max_op_slices = 500000;
  // Resolution of every `ts` / `dur` in the file (JSON only; Perfetto is always kNanosecond).
  TraceTimeResolution resolution = TraceTimeResolution::kNanosecond;
  // File format.
  TraceFormat format = TraceFormat::kJson;
};

// The options of a detail level, as `--<key>` takes it: "auto" (the defaults: budgets keep a large
// run's trace loadable), "full" (every phase row, counter sample and arrow) or "minimal" (op rows
// only). Anything else is InvalidArgument naming `--<key>`, the value and the allowed values.
absl::StatusOr<ChromeTraceOptions> TraceOptionsForDetail(const std::string& key,
                                                         const std::string& detail);

// "Chrome trace" or "Perfetto trace", for messages.
const char* TraceKind(const ChromeTraceOptions& options);

// Writes `run` to `path` in `options.format`: a Chrome trace (JSON object form, timestamps in
// microseconds at `options.resolution`) or a Perfetto protobuf trace. Returns InvalidArgumentError
// naming the path and the reason when the file cannot be created, written or renamed into place;
// nothing is left at `path` (or the temporary file) in that case, and a previous file at `path` is
// left untouched.
absl::Status WriteChromeTrace(const RunRecord& run, const std::string& path,
                              const ChromeTraceOptions& options = {});

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_CHROME_TRACE_H_
