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
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/time.h"
#include "core/timeline.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_writer.h"
#include "formats/run_record.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#ifdef MESHSIM_HDF5_SLOW_TESTS
#pragma GCC diagnostic ignored "-Wunused-function"  // Helpers of the fast tests.
#endif

namespace meshsim::formats {
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
    row.stage = static_cast<int16_t>(i % 3 - 1);
    row.microbatch = static_cast<int16_t>(i % 4 - 1);
    row.task = static_cast<uint8_t>(i % 3);
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
  extreme.slice = std::numeric_limits<int16_t>::min();
  extreme.stage = std::numeric_limits<int16_t>::max();
  extreme.microbatch = std::numeric_limits<int16_t>::min();
  extreme.task = 255;
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
  run.gemms = {{.label = "qkv.fwd",
                .layer = 0,
                .pass = Pass::kFwd,
                .start = Time::Zero(),
                .end = Time::Microseconds(9),
                .flops = 2.5e12,
                .share = Time::Microseconds(9)},
               {.label = "",
                .layer = -1,
                .pass = Pass::kNone,
                .start = Time::Picoseconds(-5),
                .end = Time::Max(),
                .flops = 1e300,
                .share = Time::Zero()}};
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
  EXPECT_EQ(a.stage, b.stage);
  EXPECT_EQ(a.microbatch, b.microbatch);
  EXPECT_EQ(a.task, b.task);
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
  ASSERT_EQ(a.gemms.size(), b.gemms.size());
  for (size_t i = 0; i < a.gemms.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "gemm " << i);
    EXPECT_EQ(a.gemms[i].label, b.gemms[i].label);
    EXPECT_EQ(a.gemms[i].layer, b.gemms[i].layer);
    EXPECT_EQ(a.gemms[i].pass, b.gemms[i].pass);
    EXPECT_EQ(a.gemms[i].start, b.gemms[i].start);
    EXPECT_EQ(a.gemms[i].end, b.gemms[i].end);
    EXPECT_EQ(a.gemms[i].share, b.gemms[i].share);
    EXPECT_EQ(a.gemms[i].flops, b.gemms[i].flops);
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

// The slow test (the flipped-byte sweep, about a minute) is built alone into sim_hdf5_slow_tests
// (LABELS slow, tests/CMakeLists.txt): this file compiled with MESHSIM_HDF5_SLOW_TESTS.
#ifndef MESHSIM_HDF5_SLOW_TESTS

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

// Archives written before the pipeline columns (stage, microbatch, task) lack them: meshsim reads
// them as -1, -1 and 0. Simulated here by rewriting a fresh archive's timeline without them
// (and without the integrity trailer, as any other writer would leave it).
TEST_F(Hdf5IoTest, ReadsArchivesWithoutThePipelineColumns) {
  const RunRecord run = MakeRecord("old");
  const std::string path = Path("old.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 16);  // The trailer.
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    // The same timeline without the three new columns.
    const hid_t full = H5Dopen2(file, "/runs/old/timeline", H5P_DEFAULT);
    const hid_t file_type = H5Dget_type(full);
    const hid_t space = H5Dget_space(full);
    std::vector<char> bytes(H5Tget_size(file_type) * run.timeline.size());
    ASSERT_GE(H5Dread(full, file_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), 0);
    H5Dclose(full);
    size_t size = 0;
    const hid_t narrow = H5Tcreate(H5T_COMPOUND, H5Tget_size(file_type));
    for (int m = 0; m < H5Tget_nmembers(file_type); ++m) {
      char* name = H5Tget_member_name(file_type, m);
      const std::string n = name;
      H5free_memory(name);
      if (n == "stage" || n == "microbatch" || n == "task") continue;
      const hid_t mt = H5Tget_member_type(file_type, m);
      H5Tinsert(narrow, n.c_str(), H5Tget_member_offset(file_type, m), mt);
      size = std::max(size, H5Tget_member_offset(file_type, m) + H5Tget_size(mt));
      H5Tclose(mt);
    }
    H5Tset_size(narrow, size);
    ASSERT_GE(H5Ldelete(file, "/runs/old/timeline", H5P_DEFAULT), 0);
    const hid_t created = H5Dcreate2(file, "/runs/old/timeline", narrow, space, H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(created, 0);
    // Written through the full file type: libhdf5 drops the members `narrow` lacks.
    ASSERT_GE(H5Dwrite(created, file_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), 0);
    H5Dclose(created);
    H5Tclose(narrow);
    H5Tclose(file_type);
    H5Sclose(space);
    H5Fclose(file);
  }
  const absl::StatusOr<RunRecord> back = ReadRun(path);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->timeline.size(), run.timeline.size());
  for (size_t i = 0; i < run.timeline.size(); ++i) {
    const TimelineRow& r = back->timeline[i];
    EXPECT_EQ(r.stage, -1) << i;
    EXPECT_EQ(r.microbatch, -1) << i;
    EXPECT_EQ(r.task, 0) << i;
    EXPECT_EQ(r.start, run.timeline[i].start) << i;
    EXPECT_EQ(r.slice, run.timeline[i].slice) << i;
  }
}

// Archives written before the `gemms` table have none: the run reads with no GeMM spans, and the
// reports derive them from the timeline (cli/report.cc).
TEST_F(Hdf5IoTest, ReadsArchivesWithoutTheGemmsTable) {
  const RunRecord run = MakeRecord("old");
  const std::string path = Path("old_gemms.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 16);  // The trailer.
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    ASSERT_GE(H5Ldelete(file, "/runs/old/gemms", H5P_DEFAULT), 0);
    H5Fclose(file);
  }
  const absl::StatusOr<RunRecord> back = ReadRun(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->gemms.empty());
  EXPECT_EQ(back->timeline.size(), run.timeline.size());
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
  EXPECT_THAT(status.message(), HasSubstr("schema version " + std::to_string(version)));
}

// Written by HDF5 tools (which drop the trailer), an attribute out of its schema range is
// DataLoss: a `chips` of 2^31 − 1 made `meshsim trace` write process entries without end.
TEST_F(Hdf5IoTest, DoctoredChipsAttributeIsDataLoss) {
  const RunRecord run = MakeRecord("r");
  const std::string path = Path("chips.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  // Replaced rather than rewritten: HDF5 1.10 cannot H5Awrite this creation-ordered attribute.
  ASSERT_GE(H5Adelete_by_name(file, "/runs/r", "chips", H5P_DEFAULT), 0);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate_by_name(file, "/runs/r", "chips", H5T_STD_I32LE, space, H5P_DEFAULT,
                                 H5P_DEFAULT, H5P_DEFAULT);
  H5Sclose(space);
  ASSERT_GE(attr, 0);
  const int32_t chips = std::numeric_limits<int32_t>::max();
  EXPECT_GE(H5Awrite(attr, H5T_NATIVE_INT32, &chips), 0);
  H5Aclose(attr);
  H5Fclose(file);
  const absl::Status status = ReadRun(path, "r").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("'chips' is 2147483647"));
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
  EXPECT_THAT(status.message(),
              HasSubstr("row 0: op_kind is 200, which this meshsim does not know"));
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

// ---------------------------------------------------------------------------------------------
// ArchiveWriter, ReadSummary, MergeArchives.

// A record with everything MakeRecord has, but its own config and metrics.
RunRecord MakeSweepRecord(const std::string& name,
                          std::vector<std::pair<std::string, std::string>> config,
                          std::vector<std::pair<std::string, double>> metrics) {
  RunRecord run = MakeRecord(name);
  run.config = std::move(config);
  run.metrics = std::move(metrics);
  return run;
}

// `run` as it reads back when stored without its timeline.
RunRecord WithoutTimeline(RunRecord run) {
  run.timeline.clear();
  run.edges.clear();
  run.counters.clear();
  return run;
}

std::unique_ptr<ArchiveWriter> CreateWriter(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ArchiveWriter>> writer = ArchiveWriter::Create(path, "v");
  EXPECT_TRUE(writer.ok()) << writer.status();
  return writer.ok() ? std::move(*writer) : nullptr;
}

// Equal, with NaN equal to NaN.
bool SameDouble(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void ExpectSameSummary(const SummaryTable& a, const SummaryTable& b) {
  EXPECT_EQ(a.runs, b.runs);
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.key_values, b.key_values);
  EXPECT_EQ(a.metrics, b.metrics);
  ASSERT_EQ(a.metric_values.size(), b.metric_values.size());
  for (size_t m = 0; m < a.metric_values.size(); ++m) {
    ASSERT_EQ(a.metric_values[m].size(), b.metric_values[m].size()) << "metric " << m;
    for (size_t r = 0; r < a.metric_values[m].size(); ++r) {
      EXPECT_TRUE(SameDouble(a.metric_values[m][r], b.metric_values[m][r]))
          << "metric " << m << " row " << r << ": " << a.metric_values[m][r] << " vs "
          << b.metric_values[m][r];
    }
  }
}

// Every object of the file at `path` that meshsim creates, with its timestamps: all must be 0
// (not stored), so that identical inputs give identical files.
void ExpectNoTimestamps(const std::string& path, const std::vector<std::string>& objects) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const std::string& object : objects) {
    H5O_info_t info;
    ASSERT_GE(H5Oget_info_by_name2(file, object.c_str(), &info, H5O_INFO_TIME, H5P_DEFAULT), 0)
        << object;
    EXPECT_EQ(info.ctime, 0) << path << ": " << object;
    EXPECT_EQ(info.mtime, 0) << path << ": " << object;
  }
  H5Fclose(file);
}

