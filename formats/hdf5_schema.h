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
//
// This header: the schema's version and the process set-up. Writing: formats/hdf5_writer.h;
// reading: formats/hdf5_reader.h; the layout both share (tables, types, the integrity trailer):
// formats/hdf5_layout.h (private to formats/).
#ifndef MESHSIM_FORMATS_HDF5_SCHEMA_H_
#define MESHSIM_FORMATS_HDF5_SCHEMA_H_

namespace meshsim::formats {

// Version of the layout written here (file attribute `schema_version`). Readers accept files
// whose version is from 1 to this one; see docs/hdf5.md for what changes bump it. Version 2 added
// runs stored without their timeline (whose missing datasets a version-1 reader would take for
// damage) and `/summary`; version 3 stores numeric config values as int64/float64 attributes;
// version 4 stores /summary's key columns typed (`key_columns`, int64/float64/text) instead of
// the text matrix `key_values`, renames the metric chip_peak_flops to chip_peak_flops_per_s and
// leaves out of a run's config the keys the run does not read.
inline constexpr int kHdf5SchemaVersion = 4;

// Sets HDF5 up for a command-line process: its error stack is never printed and its exit hook
// never runs (after a failed write or a damaged input it can crash or print at exit). Call once,
// before any other HDF5 use; later calls do nothing.
void QuietHdf5();

}  // namespace meshsim::formats

#endif  // MESHSIM_FORMATS_HDF5_SCHEMA_H_
