#include "sim/hdf5_io.h"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/params.h"
#include "core/status_macros.h"
#include "core/time.h"
#include "core/timeline.h"
#include "sim/temp_files.h"

namespace meshsim::sim {
namespace {

// The datasets are written straight from the vectors of the RunRecord, with the memory layout of
// the structs described to HDF5 by member offsets, so these must stay plain standard-layout data.
static_assert(std::is_standard_layout_v<core::TimelineRow>);
static_assert(std::is_standard_layout_v<core::CounterSample>);
static_assert(std::is_standard_layout_v<DepEdge>);
static_assert(sizeof(core::Time) == sizeof(int64_t));
static_assert(sizeof(core::OpId) == sizeof(uint32_t) && sizeof(core::ChipId) == sizeof(uint32_t));
static_assert(sizeof(core::NameId) == sizeof(uint32_t));
static_assert(sizeof(core::ResourceId) == sizeof(uint32_t));
static_assert(sizeof(core::OpKind) == 1 && sizeof(core::CollectiveKind) == 1);
static_assert(sizeof(core::Pass) == 1 && sizeof(core::Phase) == 1);
static_assert(sizeof(core::UnitKind) == 1 && sizeof(core::ResourceKind) == 1);

// The most chips a stored run may have: `meshsim run --chips` allows up to 2^20.
constexpr int64_t kMaxArchiveChips = int64_t{1} << 20;

// Target size of one chunk of a table; rows per chunk = this / row size.
constexpr size_t kChunkBytes = 512 * 1024;
// zlib level of the tables: 1 is fast and, after the shuffle filter, gets most of the gain.
constexpr int kDeflateLevel = 1;

// ---------------------------------------------------------------------------------------------
// Handles and errors.

// Owns one HDF5 identifier and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      Close();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { Close(); }

  hid_t get() const { return id_; }

  // Closes the identifier now; false if HDF5 reported an error (for a file: flushing failed).
  bool Close() {
    if (id_ < 0) return true;
    return closer_(std::exchange(id_, H5I_INVALID_HID)) >= 0;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Turns off HDF5's printing of its error stack to stderr for the lifetime of the object, and
// restores the previous setting afterwards.
class ErrorSilencer {
 public:
  ErrorSilencer() {
    saved_ok_ = H5Eget_auto2(H5E_DEFAULT, &func_, &data_) >= 0;
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~ErrorSilencer() {
    if (saved_ok_) H5Eset_auto2(H5E_DEFAULT, func_, data_);
  }
  ErrorSilencer(const ErrorSilencer&) = delete;
  ErrorSilencer& operator=(const ErrorSilencer&) = delete;

 private:
  bool saved_ok_ = false;
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

herr_t FirstErrorDescription(unsigned /*n*/, const H5E_error2_t* error, void* data) {
  auto* message = static_cast<std::string*>(data);
  if (message->empty() && error->desc != nullptr && error->desc[0] != '\0') *message = error->desc;
  return 0;
}

// The most specific description on HDF5's error stack, which is then cleared. Must be called
// right after the failing call: every HDF5 API call (closing a handle too) resets the stack.
std::string HdfMessage() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, FirstErrorDescription, &message);
  H5Eclear2(H5E_DEFAULT);
  std::replace(message.begin(), message.end(), '\n', ' ');
  return message.empty() ? "unknown HDF5 error" : message;
}

absl::Status HdfError(absl::StatusCode code, const std::string& where, const std::string& what) {
  return absl::Status(code, absl::StrCat(where, ": ", what, ": ", HdfMessage()));
}

// `id` as an owned handle, or an error naming `what` when HDF5 returned a negative id.
absl::StatusOr<Handle> Checked(hid_t id, Handle::Closer closer, const std::string& where,
                               const std::string& what,
                               absl::StatusCode code = absl::StatusCode::kInternal) {
  if (id < 0) return HdfError(code, where, what);
  return Handle(id, closer);
}

absl::Status CheckedCall(herr_t result, const std::string& where, const std::string& what,
                         absl::StatusCode code = absl::StatusCode::kInternal) {
  if (result < 0) return HdfError(code, where, what);
  return absl::OkStatus();
}

std::string ErrnoMessage(int error) { return std::generic_category().message(error); }

// ---------------------------------------------------------------------------------------------
// Types.

// Number of enumerators of E: the values 0, 1, ... that core's ToString names (it returns "?"
// past the last one), so enumerators appended to core/ reach the file without a change here.
template <typename E>
int EnumCount() {
  static const int count = [] {
    int n = 0;
    while (n < 256 && std::strcmp(core::ToString(static_cast<E>(n)), "?") != 0) ++n;
    return n;
  }();
  return count;
}

template <typename E>
bool EnumValid(E value) {
  return static_cast<int>(value) < EnumCount<E>();
}

// An HDF5 enum over uint8 with the names of core's ToString, so h5dump and h5py show names.
template <typename E>
absl::StatusOr<Handle> MakeEnum(const std::string& where) {
  MESHSIM_ASSIGN_OR_RETURN(Handle type, Checked(H5Tenum_create(H5T_NATIVE_UINT8), H5Tclose, where,
                                                "creating an enum type"));
  for (int v = 0; v < EnumCount<E>(); ++v) {
    const uint8_t value = static_cast<uint8_t>(v);
    const char* name = core::ToString(static_cast<E>(v));
    MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Tenum_insert(type.get(), name, &value), where,
                                        absl::StrCat("enum member '", name, "'")));
  }
  return type;
}

// The datatypes shared by all tables of a file. Enums are the same in memory and on disk (one
// byte has no byte order).
struct Types {
  Handle unit_kind;
  Handle phase;
  Handle op_kind;
  Handle collective;
  Handle pass;
  Handle resource_kind;
  Handle string;  // Variable-length, null-terminated UTF-8 string.
};

absl::StatusOr<Types> MakeTypes(const std::string& where) {
  Types t;
  MESHSIM_ASSIGN_OR_RETURN(t.unit_kind, MakeEnum<core::UnitKind>(where));
  MESHSIM_ASSIGN_OR_RETURN(t.phase, MakeEnum<core::Phase>(where));
  MESHSIM_ASSIGN_OR_RETURN(t.op_kind, MakeEnum<core::OpKind>(where));
  MESHSIM_ASSIGN_OR_RETURN(t.collective, MakeEnum<core::CollectiveKind>(where));
  MESHSIM_ASSIGN_OR_RETURN(t.pass, MakeEnum<core::Pass>(where));
  MESHSIM_ASSIGN_OR_RETURN(t.resource_kind, MakeEnum<core::ResourceKind>(where));
  MESHSIM_ASSIGN_OR_RETURN(t.string,
                           Checked(H5Tcopy(H5T_C_S1), H5Tclose, where, "creating the string type"));
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(H5Tset_size(t.string.get(), H5T_VARIABLE), where, "creating the string type"));
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(H5Tset_cset(t.string.get(), H5T_CSET_UTF8), where, "creating the string type"));
  return t;
}

// One member of a compound table: its on-disk type, and its native type and offset in the struct
// the rows are read from / written to.
struct Column {
  const char* name;
  hid_t file_type;
  hid_t mem_type;
  size_t offset;
};

struct TableType {
  Handle file;    // Packed, little-endian, members in column order.
  Handle memory;  // The in-memory struct.
};

absl::StatusOr<TableType> MakeTableType(const std::vector<Column>& columns, size_t struct_size,
                                        const std::string& where) {
  size_t file_size = 0;
  for (const Column& c : columns) file_size += H5Tget_size(c.file_type);
  TableType t;
  MESHSIM_ASSIGN_OR_RETURN(t.file, Checked(H5Tcreate(H5T_COMPOUND, file_size), H5Tclose, where,
                                           "creating a table type"));
  MESHSIM_ASSIGN_OR_RETURN(t.memory, Checked(H5Tcreate(H5T_COMPOUND, struct_size), H5Tclose, where,
                                             "creating a table type"));
  size_t file_offset = 0;
  for (const Column& c : columns) {
    MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Tinsert(t.file.get(), c.name, file_offset, c.file_type),
                                        where, absl::StrCat("column '", c.name, "'")));
    MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Tinsert(t.memory.get(), c.name, c.offset, c.mem_type),
                                        where, absl::StrCat("column '", c.name, "'")));
    file_offset += H5Tget_size(c.file_type);
  }
  return t;
}

