// Plugin parameters on the command line (issue 23): `--param KEY=VALUE`, the plugin's own option
// (--chunks, --slices) and config-file keys set the same typed parameter, checked against the
// plugin's declaration (algorithms/registry.h); bad values exit 2 with one line; `list
// algorithms` prints each parameter's type, range and default.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace meshsim::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_cli::Cli;
using testing_cli::Result;

// The JSON of a run without its wall time: the same run prints the same text.
std::string RunJson(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--format", "json"});
  const Result r = Cli(args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::string out = r.out;
  const size_t wall = out.find("\"wall_s\": ");
  if (wall != std::string::npos) out.erase(wall, out.find(',', wall) - wall);
  return out;
}

const std::vector<std::string> kAtpLayer = {
    "--workload", "layer",       "--system", "dgx-a100", "--chips", "8",     "--mesh",
    "4x2",        "--algorithm", "atp",      "--model",  "atp-m1",  "--seq", "512"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(PluginParamTest, ParamChunksIsChunksBitForBit) {
  const std::string by_option = RunJson(With(kAtpLayer, {"--chunks", "4"}));
  const std::string by_param = RunJson(With(kAtpLayer, {"--param", "chunks=4"}));
  EXPECT_EQ(by_param, by_option);
  EXPECT_THAT(by_param, HasSubstr("\"chunks\": 4"));
  // And chunks changes the run: the parameter reaches the plugin.
  EXPECT_NE(RunJson(kAtpLayer), by_option);
  EXPECT_THAT(RunJson(kAtpLayer), HasSubstr("\"chunks\": 1"));
}

TEST(PluginParamTest, ConfigFileParamLineIsTheOption) {
  const std::string config = testing_cli::WriteTemp("param_chunks.ini", "param = chunks=2\n");
  EXPECT_EQ(RunJson(With(kAtpLayer, {"--config", config})),
            RunJson(With(kAtpLayer, {"--chunks", "2"})));
  // The command line's --param wins over the file's.
  EXPECT_EQ(RunJson(With(kAtpLayer, {"--config", config, "--param", "chunks=4"})),
            RunJson(With(kAtpLayer, {"--chunks", "4"})));
}

TEST(PluginParamTest, ParamSlicesIsSlices) {
  const std::vector<std::string> gemm = {"--chips", "16",      "--mesh", "4x4",   "--model",
                                         "gpt3",    "--batch", "8",      "--seq", "512"};
  EXPECT_EQ(RunJson(With(gemm, {"--param", "slices=2"})), RunJson(With(gemm, {"--slices", "2"})));
}

struct BadParam {
  std::vector<std::string> args;
  std::string message;  // The whole line after "meshsim: ".
};

void PrintTo(const BadParam& c, std::ostream* os) {
  for (const std::string& a : c.args) *os << a << " ";
}

class BadParamTest : public ::testing::TestWithParam<BadParam> {};

TEST_P(BadParamTest, ExitsTwoWithOneLineNamingKeyValueAndWhatIsAllowed) {
  const Result r = Cli(With({"run"}, GetParam().args));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err, "meshsim: " + GetParam().message + "\n");
}

const std::vector<std::string> kLayer = {"--workload", "layer", "--chips", "8",
                                         "--seq",      "512",   "--model", "atp-m1"};

INSTANTIATE_TEST_SUITE_P(
    Cli, BadParamTest,
    ::testing::Values(
        // Outside the declared values.
        BadParam{With(kLayer, {"--algorithm", "atp", "--param", "chunks=3"}),
                 "--param chunks: '3' is not allowed; allowed: 1, 2, 4"},
        BadParam{With(kLayer, {"--algorithm", "atp", "--chunks", "8"}),
                 "--chunks: '8' is not allowed; allowed: 1, 2, 4"},
        BadParam{With(kLayer, {"--algorithm", "tp2d", "--chunks", "2"}),
                 "--chunks: '2' is not allowed; allowed: 1"},
        BadParam{{"--chips", "16", "--param", "slices=5000"},
                 "--slices: '5000' is not allowed; must be at most 4096"},
        // Not a number.
        BadParam{
            With(kLayer, {"--algorithm", "atp", "--param", "chunks=two"}),
            "--param chunks: 'two' is not a valid value; expected a number, optionally with a unit "
            "(Ki, Mi, k, M, G)"},
        BadParam{With(kLayer, {"--algorithm", "atp", "--param", "chunks=1.5"}),
                 "--param chunks: '1.5' is not allowed; allowed: 1, 2, 4"},
        // An enum's values.
        BadParam{{"--chips", "16", "--param", "dataflow=xs"},
                 "--dataflow: 'xs' is not allowed; allowed: auto, os, ls, rs"},
        // Unknown to every plugin.
        BadParam{With(kLayer, {"--algorithm", "atp", "--param", "chunk=2"}),
                 "--param: 'chunk=2' is not allowed; 'chunk' is a parameter of no plugin; keys: "
                 "activations, chunks, dataflow, delay-dw, dp, dropout, group, matrix, max-flows, "
                 "microbatches, "
                 "overlap, recompute, reshard, reshard-scheduler, schedule, seed, slices, stages, "
                 "step-time, steps; did you mean chunks? (`meshsim list algorithms`, `list "
                 "workloads`)"},
        BadParam{{"--param", "chunks"},
                 "--param: 'chunks' is not allowed; expected KEY=VALUE, e.g. --param chunks=2; "
                 "keys: activations, chunks, dataflow, delay-dw, dp, dropout, group, matrix, "
                 "max-flows, microbatches, "
                 "overlap, recompute, reshard, reshard-scheduler, schedule, seed, slices, stages, "
                 "step-time, steps"},
        // Declared by other plugins than the run's: refused, never ignored.
        BadParam{With(kLayer, {"--algorithm", "meshslice", "--param", "chunks=1"}),
                 "--param chunks: '1' does not apply to --algorithm meshslice; it is read by "
                 "--algorithm atp, megatron, tp2d"},
        BadParam{With(kLayer, {"--algorithm", "atp", "--param", "slices=2"}),
                 "--param slices: '2' does not apply to --algorithm atp; it is read by --algorithm "
                 "meshslice, wang, summa, tp1d, fsdp"},
        BadParam{{"--param", "chunks=2"},
                 "--param chunks: '2' does not apply to --workload llm; it is read by --workload "
                 "layer, pipeline"},
        // Given twice.
        BadParam{With(kLayer, {"--algorithm", "atp", "--chunks", "2", "--param", "chunks=4"}),
                 "--param: 'chunks=4' is not allowed; chunks is also given as --chunks 2; give it "
                 "once"},
        // The layer's constraint on it.
        BadParam{With(kLayer, {"--algorithm", "atp", "--batch", "2", "--param", "chunks=4"}),
                 "--chunks: '4' is not allowed; the chunk count must divide --batch 2"}));

TEST(PluginParamTest, ListAlgorithmsPrintsTypedParameters) {
  const Result r = Cli({"list", "algorithms"});
  ASSERT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("--param chunks (int: 1, 2, 4; default 1): forward linear "
                               "layers run the batch in chunks"));
  EXPECT_THAT(r.out, HasSubstr("(also --chunks)"));
  EXPECT_THAT(r.out, HasSubstr("--param slices (int: auto, 1 to 4096; default auto): S, the "
                               "slice count"));
  EXPECT_THAT(r.out, HasSubstr("--param dataflow (enum: auto, os, ls, rs; default auto)"));
  EXPECT_THAT(r.out, HasSubstr("--param chunks (int: 1; default 1)"));  // tp2d
  EXPECT_THAT(r.out, HasSubstr("--mesh: square meshes only"));          // cannon
  EXPECT_THAT(Cli({"run", "--help"}).out, HasSubstr("--param arg"));
}

TEST(PluginParamTest, ListWorkloadsPrintsTypedOptions) {
  const Result r = Cli({"list", "workloads"});
  ASSERT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("--stages (int: 1 to 1024; default 2): pipeline stages"));
  EXPECT_THAT(r.out, HasSubstr("--steps (int: 1 to 16777216; default 8): steps per chip"));
  EXPECT_THAT(r.out, HasSubstr("--schedule (enum: gpipe, 1f1b, eager-1f1b; default eager-1f1b)"));
  EXPECT_THAT(r.out, HasSubstr("--overlap (bool: 0 or 1 (false, true); default 1)"));
}

}  // namespace
}  // namespace meshsim::sim
