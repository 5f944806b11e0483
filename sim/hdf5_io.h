// HDF5 archive of simulated runs: the writer behind `meshsim run --out` and `meshsim sweep --out`,
// the joiner behind `meshsim merge`, and the reader behind the commands that load a file
// (`meshsim trace`, reports).
//
// One file holds any number of runs, one group per run (`/runs/<name>`), each with the resolved
// configuration, the metrics, the bandwidth resources and the op names and — unless the run was
// stored without it — the timeline, the op-graph edges and the resources' rate samples; and a
// `/summary` table with one row per run (the run name, chosen configuration keys and the
// metrics), which is what sweep plots read. The full schema, its version policy and how to read
// it from Python is in docs/hdf5.md.
//
// Writing is atomic: the file is written under a temporary name in the destination directory and
// renamed only when complete, so an error, a crash or Ctrl-C never leaves a half-written file and
// never touches an existing destination. ArchiveWriter streams runs into a file one at a time
// (a sweep adds each run as it finishes); WriteRuns writes a whole vector at once through it;
// MergeArchives joins the files of a sharded sweep. Identical inputs give identical files: no
// timestamps are stored.
//
// Uses the HDF5 C library, which is not thread-safe: call these functions, and every method of an
// ArchiveWriter, from one thread at a time (a sweep's worker threads hand their RunRecords to the
// thread that owns the writer). HDF5's own error printing is silenced while they run; every
// failure comes back as an absl::Status with a one-line message naming the file and the item.
//
// Example:
//   RunRecord a = ..., b = ...;
//   MESHSIM_RETURN_IF_ERROR(WriteRuns("out.h5", {&a, &b}, "0.1.0"));
//   MESHSIM_ASSIGN_OR_RETURN(std::vector<std::string> names, ListRuns("out.h5"));  // {a, b}
//   MESHSIM_ASSIGN_OR_RETURN(RunRecord back, ReadRun("out.h5", "b"));
//
//   MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<ArchiveWriter> w,
//                            ArchiveWriter::Create("sweep.h5", "0.1.0"));
//   for (const RunRecord& run : finished) MESHSIM_RETURN_IF_ERROR(w->AddRun(run, false));
//   MESHSIM_RETURN_IF_ERROR(w->Commit({"mesh", "slices"}));  // the swept keys
//   MESHSIM_ASSIGN_OR_RETURN(SummaryTable table, ReadSummary("sweep.h5"));
#ifndef MESHSIM_SIM_HDF5_IO_H_
#define MESHSIM_SIM_HDF5_IO_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/run_record.h"

namespace meshsim::sim {

// Version of the layout written here (file attribute `schema_version`). Readers accept files
// whose version is from 1 to this one; see docs/hdf5.md for what changes bump it. Version 2 added
// runs stored without their timeline (whose missing datasets a version-1 reader would take for
// damage) and `/summary`; version 3 stores numeric config values as int64/float64 attributes;
// version 4 stores /summary's key columns typed (`key_columns`, int64/float64/text) instead of
// the text matrix `key_values`, renames the metric chip_peak_flops to chip_peak_flops_per_s and
// leaves out of a run's config the keys the run does not read.
inline constexpr int kHdf5SchemaVersion = 4;

// Streams runs into a new archive at `path`. The file is written to `<path>.tmp.<pid>` and renamed
// to `path` by Commit; if the writer is destroyed or Abort()ed before Commit (an error, Ctrl-C),
// the temporary file is removed and `path` is left as it was. Keeps, besides the open file, each
// added run's config and metrics (for /summary), not its timeline.
//
// Not thread-safe, and HDF5 is not either: every call on a writer, and every other HDF5 call of
// the process while it is open, must come from one thread at a time. At most one writer per
// destination path per process (they would share the temporary file).
//
// Errors found before anything is written — a bad or duplicate run name, a duplicate or empty
// key — leave the writer usable. Any other error aborts it (the temporary file is removed) and
// later calls fail with FailedPrecondition.
class ArchiveWriter {
 public:
  // Creates the temporary file and writes the file attributes (`version` = the meshsim version).
  // Errors: InvalidArgument when `path` is empty or cannot be written ("cannot write '<path>':
  // <reason>"; callers add the flag name); Internal when HDF5 fails.
  static absl::StatusOr<std::unique_ptr<ArchiveWriter>> Create(const std::string& path,
                                                               const std::string& version);

  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;
  // Abort() unless committed.
  ~ArchiveWriter();

  // Appends run group /runs/<run.name>. Run names must be non-empty, must not contain '/', must
  // not be "." and must differ from those of the runs already added; config and metric keys must
  // be non-empty and unique within the run; ids must be valid or StrongId::Invalid() and below
  // 2^31. With `with_timeline` false the run keeps its config, metrics, names and resources (whose
  // rows carry each link's and chip's totals) but not its timeline, edges and counters — the
  // datasets are absent and the run's attribute `has_timeline` is 0 — which keeps a sweep archive
  // small; ReadRun then returns those vectors empty. Cost: O(size of what is written).
  // Errors: InvalidArgument (bad run as above; usable afterwards, except for an id out of range,
  // which is found while writing), FailedPrecondition (committed or aborted), Internal.
  absl::Status AddRun(const RunRecord& run, bool with_timeline);