// Ids are uint32 in memory with UINT32_MAX as "invalid", and int32 on disk with -1 as "invalid"
// (both are all-ones bits). HDF5 converts the columns itself while reading and writing; the only
// values its integer conversion cannot represent are exactly those sentinels (and ids >= 2^31,
// which are refused), and it hands them to this callback.
struct IdConversion {
  bool writing = true;
  bool failed = false;
  int64_t value = 0;  // The offending value when `failed`.
};

H5T_conv_ret_t ConvertId(H5T_conv_except_t except, hid_t src_type, hid_t dst_type, void* src,
                         void* dst, void* user_data) {
  auto* conversion = static_cast<IdConversion*>(user_data);
  // Not an id column (e.g. an enum value without a name in the destination type): HDF5's default,
  // which for enums stores 255 (caught by CheckEnum).
  if (H5Tget_size(src_type) != 4 || H5Tget_size(dst_type) != 4) return H5T_CONV_UNHANDLED;
  if (conversion->writing && except == H5T_CONV_EXCEPT_RANGE_HI) {
    uint32_t id;
    std::memcpy(&id, src, 4);
    if (id == core::OpId::kInvalidValue) {
      const int32_t sentinel = -1;
      std::memcpy(dst, &sentinel, 4);
      return H5T_CONV_HANDLED;
    }
    conversion->value = id;
  } else if (!conversion->writing && except == H5T_CONV_EXCEPT_RANGE_LOW) {
    int32_t stored;
    std::memcpy(&stored, src, 4);
    if (stored == -1) {
      const uint32_t invalid = core::OpId::kInvalidValue;
      std::memcpy(dst, &invalid, 4);
      return H5T_CONV_HANDLED;
    }
    conversion->value = stored;
  }
  conversion->failed = true;
  return H5T_CONV_ABORT;
}

absl::StatusOr<Handle> MakeTransfer(IdConversion* conversion, const std::string& where) {
  MESHSIM_ASSIGN_OR_RETURN(Handle xfer, Checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, where,
                                                "creating a transfer property list"));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Pset_type_conv_cb(xfer.get(), ConvertId, conversion), where,
                                      "setting the id conversion"));
  return xfer;
}

// Column helpers: an id (int32 on disk, -1 = invalid), a plain integer/float, an enum.
Column IdColumn(const char* name, size_t offset) {
  return {name, H5T_STD_I32LE, H5T_NATIVE_UINT32, offset};
}

std::vector<Column> TimelineColumns(const Types& t) {
  using R = core::TimelineRow;
  return {
      IdColumn("chip", HOFFSET(R, chip)),
      {"unit_kind", t.unit_kind.get(), t.unit_kind.get(), HOFFSET(R, unit_kind)},
      {"unit_index", H5T_STD_U16LE, H5T_NATIVE_UINT16, HOFFSET(R, unit_index)},
      {"op_kind", t.op_kind.get(), t.op_kind.get(), HOFFSET(R, kind)},
      {"collective", t.collective.get(), t.collective.get(), HOFFSET(R, collective)},
      {"phase", t.phase.get(), t.phase.get(), HOFFSET(R, phase)},
      IdColumn("name", HOFFSET(R, name)),
      {"start_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, start)},
      {"end_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, end)},
      {"bytes", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, bytes)},
      {"flops", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, HOFFSET(R, flops)},
      {"layer", H5T_STD_I32LE, H5T_NATIVE_INT32, HOFFSET(R, layer)},
      {"pass", t.pass.get(), t.pass.get(), HOFFSET(R, pass)},
      {"slice", H5T_STD_I32LE, H5T_NATIVE_INT16, HOFFSET(R, slice)},
      IdColumn("op", HOFFSET(R, op)),
      // Added within schema 3: a file written before them lacks these columns, and reading it
      // leaves the rows' defaults (libhdf5 converts compound members by name).
      {"stage", H5T_STD_I16LE, H5T_NATIVE_INT16, HOFFSET(R, stage)},
      {"microbatch", H5T_STD_I16LE, H5T_NATIVE_INT16, HOFFSET(R, microbatch)},
      {"task", H5T_STD_U8LE, H5T_NATIVE_UINT8, HOFFSET(R, task)},
  };
}

std::vector<Column> EdgeColumns() {
  return {IdColumn("from", HOFFSET(DepEdge, from)), IdColumn("to", HOFFSET(DepEdge, to))};
}

// ResourceInfo holds a std::string, so resources go through this row (resources are few: one
// per link, HBM and DMA engine).
struct ResourceRow {
  const char* name = nullptr;
  core::ResourceKind kind = core::ResourceKind::kOther;
  core::ChipId chip;
  core::ChipId peer;
  double capacity_bytes_per_s = 0;
  double bytes = 0;
  core::Time busy;
};
static_assert(std::is_standard_layout_v<ResourceRow>);

std::vector<Column> ResourceColumns(const Types& t) {
  using R = ResourceRow;
  return {
      {"name", t.string.get(), t.string.get(), HOFFSET(R, name)},
      {"kind", t.resource_kind.get(), t.resource_kind.get(), HOFFSET(R, kind)},
      IdColumn("chip", HOFFSET(R, chip)),
      IdColumn("peer", HOFFSET(R, peer)),
      {"capacity_bytes_per_s", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, HOFFSET(R, capacity_bytes_per_s)},
      {"bytes", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, HOFFSET(R, bytes)},
      {"busy_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, busy)},
  };
}

// GemmSpan holds a std::string, so GeMM spans go through this row (a run has a few dozen).
struct GemmRow {
  const char* label = nullptr;
  int32_t layer = -1;
  core::Pass pass = core::Pass::kNone;
  core::Time start, end, share;
  double flops = 0;
};
static_assert(std::is_standard_layout_v<GemmRow>);

std::vector<Column> GemmColumns(const Types& t) {
  using R = GemmRow;
  return {
      {"label", t.string.get(), t.string.get(), HOFFSET(R, label)},
      {"layer", H5T_STD_I32LE, H5T_NATIVE_INT32, HOFFSET(R, layer)},
      {"pass", t.pass.get(), t.pass.get(), HOFFSET(R, pass)},
      {"start_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, start)},
      {"end_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, end)},
      {"share_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, share)},
      {"flops", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, HOFFSET(R, flops)},
  };
}

std::vector<Column> CounterColumns() {
  using R = core::CounterSample;
  return {
      {"time_ps", H5T_STD_I64LE, H5T_NATIVE_INT64, HOFFSET(R, time)},
      IdColumn("resource", HOFFSET(R, resource)),
      {"rate_bytes_per_s", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, HOFFSET(R, rate_bytes_per_s)},
  };
}

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
  {
    const std::string config_where = absl::StrCat(where, ": config");
    MESHSIM_ASSIGN_OR_RETURN(Handle config,
                             CreateOrderedGroup(group.get(), "config", true, config_where));
    // Typed: integers as int64, reals as float64, the rest as strings (schema version 3).
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
  }
  {
    const std::string metrics_where = absl::StrCat(where, ": metrics");
    MESHSIM_ASSIGN_OR_RETURN(Handle metrics,
                             CreateOrderedGroup(group.get(), "metrics", true, metrics_where));
    for (const auto& [key, value] : run.metrics) {
      MESHSIM_RETURN_IF_ERROR(WriteDoubleAttribute(metrics.get(), key, value, metrics_where));
    }
  }
  {
    std::vector<const char*> names;
    names.reserve(run.names.size());
    for (const std::string& name : run.names) names.push_back(name.c_str());
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "names", types.string.get(), types.string.get(),
                                       names.size(), names.data(), where));
  }
  if (with_timeline) {
    MESHSIM_ASSIGN_OR_RETURN(
        TableType type, MakeTableType(TimelineColumns(types), sizeof(core::TimelineRow), where));
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "timeline", type.file.get(), type.memory.get(),
                                       run.timeline.size(), run.timeline.data(), where));
  }
  if (with_timeline) {
    MESHSIM_ASSIGN_OR_RETURN(TableType type, MakeTableType(EdgeColumns(), sizeof(DepEdge), where));
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "edges", type.file.get(), type.memory.get(),
                                       run.edges.size(), run.edges.data(), where));
  }
  {
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
    MESHSIM_ASSIGN_OR_RETURN(TableType type,
                             MakeTableType(ResourceColumns(types), sizeof(ResourceRow), where));
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "resources", type.file.get(), type.memory.get(),
                                       rows.size(), rows.data(), where));
  }
  {
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
    MESHSIM_ASSIGN_OR_RETURN(TableType type,
                             MakeTableType(GemmColumns(types), sizeof(GemmRow), where));
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "gemms", type.file.get(), type.memory.get(),
                                       rows.size(), rows.data(), where));
  }
  if (with_timeline) {
    MESHSIM_ASSIGN_OR_RETURN(TableType type,
                             MakeTableType(CounterColumns(), sizeof(core::CounterSample), where));
    MESHSIM_RETURN_IF_ERROR(WriteTable(group.get(), "counters", type.file.get(), type.memory.get(),
                                       run.counters.size(), run.counters.data(), where));
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

// ---------------------------------------------------------------------------------------------
// Integrity trailer. HDF5 checksums most of its metadata, but not the global heap that holds
// variable-length strings, nor raw data: a flipped bit there makes libhdf5 read out of bounds.
// So every archive ends with 16 bytes past HDF5's end of file (which HDF5 and h5py ignore):
// the magic "meshsim#" and a 64-bit hash of every byte before it. Readers check it first.

constexpr char kTrailerMagic[8] = {'m', 'e', 's', 'h', 's', 'i', 'm', '#'};
constexpr size_t kTrailerBytes = 16;

// A 64-bit multiply-xorshift hash over 8-byte little-endian words (the tail zero-padded).
class Hash64 {
 public:
  void Update(const unsigned char* data, size_t n) {
    size_t i = 0;
    for (; i < n && fill_ != 0; ++i) Byte(data[i]);
    if constexpr (std::endian::native == std::endian::little) {
      for (; i + 8 <= n; i += 8) {  // Whole words at once: the same value Byte() assembles.
        std::memcpy(&word_, data + i, 8);
        Mix();
      }
    }
    for (; i < n; ++i) Byte(data[i]);
  }
  uint64_t Final() {
    if (fill_ > 0) Mix();
    uint64_t h = state_ ^ length_;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
  }

 private:
  void Byte(unsigned char c) {
    word_ |= static_cast<uint64_t>(c) << (8 * fill_);
    if (++fill_ == 8) Mix();
  }
  void Mix() {
    state_ = (state_ ^ (word_ * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    state_ ^= state_ >> 31;
    length_ += 8;
    word_ = 0;
    fill_ = 0;
  }
  uint64_t state_ = 0x6a09e667f3bcc908ull, word_ = 0, length_ = 0;
  int fill_ = 0;
};

// Hash of the first `n` bytes of the open file `fd`; false on a read error.
bool HashPrefix(int fd, uint64_t n, uint64_t* hash) {
  Hash64 h;
  std::vector<unsigned char> buffer(1 << 20);
  uint64_t done = 0;
  while (done < n) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), n - done));
    const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(done));
    if (got <= 0) return false;
    h.Update(buffer.data(), static_cast<size_t>(got));
    done += static_cast<uint64_t>(got);
  }
  *hash = h.Final();
  return true;
}

