// Writing HDF5 archives of simulated runs: `meshsim run --out`, `meshsim sweep --out` and
// `meshsim merge`. The file's contents: formats/hdf5_schema.h and docs/hdf5.md.
#ifndef MESHSIM_FORMATS_HDF5_WRITER_H_
#define MESHSIM_FORMATS_HDF5_WRITER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/hdf5_schema.h"
#include "formats/run_record.h"

namespace meshsim::formats {

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

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_HDF5_WRITER_H_
