// Writing an HDF5 archive (hdf5_writer.h): ArchiveWriter, WriteRuns and MergeArchives. Layout
// shared with the reader: hdf5_layout.h.
#include "formats/hdf5_writer.h"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/params.h"
#include "core/status_macros.h"
#include "core/time.h"
#include "core/timeline.h"
#include "formats/hdf5_layout.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_schema.h"
#include "formats/temp_files.h"

namespace meshsim::formats {

using namespace hdf5_layout;  // NOLINT: the layout's names, in this file only.

namespace {

// ---------------------------------------------------------------------------------------------
// Writing.

bool FilterAvailable(H5Z_filter_t filter) {
  unsigned flags = 0;
  return H5Zfilter_avail(filter) > 0 && H5Zget_filter_info(filter, &flags) >= 0 &&
         (flags & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0;
}

// A dataset creation property list that stores no timestamps, so identical inputs give identical
// files.
absl::StatusOr<Handle> MakeDatasetCreation(const std::string& where, const std::string& what) {
  MESHSIM_ASSIGN_OR_RETURN(Handle dcpl,
                           Checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, where, what));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Pset_obj_track_times(dcpl.get(), false), where, what));
  return dcpl;
}

// Writes all `count` elements of `dataset` from `data` (laid out as `mem_type`), reporting an id
// that does not fit its column as InvalidArgument.
absl::Status WriteRows(hid_t dataset, hid_t mem_type, size_t count, const void* data,
                       const std::string& where, const std::string& what) {
  if (count == 0) return absl::OkStatus();
  IdConversion conversion{.writing = true};
  MESHSIM_ASSIGN_OR_RETURN(Handle xfer, MakeTransfer(&conversion, where));
  if (H5Dwrite(dataset, mem_type, H5S_ALL, H5S_ALL, xfer.get(), data) >= 0) {
    return absl::OkStatus();
  }
  if (conversion.failed) {
    H5Eclear2(H5E_DEFAULT);
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what, ": id ", conversion.value,
                                                   " does not fit the int32 id column"));
  }
  return HdfError(absl::StatusCode::kInternal, where, absl::StrCat("writing ", what));
}

// Writes `rows` elements of `data` (laid out as `mem_type`) as the 1-D dataset `name` of type
// `file_type`: chunked, shuffled and deflated when it has rows, in one H5Dwrite.
absl::Status WriteTable(hid_t loc, const char* name, hid_t file_type, hid_t mem_type, size_t rows,
                        const void* data, const std::string& where) {
  const std::string what = absl::StrCat("dataset '", name, "'");
  const hsize_t dims[1] = {rows};
  MESHSIM_ASSIGN_OR_RETURN(Handle space,
                           Checked(H5Screate_simple(1, dims, nullptr), H5Sclose, where, what));
  MESHSIM_ASSIGN_OR_RETURN(Handle dcpl, MakeDatasetCreation(where, what));
  if (rows > 0) {
    const size_t row_bytes = std::max<size_t>(1, H5Tget_size(file_type));
    const hsize_t chunk[1] = {std::clamp<hsize_t>(kChunkBytes / row_bytes, 1, rows)};
    MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Pset_chunk(dcpl.get(), 1, chunk), where, what));
    if (FilterAvailable(H5Z_FILTER_DEFLATE)) {
      if (FilterAvailable(H5Z_FILTER_SHUFFLE)) {
        MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Pset_shuffle(dcpl.get()), where, what));
      }
      MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Pset_deflate(dcpl.get(), kDeflateLevel), where, what));
    }
  }
  MESHSIM_ASSIGN_OR_RETURN(
      Handle dataset,
      Checked(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
              H5Dclose, where, absl::StrCat("creating ", what)));
  MESHSIM_RETURN_IF_ERROR(WriteRows(dataset.get(), mem_type, rows, data, where, what));
  if (!dataset.Close()) return HdfError(absl::StatusCode::kInternal, where, what);
  return absl::OkStatus();
}

