#include "sim/hdf5_io.h"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/time.h"
#include "core/timeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/run_record.h"

namespace meshsim::sim {
namespace {

namespace fs = std::filesystem;
using core::ChipId;
using core::CollectiveKind;
using core::NameId;
using core::OpId;
using core::OpKind;
using core::Pass;
using core::Phase;
using core::ResourceId;
using core::ResourceKind;
using core::Time;
using core::TimelineRow;
using core::UnitKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

core::ResourceInfo Resource(const std::string& name, ResourceKind kind, ChipId chip, ChipId peer,
                            double capacity, double bytes, Time busy) {
  core::ResourceInfo r;
  r.name = name;
  r.kind = kind;
  r.chip = chip;
  r.peer = peer;
  r.capacity_bytes_per_s = capacity;
  r.bytes = bytes;
  r.busy = busy;
  return r;
}

// Rows covering every value of every enum, plus invalid ids and extreme values.
RunRecord MakeRecord(const std::string& name) {
  RunRecord run;
  run.name = name;
  run.chips = 16;
  // More than 8 entries, so HDF5 moves the attributes to dense storage; not in name order.
  run.config = {{"system", "tpuv4"},
                {"mesh", "4x4"},
                {"algorithm", "meshslice"},
                {"bytes", "1048576"},
                {"empty", ""},
                {"a.b.c", "dotted key"},
                {"with space", "x y"},
                {"unicode", "λ → µs"},
                {"link_bw", "5e10"},
                {"hbm_bw", "1.2e12"},
                {"seed", "42"},
                {"zz", "last but one"},
                {"long", std::string(3000, 'v')},
                {"path/like", "slash"},
                {".", "dot"}};
  run.metrics = {{"makespan_s", 1.25e-3},
                 {"aa_utilization", 0.5},
                 {"flops", 3.5e15},
                 {"negative", -2.0},
                 {"inf", std::numeric_limits<double>::infinity()},
                 {"tiny", 4.9e-324}};
  run.names = {"qkv.fwd.gemm", "", "ag.x", "名前"};

  for (int i = 0; i < 12; ++i) {
    TimelineRow row;
    row.start = Time::Picoseconds(int64_t{1000} * i);
    row.end = Time::Picoseconds(int64_t{1000} * i + 999);
    row.bytes = int64_t{1} << (20 + i);
    row.flops = 1.5 * i;
    row.op = OpId(i);
    row.chip = ChipId(i % 16);
    row.name = NameId(i % 4);
    row.layer = i % 3 - 1;
    row.slice = i % 5 - 1;
    row.kind = static_cast<OpKind>(i % core::kNumOpKinds);
    row.phase = static_cast<Phase>(i % 5);
    row.pass = static_cast<Pass>(i % 4);
    row.unit_kind = static_cast<UnitKind>(i % 5);
    row.unit_index = static_cast<uint16_t>(i * 7);
    row.collective = static_cast<CollectiveKind>(i % 8);
    run.timeline.push_back(row);
  }
  TimelineRow invalid;  // All ids invalid, every other field at its default.
  run.timeline.push_back(invalid);
  TimelineRow extreme;
  extreme.start = Time::Picoseconds(-5);
  extreme.end = Time::Max();
  extreme.bytes = std::numeric_limits<int64_t>::max();
  extreme.flops = 1e300;
  extreme.op = OpId((1u << 31) - 1);  // The largest id an int32 column holds.
  extreme.chip = ChipId(0);
  extreme.layer = std::numeric_limits<int32_t>::max();
  extreme.slice = std::numeric_limits<int32_t>::min();
  extreme.unit_index = 65535;
  extreme.kind = OpKind::kCollective;
  extreme.collective = CollectiveKind::kAllToAll;
  run.timeline.push_back(extreme);

  run.edges = {{OpId(0), OpId(1)}, {OpId(1), OpId(11)}, {OpId(5), OpId::Invalid()}};
  run.resources = {
      Resource("chip0.hbm", ResourceKind::kHbm, ChipId(0), ChipId::Invalid(), 1.2e12, 4096,
               Time::Nanoseconds(7)),
      Resource("link 3->4", ResourceKind::kLink, ChipId(3), ChipId(4), 5e10, 1e9,
               Time::Microseconds(3)),
      Resource("chip1.dma", ResourceKind::kDma, ChipId(1), ChipId::Invalid(), 0, 0, Time::Zero()),
      Resource("", ResourceKind::kOther, ChipId::Invalid(), ChipId::Invalid(), 0, 0, Time::Zero()),
  };
  run.counters = {{Time::Zero(), ResourceId(0), 1e12},
                  {Time::Nanoseconds(5), ResourceId(1), 2.5e10},
                  {Time::Nanoseconds(9), ResourceId(1), 0},
                  {Time::Nanoseconds(9), ResourceId::Invalid(), 3}};
  return run;
}

void ExpectSameRow(const TimelineRow& a, const TimelineRow& b, size_t i) {
  SCOPED_TRACE(testing::Message() << "timeline row " << i);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.chip, b.chip);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.layer, b.layer);
  EXPECT_EQ(a.slice, b.slice);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.pass, b.pass);
  EXPECT_EQ(a.unit_kind, b.unit_kind);
  EXPECT_EQ(a.unit_index, b.unit_index);
  EXPECT_EQ(a.collective, b.collective);
}