  // Writes /summary — one row per run added, in the order added: the run's name, the value of
  // each of `keys` in the run's config (a column per key: int64 when every run's value is an
  // integer, float64 when every one is a number, else text with "" where a run lacks the key),
  // and every metric of the first run added (float64; NaN when a run lacks it) — then closes the
  // file, syncs it to disk and renames it to the destination. Cost: O(runs × (keys + metrics) ×
  // run's config size). Errors: InvalidArgument for an empty or repeated key, or one that is "."
  // or holds '/' (it names its column's dataset) (nothing written; the writer stays usable), or
  // when the destination cannot be replaced (the writer is then aborted); FailedPrecondition
  // when already committed or aborted; Internal.
  absl::Status Commit(const std::vector<std::string>& keys);

  // Closes and removes the temporary file; the destination is left as it was. A no-op after
  // Commit or a previous Abort. Later AddRun and Commit calls fail with FailedPrecondition.
  // Calls HDF5, so it is not async-signal-safe: on Ctrl-C the owning thread calls it (or
  // destroys the writer) once it sees the interrupt, never the signal handler.
  void Abort();

  // Number of runs added so far (a run whose AddRun failed does not count).
  int runs_added() const;

 private:
  struct State;  // The open temporary file and the summary rows; defined in hdf5_io.cc.
  explicit ArchiveWriter(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
};

// Writes `runs`, in order and with their timelines, to a new HDF5 file at `path`, replacing any
// existing file only once the new one is complete: an ArchiveWriter committed with no summary
// keys, so the file's /summary has the run names and the first run's metrics. `version` (the
// meshsim version) is stored as the file attribute `version`.
//
// Run names must be non-empty, unique, must not contain '/' and must not be "."; config and
// metric keys must be non-empty and unique within their run. Ids must be valid or
// StrongId::Invalid() and below 2^31. Everything but the ids is checked before any file is
// created. Errors:
//   InvalidArgument: a bad run (null, bad or duplicate name, duplicate key, id out of range), or
//       `path` cannot be written ("cannot write '<path>': <reason>"); callers add the flag name.
//   Internal: HDF5 failed while writing.
// On error the temporary file is removed and `path` is left as it was.
absl::Status WriteRuns(const std::string& path, const std::vector<const RunRecord*>& runs,
                       const std::string& version);

// Names of the runs in the file at `path`, in the order they were written. Errors:
//   NotFound: `path` does not exist.
//   InvalidArgument: `path` is not an HDF5 file, not a meshsim archive, or has a newer schema.
absl::StatusOr<std::vector<std::string>> ListRuns(const std::string& path);

// Reads run `run_name` from the file at `path`; an empty `run_name` reads the first run written.
// The result compares equal, field by field, to the record that was written. Errors:
//   NotFound: `path` does not exist, or has no run `run_name` (the message lists the runs).
//   InvalidArgument: as for ListRuns.
//   DataLoss: the run's group is incomplete or holds values out of range (a damaged file).
// A run stored without its timeline (`has_timeline` = 0) comes back with `timeline`, `edges` and
// `counters` empty.
absl::StatusOr<RunRecord> ReadRun(const std::string& path, const std::string& run_name = "");

// The /summary table of an archive: row i is run runs[i].
struct SummaryTable {
  std::vector<std::string> runs;                     // Run names, in the order written.
  std::vector<std::string> keys;                     // Config columns.
  std::vector<std::vector<std::string>> key_values;  // [key][row]; "" when the run lacks the key.
  std::vector<std::string> metrics;                  // Metric columns.
  std::vector<std::vector<double>> metric_values;    // [metric][row]; NaN when the run lacks it.
};

// Reads the /summary table of the archive at `path`. Errors:
//   NotFound: `path` does not exist, or has no /summary (a version-1 file).
//   InvalidArgument: as for ListRuns.
//   DataLoss: /summary is incomplete or its parts disagree in size (a damaged file).
absl::StatusOr<SummaryTable> ReadSummary(const std::string& path);

// Joins the archives `inputs` (e.g. the shards of a sweep) into a new archive at `out`, written
// by an ArchiveWriter (atomically: an existing `out` is replaced only on success; `out` may be one
// of the inputs). Every run of each input, in input order and in each input's order, is read and
// added again, with its timeline if it had one — not copied with H5Ocopy, which crashes in
// Debian 12's HDF5 1.10 on our config groups (HDFGroup/hdf5#2414). The merged /summary is what
// ArchiveWriter::Commit writes for those runs with keys = the union of the inputs' summary keys
// in first-seen order: rows in run order, key values from each run's stored config, metric
// columns those of the first run. So merging the shards of a sweep gives a file byte-identical to
// writing all its runs to one file in that order (with the same keys and `version`, the meshsim
// version recorded in `out`). Datasets or attributes this meshsim does not know (added by a newer
// one) are not carried over. Cost: O(total size of the inputs); one run in memory at a time.
// Errors:
//   InvalidArgument: no inputs; an input is not an HDF5 file or not a meshsim archive, or its
//       schema version is not kHdf5SchemaVersion; two inputs (or an input given twice) hold a
//       run of the same name (the message names the run and both files); `out` cannot be
//       written. All inputs are checked before `out` is touched.
//   NotFound: an input does not exist.
//   DataLoss: an input's run is damaged (as for ReadRun). Internal: HDF5 failed while writing.
absl::Status MergeArchives(const std::string& out, const std::vector<std::string>& inputs,
                           const std::string& version);

// Sets HDF5 up for a command-line process: its error stack is never printed and its exit hook
// never runs (after a failed write or a damaged input it can crash or print at exit). Call once,
// before any other HDF5 use; later calls do nothing.
void QuietHdf5();

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_HDF5_IO_H_