// Writes the `rows` x `cols` row-major matrix `data` as the 2-D dataset `name`, contiguous and
// uncompressed (the summary matrices are small, and either dimension may be 0).
absl::Status WriteMatrix(hid_t loc, const char* name, hid_t file_type, hid_t mem_type, size_t rows,
                         size_t cols, const void* data, const std::string& where) {
  const std::string what = absl::StrCat("dataset '", name, "'");
  const hsize_t dims[2] = {rows, cols};
  MESHSIM_ASSIGN_OR_RETURN(Handle space,
                           Checked(H5Screate_simple(2, dims, nullptr), H5Sclose, where, what));
  MESHSIM_ASSIGN_OR_RETURN(Handle dcpl, MakeDatasetCreation(where, what));
  MESHSIM_ASSIGN_OR_RETURN(
      Handle dataset,
      Checked(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
              H5Dclose, where, absl::StrCat("creating ", what)));
  MESHSIM_RETURN_IF_ERROR(WriteRows(dataset.get(), mem_type, rows * cols, data, where, what));
  if (!dataset.Close()) return HdfError(absl::StatusCode::kInternal, where, what);
  return absl::OkStatus();
}

// Writes attribute `name` of `loc` holding `count` values (a scalar when `count` < 0). Keys were
// validated beforehand (ValidateRun), so a duplicate here is an internal error.
absl::Status WriteAttribute(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
                            const void* value, const std::string& where, int64_t count = -1) {
  const std::string what = absl::StrCat("attribute '", name, "'");
  const hsize_t dims[1] = {static_cast<hsize_t>(std::max<int64_t>(count, 0))};
  MESHSIM_ASSIGN_OR_RETURN(
      Handle space, Checked(count < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr),
                            H5Sclose, where, what));
  MESHSIM_ASSIGN_OR_RETURN(Handle attr, Checked(H5Acreate2(loc, name.c_str(), file_type,
                                                           space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                                H5Aclose, where, absl::StrCat("creating ", what)));
  if (count != 0) {
    MESHSIM_RETURN_IF_ERROR(
        CheckedCall(H5Awrite(attr.get(), mem_type, value), where, absl::StrCat("writing ", what)));
  }
  return absl::OkStatus();
}

absl::Status WriteStringAttribute(hid_t loc, const std::string& name, const std::string& value,
                                  const Types& types, const std::string& where) {
  const char* text = value.c_str();
  return WriteAttribute(loc, name, types.string.get(), types.string.get(), &text, where);
}

// A 1-D string attribute: the column lists of /summary.
absl::Status WriteStringListAttribute(hid_t loc, const std::string& name,
                                      const std::vector<std::string>& values, const Types& types,
                                      const std::string& where) {
  std::vector<const char*> texts;
  texts.reserve(values.size());
  for (const std::string& value : values) texts.push_back(value.c_str());
  return WriteAttribute(loc, name, types.string.get(), types.string.get(), texts.data(), where,
                        static_cast<int64_t>(texts.size()));
}

absl::Status WriteIntAttribute(hid_t loc, const std::string& name, int32_t value,
                               const std::string& where) {
  return WriteAttribute(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &value, where);
}

absl::Status WriteDoubleAttribute(hid_t loc, const std::string& name, double value,
                                  const std::string& where) {
  return WriteAttribute(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, where);
}

// A group whose attributes (if `attributes`) or links (otherwise) remember their creation order,
// so that iterating them gives back the order they were written in. No timestamps.
absl::StatusOr<Handle> CreateOrderedGroup(hid_t loc, const char* name, bool attributes,
                                          const std::string& where) {
  const std::string what = absl::StrCat("creating group '", name, "'");
  MESHSIM_ASSIGN_OR_RETURN(Handle gcpl,
                           Checked(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, where, what));
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  MESHSIM_RETURN_IF_ERROR(CheckedCall(attributes ? H5Pset_attr_creation_order(gcpl.get(), order)
                                                 : H5Pset_link_creation_order(gcpl.get(), order),
                                      where, what));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Pset_obj_track_times(gcpl.get(), false), where, what));
  return Checked(H5Gcreate2(loc, name, H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose, where,
                 what);
}