// The integer attribute `name` of `object` in the file at `path`, read without meshsim's reader.
int ReadRawIntAttribute(const std::string& path, const std::string& object,
                        const std::string& name) {
  int value = -100;
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0);
  hid_t attr = H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_GE(attr, 0);
  EXPECT_GE(H5Aread(attr, H5T_NATIVE_INT, &value), 0);
  H5Aclose(attr);
  H5Fclose(file);
  return value;
}

bool LinkExists(const std::string& path, const std::string& object) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0);
  const bool exists = H5Lexists(file, object.c_str(), H5P_DEFAULT) > 0;
  H5Fclose(file);
  return exists;
}

TEST_F(Hdf5IoTest, ArchiveWriterStreamsRunsWithAndWithoutTimeline) {
  const RunRecord a = MakeSweepRecord("a", {{"mesh", "4x4"}, {"seed", "1"}, {"slices", "8"}},
                                      {{"makespan_s", 1.5}, {"flops", 3e15}});
  const RunRecord b = MakeSweepRecord("b", {{"mesh", "8x2"}, {"slices", "4"}},  // No seed.
                                      {{"flops", 2e15}, {"extra", 7}});         // No makespan_s.
  const RunRecord c = MakeSweepRecord("c", {{"seed", "3"}, {"mesh", "2x8"}},
                                      {{"makespan_s", 0.5}, {"flops", 1e15}});
  const std::string path = Path("sweep.h5");

  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(writer->runs_added(), 0);
  ASSERT_TRUE(writer->AddRun(a, /*with_timeline=*/true).ok());
  ASSERT_TRUE(writer->AddRun(b, /*with_timeline=*/false).ok());
  ASSERT_TRUE(writer->AddRun(c, /*with_timeline=*/false).ok());
  EXPECT_EQ(writer->runs_added(), 3);
  // Until Commit only the temporary file exists.
  EXPECT_THAT(Files(), ElementsAre("sweep.h5.tmp." + std::to_string(::getpid())));
  const absl::Status committed = writer->Commit({"mesh", "seed", "absent"});
  ASSERT_TRUE(committed.ok()) << committed;
  writer.reset();  // Destroying a committed writer keeps the file.
  EXPECT_THAT(Files(), ElementsAre("sweep.h5"));

  absl::StatusOr<std::vector<std::string>> runs = ListRuns(path);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_THAT(*runs, ElementsAre("a", "b", "c"));
  absl::StatusOr<RunRecord> back = ReadRun(path, "a");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameRecord(a, *back);
  back = ReadRun(path, "b");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameRecord(WithoutTimeline(b), *back);
  EXPECT_FALSE(back->resources.empty());  // Kept: the per-link and per-chip totals.
  EXPECT_FALSE(back->names.empty());
  back = ReadRun(path, "c");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameRecord(WithoutTimeline(c), *back);

  // On disk: has_timeline says which runs hold the datasets, and the others do not have them.
  EXPECT_EQ(ReadRawIntAttribute(path, "/runs/a", "has_timeline"), 1);
  EXPECT_EQ(ReadRawIntAttribute(path, "/runs/b", "has_timeline"), 0);
  EXPECT_TRUE(LinkExists(path, "/runs/a/timeline"));
  EXPECT_FALSE(LinkExists(path, "/runs/b/timeline"));
  EXPECT_FALSE(LinkExists(path, "/runs/b/edges"));
  EXPECT_FALSE(LinkExists(path, "/runs/b/counters"));
  EXPECT_TRUE(LinkExists(path, "/runs/b/resources"));
  EXPECT_EQ(ReadRawIntAttribute(path, "/", "schema_version"), kHdf5SchemaVersion);

  absl::StatusOr<SummaryTable> summary = ReadSummary(path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_THAT(summary->runs, ElementsAre("a", "b", "c"));
  EXPECT_THAT(summary->keys, ElementsAre("mesh", "seed", "absent"));
  ASSERT_EQ(summary->key_values.size(), 3u);
  EXPECT_THAT(summary->key_values[0], ElementsAre("4x4", "8x2", "2x8"));
  EXPECT_THAT(summary->key_values[1], ElementsAre("1", "", "3"));  // "" = b has no seed.
  EXPECT_THAT(summary->key_values[2], ElementsAre("", "", ""));
  // The metric columns are the first run's; b's "extra" is not one of them.
  EXPECT_THAT(summary->metrics, ElementsAre("makespan_s", "flops"));
  ASSERT_EQ(summary->metric_values.size(), 2u);
  ASSERT_EQ(summary->metric_values[0].size(), 3u);
  EXPECT_EQ(summary->metric_values[0][0], 1.5);
  EXPECT_TRUE(std::isnan(summary->metric_values[0][1]));  // b has no makespan_s.
  EXPECT_EQ(summary->metric_values[0][2], 0.5);
  EXPECT_THAT(summary->metric_values[1], ElementsAre(3e15, 2e15, 1e15));
}

TEST_F(Hdf5IoTest, ArchiveWriterWithoutRunsHasAnEmptySummary) {
  const std::string path = Path("none.h5");
  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Commit({"mesh"}).ok());
  absl::StatusOr<SummaryTable> summary = ReadSummary(path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->runs.empty());
  EXPECT_THAT(summary->keys, ElementsAre("mesh"));
  ASSERT_EQ(summary->key_values.size(), 1u);
  EXPECT_TRUE(summary->key_values[0].empty());
  EXPECT_TRUE(summary->metrics.empty());
}