// Appends the trailer to the closed file `file_name`.
absl::Status AppendTrailer(const std::string& file_name, const std::string& where) {
  const int fd = ::open(file_name.c_str(), O_RDWR);
  struct stat info;
  uint64_t hash = 0;
  bool ok = fd >= 0 && ::fstat(fd, &info) == 0 &&
            HashPrefix(fd, static_cast<uint64_t>(info.st_size), &hash);
  if (ok) {
    unsigned char trailer[kTrailerBytes];
    std::memcpy(trailer, kTrailerMagic, 8);
    for (int i = 0; i < 8; ++i) trailer[8 + i] = static_cast<unsigned char>(hash >> (8 * i));
    ok = ::pwrite(fd, trailer, kTrailerBytes, info.st_size) == static_cast<ssize_t>(kTrailerBytes);
  }
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(where, ": ", ErrnoMessage(error)));
  return absl::OkStatus();
}

// Checks the trailer of `path` (open as `fd`). Files without one (written before it existed, or
// by another tool) pass; a trailer whose hash disagrees is damage.
absl::Status VerifyTrailer(int fd, const std::string& where) {
  struct stat info;
  if (::fstat(fd, &info) != 0 || info.st_size < static_cast<off_t>(kTrailerBytes)) {
    return absl::OkStatus();
  }
  const uint64_t body = static_cast<uint64_t>(info.st_size) - kTrailerBytes;
  unsigned char trailer[kTrailerBytes];
  if (::pread(fd, trailer, kTrailerBytes, static_cast<off_t>(body)) !=
          static_cast<ssize_t>(kTrailerBytes) ||
      std::memcmp(trailer, kTrailerMagic, 8) != 0) {
    return absl::OkStatus();
  }
  uint64_t stored = 0, actual = 0;
  for (int i = 0; i < 8; ++i) stored |= static_cast<uint64_t>(trailer[8 + i]) << (8 * i);
  if (!HashPrefix(fd, body, &actual)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", ErrnoMessage(errno)));
  }
  if (actual != stored) {
    return absl::DataLossError(
        absl::StrCat(where, ": damaged meshsim archive: its checksum does not match its contents"));
  }
  return absl::OkStatus();
}

// Whether `path` ends with a trailer whose hash matches (a file we can trust libhdf5 with).
bool HasIntactTrailer(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  struct stat info;
  bool intact = false;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
      info.st_size >= static_cast<off_t>(kTrailerBytes)) {
    unsigned char trailer[kTrailerBytes];
    const uint64_t body = static_cast<uint64_t>(info.st_size) - kTrailerBytes;
    intact = ::pread(fd, trailer, kTrailerBytes, static_cast<off_t>(body)) ==
                 static_cast<ssize_t>(kTrailerBytes) &&
             std::memcmp(trailer, kTrailerMagic, 8) == 0 && VerifyTrailer(fd, "").ok();
  }
  ::close(fd);
  return intact;
}

// True in a probe child (below): it reads without probing again.
bool g_in_probe = false;