// The run's config, typed: integers as int64, reals as float64, the rest as strings (schema
// version 3).
absl::Status WriteConfig(hid_t group, const RunRecord& run, const Types& types,
                         const std::string& where) {
  const std::string config_where = absl::StrCat(where, ": config");
  MESHSIM_ASSIGN_OR_RETURN(Handle config, CreateOrderedGroup(group, "config", true, config_where));
  for (const auto& [key, value] : run.config) {
    switch (TypeOfConfigValue(value)) {
      case ConfigValueType::kInteger: {
        int64_t i = 0;
        (void)absl::SimpleAtoi(value, &i);
        MESHSIM_RETURN_IF_ERROR(
            WriteAttribute(config.get(), key, H5T_STD_I64LE, H5T_NATIVE_INT64, &i, config_where));
        break;
      }
      case ConfigValueType::kReal: {
        double d = 0;
        (void)absl::SimpleAtod(value, &d);
        MESHSIM_RETURN_IF_ERROR(WriteDoubleAttribute(config.get(), key, d, config_where));
        break;
      }
      case ConfigValueType::kText:
        MESHSIM_RETURN_IF_ERROR(
            WriteStringAttribute(config.get(), key, value, types, config_where));
        break;
    }
  }
  return absl::OkStatus();
}

// The run's metrics, as float64 attributes in order.
absl::Status WriteMetrics(hid_t group, const RunRecord& run, const std::string& where) {
  const std::string metrics_where = absl::StrCat(where, ": metrics");
  MESHSIM_ASSIGN_OR_RETURN(Handle metrics,
                           CreateOrderedGroup(group, "metrics", true, metrics_where));
  for (const auto& [key, value] : run.metrics) {
    MESHSIM_RETURN_IF_ERROR(WriteDoubleAttribute(metrics.get(), key, value, metrics_where));
  }
  return absl::OkStatus();
}

// One table of `rows` under `group` as `columns` describe Row.
template <typename Row>
absl::Status WriteRows(hid_t group, const char* name, const std::vector<Column>& columns,
                       std::span<const Row> rows, const std::string& where) {
  MESHSIM_ASSIGN_OR_RETURN(TableType type, MakeTableType(columns, sizeof(Row), where));
  return WriteTable(group, name, type.file.get(), type.memory.get(), rows.size(), rows.data(),
                    where);
}

// The resources, with their names.
absl::Status WriteResources(hid_t group, const RunRecord& run, const Types& types,
                            const std::string& where) {
  std::vector<ResourceRow> rows;
  rows.reserve(run.resources.size());
  for (const core::ResourceInfo& r : run.resources) {
    rows.push_back({.name = r.name.c_str(),
                    .kind = r.kind,
                    .chip = r.chip,
                    .peer = r.peer,
                    .capacity_bytes_per_s = r.capacity_bytes_per_s,
                    .bytes = r.bytes,
                    .busy = r.busy});
  }
  return WriteRows(group, "resources", ResourceColumns(types), std::span<const ResourceRow>(rows),
                   where);
}

// The GeMM spans, with their labels.
absl::Status WriteGemms(hid_t group, const RunRecord& run, const Types& types,
                        const std::string& where) {
  std::vector<GemmRow> rows;
  rows.reserve(run.gemms.size());
  for (const GemmSpan& g : run.gemms) {
    rows.push_back({.label = g.label.c_str(),
                    .layer = g.layer,
                    .pass = g.pass,
                    .start = g.start,
                    .end = g.end,
                    .share = g.share,
                    .flops = g.flops});
  }
  return WriteRows(group, "gemms", GemmColumns(types), std::span<const GemmRow>(rows), where);
}