void ExpectSameRecord(const RunRecord& a, const RunRecord& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.chips, b.chips);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.metrics, b.metrics);
  EXPECT_EQ(a.names, b.names);
  ASSERT_EQ(a.timeline.size(), b.timeline.size());
  for (size_t i = 0; i < a.timeline.size(); ++i) ExpectSameRow(a.timeline[i], b.timeline[i], i);
  ASSERT_EQ(a.edges.size(), b.edges.size());
  for (size_t i = 0; i < a.edges.size(); ++i) {
    EXPECT_EQ(a.edges[i].from, b.edges[i].from) << "edge " << i;
    EXPECT_EQ(a.edges[i].to, b.edges[i].to) << "edge " << i;
  }
  ASSERT_EQ(a.resources.size(), b.resources.size());
  for (size_t i = 0; i < a.resources.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "resource " << i);
    EXPECT_EQ(a.resources[i].name, b.resources[i].name);
    EXPECT_EQ(a.resources[i].kind, b.resources[i].kind);
    EXPECT_EQ(a.resources[i].chip, b.resources[i].chip);
    EXPECT_EQ(a.resources[i].peer, b.resources[i].peer);
    EXPECT_EQ(a.resources[i].capacity_bytes_per_s, b.resources[i].capacity_bytes_per_s);
    EXPECT_EQ(a.resources[i].bytes, b.resources[i].bytes);
    EXPECT_EQ(a.resources[i].busy, b.resources[i].busy);
  }
  ASSERT_EQ(a.counters.size(), b.counters.size());
  for (size_t i = 0; i < a.counters.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "counter " << i);
    EXPECT_EQ(a.counters[i].time, b.counters[i].time);
    EXPECT_EQ(a.counters[i].resource, b.counters[i].resource);
    EXPECT_EQ(a.counters[i].rate_bytes_per_s, b.counters[i].rate_bytes_per_s);
  }
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class Hdf5IoTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) /
           ("hdf5_io_test_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    open_objects_ = OpenObjects();
  }
  void TearDown() override {
    EXPECT_EQ(OpenObjects(), open_objects_) << "HDF5 files, groups, datasets or attributes leaked";
    fs::remove_all(dir_);
  }

  // Number of open HDF5 files and objects in them, over all files.
  static ssize_t OpenObjects() { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

  std::string Path(const std::string& file) const { return (dir_ / file).string(); }

  // Names of the files in the test directory.
  std::vector<std::string> Files() const {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    return files;
  }

  fs::path dir_;
  ssize_t open_objects_ = 0;
};

