// The HDF5 archive's layout, shared by the writer (hdf5_writer.cc) and the reader
// (hdf5_reader.cc) and private to formats/ (it includes <hdf5.h>; nothing outside formats/ and
// its tests includes it): owned HDF5 handles and one-line errors, the datatypes and the columns
// of every table, the integrity trailer, and the reading entry points the merge also uses.
// What the file holds is documented in formats/hdf5_schema.h and docs/hdf5.md.
#ifndef MESHSIM_FORMATS_HDF5_LAYOUT_H_
#define MESHSIM_FORMATS_HDF5_LAYOUT_H_

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/status_macros.h"
#include "core/time.h"
#include "core/timeline.h"
#include "formats/run_record.h"

namespace meshsim::formats {
struct SummaryTable;  // formats/hdf5_reader.h
}  // namespace meshsim::formats

namespace meshsim::formats::hdf5_layout {

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

herr_t FirstErrorDescription(unsigned /*n*/, const H5E_error2_t* error, void* data);

// The most specific description on HDF5's error stack, which is then cleared. Must be called
// right after the failing call: every HDF5 API call (closing a handle too) resets the stack.
std::string HdfMessage();

absl::Status HdfError(absl::StatusCode code, const std::string& where, const std::string& what);

// `id` as an owned handle, or an error naming `what` when HDF5 returned a negative id.
absl::StatusOr<Handle> Checked(hid_t id, Handle::Closer closer, const std::string& where,
                               const std::string& what,
                               absl::StatusCode code = absl::StatusCode::kInternal);

absl::Status CheckedCall(herr_t result, const std::string& where, const std::string& what,
                         absl::StatusCode code = absl::StatusCode::kInternal);

// The C library's text for errno value `error`.
std::string ErrnoMessage(int error);

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

absl::StatusOr<Types> MakeTypes(const std::string& where);

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
                                        const std::string& where);

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
                         void* dst, void* user_data);

absl::StatusOr<Handle> MakeTransfer(IdConversion* conversion, const std::string& where);

// Column helpers: an id (int32 on disk, -1 = invalid), a plain integer/float, an enum.
Column IdColumn(const char* name, size_t offset);

std::vector<Column> TimelineColumns(const Types& t);

std::vector<Column> EdgeColumns();

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

std::vector<Column> ResourceColumns(const Types& t);

// GemmSpan holds a std::string, so GeMM spans go through this row (a run has a few dozen).
struct GemmRow {
  const char* label = nullptr;
  int32_t layer = -1;
  core::Pass pass = core::Pass::kNone;
  core::Time start, end, share;
  double flops = 0;
};

static_assert(std::is_standard_layout_v<GemmRow>);

std::vector<Column> GemmColumns(const Types& t);

std::vector<Column> CounterColumns();

// ---------------------------------------------------------------------------------------------
// Integrity trailer. HDF5 checksums most of its metadata, but not the global heap that holds
// variable-length strings, nor raw data: a flipped bit there makes libhdf5 read out of bounds.
// So every archive ends with 16 bytes past HDF5's end of file (which HDF5 and h5py ignore):
// the magic "meshsim#" and a 64-bit hash of every byte before it. Readers check it first.

constexpr char kTrailerMagic[8] = {'m', 'e', 's', 'h', 's', 'i', 'm', '#'};

constexpr size_t kTrailerBytes = 16;

// Hash of the first `n` bytes of the open file `fd`; false on a read error.
bool HashPrefix(int fd, uint64_t n, uint64_t* hash);

// Appends the trailer to the closed file `file_name`.
absl::Status AppendTrailer(const std::string& file_name, const std::string& where);

// Checks the trailer of `path` (open as `fd`). Files without one (written before it existed, or
// by another tool) pass; a trailer whose hash disagrees is damage.
absl::Status VerifyTrailer(int fd, const std::string& where);

// Whether `path` ends with a trailer whose hash matches (a file we can trust libhdf5 with).
bool HasIntactTrailer(const std::string& path);

// ---------------------------------------------------------------------------------------------
// Reading entry points, defined in hdf5_reader.cc and also used by MergeArchives (hdf5_writer.cc).

// True in a probe child (below): it reads without probing again.
inline bool g_in_probe = false;

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
    // What a crashing libhdf5 or the C library prints on its way down ("free(): invalid
    // pointer") is not for the user: the parent reports the crash in one line.
    if (const int null_fd = ::open("/dev/null", O_WRONLY); null_fd >= 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
    }
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

// An open archive: the file and its /runs group, with the run names in order.
struct Archive {
  Handle file;
  Handle runs;
  std::vector<std::string> run_names;
  int schema_version = 0;
};

// Opens the archive at `path`: the OS's message for a missing or unreadable file, then HDF5's;
// InvalidArgument when it is not a meshsim archive or its schema is newer than this meshsim's.
absl::StatusOr<Archive> OpenArchive(const std::string& path);

// Reads run group `group` into `run` (all but its name); `*has_timeline` (if given) receives
// whether the run was stored with its timeline.
absl::Status ReadRunGroup(hid_t group, RunRecord& run, const std::string& where,
                          bool* has_timeline = nullptr);

// Reads /summary of `archive`, the open file `path`; NotFound when it has none.
absl::StatusOr<SummaryTable> ReadSummaryOf(const Archive& archive, const std::string& path);

// Reading errors that come from the file's contents (DataLoss, or HDF5 failing inside a read)
// are bad input: exit 2 with "damaged" in the message.
absl::Status AsDamaged(const absl::Status& s);

}  // namespace meshsim::formats::hdf5_layout

#endif  // MESHSIM_FORMATS_HDF5_LAYOUT_H_