// Writes run group `run.name` in `runs_group`; without the timeline, edges and counters unless
// `with_timeline`. `run` was validated (ValidateRun).
absl::Status WriteRun(hid_t runs_group, const RunRecord& run, bool with_timeline,
                      const Types& types, const std::string& file_where) {
  const std::string where = absl::StrCat(file_where, ": run '", run.name, "'");
  MESHSIM_ASSIGN_OR_RETURN(Handle group,
                           CreateOrderedGroup(runs_group, run.name.c_str(), true, where));
  MESHSIM_RETURN_IF_ERROR(WriteIntAttribute(group.get(), "chips", run.chips, where));
  MESHSIM_RETURN_IF_ERROR(
      WriteIntAttribute(group.get(), "has_timeline", with_timeline ? 1 : 0, where));
  if (!run.error.empty()) {  // A failed run (sweep --keep-going).
    MESHSIM_RETURN_IF_ERROR(WriteStringAttribute(group.get(), "error", run.error, types, where));
  }
  if (!run.warnings.empty()) {
    MESHSIM_RETURN_IF_ERROR(WriteStringAttribute(group.get(), "warnings",
                                                 absl::StrJoin(run.warnings, "\n"), types, where));
  }
  MESHSIM_RETURN_IF_ERROR(WriteConfig(group.get(), run, types, where));
  MESHSIM_RETURN_IF_ERROR(WriteMetrics(group.get(), run, where));
  {
    std::vector<const char*> names;
    names.reserve(run.names.size());
    for (const std::string& name : run.names) names.push_back(name.c_str());
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "names", types.string.get(), types.string.get(),
                                       names.size(), names.data(), where));
  }
  if (with_timeline) {
    MESHSIM_RETURN_IF_ERROR(WriteRows(group.get(), "timeline", TimelineColumns(types),
                                      std::span<const core::TimelineRow>(run.timeline), where));
    MESHSIM_RETURN_IF_ERROR(
        WriteRows(group.get(), "edges", EdgeColumns(), std::span<const DepEdge>(run.edges), where));
  }
  MESHSIM_RETURN_IF_ERROR(WriteResources(group.get(), run, types, where));
  MESHSIM_RETURN_IF_ERROR(WriteGemms(group.get(), run, types, where));
  if (with_timeline) {
    MESHSIM_RETURN_IF_ERROR(WriteRows(group.get(), "counters", CounterColumns(),
                                      std::span<const core::CounterSample>(run.counters), where));
  }
  return absl::OkStatus();
}

// Checks that the keys of one config or metrics list are non-empty and unique.
template <typename Value>
absl::Status ValidateKeys(const std::vector<std::pair<std::string, Value>>& entries,
                          const std::string& where) {
  std::set<std::string> seen;
  for (const auto& [key, value] : entries) {
    if (key.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": empty key"));
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate key '", key, "'"));
    }
  }
  return absl::OkStatus();
}

// Checks what WriteRun needs of a run, except its ids (found by the conversion while writing).
absl::Status ValidateRun(const RunRecord& run, const std::string& where) {
  if (run.name.empty() || run.name == "." || run.name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": invalid run name '", run.name,
                                                   "' (must be non-empty, not '.', without '/')"));
  }
  const std::string run_where = absl::StrCat(where, ": run '", run.name, "'");
  MESHSIM_RETURN_IF_ERROR(ValidateKeys(run.config, absl::StrCat(run_where, ": config")));
  MESHSIM_RETURN_IF_ERROR(ValidateKeys(run.metrics, absl::StrCat(run_where, ": metrics")));
  return absl::OkStatus();
}

absl::Status ValidateRuns(const std::vector<const RunRecord*>& runs, const std::string& where) {
  std::set<std::string> seen;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord* run = runs[i];
    if (run == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": run #", i, " is null"));
    }
    MESHSIM_RETURN_IF_ERROR(ValidateRun(*run, where));
    if (!seen.insert(run->name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": two runs are named '", run->name, "'"));
    }
  }
  return absl::OkStatus();
}