// Archives without an intact trailer (written before it existed, or edited by h5py or the HDF5
// tools, which drop it) have no checksum over libhdf5's unchecked structures, and a damaged one
// can crash libhdf5 itself — which no Status can report. So such a file is first read once in a
// forked child doing the same reads (`read`); if the child dies of a signal, the file is damaged.
// A child still reading at its deadline is killed: the file is damaged too. Costs one extra
// read of a trailer-less file; nothing for a file with its trailer.
template <typename Read>
absl::Status ProbeUntrustedArchive(const std::string& path, Read read) {
  if (g_in_probe || HasIntactTrailer(path)) return absl::OkStatus();
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return absl::OkStatus();  // Cannot probe: read directly, as before.
  if (child == 0) {
    g_in_probe = true;
    read();
    ::_exit(0);
  }
  // A damaged file can also send libhdf5 into an endless loop: the child gets a deadline of
  // 10 s plus 1 s per 20 MB (reading runs at hundreds of MB/s), then is killed.
  struct stat info;
  const double bytes = ::stat(path.c_str(), &info) == 0 ? static_cast<double>(info.st_size) : 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(10.0 + bytes / 20e6);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) return absl::OkStatus();
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      return absl::DataLossError(
          absl::StrCat("cannot read '", path,
                       "': damaged: libhdf5 did not finish reading it (the file has no "
                       "meshsim integrity trailer, so it was probed first)"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFSIGNALED(status)) {
    return absl::DataLossError(absl::StrCat(
        "cannot read '", path, "': damaged: libhdf5 crashed reading it (signal ", WTERMSIG(status),
        "; the file has no meshsim integrity trailer, so it was probed first)"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Reading.

struct Table {
  Handle dataset;
  size_t rows = 0;
  size_t cols = 1;  // 1 for a 1-D table.
};

// Opens the dataset `name` of class `type_class`, 1-D or (if `matrix`) 2-D; a missing or
// misshapen one is DataLoss.
absl::StatusOr<Table> OpenTable(hid_t loc, const char* name, H5T_class_t type_class, bool matrix,
                                const std::string& where) {
  const std::string what = absl::StrCat("dataset '", name, "'");
  const htri_t exists = H5Lexists(loc, name, H5P_DEFAULT);
  if (exists == 0) return absl::DataLossError(absl::StrCat(where, ": missing ", what));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(exists, where, what, absl::StatusCode::kDataLoss));
  Table table;
  MESHSIM_ASSIGN_OR_RETURN(table.dataset, Checked(H5Dopen2(loc, name, H5P_DEFAULT), H5Dclose, where,
                                                  what, absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle type, Checked(H5Dget_type(table.dataset.get()), H5Tclose, where,
                                                what, absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle space, Checked(H5Dget_space(table.dataset.get()), H5Sclose, where,
                                                 what, absl::StatusCode::kDataLoss));
  const int rank = matrix ? 2 : 1;
  hsize_t dims[2] = {0, 1};
  if (H5Tget_class(type.get()) != type_class || H5Sget_simple_extent_ndims(space.get()) != rank ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) != rank) {
    H5Eclear2(H5E_DEFAULT);
    return absl::DataLossError(absl::StrCat(where, ": ", what, " has the wrong type or shape"));
  }
  table.rows = dims[0];
  table.cols = dims[1];
  return table;
}

// Reads the whole dataset `name` into `out`, converting from the file's types to `mem_type`: a
// 1-D table, or with `cols` a 2-D matrix, row-major, whose number of columns goes to `*cols`.
template <typename T>
absl::Status ReadTable(hid_t loc, const char* name, H5T_class_t type_class, hid_t mem_type,
                       std::vector<T>* out, const std::string& where, size_t* cols = nullptr) {
  MESHSIM_ASSIGN_OR_RETURN(Table table, OpenTable(loc, name, type_class, cols != nullptr, where));
  if (cols != nullptr) *cols = table.cols;
  out->assign(table.rows * table.cols, T{});
  if (out->empty()) return absl::OkStatus();
  IdConversion conversion{.writing = false};
  MESHSIM_ASSIGN_OR_RETURN(Handle xfer, MakeTransfer(&conversion, where));
  if (H5Dread(table.dataset.get(), mem_type, H5S_ALL, H5S_ALL, xfer.get(), out->data()) < 0) {
    if (conversion.failed) {
      H5Eclear2(H5E_DEFAULT);
      return absl::DataLossError(
          absl::StrCat(where, ": dataset '", name, "': id ", conversion.value, " is out of range"));
    }
    return HdfError(absl::StatusCode::kDataLoss, where,
                    absl::StrCat("reading dataset '", name, "'"));
  }
  return absl::OkStatus();
}

// Reads the variable-length strings of dataset `name` (as ReadTable) into `out`.
absl::Status ReadStringTable(hid_t loc, const char* name, const Types& types,
                             std::vector<std::string>* out, const std::string& where,
                             size_t* cols = nullptr) {
  std::vector<char*> texts;
  const absl::Status status =
      ReadTable(loc, name, H5T_STRING, types.string.get(), &texts, where, cols);
  out->clear();
  out->reserve(texts.size());
  for (char* text : texts) {
    if (status.ok()) out->emplace_back(text != nullptr ? text : "");
    H5free_memory(text);
  }
  return status;
}

// Opens the attribute `name` of `loc`, checking it holds one value of one of `classes`; its
// datatype is returned in `type`.
absl::StatusOr<Handle> OpenScalarAttribute(hid_t loc, const std::string& name,
                                           std::vector<H5T_class_t> classes, Handle* type,
                                           const std::string& where) {
  const std::string what = absl::StrCat("attribute '", name, "'");
  MESHSIM_ASSIGN_OR_RETURN(Handle attr, Checked(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose,
                                                where, what, absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(
      *type, Checked(H5Aget_type(attr.get()), H5Tclose, where, what, absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle space, Checked(H5Aget_space(attr.get()), H5Sclose, where, what,
                                                 absl::StatusCode::kDataLoss));
  const H5T_class_t type_class = H5Tget_class(type->get());
  if (H5Sget_simple_extent_npoints(space.get()) != 1 ||
      std::find(classes.begin(), classes.end(), type_class) == classes.end()) {
    H5Eclear2(H5E_DEFAULT);
    return absl::DataLossError(absl::StrCat(where, ": ", what, " has the wrong type or shape"));
  }
  return attr;
}

absl::StatusOr<std::string> ReadStringAttribute(hid_t loc, const std::string& name,
                                                const Types& types, const std::string& where) {
  const std::string what = absl::StrCat("attribute '", name, "'");
  Handle type;
  MESHSIM_ASSIGN_OR_RETURN(Handle attr, OpenScalarAttribute(loc, name, {H5T_STRING}, &type, where));
  const htri_t variable = H5Tis_variable_str(type.get());
  MESHSIM_RETURN_IF_ERROR(CheckedCall(variable, where, what, absl::StatusCode::kDataLoss));
  if (variable > 0) {
    char* text = nullptr;
    MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Aread(attr.get(), types.string.get(), &text), where, what,
                                        absl::StatusCode::kDataLoss));
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  // A fixed-length string (not written by meshsim, but cheap to accept).
  std::string value(H5Tget_size(type.get()), '\0');
  MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Aread(attr.get(), type.get(), value.data()), where, what,
                                      absl::StatusCode::kDataLoss));
  value.resize(std::strlen(value.c_str()));
  return value;
}

// Reads the 1-D attribute `name` of variable-length strings (a column list of /summary).
absl::StatusOr<std::vector<std::string>> ReadStringListAttribute(hid_t loc, const std::string& name,
                                                                 const Types& types,
                                                                 const std::string& where) {
  const std::string what = absl::StrCat("attribute '", name, "'");
  const htri_t exists = H5Aexists(loc, name.c_str());
  if (exists == 0) return absl::DataLossError(absl::StrCat(where, ": missing ", what));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(exists, where, what, absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle attr, Checked(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose,
                                                where, what, absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle type, Checked(H5Aget_type(attr.get()), H5Tclose, where, what,
                                                absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle space, Checked(H5Aget_space(attr.get()), H5Sclose, where, what,
                                                 absl::StatusCode::kDataLoss));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0 ||
      H5Sget_simple_extent_ndims(space.get()) != 1) {
    H5Eclear2(H5E_DEFAULT);
    return absl::DataLossError(absl::StrCat(where, ": ", what, " has the wrong type or shape"));
  }
  std::vector<char*> texts(H5Sget_simple_extent_npoints(space.get()), nullptr);
  if (!texts.empty()) {
    MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Aread(attr.get(), types.string.get(), texts.data()),
                                        where, what, absl::StatusCode::kDataLoss));
  }
  std::vector<std::string> values;
  values.reserve(texts.size());
  for (char* text : texts) {
    values.emplace_back(text != nullptr ? text : "");
    H5free_memory(text);
  }
  return values;
}

absl::StatusOr<int64_t> ReadIntAttribute(hid_t loc, const std::string& name,
                                         const std::string& where) {
  Handle type;
  MESHSIM_ASSIGN_OR_RETURN(Handle attr,
                           OpenScalarAttribute(loc, name, {H5T_INTEGER}, &type, where));
  int64_t value = 0;
  MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), where,
                                      absl::StrCat("attribute '", name, "'"),
                                      absl::StatusCode::kDataLoss));
  return value;
}

absl::StatusOr<double> ReadDoubleAttribute(hid_t loc, const std::string& name,
                                           const std::string& where) {
  Handle type;
  MESHSIM_ASSIGN_OR_RETURN(Handle attr,
                           OpenScalarAttribute(loc, name, {H5T_FLOAT, H5T_INTEGER}, &type, where));
  double value = 0;
  MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), where,
                                      absl::StrCat("attribute '", name, "'"),
                                      absl::StatusCode::kDataLoss));
  return value;
}

