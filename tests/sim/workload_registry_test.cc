#include "sim/workload_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "sim/workload.h"

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
  EXPECT_EQ(WorkloadsReading("bytes"), (std::vector<std::string>{"collective", "stream"}));
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

// The example workload (docs/plugins.md): every chip copies --bytes through its HBM, a flow of
// 2·bytes (read + write) on one resource: makespan = 2·bytes / hbm.bandwidth exactly.
TEST(WorkloadRegistryTest, StreamCopiesAtTheHbmRate) {
  RawOptions raw;
  raw.values = {{"workload", "stream"}, {"chips", "4"}, {"bytes", "1GiB"}};
  const absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
  ASSERT_TRUE(o.ok()) << o.status();
  const absl::StatusOr<formats::RunRecord> rec = Simulate(*o);
  ASSERT_TRUE(rec.ok()) << rec.status();
  const double bytes = double(int64_t{1} << 30), hbm = o->system.chip.hbm_bandwidth_bytes_per_s;
  EXPECT_NEAR(rec->Metric("makespan_s"), 2 * bytes / hbm, 1e-12);  // Picosecond rounding.
  EXPECT_NEAR(rec->Metric("copy_bytes_per_s_per_chip"), hbm, hbm * 1e-9);
  EXPECT_EQ(rec->Metric("ops"), 4);
  raw.values = {{"workload", "stream"}, {"chips", "4"}};
  EXPECT_EQ(ResolveRunOptions(raw).status().message(),
            "--bytes: required by --workload stream (e.g. --bytes 1GiB)");
}

// A workload's typed options (WorkloadInfo::params) are options it reads, well formed, with the
// defaults RunOptions has; --param sets them as their options do, in the declared ranges.
TEST(WorkloadRegistryTest, TypedOptionsAreReadWellFormedAndDefaultAsRunOptions) {
  std::vector<std::pair<std::string, std::string>> resolved = RunOptions{}.Resolved();
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    absl::StatusOr<core::ParamValues> values = core::ParamValues::Defaults(w.params);
    ASSERT_TRUE(values.ok()) << w.name << ": " << values.status();
    for (const core::ParamSpec& p : w.params) {
      EXPECT_NE(std::find(w.reads.begin(), w.reads.end(), p.key), w.reads.end())
          << w.name << ": " << p.key;
      EXPECT_EQ(WorkloadParam(p.key)->type, p.type) << p.key;  // Declared alike everywhere.
      for (const auto& [key, value] : resolved) {
        if (key != p.key) continue;
        if (p.type == core::ParamType::kDouble) {  // "10us" is 10 x 1e-6, not exactly 1e-05.
          EXPECT_DOUBLE_EQ(values->Double(p.key), std::stod(value)) << w.name << ": " << p.key;
        } else {
          EXPECT_EQ(values->Text(p.key), value) << w.name << ": " << p.key;
        }
      }
    }
  }
  ASSERT_NE(WorkloadParam("stages"), nullptr);
  EXPECT_EQ(WorkloadParam("stages")->max, 1024);
  EXPECT_EQ(WorkloadParam("bytes"), nullptr);  // Required: no default, declared by name only.
}

TEST(WorkloadRegistryTest, ParamSetsAWorkloadOptionInItsDeclaredRange) {
  const auto resolve = [](std::vector<std::string> args) {
    absl::StatusOr<RawOptions> raw = ParseRunArgs(args);
    EXPECT_TRUE(raw.ok()) << raw.status();
    return ResolveRunOptions(*raw);
  };
  absl::StatusOr<RunOptions> a = resolve(
      {"--workload", "chain", "--chips", "4", "--param", "steps=3", "--param", "step-time=2us"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->steps, 3);
  EXPECT_EQ(a->step_time, core::Time::Microseconds(2));
  absl::StatusOr<RunOptions> b =
      resolve({"--workload", "chain", "--chips", "4", "--steps", "16777217"});
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("--steps: '16777217' is not allowed; must be at most "
                                              "16777216"));
  absl::StatusOr<RunOptions> c = resolve({"--workload", "pipeline", "--system", "p3.8xlarge",
                                          "--chips", "8", "--param", "schedule=zigzag"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "--schedule: 'zigzag' is not allowed; allowed: gpipe, 1f1b, eager-1f1b");
}

// The workloads' own option rules (sim/workload.h) answered by their plugins, not by names in
// sim/options.cc: the lists messages name, and one refusal of each rule through the resolver.
TEST(WorkloadRegistryTest, WorkloadRulesComeFromThePlugins) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(WorkloadsWhere(&Workload::PerFcLayerLists), (Names{"llm", "layer"}));
  EXPECT_EQ(WorkloadsWhere(&Workload::TunesMeshSlice), (Names{"llm", "layer"}));
  EXPECT_EQ(WorkloadsWhere(&Workload::TakesLayerPlugins), (Names{"layer", "pipeline"}));
  EXPECT_EQ(WorkloadsWhere(&Workload::RunsUShapedModels), (Names{"pipeline"}));
  const auto refusal = [](std::vector<std::string> args) -> std::string {
    absl::StatusOr<RawOptions> raw = ParseRunArgs(args);
    EXPECT_TRUE(raw.ok()) << raw.status();
    const absl::StatusOr<RunOptions> o = ResolveRunOptions(*raw);
    return o.ok() ? "" : std::string(o.status().message());
  };
  EXPECT_EQ(refusal({"--workload", "pipeline", "--chips", "6", "--stages", "4"}),
            "--stages: '4' is not allowed; --stages x --dp = 4 must divide --chips 6");
  EXPECT_EQ(refusal({"--workload", "pipeline", "--chips", "8", "--mesh", "4x4"}),
            "--mesh: '4x4' is not allowed; the operator mesh of each replica: R*C = 16 must equal "
            "--chips 8 / (--stages 2 x --dp 1)");
  EXPECT_EQ(refusal({"--chips", "16", "--placement", "0-7", "--mesh", "4x4"}),
            "--mesh: '4x4' is not allowed; R*C = 16 must equal the 8 chips of --placement");
  EXPECT_EQ(refusal({"--workload", "chain", "--chips", "4096", "--steps", "10000"}),
            "--steps: '10000' is not allowed; --chips x --steps must be at most 16777216 ops "
            "(here 4096 x 10000)");
  EXPECT_EQ(
      refusal({"--workload", "gemm", "--chips", "4", "--gemm", "8,8,8", "--slices", "1,2,3,4"}),
      "--slices: '1,2,3,4' is not allowed; a list is one value per FC layer of the block "
      "(qkv, attn_out, ffn_up, ffn_down), for --workload llm, layer; else one value");
  EXPECT_EQ(refusal({"--workload", "gemm", "--chips", "1", "--gemm", "8,8,8", "--slices", "2"}),
            "--slices: '2' does not apply to --workload gemm on --chips 1 (one local GeMM); it is "
            "read on more chips");
  EXPECT_EQ(refusal({"--workload", "gemm", "--chips", "4", "--gemm", "100000000,100000000,8"}),
            "--gemm: '100000000,100000000,8' is not allowed; the matrix C = M x N would take "
            "2e+16 bytes; at most 281474976710656 (256 TiB) per matrix");
  absl::StatusOr<RawOptions> raw = ParseRunArgs({"--workload", "pipeline", "--chips", "8"});
  ASSERT_TRUE(raw.ok());
  const absl::StatusOr<RunOptions> o = ResolveRunOptions(*raw);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->batch, 8);  // --microbatches 8 x --dp 1.
  EXPECT_EQ(o->algorithm, "megatron");
}

}  // namespace
}  // namespace meshsim::sim
