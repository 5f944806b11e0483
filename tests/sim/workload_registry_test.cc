#include "sim/workload_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"

namespace meshsim::sim {
namespace {

using ::testing::HasSubstr;

// Every option a workload declares is an option of `meshsim run`, named once per workload.
TEST(WorkloadRegistryTest, DeclaresOnlyRunOptions) {
  const std::vector<std::string> keys = RunOptionKeys();
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    EXPECT_FALSE(w.summary.empty()) << w.name;
    std::vector<std::string> sorted = w.reads;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << w.name;
    for (const std::string& key : w.reads) {
      EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << w.name << ": " << key;
    }
  }
  EXPECT_EQ(Workloads().size(), WorkloadRegistry().size());
}

// The declarations are what refuses an option: for every declared key and every workload that
// does not declare it, the run refuses the key naming exactly the declaring workloads.
TEST(WorkloadRegistryTest, AnOptionNoDeclarationOfTheWorkloadNamesIsRefused) {
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    RunOptions o;
    o.workload = w.name;
    for (const WorkloadInfo& other : WorkloadRegistry()) {
      for (const std::string& key : other.reads) {
        const std::vector<std::string> readers = WorkloadsReading(key);
        const std::string why = NotReadBy(key, o);
        if (std::find(w.reads.begin(), w.reads.end(), key) != w.reads.end()) continue;
        EXPECT_EQ(why, "does not apply to --workload " + w.name + "; it is read by --workload " +
                           absl::StrJoin(readers, ", "))
            << key;
      }
    }
  }
  EXPECT_TRUE(WorkloadsReading("chips").empty());  // Every workload reads it.
  EXPECT_EQ(WorkloadsReading("bytes"), std::vector<std::string>{"collective"});
}

TEST(WorkloadRegistryTest, RefusalReachesTheCommandLine) {
  RawOptions raw;
  raw.values = {{"workload", "gemm"}, {"gemm", "64,64,64"}, {"chips", "4"}, {"bytes", "1MiB"}};
  const absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()),
              HasSubstr("--bytes: '1MiB' does not apply to --workload gemm; it is read by "
                        "--workload collective"));
}

}  // namespace
}  // namespace meshsim::sim
