// HDF5 archive of simulated runs: the writer behind `meshsim run --out` and the reader behind the
// commands that load a file (`meshsim trace`, reports).
//
// One file holds any number of runs, one group per run (`/runs/<name>`), each with the resolved
// configuration, the metrics, the timeline, the op-graph edges, the bandwidth resources and their
// rate samples. The full schema, its version policy and how to read it from Python is in
// docs/hdf5.md. Writing is atomic: the file is written under a temporary name in the destination
// directory and renamed only when complete, so an error or a crash never leaves a half-written
// file and never touches an existing destination.
//
// Uses the HDF5 C library, which is not thread-safe: call these functions from one thread at a
// time. HDF5's own error printing is silenced while they run; every failure comes back as an
// absl::Status with a one-line message naming the file and the item.
//
// Example:
//   RunRecord a = ..., b = ...;
//   MESHSIM_RETURN_IF_ERROR(WriteRuns("out.h5", {&a, &b}, "0.1.0"));
//   MESHSIM_ASSIGN_OR_RETURN(std::vector<std::string> names, ListRuns("out.h5"));  // {a, b}
//   MESHSIM_ASSIGN_OR_RETURN(RunRecord back, ReadRun("out.h5", "b"));
#ifndef MESHSIM_SIM_HDF5_IO_H_
#define MESHSIM_SIM_HDF5_IO_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/run_record.h"

namespace meshsim::sim {

// Version of the layout written by WriteRuns (file attribute `schema_version`). Readers accept
// files whose version is at most this one; see docs/hdf5.md for what changes bump it.
inline constexpr int kHdf5SchemaVersion = 1;

// Writes `runs`, in order, to a new HDF5 file at `path`, replacing any existing file only once the
// new one is complete. `version` (the meshsim version) is stored as the file attribute `version`.
//
// Run names must be non-empty, unique, must not contain '/' and must not be "."; config and
// metric keys must be non-empty and unique within their run. Ids must be valid or
// StrongId::Invalid() and below 2^31. Errors:
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
absl::StatusOr<RunRecord> ReadRun(const std::string& path, const std::string& run_name = "");

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_HDF5_IO_H_