TEST_F(Hdf5IoTest, RoundTripsEveryField) {
  const RunRecord run = MakeRecord("main");
  const std::string path = Path("out.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "0.1.0-test").ok());
  EXPECT_THAT(Files(), ElementsAre("out.h5"));  // No temporary file left behind.

  absl::StatusOr<RunRecord> back = ReadRun(path, "main");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameRecord(run, *back);
  EXPECT_FALSE(back->timeline[12].op.valid());
  EXPECT_FALSE(back->timeline[12].chip.valid());
  EXPECT_FALSE(back->timeline[12].name.valid());
  EXPECT_FALSE(back->edges[2].to.valid());
  EXPECT_FALSE(back->resources[2].peer.valid());
  EXPECT_FALSE(back->counters[3].resource.valid());
  EXPECT_EQ(back->Metric("makespan_s"), 1.25e-3);

  absl::StatusOr<RunRecord> first = ReadRun(path);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->name, "main");

  // On disk, an invalid id is -1 in a signed column (read here without meshsim's reader).
  struct RawEdge {
    int32_t from, to;
  };
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t dataset = H5Dopen2(file, "/runs/main/edges", H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(RawEdge));
  H5Tinsert(type, "from", HOFFSET(RawEdge, from), H5T_NATIVE_INT32);
  H5Tinsert(type, "to", HOFFSET(RawEdge, to), H5T_NATIVE_INT32);
  std::vector<RawEdge> raw(run.edges.size());
  EXPECT_GE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  EXPECT_EQ(raw[2].from, 5);
  EXPECT_EQ(raw[2].to, -1);
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
}

