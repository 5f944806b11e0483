// Reading an HDF5 archive (hdf5_reader.h): opening and checking it, each run's tables and
// attributes, /summary. Layout shared with the writer: hdf5_layout.h.
#include "formats/hdf5_reader.h"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/params.h"
#include "core/status_macros.h"
#include "core/time.h"
#include "core/timeline.h"
#include "formats/hdf5_layout.h"
#include "formats/hdf5_schema.h"

namespace meshsim::formats::hdf5_layout {

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
template <typename Vector>
absl::Status ReadTable(hid_t loc, const char* name, H5T_class_t type_class, hid_t mem_type,
                       Vector* out, const std::string& where, size_t* cols = nullptr) {
  MESHSIM_ASSIGN_OR_RETURN(Table table, OpenTable(loc, name, type_class, cols != nullptr, where));
  if (cols != nullptr) *cols = table.cols;
  out->assign(table.rows * table.cols, typename Vector::value_type{});
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

// The timeline: enum columns of the expected types, ids in range, enum values known.
absl::Status ReadTimeline(hid_t group, const Types& types, RunRecord& run,
                          const std::string& where) {
  MESHSIM_RETURN_IF_ERROR(
      CheckEnumColumnType<core::UnitKind>(group, "timeline", "unit_kind", where));
  MESHSIM_RETURN_IF_ERROR(CheckEnumColumnType<core::OpKind>(group, "timeline", "op_kind", where));
  MESHSIM_RETURN_IF_ERROR(
      CheckEnumColumnType<core::CollectiveKind>(group, "timeline", "collective", where));
  MESHSIM_RETURN_IF_ERROR(CheckEnumColumnType<core::Phase>(group, "timeline", "phase", where));
  MESHSIM_RETURN_IF_ERROR(CheckEnumColumnType<core::Pass>(group, "timeline", "pass", where));
  MESHSIM_ASSIGN_OR_RETURN(TableType type,
                           MakeTableType(TimelineColumns(types), sizeof(core::TimelineRow), where));
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
  return absl::OkStatus();
}

// The resources with their names and kinds.
absl::Status ReadResources(hid_t group, const Types& types, RunRecord& run,
                           const std::string& where) {
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
  return absl::OkStatus();
}

// The GeMM spans, if the group has them: `gemms` was added within schema 3, so a file written
// before it has none, and its spans are derived from the timeline when a report needs them.
absl::Status ReadGemms(hid_t group, const Types& types, RunRecord& run, const std::string& where) {
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
  return absl::OkStatus();
}

// The counters, with resources in range (the resources are read first).
absl::Status ReadCounters(hid_t group, RunRecord& run, const std::string& where) {
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
  return absl::OkStatus();
}

// Reads run group `group` into `run` (all but its name); `*has_timeline` (if given) receives
// whether the group holds its timeline, edges and counters.
absl::Status ReadRunGroup(hid_t group, RunRecord& run, const std::string& where,
                          bool* has_timeline_out) {
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
  const htri_t has_warnings = H5Aexists(group, "warnings");
  MESHSIM_RETURN_IF_ERROR(
      CheckedCall(has_warnings, where, "attribute 'warnings'", absl::StatusCode::kDataLoss));
  if (has_warnings > 0) {
    std::string lines;
    MESHSIM_ASSIGN_OR_RETURN(lines, ReadStringAttribute(group, "warnings", types, where));
    run.warnings = absl::StrSplit(lines, '\n', absl::SkipEmpty());
  }
  MESHSIM_RETURN_IF_ERROR(ReadConfigAndMetrics(group, types, run, where));
  MESHSIM_RETURN_IF_ERROR(ReadStringTable(group, "names", types, &run.names, where));
  if (has_timeline) {
    MESHSIM_RETURN_IF_ERROR(ReadTimeline(group, types, run, where));
    MESHSIM_ASSIGN_OR_RETURN(TableType type, MakeTableType(EdgeColumns(), sizeof(DepEdge), where));
    MESHSIM_RETURN_IF_ERROR(
        ReadTable(group, "edges", H5T_COMPOUND, type.memory.get(), &run.edges, where));
  }
  MESHSIM_RETURN_IF_ERROR(ReadResources(group, types, run, where));
  MESHSIM_RETURN_IF_ERROR(ReadGemms(group, types, run, where));
  if (has_timeline) MESHSIM_RETURN_IF_ERROR(ReadCounters(group, run, where));
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

}  // namespace meshsim::formats::hdf5_layout

namespace meshsim::formats {

using namespace hdf5_layout;  // NOLINT: the layout's names, in this file only.

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

}  // namespace meshsim::formats
