// Reading HDF5 archives of simulated runs: `meshsim trace`, `report` and `merge`, and the
// figure scripts' equivalents. The file's contents: formats/hdf5_schema.h and docs/hdf5.md.
#ifndef MESHSIM_FORMATS_HDF5_READER_H_
#define MESHSIM_FORMATS_HDF5_READER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/hdf5_schema.h"
#include "formats/run_record.h"

namespace meshsim::formats {

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

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_HDF5_READER_H_