TEST_F(Hdf5IoTest, WriteRunsWritesASummaryWithoutKeys) {
  const RunRecord zeta = MakeRecord("zeta");
  RunRecord alpha = MakeRecord("alpha");
  alpha.metrics = {{"flops", 2.0}, {"makespan_s", 3.0}};
  const std::string path = Path("two.h5");
  ASSERT_TRUE(WriteRuns(path, {&zeta, &alpha}, "v").ok());
  absl::StatusOr<SummaryTable> summary = ReadSummary(path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_THAT(summary->runs, ElementsAre("zeta", "alpha"));
  EXPECT_TRUE(summary->keys.empty());
  EXPECT_TRUE(summary->key_values.empty());
  ASSERT_EQ(summary->metrics.size(), zeta.metrics.size());
  for (size_t m = 0; m < zeta.metrics.size(); ++m) {
    SCOPED_TRACE(zeta.metrics[m].first);
    EXPECT_EQ(summary->metrics[m], zeta.metrics[m].first);
    EXPECT_EQ(summary->metric_values[m][0], zeta.metrics[m].second);
    EXPECT_TRUE(SameDouble(summary->metric_values[m][1],
                           alpha.Metric(zeta.metrics[m].first, std::nan(""))));
  }
}

TEST_F(Hdf5IoTest, ArchiveWriterAbortAndDestructionLeaveNoFile) {
  const RunRecord run = MakeRecord("r");
  const std::string path = Path("out.h5");
  {
    std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->AddRun(run, true).ok());
  }  // Destroyed without Commit.
  EXPECT_THAT(Files(), ElementsAre());

  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->AddRun(run, false).ok());
  writer->Abort();
  EXPECT_THAT(Files(), ElementsAre());
  writer->Abort();  // A no-op.
  const absl::Status add = writer->AddRun(MakeRecord("s"), true);
  EXPECT_EQ(add.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(add.message(), HasSubstr("aborted"));
  EXPECT_EQ(writer->Commit({}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer->runs_added(), 1);
  writer.reset();
  EXPECT_THAT(Files(), ElementsAre());

  // An existing destination is left as it was.
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  const std::string before = ReadBytes(path);
  {
    std::unique_ptr<ArchiveWriter> replacing = CreateWriter(path);
    ASSERT_NE(replacing, nullptr);
    ASSERT_TRUE(replacing->AddRun(MakeRecord("other"), true).ok());
  }
  EXPECT_EQ(ReadBytes(path), before);
  EXPECT_THAT(Files(), ElementsAre("out.h5"));
}

TEST_F(Hdf5IoTest, ArchiveWriterRefusesBadRunsAndKeysAndStaysUsable) {
  const std::string path = Path("out.h5");
  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->AddRun(MakeRecord("a"), true).ok());

  absl::Status status = writer->AddRun(MakeRecord("a"), false);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "cannot write '" + path + "': a run named 'a' was already added");
  status = writer->AddRun(MakeRecord("x/y"), true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("invalid run name 'x/y'"));
  RunRecord dup_key = MakeRecord("dup");
  dup_key.metrics.push_back({"flops", 1});
  status = writer->AddRun(dup_key, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("run 'dup': metrics: duplicate key 'flops'"));

  status = writer->Commit({"mesh", "seed", "mesh"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "cannot write '" + path + "': summary: key 'mesh' given twice");
  EXPECT_EQ(writer->Commit({""}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(path));

  // None of that was written: the writer goes on.
  ASSERT_TRUE(writer->AddRun(MakeRecord("b"), false).ok());
  EXPECT_EQ(writer->runs_added(), 2);
  ASSERT_TRUE(writer->Commit({"mesh"}).ok());
  absl::StatusOr<std::vector<std::string>> runs = ListRuns(path);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_THAT(*runs, ElementsAre("a", "b"));

  status = writer->Commit({"mesh"});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("already committed"));
  EXPECT_EQ(writer->AddRun(MakeRecord("c"), true).code(), absl::StatusCode::kFailedPrecondition);
  writer->Abort();  // A no-op after Commit.
  EXPECT_TRUE(ListRuns(path).ok());
  EXPECT_THAT(Files(), ElementsAre("out.h5"));
}

