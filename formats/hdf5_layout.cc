// The shared pieces of the HDF5 archive (hdf5_layout.h) and QuietHdf5 (hdf5_schema.h).
#include "formats/hdf5_layout.h"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "formats/hdf5_schema.h"

namespace meshsim::formats::hdf5_layout {
namespace {

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

}  // namespace

herr_t FirstErrorDescription(unsigned /*n*/, const H5E_error2_t* error, void* data) {
  auto* message = static_cast<std::string*>(data);
  if (message->empty() && error->desc != nullptr && error->desc[0] != '\0') *message = error->desc;
  return 0;
}

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

absl::StatusOr<Handle> Checked(hid_t id, Handle::Closer closer, const std::string& where,
                               const std::string& what, absl::StatusCode code) {
  if (id < 0) return HdfError(code, where, what);
  return Handle(id, closer);
}

absl::Status CheckedCall(herr_t result, const std::string& where, const std::string& what,
                         absl::StatusCode code) {
  if (result < 0) return HdfError(code, where, what);
  return absl::OkStatus();
}

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

std::string ErrnoMessage(int error) { return std::generic_category().message(error); }

}  // namespace meshsim::formats::hdf5_layout

namespace meshsim::formats {

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

}  // namespace meshsim::formats