// Flushes the finished temporary file to disk, so that after a power loss the rename never
// points at a file whose data was not yet written.
absl::Status SyncToDisk(const std::string& file_name, const std::string& where) {
  const int fd = ::open(file_name.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", ErrnoMessage(error)));
  }
  ::close(fd);
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ArchiveWriter.

struct ArchiveWriter::State {
  // What /summary needs of one run.
  struct Row {
    std::string name;
    std::vector<std::pair<std::string, std::string>> config;
    std::vector<std::pair<std::string, double>> metrics;
    std::vector<std::pair<std::string, std::string>> requested;
  };
  enum class Phase { kOpen, kCommitted, kAborted };

  std::string temp;                             // <path>.tmp.<pid>
  std::unique_ptr<TempFile> temp_registration;  // Removes `temp` on SIGINT/SIGTERM/SIGHUP.
  std::string path;                             // The destination.
  std::string where;  // "cannot write '<path>'", the start of every message.
  Types types;
  Handle file;
  Handle runs;  // The group /runs.
  std::set<std::string> run_names;
  std::vector<Row> rows;  // One per run added, in order.
  Phase phase = Phase::kOpen;

  // Creates the file (`temp` exists already) with its attributes and /runs.
  absl::Status Open(const std::string& version) {
    MESHSIM_ASSIGN_OR_RETURN(types, MakeTypes(where));
    MESHSIM_ASSIGN_OR_RETURN(Handle fapl,
                             Checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, where, "file access"));
    // The 1.8 object format: readable by every HDF5 since 1.8 (and h5py), and it is the first
    // with creation-order tracking and dense attribute storage.
    MESHSIM_RETURN_IF_ERROR(CheckedCall(
        H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), where, "file access"));
    // No timestamp on the root group either.
    MESHSIM_ASSIGN_OR_RETURN(Handle fcpl,
                             Checked(H5Pcreate(H5P_FILE_CREATE), H5Pclose, where, "file creation"));
    MESHSIM_RETURN_IF_ERROR(
        CheckedCall(H5Pset_obj_track_times(fcpl.get(), false), where, "file creation"));
    MESHSIM_ASSIGN_OR_RETURN(
        file, Checked(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose,
                      where, "creating the file", absl::StatusCode::kInvalidArgument));
    MESHSIM_RETURN_IF_ERROR(
        WriteIntAttribute(file.get(), "schema_version", kHdf5SchemaVersion, where));
    MESHSIM_RETURN_IF_ERROR(WriteStringAttribute(file.get(), "generator", "meshsim", types, where));
    MESHSIM_RETURN_IF_ERROR(WriteStringAttribute(file.get(), "version", version, types, where));
    MESHSIM_ASSIGN_OR_RETURN(runs, CreateOrderedGroup(file.get(), "runs", false, where));
    return absl::OkStatus();
  }

  absl::Status CheckOpen() const {
    if (phase == Phase::kOpen) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        where, ": the archive was already ",
        phase == Phase::kCommitted ? "committed" : "aborted (after an error or by Abort)"));
  }

  absl::Status AddRun(const RunRecord& run, bool with_timeline) {
    MESHSIM_RETURN_IF_ERROR(CheckOpen());
    MESHSIM_RETURN_IF_ERROR(ValidateRun(run, where));
    if (run_names.count(run.name) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": a run named '", run.name, "' was already added"));
    }
    const absl::Status status = WriteRun(runs.get(), run, with_timeline, types, where);
    if (!status.ok()) {
      Abort();  // The file holds part of the run.
      return status;
    }
    run_names.insert(run.name);
    rows.push_back({run.name, run.config, run.metrics, run.requested});
    return absl::OkStatus();
  }

  absl::Status WriteSummary(const std::vector<std::string>& keys) {
    const std::string summary_where = absl::StrCat(where, ": summary");
    // The metric columns are those of the first run that has metrics (a failed run has none).
    std::vector<std::string> metrics;
    const auto with_metrics =
        std::find_if(rows.begin(), rows.end(), [](const Row& r) { return !r.metrics.empty(); });
    if (with_metrics != rows.end()) {
      for (const auto& [metric, value] : with_metrics->metrics) metrics.push_back(metric);
    }
    std::vector<const char*> names;
    // [key][row], as the columns are written.
    std::vector<std::vector<const char*>> key_values(keys.size());
    std::vector<double> metric_values;
    names.reserve(rows.size());
    metric_values.reserve(rows.size() * metrics.size());
    for (const Row& row : rows) {
      names.push_back(row.name.c_str());
      for (size_t k = 0; k < keys.size(); ++k) {
        const auto is_key = [&](const auto& entry) { return entry.first == keys[k]; };
        const auto req = std::find_if(row.requested.begin(), row.requested.end(), is_key);
        const auto it = std::find_if(row.config.begin(), row.config.end(), is_key);
        key_values[k].push_back(req != row.requested.end() ? req->second.c_str()
                                : it != row.config.end()   ? it->second.c_str()
                                                           : "");
      }
      for (const std::string& metric : metrics) {
        const auto it = std::find_if(row.metrics.begin(), row.metrics.end(),
                                     [&](const auto& entry) { return entry.first == metric; });
        metric_values.push_back(it != row.metrics.end() ? it->second
                                                        : std::numeric_limits<double>::quiet_NaN());
      }
    }
    MESHSIM_ASSIGN_OR_RETURN(Handle group,
                             CreateOrderedGroup(file.get(), "summary", true, summary_where));
    MESHSIM_RETURN_IF_ERROR(
        WriteStringListAttribute(group.get(), "keys", keys, types, summary_where));
    MESHSIM_RETURN_IF_ERROR(
        WriteStringListAttribute(group.get(), "metrics", metrics, types, summary_where));
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "runs", types.string.get(), types.string.get(),
                                       names.size(), names.data(), summary_where));
    // One typed column per key (schema version 4): int64 when every run's value is an integer,
    // float64 when every one is a number, else text ("" where a run has no value).
    MESHSIM_ASSIGN_OR_RETURN(Handle columns,
                             CreateOrderedGroup(group.get(), "key_columns", false, summary_where));
    for (size_t k = 0; k < keys.size(); ++k) {
      ConfigValueType type = ConfigValueType::kInteger;
      for (const char* v : key_values[k]) {
        const ConfigValueType t = TypeOfConfigValue(v);
        if (t == ConfigValueType::kText) {
          type = t;
          break;
        }
        if (t == ConfigValueType::kReal) type = t;
      }
      const std::vector<const char*>& texts = key_values[k];
      if (type == ConfigValueType::kInteger) {
        std::vector<int64_t> values(texts.size());
        for (size_t r = 0; r < texts.size(); ++r) (void)absl::SimpleAtoi(texts[r], &values[r]);
        MESHSIM_RETURN_IF_ERROR(WriteTable(columns.get(), keys[k].c_str(), H5T_STD_I64LE,
                                           H5T_NATIVE_INT64, values.size(), values.data(),
                                           summary_where));
      } else if (type == ConfigValueType::kReal) {
        std::vector<double> values(texts.size());
        for (size_t r = 0; r < texts.size(); ++r) (void)absl::SimpleAtod(texts[r], &values[r]);
        MESHSIM_RETURN_IF_ERROR(WriteTable(columns.get(), keys[k].c_str(), H5T_IEEE_F64LE,
                                           H5T_NATIVE_DOUBLE, values.size(), values.data(),
                                           summary_where));
      } else {
        MESHSIM_RETURN_IF_ERROR(WriteTable(columns.get(), keys[k].c_str(), types.string.get(),
                                           types.string.get(), texts.size(), texts.data(),
                                           summary_where));
      }
    }
    MESHSIM_RETURN_IF_ERROR(WriteMatrix(group.get(), "metric_values", H5T_IEEE_F64LE,
                                        H5T_NATIVE_DOUBLE, rows.size(), metrics.size(),
                                        metric_values.data(), summary_where));
    return absl::OkStatus();
  }

  absl::Status Commit(const std::vector<std::string>& keys) {
    MESHSIM_RETURN_IF_ERROR(CheckOpen());
    std::set<std::string> seen;
    for (const std::string& key : keys) {
      if (key.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": summary: empty key"));
      }
      if (!seen.insert(key).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": summary: key '", key, "' given twice"));
      }
      if (key == "." || key.find('/') != std::string::npos) {
        // A key names its column's dataset.
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": summary: key '", key, "' is not allowed: it is '.' or has '/'"));
      }
    }
    absl::Status status = WriteSummary(keys);
    if (status.ok() && !runs.Close()) {
      status = HdfError(absl::StatusCode::kInternal, where, "closing group '/runs'");
    }
    if (status.ok() && !file.Close()) {
      status = HdfError(absl::StatusCode::kInternal, where, "closing the file");
    }
    if (status.ok()) status = AppendTrailer(temp, where);
    if (status.ok()) status = SyncToDisk(temp, where);
    if (status.ok() && std::rename(temp.c_str(), path.c_str()) != 0) {
      status = absl::InvalidArgumentError(absl::StrCat(where, ": ", ErrnoMessage(errno)));
    }
    if (!status.ok()) {
      Abort();
      return status;
    }
    phase = Phase::kCommitted;
    return absl::OkStatus();
  }

  void Abort() {
    if (phase != Phase::kOpen) return;
    ErrorSilencer silencer;
    runs = Handle();
    file = Handle();
    H5Eclear2(H5E_DEFAULT);
    std::remove(temp.c_str());
    phase = Phase::kAborted;
  }
};