TEST_F(Hdf5IoTest, ArchiveWriterErrorWhileWritingAbortsIt) {
  const std::string path = Path("out.h5");
  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->AddRun(MakeRecord("a"), true).ok());
  RunRecord big_id = MakeRecord("big_id");
  big_id.edges[0].to = OpId(1u << 31);
  const absl::Status status = writer->AddRun(big_id, true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("dataset 'edges': id 2147483648 does not fit"));
  EXPECT_THAT(Files(), ElementsAre());  // The half-written file is gone.
  EXPECT_EQ(writer->AddRun(MakeRecord("b"), true).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer->Commit({}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer->runs_added(), 1);
}

TEST_F(Hdf5IoTest, ArchiveWriterCommitAndCreateErrors) {
  EXPECT_EQ(ArchiveWriter::Create("", "v").status().code(), absl::StatusCode::kInvalidArgument);
  const absl::Status missing_dir = ArchiveWriter::Create("/nonexistent-dir/x.h5", "v").status();
  EXPECT_EQ(missing_dir.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(missing_dir.message(),
            "cannot write '/nonexistent-dir/x.h5': No such file or directory");

  // A directory as the destination: the rename in Commit fails, and the writer cleans up.
  const std::string dir_path = Path("adir");
  fs::create_directory(dir_path);
  std::unique_ptr<ArchiveWriter> writer = CreateWriter(dir_path);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->AddRun(MakeRecord("r"), true).ok());
  const absl::Status status = writer->Commit({"mesh"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cannot write '" + dir_path + "'"));
  EXPECT_THAT(Files(), ElementsAre("adir"));
  EXPECT_TRUE(fs::is_empty(dir_path));
  EXPECT_EQ(writer->Commit({"mesh"}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(Hdf5IoTest, IdenticalInputsGiveIdenticalFilesWithoutTimestamps) {
  const RunRecord a = MakeRecord("a");
  const RunRecord b = MakeRecord("b");
  std::vector<std::string> files;
  for (const char* name : {"one.h5", "two.h5"}) {
    files.push_back(Path(name));
    std::unique_ptr<ArchiveWriter> writer = CreateWriter(files.back());
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->AddRun(a, true).ok());
    ASSERT_TRUE(writer->AddRun(b, false).ok());
    ASSERT_TRUE(writer->Commit({"mesh"}).ok());
  }
  EXPECT_EQ(ReadBytes(files[0]), ReadBytes(files[1]));
  ExpectNoTimestamps(files[0],
                     {"/", "/runs", "/runs/a", "/runs/a/config", "/runs/a/metrics", "/runs/a/names",
                      "/runs/a/timeline", "/runs/a/edges", "/runs/a/resources", "/runs/a/counters",
                      "/runs/b", "/summary", "/summary/runs", "/summary/key_columns",
                      "/summary/key_columns/mesh", "/summary/metric_values"});
}

// The HDF5 type class of dataset `object` of the file at `path`.
H5T_class_t DatasetClass(const std::string& path, const std::string& object) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t dataset = H5Dopen2(file, object.c_str(), H5P_DEFAULT);
  hid_t type = H5Dget_type(dataset);
  const H5T_class_t type_class = H5Tget_class(type);
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
  return type_class;
}

// Schema version 4: a key column is int64 when every run's value is an integer (so 128 sorts
// after 16), float64 when every one is a number, else text; ReadSummary gives the text back.
TEST_F(Hdf5IoTest, SummaryKeyColumnsAreTyped) {
  const RunRecord a = MakeSweepRecord(
      "a", {{"chips", "128"}, {"latency", "1e-06"}, {"mesh", "16x8"}, {"slices", "4"}},
      {{"makespan_s", 1.0}});
  const RunRecord b = MakeSweepRecord(
      "b", {{"chips", "16"}, {"latency", "2"}, {"mesh", "4x4"}, {"slices", "6,3,8,8"}},
      {{"makespan_s", 2.0}});
  const RunRecord c = MakeSweepRecord("c", {{"chips", "8"}, {"latency", "0.5"}, {"mesh", "4x2"}},
                                      {{"makespan_s", 3.0}});  // No slices.
  const std::string path = Path("typed.h5");
  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  for (const RunRecord* r : {&a, &b, &c}) ASSERT_TRUE(writer->AddRun(*r, false).ok());
  ASSERT_TRUE(writer->Commit({"chips", "latency", "mesh", "slices"}).ok());

  EXPECT_EQ(DatasetClass(path, "/summary/key_columns/chips"), H5T_INTEGER);
  EXPECT_EQ(DatasetClass(path, "/summary/key_columns/latency"), H5T_FLOAT);
  EXPECT_EQ(DatasetClass(path, "/summary/key_columns/mesh"), H5T_STRING);
  EXPECT_EQ(DatasetClass(path, "/summary/key_columns/slices"), H5T_STRING);
  EXPECT_FALSE(LinkExists(path, "/summary/key_values"));
  absl::StatusOr<SummaryTable> summary = ReadSummary(path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->key_values.size(), 4u);
  EXPECT_THAT(summary->key_values[0], ElementsAre("128", "16", "8"));
  EXPECT_THAT(summary->key_values[1], ElementsAre("1e-06", "2", "0.5"));
  EXPECT_THAT(summary->key_values[2], ElementsAre("16x8", "4x4", "4x2"));
  EXPECT_THAT(summary->key_values[3], ElementsAre("4", "6,3,8,8", ""));

  // A key names its column's dataset.
  std::unique_ptr<ArchiveWriter> bad = CreateWriter(Path("bad.h5"));
  ASSERT_NE(bad, nullptr);
  ASSERT_TRUE(bad->AddRun(a, false).ok());
  const absl::Status status = bad->Commit({"a/b"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("key 'a/b' is not allowed"));
}

// Text is variable-length UTF-8 everywhere, also in a compound's column (h5py reports
// encoding='utf-8' and decodes such bytes; docs/hdf5.md says how to get str): the GeMM labels and
// a text key column of /summary.
TEST_F(Hdf5IoTest, TextIsVariableLengthUtf8) {
  const RunRecord a = MakeRecord("a");
  const std::string path = Path("utf8.h5");
  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->AddRun(a, true).ok());
  ASSERT_TRUE(writer->Commit({"system"}).ok());
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* object : {"/runs/a/gemms", "/summary/key_columns/system", "/runs/a/names"}) {
    hid_t dataset = H5Dopen2(file, object, H5P_DEFAULT);
    ASSERT_GE(dataset, 0) << object;
    hid_t type = H5Dget_type(dataset);
    hid_t text = H5Tget_class(type) == H5T_COMPOUND
                     ? H5Tget_member_type(type, H5Tget_member_index(type, "label"))
                     : H5Tcopy(type);
    EXPECT_EQ(H5Tget_class(text), H5T_STRING) << object;
    EXPECT_GT(H5Tis_variable_str(text), 0) << object;
    EXPECT_EQ(H5Tget_cset(text), H5T_CSET_UTF8) << object;
    H5Tclose(text);
    H5Tclose(type);
    H5Dclose(dataset);
  }
  H5Fclose(file);
}

// A version-3 /summary (its key columns one text matrix `key_values`), made by editing a current
// archive: still read.
TEST_F(Hdf5IoTest, ReadsVersion3Summaries) {
  const RunRecord a = MakeSweepRecord("a", {{"chips", "128"}, {"mesh", "16x8"}}, {{"x", 1.0}});
  const RunRecord b = MakeSweepRecord("b", {{"chips", "16"}}, {{"x", 2.0}});
  const std::string path = Path("v3.h5");
  {
    std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->AddRun(a, false).ok());
    ASSERT_TRUE(writer->AddRun(b, false).ok());
    ASSERT_TRUE(writer->Commit({"chips", "mesh"}).ok());
  }
  {
    hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    hid_t attr = H5Aopen(file, "schema_version", H5P_DEFAULT);
    const int version = 3;
    EXPECT_GE(H5Awrite(attr, H5T_NATIVE_INT, &version), 0);
    H5Aclose(attr);
    EXPECT_GE(H5Ldelete(file, "/summary/key_columns", H5P_DEFAULT), 0);
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    const hsize_t dims[2] = {2, 2};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dataset =
        H5Dcreate2(file, "/summary/key_values", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char* values[4] = {"128", "16x8", "16", ""};
    EXPECT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Tclose(type);
    H5Fclose(file);
  }
  absl::StatusOr<SummaryTable> summary = ReadSummary(path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_THAT(summary->keys, ElementsAre("chips", "mesh"));
  ASSERT_EQ(summary->key_values.size(), 2u);
  EXPECT_THAT(summary->key_values[0], ElementsAre("128", "16"));
  EXPECT_THAT(summary->key_values[1], ElementsAre("16x8", ""));
}

// A version-1 archive (before has_timeline and /summary), made by editing a current one.
void MakeVersion1(const std::string& path, const std::vector<std::string>& runs) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t attr = H5Aopen(file, "schema_version", H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  const int version = 1;
  EXPECT_GE(H5Awrite(attr, H5T_NATIVE_INT, &version), 0);
  H5Aclose(attr);
  for (const std::string& run : runs) {
    EXPECT_GE(H5Adelete_by_name(file, ("/runs/" + run).c_str(), "has_timeline", H5P_DEFAULT), 0);
  }
  EXPECT_GE(H5Ldelete(file, "/summary", H5P_DEFAULT), 0);
  H5Fclose(file);
}

TEST_F(Hdf5IoTest, ReadsVersion1Archives) {
  const RunRecord a = MakeRecord("a");
  const RunRecord b = MakeRecord("b");
  const std::string path = Path("v1.h5");
  ASSERT_TRUE(WriteRuns(path, {&a, &b}, "v").ok());
  MakeVersion1(path, {"a", "b"});

  absl::StatusOr<std::vector<std::string>> runs = ListRuns(path);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_THAT(*runs, ElementsAre("a", "b"));
  absl::StatusOr<RunRecord> back = ReadRun(path, "b");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameRecord(b, *back);  // No has_timeline: the timeline is there.

  const absl::Status summary = ReadSummary(path).status();
  EXPECT_EQ(summary.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(summary.message(), "no summary in '" + path + "' (schema version 1)");

  // Merge copies groups verbatim, so it joins only archives of the current layout.
  const absl::Status merged = MergeArchives(Path("out.h5"), {path}, "v");
  EXPECT_EQ(merged.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(merged.message(), HasSubstr("cannot merge '" + path + "': schema version 1"));
  EXPECT_THAT(Files(), ElementsAre("v1.h5"));
}

TEST_F(Hdf5IoTest, DamagedSummaryIsDataLoss) {
  const RunRecord a = MakeRecord("a");
  const std::string path = Path("x.h5");
  ASSERT_TRUE(WriteRuns(path, {&a}, "v").ok());
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_GE(H5Ldelete(file, "/summary/metric_values", H5P_DEFAULT), 0);
  H5Fclose(file);
  const absl::Status status = ReadSummary(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("summary: missing dataset 'metric_values'"));
  EXPECT_EQ(ReadSummary(Path("missing.h5")).status().code(), absl::StatusCode::kNotFound);
}

// Shards of a sweep: some runs with their timeline, some without, with different config keys,
// metrics and summary keys.
struct Shards {
  std::vector<RunRecord> runs;
  std::vector<bool> with_timeline;
};

Shards MakeShards() {
  Shards s;
  s.runs = {MakeSweepRecord("m4x4-s1", {{"mesh", "4x4"}, {"seed", "1"}},
                            {{"makespan_s", 1.0}, {"flops", 10}}),
            MakeSweepRecord("m8x2-s1", {{"mesh", "8x2"}}, {{"makespan_s", 2.0}}),
            MakeSweepRecord("m4x4-s2", {{"mesh", "4x4"}, {"seed", "2"}, {"slices", "8"}},
                            {{"flops", 30}, {"makespan_s", 3.0}, {"extra", 1}}),
            MakeSweepRecord("m8x2-s2", {{"slices", "4"}, {"mesh", "8x2"}, {"seed", "2"}},
                            {{"makespan_s", 4.0}, {"flops", 40}})};
  s.runs[3].timeline.resize(2);
  // More than 8 config keys, as real runs have: HDF5 keeps them in dense attribute storage.
  for (RunRecord& run : s.runs) {
    for (int i = 0; i < 12; ++i) run.config.emplace_back("param" + std::to_string(i), run.name);
  }
  s.with_timeline = {true, false, true, false};
  return s;
}

// Writes runs [begin, end) of `shards` to `path` with summary keys `keys`.
void WriteShard(const Shards& shards, size_t begin, size_t end, const std::string& path,
                const std::vector<std::string>& keys) {
  std::unique_ptr<ArchiveWriter> writer = CreateWriter(path);
  ASSERT_NE(writer, nullptr);
  for (size_t i = begin; i < end; ++i) {
    ASSERT_TRUE(writer->AddRun(shards.runs[i], shards.with_timeline[i]).ok());
  }
  const absl::Status status = writer->Commit(keys);
  ASSERT_TRUE(status.ok()) << status;
}

TEST_F(Hdf5IoTest, MergeOfShardsEqualsASingleArchive) {
  const Shards shards = MakeShards();
  const std::string first = Path("shard1.h5");
  const std::string second = Path("shard2.h5");
  const std::string merged = Path("merged.h5");
  const std::string single = Path("single.h5");
  WriteShard(shards, 0, 2, first, {"mesh", "seed"});
  WriteShard(shards, 2, 4, second, {"seed", "slices"});
  WriteShard(shards, 0, 4, single, {"mesh", "seed", "slices"});
  const absl::Status status = MergeArchives(merged, {first, second}, "v");
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(Files(), ElementsAre("merged.h5", "shard1.h5", "shard2.h5", "single.h5"));

  absl::StatusOr<std::vector<std::string>> merged_runs = ListRuns(merged);
  ASSERT_TRUE(merged_runs.ok()) << merged_runs.status();
  EXPECT_THAT(*merged_runs, ElementsAre("m4x4-s1", "m8x2-s1", "m4x4-s2", "m8x2-s2"));
  absl::StatusOr<std::vector<std::string>> single_runs = ListRuns(single);
  ASSERT_TRUE(single_runs.ok()) << single_runs.status();
  EXPECT_EQ(*merged_runs, *single_runs);

  absl::StatusOr<SummaryTable> merged_summary = ReadSummary(merged);
  ASSERT_TRUE(merged_summary.ok()) << merged_summary.status();
  absl::StatusOr<SummaryTable> single_summary = ReadSummary(single);
  ASSERT_TRUE(single_summary.ok()) << single_summary.status();
  ExpectSameSummary(*merged_summary, *single_summary);
  // The union of the shards' keys in first-seen order; values from each run's config, so
  // shard 1's runs get their slices ("" where they have none) although shard 1 did not list it.
  EXPECT_THAT(merged_summary->keys, ElementsAre("mesh", "seed", "slices"));
  EXPECT_THAT(merged_summary->key_values[1], ElementsAre("1", "", "2", "2"));
  EXPECT_THAT(merged_summary->key_values[2], ElementsAre("", "", "8", "4"));
  EXPECT_THAT(merged_summary->metrics, ElementsAre("makespan_s", "flops"));
  EXPECT_TRUE(std::isnan(merged_summary->metric_values[1][1]));

  for (size_t i = 0; i < shards.runs.size(); ++i) {
    const RunRecord& run = shards.runs[i];
    SCOPED_TRACE(run.name);
    absl::StatusOr<RunRecord> from_merged = ReadRun(merged, run.name);
    ASSERT_TRUE(from_merged.ok()) << from_merged.status();
    absl::StatusOr<RunRecord> from_single = ReadRun(single, run.name);
    ASSERT_TRUE(from_single.ok()) << from_single.status();
    ExpectSameRecord(*from_single, *from_merged);
    ExpectSameRecord(shards.with_timeline[i] ? run : WithoutTimeline(run), *from_merged);
  }
  EXPECT_EQ(ReadRawIntAttribute(merged, "/runs/m8x2-s2", "has_timeline"), 0);
  ExpectNoTimestamps(merged, {"/", "/runs", "/runs/m4x4-s2", "/runs/m4x4-s2/config",
                              "/runs/m4x4-s2/timeline", "/summary", "/summary/metric_values"});
  // Same runs, keys and version: the very same bytes, whatever the sharding.
  EXPECT_EQ(ReadBytes(merged), ReadBytes(single));
  // The output may be one of the inputs: it is replaced only at the end.
  ASSERT_TRUE(MergeArchives(first, {first, second}, "v").ok());
  EXPECT_EQ(ReadBytes(first), ReadBytes(single));
}

TEST_F(Hdf5IoTest, MergeRefusesRunsOfTheSameName) {
  const Shards shards = MakeShards();
  const std::string first = Path("shard1.h5");
  const std::string second = Path("shard2.h5");
  const std::string out = Path("out.h5");
  WriteShard(shards, 0, 2, first, {"mesh"});
  WriteShard(shards, 1, 3, second, {"mesh"});  // m8x2-s1 is in both.
  ASSERT_TRUE(MergeArchives(out, {first}, "v").ok());
  const std::string before = ReadBytes(out);

  absl::Status status = MergeArchives(out, {first, second}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "cannot merge into '" + out + "': run 'm8x2-s1' is in both '" +
                                  first + "' and '" + second + "'");
  EXPECT_EQ(ReadBytes(out), before);
  EXPECT_THAT(Files(), ElementsAre("out.h5", "shard1.h5", "shard2.h5"));

  status = MergeArchives(out, {first, first}, "v");  // The same file twice.
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("run 'm4x4-s1' is in both"));
  EXPECT_EQ(ReadBytes(out), before);
  EXPECT_THAT(Files(), ElementsAre("out.h5", "shard1.h5", "shard2.h5"));
}

TEST_F(Hdf5IoTest, MergeRefusesInputsThatAreNotArchives) {
  const Shards shards = MakeShards();
  const std::string shard = Path("shard.h5");
  WriteShard(shards, 0, 1, shard, {});
  const std::string out = Path("out.h5");

  const std::string text = Path("notes.txt");
  std::ofstream(text) << "not hdf5\n";
  absl::Status status = MergeArchives(out, {shard, text}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "cannot open '" + text + "': not an HDF5 file");

  const std::string foreign = Path("foreign.h5");
  hid_t file = H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5Fclose(file);
  status = MergeArchives(out, {shard, foreign}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'" + foreign + "': not a meshsim archive"));

  status = MergeArchives(out, {Path("missing.h5")}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("missing.h5"));

  status = MergeArchives(out, {}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "cannot merge into '" + out + "': no input files");
  EXPECT_THAT(Files(), ElementsAre("foreign.h5", "notes.txt", "shard.h5"));
}

TEST_F(Hdf5IoTest, MergeIntoAnUnwritablePathLeavesNothing) {
  const Shards shards = MakeShards();
  const std::string shard = Path("shard.h5");
  WriteShard(shards, 0, 2, shard, {"mesh"});

  absl::Status status = MergeArchives("/nonexistent-dir/out.h5", {shard}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "cannot write '/nonexistent-dir/out.h5': No such file or directory");

  const std::string dir_path = Path("adir");
  fs::create_directory(dir_path);
  status = MergeArchives(dir_path, {shard}, "v");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cannot write '" + dir_path + "'"));
  EXPECT_THAT(Files(), ElementsAre("adir", "shard.h5"));
  EXPECT_TRUE(fs::is_empty(dir_path));
}

// Sets `column` of row `row` of dataset `dataset` to `value`, as a raw byte of the file's own
// type (so that HDF5 converts and checks nothing), or (with `as_integer`) after replacing the
// column's enum type by a plain uint8 integer type holding the same values.
void CorruptEnumColumn(const std::string& path, const std::string& dataset_path, size_t row,
                       const std::string& column, uint8_t value, bool as_integer) {
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t dataset = H5Dopen2(file, dataset_path.c_str(), H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  hid_t type = H5Dget_type(dataset);
  hid_t space = H5Dget_space(dataset);
  const size_t size = H5Tget_size(type);
  const size_t rows = static_cast<size_t>(H5Sget_simple_extent_npoints(space));
  ASSERT_LT(row, rows);
  // Read with a memory type of the file type whose variable-length strings HDF5 allocates.
  std::vector<unsigned char> raw(size * rows);
  ASSERT_GE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  const int member = H5Tget_member_index(type, column.c_str());
  ASSERT_GE(member, 0) << column;
  raw[row * size + H5Tget_member_offset(type, static_cast<unsigned>(member))] = value;
  hid_t write_type = type;
  if (as_integer) {
    write_type = H5Tcreate(H5T_COMPOUND, size);
    for (int m = 0; m < H5Tget_nmembers(type); ++m) {
      char* name = H5Tget_member_name(type, static_cast<unsigned>(m));
      hid_t member_type =
          m == member ? H5Tcopy(H5T_STD_U8LE) : H5Tget_member_type(type, static_cast<unsigned>(m));
      H5Tinsert(write_type, name, H5Tget_member_offset(type, static_cast<unsigned>(m)),
                member_type);
      H5Tclose(member_type);
      H5free_memory(name);
    }
    hid_t dcpl = H5Dget_create_plist(dataset);
    H5Dclose(dataset);
    ASSERT_GE(H5Ldelete(file, dataset_path.c_str(), H5P_DEFAULT), 0);
    dataset =
        H5Dcreate2(file, dataset_path.c_str(), write_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    ASSERT_GE(dataset, 0);
  }
  ASSERT_GE(H5Dwrite(dataset, write_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, raw.data());
  if (write_type != type) H5Tclose(write_type);
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
}

// Enum columns holding a value outside their enum, as a byte of the file's own enum type (a
// newer meshsim, or damage) or with the column stored as a plain integer (another writer): the
// reader refuses them as DataLoss naming the file, the run, the column, the row and the value,
// and so does merge (which reads every run again) without writing anything.
TEST_F(Hdf5IoTest, EnumValuesOutsideTheirEnumAreDataLossNamingTheValue) {
  struct Case {
    const char* dataset;
    const char* column;
    const char* allowed;  // The start of what the message lists.
  };
  for (const Case& c :
       {Case{"timeline", "op_kind", "allowed: 0 to "},
        Case{"timeline", "pass", "allowed: 0 to 3: "},
        Case{"timeline", "unit_kind", "allowed: 0 to "},
        Case{"resources", "kind", "allowed: 0 to "}, Case{"gemms", "pass", "allowed: 0 to 3: "}}) {
    for (const bool as_integer : {false, true}) {
      SCOPED_TRACE(testing::Message() << c.dataset << "." << c.column
                                      << (as_integer ? " as an integer" : " as an enum"));
      const RunRecord run = MakeRecord("r");
      const std::string path = Path("enum.h5"), out = Path("merged.h5");
      fs::remove(path);
      ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
      CorruptEnumColumn(path, std::string("/runs/r/") + c.dataset, 1, c.column, 200, as_integer);
      const std::string expected = absl::StrCat("cannot read '", path, "': run 'r': dataset '",
                                                c.dataset, "': row 1: ", c.column, " is 200");
      for (const absl::Status& status :
           {ReadRun(path, "r").status(), MergeArchives(out, {path}, "v")}) {
        EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
        EXPECT_THAT(status.message(), HasSubstr(expected));
        EXPECT_THAT(status.message(), HasSubstr(c.allowed));
        EXPECT_THAT(status.message(), HasSubstr(as_integer ? "stored as an integer" : "newer"));
        EXPECT_THAT(status.message(), HasSubstr("damaged"));
        EXPECT_EQ(status.message().find('\n'), absl::string_view::npos);
      }
      EXPECT_THAT(Files(), ElementsAre("enum.h5"));
    }
  }
}

// An integer column whose values all lie inside the enum is still not meshsim's schema.
TEST_F(Hdf5IoTest, EnumColumnStoredAsIntegersIsDataLoss) {
  const RunRecord run = MakeRecord("r");
  const std::string path = Path("int.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  CorruptEnumColumn(path, "/runs/r/resources", 1, "kind", 0, /*as_integer=*/true);
  const absl::Status status = ReadRun(path, "r").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("run 'r': dataset 'resources': column kind is stored as integers, not as "
                        "meshsim's enum"));
}

#else  // MESHSIM_HDF5_SLOW_TESTS

// A flipped bit anywhere in an archive is DataLoss naming the damage, never a crash: libhdf5
// checksums neither its global heap (variable-length strings) nor raw data, and reading a
// damaged heap segfaulted inside H5HG_read. The trailer's hash catches every flip.
TEST_F(Hdf5IoTest, EveryFlippedByteIsDamagedNotACrash) {
  const RunRecord run = MakeRecord("r");
  const std::string path = Path("clean.h5"), flipped = Path("flipped.h5");
  ASSERT_TRUE(WriteRuns(path, {&run}, "v").ok());
  const std::string clean = ReadBytes(path);
  ASSERT_GT(clean.size(), 1000u);
  for (size_t at = 0; at < clean.size(); at += 3) {
    std::string bytes = clean;
    bytes[at] = static_cast<char>(bytes[at] ^ (1 << (at % 8)));
    std::ofstream(flipped, std::ios::binary | std::ios::trunc) << bytes;
    const absl::Status status = ReadRun(flipped, "r").status();
    // A flip in the trailer's magic leaves the HDF5 contents intact, and they read back fine.
    if (at >= clean.size() - 16 && at < clean.size() - 8 && status.ok()) continue;
    ASSERT_EQ(status.code(), absl::StatusCode::kDataLoss)
        << "byte " << at << " of " << clean.size() << ": " << status;
    ASSERT_THAT(status.message(), HasSubstr("damaged")) << "byte " << at;
  }
}

#endif  // MESHSIM_HDF5_SLOW_TESTS

}  // namespace
}  // namespace meshsim::formats