// A config value: a string, or (schema version 3) an int64 or float64 attribute, as the text it
// was written from.
absl::StatusOr<std::string> ReadConfigAttribute(hid_t loc, const std::string& name,
                                                const Types& types, const std::string& where) {
  Handle type;
  MESHSIM_ASSIGN_OR_RETURN(
      Handle attr,
      OpenScalarAttribute(loc, name, {H5T_STRING, H5T_INTEGER, H5T_FLOAT}, &type, where));
  const H5T_class_t type_class = H5Tget_class(type.get());
  attr = Handle();
  if (type_class == H5T_STRING) return ReadStringAttribute(loc, name, types, where);
  if (type_class == H5T_INTEGER) {
    MESHSIM_ASSIGN_OR_RETURN(int64_t value, ReadIntAttribute(loc, name, where));
    return absl::StrCat(value);
  }
  MESHSIM_ASSIGN_OR_RETURN(double value, ReadDoubleAttribute(loc, name, where));
  return core::FormatDouble(value);
}

herr_t CollectAttributeName(hid_t /*loc*/, const char* name, const H5A_info_t* /*info*/,
                            void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

herr_t CollectLinkName(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

// Attribute names of `loc` in creation order (name order if the order was not tracked).
absl::StatusOr<std::vector<std::string>> AttributeNames(hid_t loc, const std::string& where) {
  std::vector<std::string> names;
  if (H5Aiterate2(loc, H5_INDEX_CRT_ORDER, H5_ITER_INC, nullptr, CollectAttributeName, &names) >=
      0) {
    return names;
  }
  H5Eclear2(H5E_DEFAULT);
  names.clear();
  MESHSIM_RETURN_IF_ERROR(CheckedCall(
      H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectAttributeName, &names), where,
      "listing attributes", absl::StatusCode::kDataLoss));
  return names;
}

// Link names of group `loc` in creation order (name order if the order was not tracked).
absl::StatusOr<std::vector<std::string>> LinkNames(hid_t loc, const std::string& where) {
  std::vector<std::string> names;
  if (H5Literate(loc, H5_INDEX_CRT_ORDER, H5_ITER_INC, nullptr, CollectLinkName, &names) >= 0) {
    return names;
  }
  H5Eclear2(H5E_DEFAULT);
  names.clear();
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectLinkName, &names),
                  where, "listing runs", absl::StatusCode::kDataLoss));
  return names;
}

absl::StatusOr<Handle> OpenGroup(hid_t loc, const char* name, const std::string& where) {
  const std::string what = absl::StrCat("group '", name, "'");
  const htri_t exists = H5Lexists(loc, name, H5P_DEFAULT);
  if (exists == 0) return absl::DataLossError(absl::StrCat(where, ": missing ", what));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(exists, where, what, absl::StatusCode::kDataLoss));
  return Checked(H5Gopen2(loc, name, H5P_DEFAULT), H5Gclose, where, what,
                 absl::StatusCode::kDataLoss);
}

// An open archive: the file and its /runs group, with the run names in order.
struct Archive {
  Handle file;
  Handle runs;
  std::vector<std::string> run_names;
  int schema_version = 0;
};

absl::StatusOr<Archive> OpenArchive(const std::string& path) {
  const std::string where = absl::StrCat("cannot open '", path, "'");
  // Ask the OS first, for plain messages about missing or unreadable files.
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    const int error = errno;
    const std::string message = absl::StrCat(where, ": ", ErrnoMessage(error));
    return error == ENOENT ? absl::NotFoundError(message) : absl::InvalidArgumentError(message);
  }
  struct stat info;
  const bool is_directory = ::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode);
  const absl::Status intact = is_directory ? absl::OkStatus() : VerifyTrailer(fd, where);
  ::close(fd);
  if (is_directory) return absl::InvalidArgumentError(absl::StrCat(where, ": is a directory"));
  MESHSIM_RETURN_IF_ERROR(intact);

  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0) return absl::InvalidArgumentError(absl::StrCat(where, ": not an HDF5 file"));
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(is_hdf5, where, "checking the file", absl::StatusCode::kInvalidArgument));
  Archive archive;
  MESHSIM_ASSIGN_OR_RETURN(
      archive.file, Checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, where,
                            "opening the file", absl::StatusCode::kInvalidArgument));
  const std::string not_ours = absl::StrCat(where, ": not a meshsim archive");
  if (H5Aexists(archive.file.get(), "schema_version") <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return absl::InvalidArgumentError(absl::StrCat(not_ours, " (no 'schema_version' attribute)"));
  }
  absl::StatusOr<int64_t> schema = ReadIntAttribute(archive.file.get(), "schema_version", where);
  if (!schema.ok()) return absl::InvalidArgumentError(schema.status().message());
  if (*schema < 1 || *schema > kHdf5SchemaVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": schema version ", *schema, " is not supported (this meshsim reads ",
                     "versions 1 to ", kHdf5SchemaVersion, "; a newer meshsim wrote it?)"));
  }
  archive.schema_version = static_cast<int>(*schema);
  if (H5Lexists(archive.file.get(), "runs", H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return absl::InvalidArgumentError(absl::StrCat(not_ours, " (no '/runs' group)"));
  }
  MESHSIM_ASSIGN_OR_RETURN(
      archive.runs, Checked(H5Gopen2(archive.file.get(), "runs", H5P_DEFAULT), H5Gclose, where,
                            "group '/runs'", absl::StatusCode::kInvalidArgument));
  MESHSIM_ASSIGN_OR_RETURN(archive.run_names, LinkNames(archive.runs.get(), where));
  return archive;
}

// The values of enum E this meshsim knows, for messages: "0 to 3: none, fwd, bwd, train".
template <typename E>
std::string EnumValues() {
  std::vector<std::string> names;
  for (int v = 0; v < EnumCount<E>(); ++v) names.push_back(core::ToString(static_cast<E>(v)));
  return absl::StrCat("0 to ", EnumCount<E>() - 1, ": ", absl::StrJoin(names, ", "));
}

// One stored value of an enum column, as the file has it.
struct StoredEnum {
  int64_t value = 0;
  std::string name;  // The file's name for it ("" when its enum type has none, or no enum).
};

// Reads column `column` of rows [first, first + count) of compound dataset `dataset` as stored:
// in the column's own file type, so that HDF5 converts nothing (an enum value without a name
// stays what it is), then as integers. The column is an enum or an integer.
absl::StatusOr<std::vector<StoredEnum>> ReadStoredEnums(hid_t dataset, const char* column,
                                                        hsize_t first, hsize_t count,
                                                        const std::string& where) {
  const std::string what = absl::StrCat("column '", column, "'");
  const auto fail = [&](hid_t id) -> absl::StatusOr<Handle> {
    return Checked(id, H5Tclose, where, what, absl::StatusCode::kDataLoss);
  };
  MESHSIM_ASSIGN_OR_RETURN(Handle file_type, fail(H5Dget_type(dataset)));
  const int index = H5Tget_member_index(file_type.get(), column);
  if (index < 0) return HdfError(absl::StatusCode::kDataLoss, where, what);
  MESHSIM_ASSIGN_OR_RETURN(Handle member,
                           fail(H5Tget_member_type(file_type.get(), static_cast<unsigned>(index))));
  const bool is_enum = H5Tget_class(member.get()) == H5T_ENUM;
  MESHSIM_ASSIGN_OR_RETURN(Handle base,
                           fail(is_enum ? H5Tget_super(member.get()) : H5Tcopy(member.get())));
  const size_t size = H5Tget_size(member.get());
  if (H5Tget_class(base.get()) != H5T_INTEGER || size == 0 || size > 8) {
    H5Eclear2(H5E_DEFAULT);
    return absl::DataLossError(absl::StrCat(where, ": ", what, " is not an enum or integer"));
  }
  MESHSIM_ASSIGN_OR_RETURN(Handle memory, fail(H5Tcreate(H5T_COMPOUND, size)));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(H5Tinsert(memory.get(), column, 0, member.get()), where, what,
                                      absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle file_space, Checked(H5Dget_space(dataset), H5Sclose, where, what,
                                                      absl::StatusCode::kDataLoss));
  MESHSIM_RETURN_IF_ERROR(CheckedCall(
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr),
      where, what, absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle memory_space,
                           Checked(H5Screate_simple(1, &count, nullptr), H5Sclose, where, what,
                                   absl::StatusCode::kDataLoss));
  std::vector<unsigned char> raw(size * count);
  MESHSIM_RETURN_IF_ERROR(CheckedCall(
      H5Dread(dataset, memory.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, raw.data()),
      where, absl::StrCat("reading ", what), absl::StatusCode::kDataLoss));
  std::vector<StoredEnum> out(count);
  for (hsize_t i = 0; i < count; ++i) {
    unsigned char value[8] = {};
    std::memcpy(value, raw.data() + i * size, size);
    if (is_enum) {
      char name[64] = {};
      if (H5Tenum_nameof(member.get(), value, name, sizeof(name)) >= 0) out[i].name = name;
      H5Eclear2(H5E_DEFAULT);
    }
    // The base integer (any size, order and sign) as an int64: integers convert in place.
    MESHSIM_RETURN_IF_ERROR(
        CheckedCall(H5Tconvert(base.get(), H5T_NATIVE_INT64, 1, value, nullptr, H5P_DEFAULT), where,
                    what, absl::StatusCode::kDataLoss));
    std::memcpy(&out[i].value, value, 8);
  }
  return out;
}