ArchiveWriter::ArchiveWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}

ArchiveWriter::~ArchiveWriter() { Abort(); }

absl::StatusOr<std::unique_ptr<ArchiveWriter>> ArchiveWriter::Create(const std::string& path,
                                                                     const std::string& version) {
  if (path.empty()) return absl::InvalidArgumentError("cannot write '': empty output path");
  auto state = std::make_unique<State>();
  state->path = path;
  state->temp = absl::StrCat(path, ".tmp.", ::getpid());
  state->temp_registration = std::make_unique<TempFile>(state->temp);
  state->where = absl::StrCat("cannot write '", path, "'");
  // Create the temporary file ourselves first: it gives plain OS messages ("No such file or
  // directory", "Permission denied") for a bad destination.
  const int fd = ::open(state->temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(state->where, ": ", ErrnoMessage(errno)));
  }
  ::close(fd);
  ErrorSilencer silencer;
  const absl::Status status = state->Open(version);
  if (!status.ok()) {
    state->Abort();
    return status;
  }
  return std::unique_ptr<ArchiveWriter>(new ArchiveWriter(std::move(state)));
}

absl::Status ArchiveWriter::AddRun(const RunRecord& run, bool with_timeline) {
  ErrorSilencer silencer;
  return state_->AddRun(run, with_timeline);
}

