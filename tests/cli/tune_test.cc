// Tests of `meshsim tune` (cli/tune.h) and of the autotuner behind `run --mesh auto --slices
// auto`, driven in-process through sim::Main.
#include "cli/tune.h"

#include <algorithm>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "algorithms/autotune/autotuner.h"
#include "cli/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "sim/tuning.h"
#include "tests/cli/cli_testing.h"

namespace meshsim::sim::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using testing_cli::Cli;
using testing_cli::Result;

// The small custom model the CLI tests tune: H = 1024, T = 8·512 = 4096.
const std::vector<std::string> kSmall = {"--hidden", "1024", "--batch", "8", "--seq", "512"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The autotuner's result for run-style options, straight from the library.
algorithms::TuneResult Direct(const std::vector<std::string>& run_args,
                              const algorithms::CostModel& cm) {
  const absl::StatusOr<RawOptions> raw = ParseRunArgs(run_args);
  EXPECT_TRUE(raw.ok()) << raw.status();
  const absl::StatusOr<RunOptions> o = ResolveRunOptions(*raw);
  EXPECT_TRUE(o.ok()) << o.status();
  const absl::StatusOr<algorithms::TuneProblem> p = MakeTuneProblem(*o);
  EXPECT_TRUE(p.ok()) << p.status();
  const absl::StatusOr<algorithms::TuneResult> r = algorithms::Autotune(*p, cm);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

std::string ExpectedJson(const algorithms::TuneResult& r) {
  std::vector<std::string> layers;
  for (const algorithms::LayerChoice& l : r.layers) {
    layers.push_back("{\"name\": \"" + l.name + "\", \"dataflow\": \"" +
                     algorithms::ToString(l.stationary) +
                     "\", \"slices\": " + std::to_string(l.slices) + "}");
  }
  return "\"layers\": [" + absl::StrJoin(layers, ", ") + "]}";
}

TEST(TuneCliTest, JsonIsTheCliObject) {
  const Result r = Cli({"tune", "--chips", "256", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  // One object on one line: {"mesh": "RxC", "estimate_s": x, "near_tie": b, "meshes": [5 ×
  // {mesh, slices, estimate_s, strict_estimate_s}], "layers": [4 × {name, dataflow, slices}]},
  // nothing else.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  const std::string mesh =
      R"(\{"mesh": "\d+x\d+", "slices": \[\d+, \d+, \d+, \d+\], "estimate_s": [0-9.e+-]+, )"
      R"("strict_estimate_s": [0-9.e+-]+\})";
  const std::regex shape(R"(^\{"mesh": "\d+x\d+", "estimate_s": [0-9.e+-]+, "near_tie": false, )"
                         R"("meshes": \[)" +
                         mesh + "(, " + mesh +
                         R"(){4}\], "layers": \[)"
                         R"(\{"name": "qkv", "dataflow": "os", "slices": \d+\}, )"
                         R"(\{"name": "attn_out", "dataflow": "ls", "slices": \d+\}, )"
                         R"(\{"name": "ffn_up", "dataflow": "os", "slices": \d+\}, )"
                         R"(\{"name": "ffn_down", "dataflow": "ls", "slices": \d+\}\]\}\n$)");
  EXPECT_TRUE(std::regex_match(r.out, shape)) << r.out;
  // The same choice as the library's, with the default (simulation-fitted) constants.
  const algorithms::TuneResult direct =
      Direct({"--chips", "256"}, algorithms::CostModel::SimulationFitted());
  EXPECT_THAT(r.out, StartsWith("{\"mesh\": \"" + direct.mesh.ToString() + "\""));
  EXPECT_THAT(r.out, HasSubstr(ExpectedJson(direct)));
  // And the measured constant set is selectable.
  const Result m =
      Cli({"tune", "--chips", "256", "--cost-model", "tpuv4-measured", "--format", "json"});
  ASSERT_EQ(m.status, 0) << m.err;
  const algorithms::TuneResult dm =
      Direct({"--chips", "256"}, algorithms::CostModel::Tpuv4Measured());
  EXPECT_THAT(m.out, StartsWith("{\"mesh\": \"" + dm.mesh.ToString() + "\""));
  EXPECT_THAT(m.out, HasSubstr(ExpectedJson(dm)));
}

TEST(TuneCliTest, TableNamesMeshLayersAndCandidates) {
  const Result r = Cli({"tune", "--chips", "256", "--model", "megatron-nlg"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* w : {"chosen mesh", "qkv", "attn_out", "ffn_up", "ffn_down", "4x64", "8x32",
                        "16x16", "32x8", "64x4", "<- chosen", "simulation-fitted"}) {
    EXPECT_THAT(r.out, HasSubstr(w));
  }
  EXPECT_THAT(r.out, Not(HasSubstr("validation")));
}

TEST(TuneCliTest, BadInputExitsTwoWithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"tune", "--cost-model", "tpuv5"}, {"--cost-model", "'tpuv5'", "tpuv4-measured"}},
      {{"tune", "--cost-model=fast"}, {"--cost-model", "'fast'"}},
      {{"tune", "--cost-model"}, {"--cost-model", "missing value"}},
      {{"tune", "--format", "csv"}, {"--format", "'csv'", "table, json"}},
      {{"tune", "--algorithm", "wang"}, {"--algorithm", "'wang'", "meshslice"}},
      {{"tune", "--workload", "gemm"}, {"--workload", "'gemm'", "llm"}},
      {{"tune", "--slices", "4"}, {"--slices", "'4'"}},
      {{"tune", "--chips", "8"}, {"--chips", "8"}},
      {{"tune", "--model", "gpt5"}, {"--model", "'gpt5'"}},
      {{"tune", "--bogus", "1"}, {"--bogus"}},
  };
  for (const auto& [args, words] : cases) {
    const Result r = Cli(args);
    SCOPED_TRACE(absl::StrJoin(args, " "));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_THAT(r.err, StartsWith("meshsim: "));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const std::string& w : words) EXPECT_THAT(r.err, HasSubstr(w));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(TuneCliTest, HelpListsTheTuneOptions) {
  const Result r = Cli({"tune", "--help"});
  ASSERT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("--cost-model simulation-fitted|simulation-fitted-max|"
                               "authors-simulation|tpuv4-measured"));
  EXPECT_THAT(r.out, HasSubstr("--validate"));
}

// The resolved config's value of `key` in a `run --format json` output.
// A config value of `--format json` output: a string's text, or a number as printed.
std::string ConfigValue(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  const size_t at = json.find(needle, json.find("\"config\""));
  if (at == std::string::npos) return "<missing>";
  size_t begin = at + needle.size();
  if (json[begin] == '"') return json.substr(begin + 1, json.find('"', begin + 1) - begin - 1);
  return json.substr(begin, json.find_first_of(",}", begin) - begin);
}

TEST(RunAutoTest, MeshAndSlicesAutoUseTheTuner) {
  const std::vector<std::string> opts = With({"--chips", "64"}, kSmall);
  const algorithms::TuneResult tuned = Direct(opts, RunCostModel());
  const Result r =
      Cli(With({"run", "--mesh", "auto", "--slices", "auto", "--format", "json"}, opts));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ConfigValue(r.out, "mesh"), tuned.mesh.ToString());
  EXPECT_EQ(ConfigValue(r.out, "slices"), absl::StrJoin(tuned.LayerSlices(), ","));
  // The tuner's mesh for 64 chips is one of its candidates.
  EXPECT_THAT(std::vector<std::string>({"4x16", "8x8", "16x4"}),
              testing::Contains(tuned.mesh.ToString()));

  // A given mesh with --slices auto: the tuner's S for that mesh.
  algorithms::TuneResult on_16x4 = Direct(With(opts, {"--mesh", "16x4"}), RunCostModel());
  const Result g = Cli(With({"run", "--mesh", "16x4", "--format", "json"}, opts));
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(ConfigValue(g.out, "mesh"), "16x4");
  EXPECT_EQ(ConfigValue(g.out, "slices"), absl::StrJoin(on_16x4.LayerSlices(), ","));

  // A given S is used as given.
  const Result s = Cli(With({"run", "--slices", "2", "--format", "json"}, opts));
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(ConfigValue(s.out, "mesh"), tuned.mesh.ToString());
  EXPECT_EQ(ConfigValue(s.out, "slices"), "2");

  // Other algorithms keep the squarest mesh and the plugin's default S (Wang: P = 8 per layer),
  // which the config shows resolved, not as "auto".
  const Result c = Cli(With({"run", "--algorithm", "wang", "--format", "json"}, opts));
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(ConfigValue(c.out, "mesh"), "8x8");
  EXPECT_EQ(ConfigValue(c.out, "slices"), "8,8,8,8");
  EXPECT_EQ(ConfigValue(c.out, "dataflow").find("auto"), std::string::npos);
  EXPECT_NE(ConfigValue(c.out, "hidden"), "0");
}

TEST(RunAutoTest, FallsBackToTheSquarestMeshWithoutTunerCandidates) {
  // 8 chips: no (4·2^k, C ≥ 4) shape; MeshSlice runs on the squarest mesh with per-layer S
  // tuned for it.
  const Result r = Cli(With({"run", "--chips", "8", "--format", "json"}, kSmall));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ConfigValue(r.out, "mesh"), "2x4");
  const std::string slices = ConfigValue(r.out, "slices");
  EXPECT_EQ(std::count(slices.begin(), slices.end(), ','), 3) << slices;
}

