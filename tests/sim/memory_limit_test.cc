#include "sim/memory_limit.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace meshsim::sim {
namespace {

namespace fs = std::filesystem;

// A fake root ("/") for ReadCgroupMemoryLimit: proc/self/cgroup, proc/self/mountinfo and the
// cgroup files, each written only when a test asks for it.
class FakeRoot {
 public:
  explicit FakeRoot(const std::string& name)
      : root_(fs::path(testing::TempDir()) / ("memory_limit_" + name)) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakeRoot() { fs::remove_all(root_); }
  // Writes `text` to `path` (absolute, as the process would see it) under the root.
  void Write(const std::string& path, const std::string& text) const {
    const fs::path p = root_ / path.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return root_.string(); }
  std::string Path(const std::string& path) const { return (root_ / path.substr(1)).string(); }

 private:
  fs::path root_;
};

constexpr int64_t kGiB = int64_t{1} << 30;
const char kV2Mount[] = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n";
const char kV1Mount[] =
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n";

// cgroup v2, a systemd slice: the job's own memory.max is "max", its parent's 2 GiB binds.
TEST(MemoryLimitTest, V2TakesTheLowestLimitOfTheCgroupAndItsAncestors) {
  FakeRoot f("v2_nested");
  f.Write("/proc/self/cgroup", "0::/user.slice/job.scope\n");
  f.Write("/proc/self/mountinfo", std::string("22 1 8:1 / / rw - ext4 /dev/vda rw\n") + kV2Mount);
  f.Write("/sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n");
  f.Write("/sys/fs/cgroup/user.slice/memory.max", "2147483648\n");
  std::optional<MemoryLimit> m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, 2 * kGiB);
  EXPECT_EQ(m->file, f.Path("/sys/fs/cgroup/user.slice/memory.max"));
  EXPECT_EQ(m->Describe(), "the 2.0 GiB cgroup limit");
  // A lower limit deeper down wins.
  f.Write("/sys/fs/cgroup/user.slice/job.scope/memory.max", "1073741824\n");
  m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, kGiB);
  EXPECT_EQ(m->file, f.Path("/sys/fs/cgroup/user.slice/job.scope/memory.max"));
}

TEST(MemoryLimitTest, V2MaxEverywhereIsNoLimit) {
  FakeRoot f("v2_max");
  f.Write("/proc/self/cgroup", "0::/a/b\n");
  f.Write("/proc/self/mountinfo", kV2Mount);
  f.Write("/sys/fs/cgroup/a/b/memory.max", "max\n");
  f.Write("/sys/fs/cgroup/a/memory.max", "max\n");
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
}

// A container with its own cgroup namespace sees its cgroup as "/" at the mount point.
TEST(MemoryLimitTest, V2ContainerSeesItsCgroupAtTheMountPoint) {
  FakeRoot f("v2_container");
  f.Write("/proc/self/cgroup", "0::/\n");
  f.Write("/proc/self/mountinfo", kV2Mount);
  f.Write("/sys/fs/cgroup/memory.max", "536870912\n");
  const std::optional<MemoryLimit> m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, kGiB / 2);
  EXPECT_EQ(m->Describe(), "the 0.5 GiB cgroup limit");
}

// cgroup v1 as on this CI machine: the memory controller mounted on its own, the process in a
// nested cgroup whose parent holds the limit.
TEST(MemoryLimitTest, V1ReadsLimitInBytesUpTheHierarchy) {
  FakeRoot f("v1_nested");
  f.Write("/proc/self/cgroup",
          "9:name=systemd:/\n4:memory:/process_api/7fda\n2:cpu,cpuacct:/\n0::/\n");
  f.Write("/proc/self/mountinfo", kV1Mount);
  f.Write("/sys/fs/cgroup/memory/process_api/7fda/memory.limit_in_bytes", "9223372036854771712\n");
  f.Write("/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes", "3221225472\n");
  f.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  const std::optional<MemoryLimit> m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, 3 * kGiB);
  EXPECT_EQ(m->file, f.Path("/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes"));
}