absl::Status ArchiveWriter::Commit(const std::vector<std::string>& keys) {
  ErrorSilencer silencer;
  return state_->Commit(keys);
}

void ArchiveWriter::Abort() { state_->Abort(); }

int ArchiveWriter::runs_added() const { return static_cast<int>(state_->rows.size()); }

// ---------------------------------------------------------------------------------------------
// Whole files.

absl::Status WriteRuns(const std::string& path, const std::vector<const RunRecord*>& runs,
                       const std::string& version) {
  if (path.empty()) return absl::InvalidArgumentError("cannot write '': empty output path");
  MESHSIM_RETURN_IF_ERROR(ValidateRuns(runs, absl::StrCat("cannot write '", path, "'")));
  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<ArchiveWriter> writer,
                           ArchiveWriter::Create(path, version));
  for (const RunRecord* run : runs) {
    MESHSIM_RETURN_IF_ERROR(writer->AddRun(*run, /*with_timeline=*/true));
  }
  return writer->Commit({});
}

static absl::Status MergeArchivesUnchecked(const std::string& out,
                                           const std::vector<std::string>& inputs,
                                           const std::string& version);

absl::Status MergeArchives(const std::string& out, const std::vector<std::string>& inputs,
                           const std::string& version) {
  for (const std::string& input : inputs) {
    // Every run of the input, as the merge will read them.
    MESHSIM_RETURN_IF_ERROR(ProbeUntrustedArchive(input, [&] {
      absl::StatusOr<std::vector<std::string>> names = ListRuns(input);
      if (!names.ok()) return;
      for (const std::string& name : *names) (void)ReadRun(input, name);
      (void)ReadSummary(input);
    }));
  }
  return AsDamaged(MergeArchivesUnchecked(out, inputs, version));
}

