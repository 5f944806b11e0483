// The resolved config that `meshsim run --format json` and `meshsim reshard --format json` print
// (and the archive stores): the values the run used, typed, and only the keys the run reads.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "formats/run_record.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "tests/cli/cli_testing.h"

namespace meshsim::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_cli::Cli;
using testing_cli::Result;

// One value of the flat `config` object: its text, and whether JSON has it as a string.
struct JsonValue {
  std::string text;
  bool is_string = false;
};

// The `"config": {...}` object of a JSON report, a flat object of strings and numbers: enough
// of a JSON reader for it (escapes are kept as written). Fails the test on anything else.
std::map<std::string, JsonValue> ConfigObject(const std::string& json) {
  std::map<std::string, JsonValue> config;
  size_t p = json.find("\"config\": {");
  EXPECT_NE(p, std::string::npos) << json;
  if (p == std::string::npos) return config;
  p += 11;
  const auto skip_space = [&] {
    while (p < json.size() && absl::ascii_isspace(static_cast<unsigned char>(json[p]))) ++p;
  };
  const auto string = [&]() -> std::string {
    std::string s;
    ++p;  // The opening quote.
    while (p < json.size() && json[p] != '"') {
      if (json[p] == '\\') s += json[p++];
      s += json[p++];
    }
    ++p;
    return s;
  };
  skip_space();
  while (p < json.size() && json[p] != '}') {
    if (json[p] == ',') ++p;
    skip_space();
    EXPECT_EQ(json[p], '"') << json.substr(p, 40);
    const std::string key = string();
    skip_space();
    EXPECT_EQ(json[p], ':') << json.substr(p, 40);
    ++p;
    skip_space();
    JsonValue v;
    if (json[p] == '"') {
      v.is_string = true;
      v.text = string();
    } else {
      const size_t end = json.find_first_of(",}", p);
      v.text = json.substr(p, end - p);
      p = end;
    }
    EXPECT_TRUE(config.emplace(key, v).second) << "key '" << key << "' twice";
    skip_space();
  }
  return config;
}

// The resolved options of `args` (a `meshsim run` command line without the subcommand).
RunOptions Resolve(const std::vector<std::string>& args) {
  absl::StatusOr<RawOptions> raw = ParseRunArgs(args);
  EXPECT_TRUE(raw.ok()) << raw.status();
  absl::StatusOr<RunOptions> o = ResolveRunOptions(*raw);
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? *o : RunOptions{};
}

// `meshsim run ARGS --format json`: no empty string anywhere, a number wherever the value is
// one, and every key the run reads (RunReads) and no other. Returns the config.
std::map<std::string, JsonValue> ExpectResolvedJson(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"run"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  const Result r = Cli(argv);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("\"\""))) << "an empty string";
  std::map<std::string, JsonValue> config = ConfigObject(r.out);
  const RunOptions o = Resolve(args);
  for (const auto& [key, value] : config) {
    EXPECT_TRUE(RunReads(key, o)) << key << " is not read: " << NotReadBy(key, o);
    EXPECT_FALSE(value.text.empty()) << key;
    if (value.is_string) {
      EXPECT_EQ(formats::TypeOfConfigValue(value.text), formats::ConfigValueType::kText)
          << key << ": the number '" << value.text << "' is a JSON string";
    } else {
      EXPECT_NE(formats::TypeOfConfigValue(value.text), formats::ConfigValueType::kText)
          << key << ": '" << value.text << "' is not a number";
    }
  }
  for (const std::string& key : RunOptionKeys()) {
    if (!RunReads(key, o)) {
      EXPECT_EQ(config.count(key), 0u) << key << " is not read";
    }
  }
  return config;
}

TEST(ResolvedConfigTest, LlmJsonHoldsTheModelAndTheTunedMeshAndSlicesTyped) {
  const auto config =
      ExpectResolvedJson({"--chips", "16", "--model", "gpt3", "--batch", "8", "--seq", "512"});
  EXPECT_EQ(config.at("hidden").text, "12288");
  EXPECT_FALSE(config.at("hidden").is_string);
  EXPECT_EQ(config.at("heads").text, "96");
  EXPECT_EQ(config.at("chips").text, "16");
  EXPECT_FALSE(config.at("chips").is_string);
  EXPECT_FALSE(config.at("link.bandwidth").is_string);
  EXPECT_TRUE(config.at("mesh").is_string);
  EXPECT_NE(config.at("mesh").text, "auto");
  EXPECT_EQ(std::count(config.at("slices").text.begin(), config.at("slices").text.end(), ','),
            3);  // The tuner's S per FC layer.
  for (const char* unread : {"stages", "seed", "bytes", "collective", "gemm", "steps", "step-time",
                             "chunks", "placement", "fattree.k", "nvlink.bandwidth"}) {
    EXPECT_EQ(config.count(unread), 0u) << unread;
  }
}

TEST(ResolvedConfigTest, LayerJsonHoldsTheModelAndTheLayerPluginsMesh) {
  const auto config = ExpectResolvedJson({"--chips", "8", "--workload", "layer", "--algorithm",
                                          "atp", "--model", "atp-m1", "--seq", "512"});
  EXPECT_EQ(config.at("hidden").text, "2048");
  EXPECT_FALSE(config.at("hidden").is_string);
  EXPECT_EQ(config.at("chunks").text, "1");
  EXPECT_EQ(config.at("mesh").text, "8x1");
  EXPECT_EQ(config.count("dataflow"), 0u);  // A layer plugin: no GeMM dataflow.
  EXPECT_EQ(config.count("slices"), 0u);
}