// Docker on cgroup v1: the mount shows the container's cgroup (/docker/abc) as its root.
TEST(MemoryLimitTest, V1MountRootIsTheContainersCgroup) {
  FakeRoot f("v1_docker");
  f.Write("/proc/self/cgroup", "5:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n");
  f.Write("/proc/self/mountinfo",
          "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n");
  f.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "1073741824\n");
  const std::optional<MemoryLimit> m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, kGiB);
}

// The kernel's "unlimited" (LONG_MAX rounded to a page) and anything from 2^60 on is no limit.
TEST(MemoryLimitTest, V1HugeValuesAreNoLimit) {
  FakeRoot f("v1_unlimited");
  f.Write("/proc/self/cgroup", "4:memory:/\n");
  f.Write("/proc/self/mountinfo", kV1Mount);
  f.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
  f.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "1152921504606846976\n");  // 2^60.
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
}

// Hybrid systems mount both; the lower limit binds.
TEST(MemoryLimitTest, HybridTakesTheLowerOfV1AndV2) {
  FakeRoot f("hybrid");
  f.Write("/proc/self/cgroup", "4:memory:/job\n0::/job\n");
  f.Write("/proc/self/mountinfo",
          std::string(kV1Mount) +
              "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n");
  f.Write("/sys/fs/cgroup/memory/job/memory.limit_in_bytes", "4294967296\n");
  f.Write("/sys/fs/cgroup/unified/job/memory.max", "3221225472\n");
  std::optional<MemoryLimit> m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, 3 * kGiB);
  f.Write("/sys/fs/cgroup/unified/job/memory.max", "max\n");
  m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, 4 * kGiB);
}

// Nothing readable is no limit, never an error: no /proc, no cgroup line, no limit files,
// malformed values.
TEST(MemoryLimitTest, MissingOrMalformedFilesAreNoLimit) {
  FakeRoot f("missing");
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
  f.Write("/proc/self/cgroup", "0::/a\n");
  f.Write("/proc/self/mountinfo", kV2Mount);
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
  f.Write("/sys/fs/cgroup/a/memory.max", "lots\n");
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
  f.Write("/sys/fs/cgroup/a/memory.max", "-1\n");
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
  f.Write("/proc/self/cgroup", "garbage\n");
  f.Write("/sys/fs/cgroup/a/memory.max", "1073741824\n");
  EXPECT_FALSE(ReadCgroupMemoryLimit(f.root()).has_value());
}

// Without mountinfo (a restricted /proc), the usual mount points are tried.
TEST(MemoryLimitTest, WithoutMountinfoTheUsualMountPointsAreTried) {
  FakeRoot f("no_mountinfo");
  f.Write("/proc/self/cgroup", "0::/a\n");
  f.Write("/sys/fs/cgroup/a/memory.max", "1073741824\n");
  std::optional<MemoryLimit> m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, kGiB);
  FakeRoot g("no_mountinfo_v1");
  g.Write("/proc/self/cgroup", "4:memory:/a\n");
  g.Write("/sys/fs/cgroup/memory/a/memory.limit_in_bytes", "2147483648\n");
  m = ReadCgroupMemoryLimit(g.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, 2 * kGiB);
}

// A mount point with a space is escaped as \040 in mountinfo.
TEST(MemoryLimitTest, EscapedMountPoints) {
  FakeRoot f("escaped");
  f.Write("/proc/self/cgroup", "0::/j\n");
  f.Write("/proc/self/mountinfo", "30 23 0:26 / /cg\\040roup rw - cgroup2 cgroup2 rw\n");
  f.Write("/cg roup/j/memory.max", "1073741824\n");
  const std::optional<MemoryLimit> m = ReadCgroupMemoryLimit(f.root());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bytes, kGiB);
}

// The process's own limit is never above physical memory, and says where it came from.
TEST(MemoryLimitTest, AvailableMemoryIsAtMostPhysical) {
  const MemoryLimit& m = AvailableMemory();
  EXPECT_GT(m.bytes, 0);
  EXPECT_LE(m.bytes, PhysicalMemoryBytes());
  EXPECT_EQ(m.from_cgroup(), m.bytes < PhysicalMemoryBytes());
  EXPECT_EQ(m.Describe().find(m.from_cgroup() ? "cgroup limit" : "of physical memory") ==
                std::string::npos,
            false);
}

}  // namespace
}  // namespace meshsim::sim