static absl::Status MergeArchivesUnchecked(const std::string& out,
                                           const std::vector<std::string>& inputs,
                                           const std::string& version) {
  const std::string where = absl::StrCat("cannot merge into '", out, "'");
  if (inputs.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": no input files"));
  ErrorSilencer silencer;
  // Check every input before touching `out`, and gather the summary keys.
  std::vector<std::string> keys;
  std::set<std::string> seen_keys;
  std::map<std::string, size_t> run_input;  // Run name -> index of the input holding it.
  for (size_t i = 0; i < inputs.size(); ++i) {
    MESHSIM_ASSIGN_OR_RETURN(Archive archive, OpenArchive(inputs[i]));
    if (archive.schema_version != kHdf5SchemaVersion) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot merge '", inputs[i], "': schema version ", archive.schema_version,
          ", but merge joins only version ", kHdf5SchemaVersion, " archives (this meshsim's)"));
    }
    for (const std::string& name : archive.run_names) {
      const auto [it, inserted] = run_input.emplace(name, i);
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": run '", name, "' is in both '",
                                                       inputs[it->second], "' and '", inputs[i],
                                                       "'"));
      }
    }
    absl::StatusOr<SummaryTable> summary = ReadSummaryOf(archive, inputs[i]);
    if (!summary.ok() && summary.status().code() != absl::StatusCode::kNotFound) {
      return summary.status();
    }
    if (summary.ok()) {
      for (const std::string& key : summary->keys) {
        if (seen_keys.insert(key).second) keys.push_back(key);
      }
    }
  }

  // Each run is read and written again through AddRun rather than copied with H5Ocopy: the
  // HDF5 1.10 of Debian 12 crashes copying a group with more than 8 variable-length string
  // attributes (HDFGroup/hdf5#2414, fixed in 1.14.4), and every run's config is one. One write
  // path also makes the result byte-identical to writing the runs to one file, and checks the
  // inputs on the way. One run is in memory at a time.
  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<ArchiveWriter> writer,
                           ArchiveWriter::Create(out, version));
  for (const std::string& input : inputs) {
    MESHSIM_ASSIGN_OR_RETURN(Archive archive, OpenArchive(input));
    // Each run's summary row (its swept keys as requested) carries over to the merged summary.
    absl::StatusOr<SummaryTable> summary = ReadSummaryOf(archive, input);
    std::map<std::string, size_t> summary_row;
    if (summary.ok()) {
      for (size_t r = 0; r < summary->runs.size(); ++r) summary_row[summary->runs[r]] = r;
    }
    for (const std::string& name : archive.run_names) {
      const std::string run_where = absl::StrCat("cannot read '", input, "': run '", name, "'");
      MESHSIM_ASSIGN_OR_RETURN(
          Handle group, Checked(H5Gopen2(archive.runs.get(), name.c_str(), H5P_DEFAULT), H5Gclose,
                                run_where, "opening the group", absl::StatusCode::kDataLoss));
      RunRecord run;
      run.name = name;
      bool has_timeline = true;
      MESHSIM_RETURN_IF_ERROR(ReadRunGroup(group.get(), run, run_where, &has_timeline));
      if (const auto it = summary_row.find(name); it != summary_row.end()) {
        for (size_t k = 0; k < summary->keys.size(); ++k) {
          run.requested.emplace_back(summary->keys[k], summary->key_values[k][it->second]);
        }
      }
      MESHSIM_RETURN_IF_ERROR(writer->AddRun(run, has_timeline));
    }
  }
  return writer->Commit(keys);
}

}  // namespace meshsim::formats