// DataLoss naming row `row` of enum column `column` of dataset `table` (in run group `group`),
// its stored value, and the values this meshsim knows: "cannot read 'a.h5': run 'r': dataset
// 'timeline': row 1: op_kind is 200, which this meshsim does not know (allowed: 0 to 8: ...);
// a newer meshsim wrote the file, or it is damaged".
template <typename E>
absl::Status UnknownEnumValue(hid_t group, const char* table, size_t row, const char* column,
                              const std::string& where) {
  const std::string table_where = absl::StrCat(where, ": dataset '", table, "'");
  std::string stored;
  {
    // The value as stored; HDF5 converts enum values by name, so the row read holds 255 for a
    // value whose name this build lacks, and only the file knows what it was.
    const hid_t dataset = H5Dopen2(group, table, H5P_DEFAULT);
    const Handle owned(dataset, H5Dclose);
    absl::StatusOr<std::vector<StoredEnum>> values =
        dataset < 0 ? absl::DataLossError("") : ReadStoredEnums(dataset, column, row, 1, where);
    H5Eclear2(H5E_DEFAULT);
    if (values.ok()) {
      stored = absl::StrCat(" is ", values->front().value,
                            values->front().name.empty()
                                ? std::string()
                                : absl::StrCat(" ('", values->front().name, "')"),
                            ",");
    }
  }
  return absl::DataLossError(absl::StrCat(
      table_where, ": row ", row, ": ", column, stored.empty() ? " holds a value" : stored,
      " which this meshsim does not know (allowed: ", EnumValues<E>(),
      "); a newer meshsim wrote the file, or it is damaged"));
}

template <typename E>
absl::Status CheckEnum(E value, hid_t group, const char* table, size_t row, const char* column,
                       const std::string& where) {
  if (EnumValid(value)) return absl::OkStatus();
  return UnknownEnumValue<E>(group, table, row, column, where);
}

// Enum columns stored as integers rather than as meshsim's enum types (HDF5 converts no
// integer to an enum): DataLoss naming the first row whose value is outside the enum, else the
// column. Columns the table lacks are left to the read. O(rows) for an integer column, O(1)
// otherwise.
template <typename E>
absl::Status CheckEnumColumnType(hid_t group, const char* table, const char* column,
                                 const std::string& where) {
  const std::string table_where = absl::StrCat(where, ": dataset '", table, "'");
  const htri_t exists = H5Lexists(group, table, H5P_DEFAULT);
  if (exists <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return absl::OkStatus();  // The read reports it.
  }
  MESHSIM_ASSIGN_OR_RETURN(
      Handle dataset, Checked(H5Dopen2(group, table, H5P_DEFAULT), H5Dclose, table_where, "opening",
                              absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Handle type, Checked(H5Dget_type(dataset.get()), H5Tclose, table_where,
                                                "its type", absl::StatusCode::kDataLoss));
  if (H5Tget_class(type.get()) != H5T_COMPOUND) return absl::OkStatus();  // The read reports it.
  const int index = H5Tget_member_index(type.get(), column);
  H5Eclear2(H5E_DEFAULT);
  if (index < 0 || H5Tget_member_class(type.get(), static_cast<unsigned>(index)) == H5T_ENUM) {
    return absl::OkStatus();
  }
  MESHSIM_ASSIGN_OR_RETURN(Handle space, Checked(H5Dget_space(dataset.get()), H5Sclose, table_where,
                                                 "its shape", absl::StatusCode::kDataLoss));
  const hssize_t rows = H5Sget_simple_extent_npoints(space.get());
  // In blocks, so that a column of millions of rows costs a block of memory.
  constexpr hsize_t kBlock = 1 << 16;
  for (hsize_t first = 0; first < static_cast<hsize_t>(std::max<hssize_t>(rows, 0));
       first += kBlock) {
    const hsize_t count = std::min<hsize_t>(kBlock, static_cast<hsize_t>(rows) - first);
    MESHSIM_ASSIGN_OR_RETURN(std::vector<StoredEnum> values,
                             ReadStoredEnums(dataset.get(), column, first, count, table_where));
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].value < 0 || values[i].value >= EnumCount<E>()) {
        return absl::DataLossError(absl::StrCat(
            table_where, ": row ", first + i, ": ", column, " is ", values[i].value,
            " (stored as an integer, not as meshsim's enum), which this meshsim does not know "
            "(allowed: ",
            EnumValues<E>(), "); the file is damaged or was not written by meshsim"));
      }
    }
  }
  return absl::DataLossError(absl::StrCat(
      table_where, ": column ", column, " is stored as integers, not as meshsim's enum (",
      EnumValues<E>(), "); the file is damaged or was not written by meshsim"));
}

// Reads compound table `name` of `Row`s whose `text` column HDF5 allocates, appends
// `convert(row, text)` to `out` for each (the text as a string, "" when null), frees every string
// (also when the read fails), then checks the enum `enum_of(out[i])` of each record.
template <typename Row, typename Out, typename Convert, typename EnumOf>
absl::Status ReadRowsWithText(hid_t group, const char* name, hid_t memory_type,
                              const char* Row::*text, Convert convert, EnumOf enum_of,
                              const char* enum_column, std::vector<Out>& out,
                              const std::string& where) {
  std::vector<Row> rows;
  const absl::Status status = ReadTable(group, name, H5T_COMPOUND, memory_type, &rows, where);
  out.reserve(rows.size());
  for (Row& row : rows) {
    if (status.ok()) out.push_back(convert(row, row.*text != nullptr ? row.*text : ""));
    H5free_memory(const_cast<char*>(row.*text));
  }
  MESHSIM_RETURN_IF_ERROR(status);
  for (size_t i = 0; i < out.size(); ++i) {
    MESHSIM_RETURN_IF_ERROR(CheckEnum(enum_of(out[i]), group, name, i, enum_column, where));
  }
  return absl::OkStatus();
}

// Reads the config and metrics groups of run group `group` into `run`.
absl::Status ReadConfigAndMetrics(hid_t group, const Types& types, RunRecord& run,
                                  const std::string& where) {
  {
    const std::string config_where = absl::StrCat(where, ": config");
    MESHSIM_ASSIGN_OR_RETURN(Handle config, OpenGroup(group, "config", where));
    MESHSIM_ASSIGN_OR_RETURN(std::vector<std::string> keys,
                             AttributeNames(config.get(), config_where));
    for (std::string& key : keys) {
      MESHSIM_ASSIGN_OR_RETURN(std::string value,
                               ReadConfigAttribute(config.get(), key, types, config_where));
      run.config.emplace_back(std::move(key), std::move(value));
    }
  }
  {
    const std::string metrics_where = absl::StrCat(where, ": metrics");
    MESHSIM_ASSIGN_OR_RETURN(Handle metrics, OpenGroup(group, "metrics", where));
    MESHSIM_ASSIGN_OR_RETURN(std::vector<std::string> keys,
                             AttributeNames(metrics.get(), metrics_where));
    for (std::string& key : keys) {
      MESHSIM_ASSIGN_OR_RETURN(double value,
                               ReadDoubleAttribute(metrics.get(), key, metrics_where));
      run.metrics.emplace_back(std::move(key), value);
    }
  }
  return absl::OkStatus();
}