TEST_F(Hdf5IoTest, RoundTripsAnEmptyRun) {
  RunRecord run;
  run.name = "empty";
  const std::string path = Path("empty.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  absl::StatusOr<RunRecord> back = ReadRun(path);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameRecord(run, *back);
}

TEST_F(Hdf5IoTest, RoundTripsALargeChunkedTimeline) {
  RunRecord run;
  run.name = "big";
  run.chips = 256;
  for (int i = 0; i < 100'000; ++i) {
    TimelineRow row;
    row.start = Time::Picoseconds(int64_t{i} * 3);
    row.end = row.start + Time::Picoseconds(2);
    row.op = OpId(i / 4);
    row.chip = ChipId(i % 256);
    row.name = i % 3 == 0 ? NameId::Invalid() : NameId(0);
    row.kind = static_cast<OpKind>(i % core::kNumOpKinds);
    row.bytes = i;
    run.timeline.push_back(row);
  }
  run.names = {"x"};
  const std::string path = Path("big.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  absl::StatusOr<RunRecord> back = ReadRun(path, "big");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->timeline.size(), run.timeline.size());
  for (size_t i = 0; i < run.timeline.size(); i += 997) {
    ExpectSameRow(run.timeline[i], back->timeline[i], i);
  }
  ExpectSameRow(run.timeline.back(), back->timeline.back(), run.timeline.size() - 1);
  // Compressed: well below the 59 bytes per row of the raw table.
  EXPECT_LT(fs::file_size(path), 59u * run.timeline.size() / 2);
}

TEST_F(Hdf5IoTest, TwoRunsInOneFileKeepTheirOrder) {
  const RunRecord zeta = MakeRecord("zeta");
  RunRecord alpha = MakeRecord("alpha");
  alpha.chips = 4;
  alpha.timeline.resize(3);
  alpha.metrics = {{"makespan_s", 2.0}};
  const std::string path = Path("two.h5");
  ASSERT_TRUE(WriteRuns(path, {&zeta, &alpha}, "v").ok());

  absl::StatusOr<std::vector<std::string>> runs = ListRuns(path);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_THAT(*runs, ElementsAre("zeta", "alpha"));

  absl::StatusOr<RunRecord> a = ReadRun(path, "alpha");
  ASSERT_TRUE(a.ok()) << a.status();
  ExpectSameRecord(alpha, *a);
  absl::StatusOr<RunRecord> z = ReadRun(path, "zeta");
  ASSERT_TRUE(z.ok()) << z.status();
  ExpectSameRecord(zeta, *z);
  absl::StatusOr<RunRecord> first = ReadRun(path, "");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->name, "zeta");
}

TEST_F(Hdf5IoTest, MissingRunIsNotFoundAndListsTheRuns) {
  const RunRecord a = MakeRecord("a");
  const RunRecord b = MakeRecord("b");
  const std::string path = Path("x.h5");
  ASSERT_TRUE(WriteRuns(path, {&a, &b}, "v").ok());
  absl::StatusOr<RunRecord> run = ReadRun(path, "foo");
  EXPECT_EQ(run.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(run.status().message(), "run 'foo' not found in '" + path + "' (runs: a, b)");
}

TEST_F(Hdf5IoTest, FileWithoutRuns) {
  const std::string path = Path("none.h5");
  ASSERT_TRUE(WriteRuns(path, {}, "v").ok());
  absl::StatusOr<std::vector<std::string>> runs = ListRuns(path);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_TRUE(runs->empty());
  EXPECT_EQ(ReadRun(path).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ReadRun(path, "x").status().message(), HasSubstr("(runs: none)"));
}

TEST_F(Hdf5IoTest, UnwritablePathFailsAndLeavesNoFile) {
  const RunRecord run = MakeRecord("r");
  const absl::Status status = WriteRuns("/nonexistent-dir/x.h5", {&run}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cannot write '/nonexistent-dir/x.h5'"));
  EXPECT_THAT(status.message(), HasSubstr("No such file or directory"));
  EXPECT_FALSE(fs::exists("/nonexistent-dir/x.h5"));

  // A directory as the destination: written to the temporary file, then the rename fails.
  const std::string dir_path = Path("adir");
  fs::create_directory(dir_path);
  const absl::Status to_dir = WriteRuns(dir_path, {&run}, "v");
  EXPECT_EQ(to_dir.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(to_dir.message(), HasSubstr(dir_path));
  EXPECT_THAT(Files(), ElementsAre("adir"));
}

TEST_F(Hdf5IoTest, FailedWriteLeavesTheDestinationUntouched) {
  const RunRecord good = MakeRecord("good");
  const std::string path = Path("keep.h5");
  ASSERT_TRUE(WriteRuns(path, {&good}, "v").ok());
  const std::string before = ReadBytes(path);

  // Fails halfway through writing the temporary file (the second run has a duplicate key).
  RunRecord bad = MakeRecord("bad");
  bad.config.push_back({"mesh", "8x8"});
  absl::Status status = WriteRuns(path, {&good, &bad}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("duplicate key 'mesh'"));
  EXPECT_THAT(status.message(), HasSubstr("run 'bad'"));
  EXPECT_EQ(ReadBytes(path), before);
  EXPECT_THAT(Files(), ElementsAre("keep.h5"));

  // An id that does not fit the int32 columns fails in HDF5's conversion.
  RunRecord big_id = MakeRecord("big_id");
  big_id.timeline[0].op = OpId(1u << 31);
  status = WriteRuns(path, {&big_id}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("2147483648"));
  EXPECT_EQ(ReadBytes(path), before);
  EXPECT_THAT(Files(), ElementsAre("keep.h5"));

  // Refused before anything is written.
  RunRecord dup = MakeRecord("good");
  EXPECT_EQ(WriteRuns(path, {&good, &dup}, "v").code(), absl::StatusCode::kInvalidArgument);
  RunRecord slash = MakeRecord("a/b");
  EXPECT_THAT(WriteRuns(path, {&slash}, "v").message(), HasSubstr("invalid run name 'a/b'"));
  RunRecord unnamed = MakeRecord("");
  EXPECT_EQ(WriteRuns(path, {&unnamed}, "v").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteRuns(path, {nullptr}, "v").code(), absl::StatusCode::kInvalidArgument);
  RunRecord empty_key = MakeRecord("k");
  empty_key.metrics.push_back({"", 1.0});
  EXPECT_THAT(WriteRuns(path, {&empty_key}, "v").message(), HasSubstr("empty key"));
  EXPECT_EQ(ReadBytes(path), before);
  EXPECT_THAT(Files(), ElementsAre("keep.h5"));

  // Overwriting with a good file works.
  RunRecord other = MakeRecord("other");
  ASSERT_TRUE(WriteRuns(path, {&other}, "v").ok());
  absl::StatusOr<std::vector<std::string>> runs = ListRuns(path);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_THAT(*runs, ElementsAre("other"));
}

TEST_F(Hdf5IoTest, NonHdf5FilesFailCleanly) {
  const std::string text = Path("notes.txt");
  std::ofstream(text) << "just some text\n";
  absl::StatusOr<RunRecord> run = ReadRun(text);
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(run.status().message(), "cannot open '" + text + "': not an HDF5 file");
  EXPECT_EQ(ListRuns(text).status().message(), "cannot open '" + text + "': not an HDF5 file");

  const std::string empty = Path("empty.h5");
  std::ofstream(empty).close();
  EXPECT_EQ(ListRuns(empty).status().code(), absl::StatusCode::kInvalidArgument);

  const std::string missing = Path("missing.h5");
  EXPECT_EQ(ReadRun(missing).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ReadRun(missing).status().message(), HasSubstr(missing));

  EXPECT_EQ(ListRuns(dir_.string()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(Hdf5IoTest, ForeignAndNewerHdf5FilesAreRefused) {
  const std::string foreign = Path("foreign.h5");
  hid_t file = H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5Fclose(file);
  absl::Status status = ListRuns(foreign).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not a meshsim archive"));

  const RunRecord run = MakeRecord("r");
  const std::string newer = Path("newer.h5");
  ASSERT_TRUE(WriteRuns(newer, {&run}, "v").ok());
  file = H5Fopen(newer.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t attr = H5Aopen(file, "schema_version", H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  const int version = kHdf5SchemaVersion + 1;
  EXPECT_GE(H5Awrite(attr, H5T_NATIVE_INT, &version), 0);
  H5Aclose(attr);
  H5Fclose(file);
  status = ReadRun(newer).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("schema version 2"));
}

TEST_F(Hdf5IoTest, DamagedRunIsDataLoss) {
  const RunRecord run = MakeRecord("r");
  const std::string path = Path("damaged.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_GE(H5Ldelete(file, "/runs/r/edges", H5P_DEFAULT), 0);
  H5Fclose(file);
  const absl::Status status = ReadRun(path, "r").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("missing dataset 'edges'"));
}

// Overwrites bytes of row 0 of /runs/<run>/timeline at `offset`, moving raw rows in the file's
// own type so that HDF5 converts (and checks) nothing.
void PatchTimelineRow0(const std::string& path, const std::string& run, size_t offset,
                       const std::vector<unsigned char>& bytes) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t dataset = H5Dopen2(file, ("/runs/" + run + "/timeline").c_str(), H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  hid_t type = H5Dget_type(dataset);
  hid_t space = H5Dget_space(dataset);
  std::vector<unsigned char> raw(H5Tget_size(type) * H5Sget_simple_extent_npoints(space));
  ASSERT_GE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  std::copy(bytes.begin(), bytes.end(), raw.begin() + offset);
  ASSERT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
}

TEST_F(Hdf5IoTest, UnknownEnumValueIsDataLoss) {
  const RunRecord run = MakeRecord("r");
  const std::string path = Path("enum.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  // op_kind follows chip (4 bytes), unit_kind (1) and unit_index (2); 200 names no op kind.
  PatchTimelineRow0(path, "r", 7, {200});
  const absl::Status status = ReadRun(path, "r").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("row 0: op_kind value this meshsim does not know"));
}

TEST_F(Hdf5IoTest, NegativeIdOtherThanMinusOneIsDataLoss) {
  const RunRecord run = MakeRecord("r");
  const std::string path = Path("id.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  PatchTimelineRow0(path, "r", 0, {0xfb, 0xff, 0xff, 0xff});  // chip = -5 (little-endian int32)
  const absl::Status status = ReadRun(path, "r").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("dataset 'timeline': id -5 is out of range"));
}

TEST_F(Hdf5IoTest, H5dumpReadsTheFile) {
  if (std::system("command -v h5dump > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "h5dump is not on PATH (Debian package hdf5-tools)";
  }
  const RunRecord run = MakeRecord("main");
  const std::string path = Path("dump.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "0.1.0").ok());
  const std::string out = Path("dump.txt");
  ASSERT_EQ(std::system(("h5dump -H '" + path + "' > '" + out + "' 2>&1").c_str()), 0)
      << ReadBytes(out);
  const std::string header = ReadBytes(out);
  EXPECT_THAT(header, HasSubstr("schema_version"));
  EXPECT_THAT(header, HasSubstr("DATASET \"timeline\""));
  EXPECT_THAT(header, HasSubstr("\"gemm\""));
  EXPECT_THAT(header, HasSubstr("\"sync\""));
  EXPECT_THAT(header, HasSubstr("\"alltoall\""));
  EXPECT_THAT(header, HasSubstr("\"bwd-weight\""));
}

}  // namespace
}  // namespace meshsim::sim