TEST(TuneValidateTest, TablePrintsEstimateBesideSimulation) {
  const Result r = Cli(With({"tune", "--chips", "16", "--validate"}, kSmall));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* w : {"validation", "estimate_ms", "simulated_ms", "est_util", "sim_util",
                        "mesh shape:", "S of qkv:", "S of ffn_down:", "tuned", "sim best"}) {
    EXPECT_THAT(r.out, HasSubstr(w));
  }
  EXPECT_THAT(r.err, HasSubstr("simulating mesh 4x4"));
  // H = 1024 on 4x4: every layer slices 1024/4/8 = 32 → S ∈ {1, 4, 8, 16, 32}: one mesh row and
  // 4 layers × 5 slice rows.
  int rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("mesh   4x4 ", 0) == 0 || line.rfind("slices 4x4 ", 0) == 0) ++rows;
  }
  EXPECT_EQ(rows, 1 + 4 * 5) << r.out;
  std::cout << r.out;
}

TEST(TuneValidateTest, JsonAddsTheValidationArray) {
  const Result r = Cli(With(
      {"tune", "--chips", "16", "--validate", "--format", "json", "--cost-model", "tpuv4-measured"},
      kSmall));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  EXPECT_THAT(r.out, StartsWith("{\"mesh\": \"4x4\", \"estimate_s\": "));
  EXPECT_THAT(r.out, HasSubstr("\"validation\": [{\"kind\": \"mesh\", \"mesh\": \"4x4\""));
  EXPECT_THAT(r.out, HasSubstr("{\"kind\": \"slices\", \"mesh\": \"4x4\", \"layer\": \"qkv\""));
  for (const char* w :
       {"\"simulated_s\": ", "\"estimated_utilization\": ", "\"simulated_utilization\": ",
        "\"tuned\": true", "\"simulated_best\": true"}) {
    EXPECT_THAT(r.out, HasSubstr(w));
  }
}

TEST(SimulateWithLayerSlicesTest, ConfigShowsThePerLayerSlices) {
  const absl::StatusOr<RawOptions> raw =
      ParseRunArgs(With({"--chips", "16", "--mesh", "4x4"}, kSmall));
  ASSERT_TRUE(raw.ok());
  const absl::StatusOr<RunOptions> o = ResolveRunOptions(*raw);
  ASSERT_TRUE(o.ok());
  const absl::StatusOr<formats::RunRecord> rec = SimulateWithLayerSlices(*o, {1, 4, 8, 2});
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::string slices;
  for (const auto& [k, v] : rec->config) {
    if (k == "slices") slices = v;
  }
  EXPECT_EQ(slices, "1,4,8,2");
  EXPECT_GT(rec->Metric("makespan_s"), 0);
}

}  // namespace
}  // namespace meshsim::sim::cli