// Whether run group `group` holds its timeline, edges and counters: its `has_timeline` attribute,
// or true when it has none (version-1 files always hold them).
absl::StatusOr<bool> HasTimeline(hid_t group, const std::string& where) {
  const htri_t exists = H5Aexists(group, "has_timeline");
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(exists, where, "attribute 'has_timeline'", absl::StatusCode::kDataLoss));
  if (exists == 0) return true;
  MESHSIM_ASSIGN_OR_RETURN(int64_t value, ReadIntAttribute(group, "has_timeline", where));
  if (value != 0 && value != 1) {
    return absl::DataLossError(
        absl::StrCat(where, ": attribute 'has_timeline' is ", value, ", expected 0 or 1"));
  }
  return value == 1;
}

// Reads run group `group` into `run` (all but its name); `*has_timeline` (if given) receives
// whether the group holds its timeline, edges and counters.
absl::Status ReadRunGroup(hid_t group, RunRecord& run, const std::string& where,
                          bool* has_timeline_out = nullptr) {
  MESHSIM_ASSIGN_OR_RETURN(Types types, MakeTypes(where));
  MESHSIM_ASSIGN_OR_RETURN(int64_t chips, ReadIntAttribute(group, "chips", where));
  if (chips < 0 || chips > kMaxArchiveChips) {
    return absl::DataLossError(
        absl::StrCat(where, ": attribute 'chips' is ", chips, ", outside 0 to ", kMaxArchiveChips));
  }
  run.chips = static_cast<int>(chips);
  MESHSIM_ASSIGN_OR_RETURN(const bool has_timeline, HasTimeline(group, where));
  if (has_timeline_out != nullptr) *has_timeline_out = has_timeline;
  const htri_t has_error = H5Aexists(group, "error");
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(has_error, where, "attribute 'error'", absl::StatusCode::kDataLoss));
  if (has_error > 0) {
    MESHSIM_ASSIGN_OR_RETURN(run.error, ReadStringAttribute(group, "error", types, where));
  }
  MESHSIM_RETURN_IF_ERROR(ReadConfigAndMetrics(group, types, run, where));
  MESHSIM_RETURN_IF_ERROR(ReadStringTable(group, "names", types, &run.names, where));
  if (has_timeline) {
    MESHSIM_RETURN_IF_ERROR(
        CheckEnumColumnType<core::UnitKind>(group, "timeline", "unit_kind", where));
    MESHSIM_RETURN_IF_ERROR(CheckEnumColumnType<core::OpKind>(group, "timeline", "op_kind", where));
    MESHSIM_RETURN_IF_ERROR(
        CheckEnumColumnType<core::CollectiveKind>(group, "timeline", "collective", where));
    MESHSIM_RETURN_IF_ERROR(CheckEnumColumnType<core::Phase>(group, "timeline", "phase", where));
    MESHSIM_RETURN_IF_ERROR(CheckEnumColumnType<core::Pass>(group, "timeline", "pass", where));
    MESHSIM_ASSIGN_OR_RETURN(
        TableType type, MakeTableType(TimelineColumns(types), sizeof(core::TimelineRow), where));
    MESHSIM_RETURN_IF_ERROR(
        ReadTable(group, "timeline", H5T_COMPOUND, type.memory.get(), &run.timeline, where));
    const std::string timeline_where = absl::StrCat(where, ": dataset 'timeline'");
    for (size_t i = 0; i < run.timeline.size(); ++i) {
      const core::TimelineRow& row = run.timeline[i];
      // Ids index other tables (a chip id sizes the trace's process list): check them like
      // user input. Times round-trip whatever they are; readers tolerate any.
      if ((row.chip.valid() && row.chip.value() >= static_cast<uint32_t>(kMaxArchiveChips)) ||
          (row.name.valid() && row.name.value() >= run.names.size())) {
        return absl::DataLossError(absl::StrCat(timeline_where, ": row ", i,
                                                ": chip or name out of range (chip < 2^20, "
                                                "name < the number of names)"));
      }
      MESHSIM_RETURN_IF_ERROR(CheckEnum(row.unit_kind, group, "timeline", i, "unit_kind", where));
      MESHSIM_RETURN_IF_ERROR(CheckEnum(row.kind, group, "timeline", i, "op_kind", where));
      MESHSIM_RETURN_IF_ERROR(CheckEnum(row.collective, group, "timeline", i, "collective", where));
      MESHSIM_RETURN_IF_ERROR(CheckEnum(row.phase, group, "timeline", i, "phase", where));
      MESHSIM_RETURN_IF_ERROR(CheckEnum(row.pass, group, "timeline", i, "pass", where));
    }
  }
  if (has_timeline) {
    MESHSIM_ASSIGN_OR_RETURN(TableType type, MakeTableType(EdgeColumns(), sizeof(DepEdge), where));
    MESHSIM_RETURN_IF_ERROR(
        ReadTable(group, "edges", H5T_COMPOUND, type.memory.get(), &run.edges, where));
  }
  {
    MESHSIM_RETURN_IF_ERROR(
        CheckEnumColumnType<core::ResourceKind>(group, "resources", "kind", where));
    MESHSIM_ASSIGN_OR_RETURN(TableType type,
                             MakeTableType(ResourceColumns(types), sizeof(ResourceRow), where));
    MESHSIM_RETURN_IF_ERROR(ReadRowsWithText(
        group, "resources", type.memory.get(), &ResourceRow::name,
        [](const ResourceRow& row, const char* name) {
          return core::ResourceInfo{.name = name,
                                    .kind = row.kind,
                                    .chip = row.chip,
                                    .peer = row.peer,
                                    .capacity_bytes_per_s = row.capacity_bytes_per_s,
                                    .bytes = row.bytes,
                                    .busy = row.busy};
        },
        [](const core::ResourceInfo& r) { return r.kind; }, "kind", run.resources, where));
  }
  // `gemms` was added within schema 3: a file written before it has none, and its spans are
  // derived from the timeline when a report needs them.
  const htri_t has_gemms = H5Lexists(group, "gemms", H5P_DEFAULT);
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(has_gemms, where, "dataset 'gemms'", absl::StatusCode::kDataLoss));
  if (has_gemms > 0) {
    MESHSIM_RETURN_IF_ERROR(CheckEnumColumnType<core::Pass>(group, "gemms", "pass", where));
    MESHSIM_ASSIGN_OR_RETURN(TableType type,
                             MakeTableType(GemmColumns(types), sizeof(GemmRow), where));
    MESHSIM_RETURN_IF_ERROR(ReadRowsWithText(
        group, "gemms", type.memory.get(), &GemmRow::label,
        [](const GemmRow& row, const char* label) {
          return GemmSpan{.label = label,
                          .layer = row.layer,
                          .pass = row.pass,
                          .start = row.start,
                          .end = row.end,
                          .flops = row.flops,
                          .share = row.share};
        },
        [](const GemmSpan& g) { return g.pass; }, "pass", run.gemms, where));
  }
  if (has_timeline) {
    MESHSIM_ASSIGN_OR_RETURN(TableType type,
                             MakeTableType(CounterColumns(), sizeof(core::CounterSample), where));
    MESHSIM_RETURN_IF_ERROR(
        ReadTable(group, "counters", H5T_COMPOUND, type.memory.get(), &run.counters, where));
    for (size_t i = 0; i < run.counters.size(); ++i) {
      const core::CounterSample& c = run.counters[i];
      if (c.resource.valid() && c.resource.value() >= run.resources.size()) {
        return absl::DataLossError(
            absl::StrCat(where, ": dataset 'counters': row ", i, ": resource out of range"));
      }
    }
  }
  return absl::OkStatus();
}