TEST(ResolvedConfigTest, PipelineJsonHoldsStagesAndSeedAsNumbers) {
  const auto config =
      ExpectResolvedJson({"--system",       "p3.8xlarge", "--chips", "8",  "--workload", "pipeline",
                          "--hidden",       "1024",       "--heads", "16", "--layers",   "4",
                          "--stages",       "2",          "--dp",    "2",  "--mesh",     "2x1",
                          "--microbatches", "4",          "--batch", "16", "--seq",      "512"});
  EXPECT_EQ(config.at("stages").text, "2");
  EXPECT_FALSE(config.at("stages").is_string);
  EXPECT_EQ(config.at("seed").text, "1");
  EXPECT_EQ(config.at("ffn").text, "4096");
  EXPECT_EQ(config.at("overlap").text, "1");
  EXPECT_EQ(config.count("model"), 0u);         // A custom model.
  EXPECT_EQ(config.at("node.gpus").text, "4");  // Read by the hierarchical topology.
}

TEST(ResolvedConfigTest, CollectiveJsonHoldsNoModelOrAlgorithm) {
  const auto config =
      ExpectResolvedJson({"--chips", "16", "--mesh", "4x4", "--workload", "collective",
                          "--collective", "allgather", "--bytes", "1MiB"});
  EXPECT_EQ(config.at("bytes").text, "1048576");
  EXPECT_FALSE(config.at("bytes").is_string);
  EXPECT_EQ(config.at("group").text, "row");
  for (const char* unread :
       {"model", "hidden", "batch", "seq", "algorithm", "dataflow", "slices", "stages", "seed"}) {
    EXPECT_EQ(config.count(unread), 0u) << unread;
  }
}

// The per-layer lists a config writes are read back only where they mean something.
TEST(ResolvedConfigTest, PerLayerListsAreBadInputElsewhere) {
  const auto refused = [](const std::vector<std::string>& args, const std::string& words) {
    std::vector<std::string> argv = {"run"};
    argv.insert(argv.end(), args.begin(), args.end());
    const Result r = Cli(argv);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(words));
  };
  refused(
      {"--chips", "16", "--workload", "gemm", "--gemm", "1024,1024,1024", "--slices", "4,4,4,4"},
      "--slices: '4,4,4,4' is not allowed; a list is one value per FC layer");
  refused({"--chips", "16", "--slices", "4,4"}, "--slices: '4,4' is not allowed");
  refused({"--chips", "16", "--dataflow", "os,xs,os,ls"}, "--dataflow: 'xs' is not allowed");
  refused({"--chips", "16", "--dataflow", "os,auto,os,ls"}, "--dataflow: 'auto' is not allowed");
  refused({"--chips", "16", "--workload", "layer", "--algorithm", "meshslice", "--hidden", "2048",
           "--seq", "512", "--dataflow", "rs,ls,rs,os"},
          "--dataflow: 'rs,ls,rs,os' is not allowed with --workload layer");
  // --model with other dimensions is a custom model, and --model is not read.
  refused({"--chips", "16", "--model", "gpt3", "--hidden", "1024"},
          "--model: 'gpt3' does not apply with --hidden");
}

TEST(ResolvedConfigTest, ReshardJsonIsTypedAndHoldsOnlyWhatItsSchedulerReads) {
  const std::vector<std::string> args = {
      "reshard",    "--system",        "p3.8xlarge", "--chips",         "16",  "--src-mesh",
      "2x4",        "--src-spec",      "S0RR",       "--src-placement", "0-7", "--dst-mesh",
      "2x4",        "--dst-placement", "8-15",       "--dst-spec",      "RRR", "--shape",
      "256,256,64", "--format",        "json"};
  const Result r = Cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("\"\"")));
  const auto config = ConfigObject(r.out);
  for (const auto& [key, value] : config) {
    if (value.is_string) {
      EXPECT_EQ(formats::TypeOfConfigValue(value.text), formats::ConfigValueType::kText) << key;
    }
  }
  EXPECT_EQ(config.at("chips").text, "16");
  EXPECT_FALSE(config.at("chips").is_string);
  EXPECT_FALSE(config.at("dtype-bytes").is_string);
  EXPECT_FALSE(config.at("link.bandwidth").is_string);
  EXPECT_EQ(config.at("seed").text, "1");  // Ensemble: greedy and DFS.
  EXPECT_EQ(config.count("dfs-budget"), 1u);
  for (const char* unread : {"workload", "model", "mesh", "stages", "placement"}) {
    EXPECT_EQ(config.count(unread), 0u) << unread;
  }

  std::vector<std::string> naive = args;
  naive.insert(naive.end() - 2, {"--scheduler", "naive"});
  const Result n = Cli(naive);
  ASSERT_EQ(n.status, 0) << n.err;
  const auto naive_config = ConfigObject(n.out);
  EXPECT_EQ(naive_config.count("seed"), 0u);
  EXPECT_EQ(naive_config.count("dfs-budget"), 0u);
}

}  // namespace
}  // namespace meshsim::sim