// Reads /summary of `archive`, the open file `path`; NotFound when it has none.
absl::StatusOr<SummaryTable> ReadSummaryOf(const Archive& archive, const std::string& path) {
  const std::string where = absl::StrCat("cannot read '", path, "': summary");
  const htri_t exists = H5Lexists(archive.file.get(), "summary", H5P_DEFAULT);
  if (exists == 0) {
    return absl::NotFoundError(
        absl::StrCat("no summary in '", path, "' (schema version ", archive.schema_version, ")"));
  }
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(exists, where, "group '/summary'", absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(
      Handle group, Checked(H5Gopen2(archive.file.get(), "summary", H5P_DEFAULT), H5Gclose, where,
                            "group '/summary'", absl::StatusCode::kDataLoss));
  MESHSIM_ASSIGN_OR_RETURN(Types types, MakeTypes(where));
  SummaryTable table;
  MESHSIM_ASSIGN_OR_RETURN(table.keys, ReadStringListAttribute(group.get(), "keys", types, where));
  MESHSIM_ASSIGN_OR_RETURN(table.metrics,
                           ReadStringListAttribute(group.get(), "metrics", types, where));
  MESHSIM_RETURN_IF_ERROR(ReadStringTable(group.get(), "runs", types, &table.runs, where));
  const size_t rows = table.runs.size();
  if (archive.schema_version >= 4) {
    // One typed column per key, read back as the text it was written from.
    MESHSIM_ASSIGN_OR_RETURN(Handle columns, OpenGroup(group.get(), "key_columns", where));
    for (const std::string& key : table.keys) {
      const std::string what = absl::StrCat("key column '", key, "'");
      H5T_class_t type_class = H5T_NO_CLASS;
      {
        MESHSIM_ASSIGN_OR_RETURN(
            Handle dataset, Checked(H5Dopen2(columns.get(), key.c_str(), H5P_DEFAULT), H5Dclose,
                                    where, what, absl::StatusCode::kDataLoss));
        MESHSIM_ASSIGN_OR_RETURN(Handle type, Checked(H5Dget_type(dataset.get()), H5Tclose, where,
                                                      what, absl::StatusCode::kDataLoss));
        type_class = H5Tget_class(type.get());
      }
      std::vector<std::string> column;
      if (type_class == H5T_INTEGER) {
        std::vector<int64_t> values;
        MESHSIM_RETURN_IF_ERROR(
            ReadTable(columns.get(), key.c_str(), H5T_INTEGER, H5T_NATIVE_INT64, &values, where));
        for (int64_t v : values) column.push_back(absl::StrCat(v));
      } else if (type_class == H5T_FLOAT) {
        std::vector<double> values;
        MESHSIM_RETURN_IF_ERROR(
            ReadTable(columns.get(), key.c_str(), H5T_FLOAT, H5T_NATIVE_DOUBLE, &values, where));
        for (double v : values) column.push_back(core::FormatDouble(v));
      } else {
        MESHSIM_RETURN_IF_ERROR(ReadStringTable(columns.get(), key.c_str(), types, &column, where));
      }
      if (column.size() != rows) {
        return absl::DataLossError(
            absl::StrCat(where, ": ", what, " has ", column.size(), " rows for ", rows, " runs"));
      }
      table.key_values.push_back(std::move(column));
    }
  } else {
    // Versions 2 and 3: one text matrix, a row per run.
    std::vector<std::string> key_values;
    size_t key_cols = 0;
    MESHSIM_RETURN_IF_ERROR(
        ReadStringTable(group.get(), "key_values", types, &key_values, where, &key_cols));
    if (key_cols != table.keys.size() || key_values.size() != rows * key_cols) {
      return absl::DataLossError(
          absl::StrCat(where, ": its datasets and column lists disagree in size"));
    }
    table.key_values.assign(key_cols, std::vector<std::string>(rows));
    for (size_t r = 0; r < rows; ++r) {
      for (size_t k = 0; k < key_cols; ++k) {
        table.key_values[k][r] = std::move(key_values[r * key_cols + k]);
      }
    }
  }
  std::vector<double> metric_values;
  size_t metric_cols = 0;
  MESHSIM_RETURN_IF_ERROR(ReadTable(group.get(), "metric_values", H5T_FLOAT, H5T_NATIVE_DOUBLE,
                                    &metric_values, where, &metric_cols));
  if (metric_cols != table.metrics.size() || metric_values.size() != rows * metric_cols) {
    return absl::DataLossError(
        absl::StrCat(where, ": its datasets and column lists disagree in size"));
  }
  // On disk a row is a run; in memory a vector is a column.
  table.metric_values.assign(metric_cols, std::vector<double>(rows));
  for (size_t r = 0; r < rows; ++r) {
    for (size_t m = 0; m < metric_cols; ++m) {
      table.metric_values[m][r] = metric_values[r * metric_cols + m];
    }
  }
  return table;
}

// Reading errors that come from the file's contents (DataLoss, or HDF5 failing inside a read)
// are bad input: exit 2 with "damaged" in the message.
absl::Status AsDamaged(const absl::Status& s) {
  if (s.code() != absl::StatusCode::kDataLoss && s.code() != absl::StatusCode::kInternal) return s;
  // Only errors of reading an input; a failure to write the output stays what it is.
  if (!absl::StartsWith(s.message(), "cannot read") &&
      !absl::StartsWith(s.message(), "cannot open")) {
    return s;
  }
  if (absl::StrContains(s.message(), "damaged")) return absl::DataLossError(s.message());
  return absl::DataLossError(absl::StrCat("damaged or not a meshsim archive: ", s.message()));
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

absl::StatusOr<std::vector<std::string>> ListRuns(const std::string& path) {
  MESHSIM_RETURN_IF_ERROR(ProbeUntrustedArchive(path, [&] { (void)ListRuns(path); }));
  ErrorSilencer silencer;
  absl::StatusOr<Archive> archive = OpenArchive(path);
  if (!archive.ok()) return AsDamaged(archive.status());
  return std::move(archive->run_names);
}

static absl::StatusOr<RunRecord> ReadRunUnchecked(const std::string& path,
                                                  const std::string& run_name);

absl::StatusOr<RunRecord> ReadRun(const std::string& path, const std::string& run_name) {
  MESHSIM_RETURN_IF_ERROR(
      ProbeUntrustedArchive(path, [&] { (void)ReadRunUnchecked(path, run_name); }));
  absl::StatusOr<RunRecord> run = ReadRunUnchecked(path, run_name);
  if (!run.ok()) return AsDamaged(run.status());
  return run;
}

static absl::StatusOr<RunRecord> ReadRunUnchecked(const std::string& path,
                                                  const std::string& run_name) {
  ErrorSilencer silencer;
  MESHSIM_ASSIGN_OR_RETURN(Archive archive, OpenArchive(path));
  std::string name = run_name;
  if (name.empty()) {
    if (archive.run_names.empty()) {
      return absl::NotFoundError(absl::StrCat("no runs in '", path, "'"));
    }
    name = archive.run_names.front();
  } else if (std::find(archive.run_names.begin(), archive.run_names.end(), name) ==
             archive.run_names.end()) {
    return absl::NotFoundError(absl::StrCat(
        "run '", name, "' not found in '", path, "' (runs: ",
        archive.run_names.empty() ? std::string("none") : absl::StrJoin(archive.run_names, ", "),
        ")"));
  }
  const std::string where = absl::StrCat("cannot read '", path, "': run '", name, "'");
  MESHSIM_ASSIGN_OR_RETURN(
      Handle group, Checked(H5Gopen2(archive.runs.get(), name.c_str(), H5P_DEFAULT), H5Gclose,
                            where, "opening the group", absl::StatusCode::kDataLoss));
  RunRecord run;
  run.name = name;
  MESHSIM_RETURN_IF_ERROR(ReadRunGroup(group.get(), run, where));
  return run;
}

absl::StatusOr<SummaryTable> ReadSummary(const std::string& path) {
  MESHSIM_RETURN_IF_ERROR(ProbeUntrustedArchive(path, [&] { (void)ReadSummary(path); }));
  ErrorSilencer silencer;
  absl::StatusOr<Archive> archive = OpenArchive(path);
  if (!archive.ok()) return AsDamaged(archive.status());
  absl::StatusOr<SummaryTable> table = ReadSummaryOf(*archive, path);
  if (!table.ok()) return AsDamaged(table.status());
  return table;
}

void QuietHdf5() {
  static const bool done = [] {
    // Never let the library print its error stack, and never run its exit hook: after a failed
    // write (a full disk) or a damaged input, closing the library at exit crashes or prints
    // "infinite loop closing library". Every handle is closed by its owner before exit anyway.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

}  // namespace meshsim::sim
