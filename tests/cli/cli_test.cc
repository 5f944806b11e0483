// End-to-end tests of the `meshsim` command line, driven in-process through sim::Main.
#include "cli/cli.h"

#include <hdf5.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "sim/workload_registry.h"
#include "tests/cli/cli_testing.h"

namespace meshsim::sim::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing_cli::Cli;
using testing_cli::Result;
using testing_cli::TempPath;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The source tree: $MESHSIM_SOURCE_DIR (set by ctest), else the path compiled in.
std::string SourceDir() {
  const char* d = std::getenv("MESHSIM_SOURCE_DIR");
  return d ? d : MESHSIM_SOURCE_DIR_DEFAULT;
}

// A bad-input case: the arguments, and words the one-line message must contain (the key and
// the value it names).
struct BadCase {
  std::vector<std::string> args;
  std::vector<std::string> words;
};

void PrintTo(const BadCase& c, std::ostream* os) {
  for (const std::string& a : c.args) *os << a << " ";
}

class BadInputTest : public testing::TestWithParam<BadCase> {};

TEST_P(BadInputTest, ExitsTwoWithOneLineNamingKeyAndValue) {
  const std::string out_path = TempPath("bad_input_should_not_exist.h5");
  fs::remove(out_path);
  std::vector<std::string> args = GetParam().args;
  const Result r = Cli(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, StartsWith("meshsim: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const std::string& w : GetParam().words) EXPECT_THAT(r.err, HasSubstr(w));
  EXPECT_FALSE(fs::exists(out_path)) << "a bad run left an output file";
}

const std::string kNoFile = "/nonexistent-meshsim-dir/x.h5";

INSTANTIATE_TEST_SUITE_P(
    Cli, BadInputTest,
    testing::Values(
        BadCase{{"run", "--bogus", "1"}, {"--bogus", "unknown option"}},
        BadCase{{"run", "--chips", "abc"}, {"--chips", "'abc'"}},
        BadCase{{"run", "--chips", "0"}, {"--chips", "'0'", "at least 1"}},
        BadCase{{"run", "--chips", "-4"}, {"--chips", "'-4'", "at least 1"}},
        BadCase{{"run", "--chips", "2.5"}, {"--chips", "'2.5'", "whole number"}},
        BadCase{{"run", "--chips", "16", "--mesh", "4x5"}, {"--mesh", "'4x5'", "R*C = 20"}},
        BadCase{{"run", "--mesh", "banana"}, {"--mesh", "'banana'", "RxC"}},
        BadCase{{"run", "--system", "tpuv9"},
                {"--system", "'tpuv9'", "tpuv4, tpuv4-slice, a100, v100"}},
        BadCase{{"run", "--topology", "hypercube"}, {"--topology", "'hypercube'", "torus2d"}},
        BadCase{{"run", "--topology", "graphviz:/nonexistent.dot"}, {"--topology", "cannot read"}},
        BadCase{{"run", "--workload", "video"}, {"--workload", "'video'", "llm, gemm"}},
        BadCase{{"run", "--model", "gpt5"}, {"--model", "'gpt5'", "megatron-nlg"}},
        BadCase{{"run", "--pass", "sideways"}, {"--pass", "'sideways'", "fwd, bwd, train"}},
        BadCase{{"run", "--gemm", "8,8"}, {"--gemm", "'8,8'", "M,N,K"}},
        BadCase{{"run", "--gemm", "8,0,8"}, {"--gemm", "'8,0,8'", "positive"}},
        BadCase{{"run", "--workload", "gemm"}, {"--gemm", "required"}},
        BadCase{{"run", "--workload", "collective", "--bytes", "1MiB"},
                {"--collective", "required"}},
        BadCase{{"run", "--collective", "gossip"}, {"--collective", "'gossip'", "allgather"}},
        BadCase{{"run", "--bytes", "12XB"}, {"--bytes", "'12XB'", "MiB"}},
        BadCase{{"run", "--bytes", "0"}, {"--bytes", "'0'", "at least 1"}},
        BadCase{{"run", "--group", "diagonal"}, {"--group", "'diagonal'", "row, col, all"}},
        BadCase{{"run", "--algorithm", "magic"}, {"--algorithm", "'magic'", "meshslice"}},
        BadCase{{"run", "--dataflow", "xs"}, {"--dataflow", "'xs'", "os, ls, rs"}},
        BadCase{{"run", "--slices", "0"}, {"--slices", "'0'"}},
        // The model has one DMA engine per link: nothing reads nic.ports.
        BadCase{{"run", "--set", "nic.ports=2"}, {"nic.ports", "unknown system parameter"}},
        BadCase{{"run", "--format", "xml"}, {"--format", "'xml'", "table, json, csv"}},
        BadCase{{"run", "--step-time", "10 parsecs"}, {"--step-time", "'10 parsecs'", "us"}},
        BadCase{{"run", "--set", "warp.speed=9"}, {"warp.speed", "unknown system parameter"}},
        BadCase{{"run", "--set", "link.bandwidth"}, {"--set", "'link.bandwidth'", "KEY=VALUE"}},
        BadCase{{"run", "--set", "link.bandwidth=-5"}, {"link.bandwidth", "'-5'", "out of range"}},
        BadCase{{"run", "--set", "link.bandwidth=fast"}, {"link.bandwidth", "'fast'", "GB/s"}},
        BadCase{{"run", "--system", "dgx-a100", "--stack", "pytorch-nccl", "--set",
                 "stack.kernel.in_order=0"},
                {"stack.kernel.single_queue", "'1'", "stack.kernel.in_order"}},
        BadCase{{"run", "--set", "chip.cores=1.5"}, {"chip.cores", "'1.5'", "whole number"}},
        BadCase{{"run", "--link.bandwidth", "0"}, {"link.bandwidth", "'0'", "out of range"}},
        BadCase{{"run", "--set", "comm.ring_directions=3"}, {"comm.ring_directions", "'3'"}},
        BadCase{{"run", "--workload", "chain", "--out", kNoFile},
                {"--out", kNoFile, "does not exist"}},
        BadCase{{"run", "--workload", "chain", "--trace", "/nonexistent-meshsim-dir/t.json"},
                {"--trace", "does not exist"}},
        BadCase{{"run", "--workload", "chain", "--out", "/"}, {"--out", "'/'", "directory"}},
        BadCase{{"run", "--config", "/nonexistent/meshsim.ini"},
                {"--config", "/nonexistent/meshsim.ini"}},
        BadCase{{"run", "--chips", "4", "--chips", "8"}, {"chips", "more than once"}},
        // Simulated time past 10^6 s: exit 2 with the limit, not SIGABRT on int64 overflow.
        BadCase{{"run", "--chips", "1", "--workload", "chain", "--steps", "10000", "--step-time",
                 "1000"},
                {"simulated time passes the limit", "1000000"}},
        BadCase{{"run", "--workload", "collective", "--collective", "allgather", "--chips", "4",
                 "--mesh", "2x2", "--bytes", "1TiB", "--set", "link.bandwidth=1000"},
                {"simulated time passes the limit"}},
        // One parser for every subcommand: stray words, swallowed values, abbreviations.
        BadCase{{"run", "64"}, {"'64'", "unexpected argument"}},
        BadCase{{"run", "--chips", "16", "run.h5"}, {"'run.h5'", "unexpected argument"}},
        BadCase{{"run", "--", "--chips", "8"}, {"'--chips'", "unexpected argument"}},
        BadCase{{"tune", "--validate", "yes"}, {"'yes'", "unexpected argument"}},
        BadCase{{"compare", "--chips", "16", "extra"}, {"'extra'", "unexpected argument"}},
        BadCase{{"run", "--trace", "--model=atp-m1"}, {"--trace", "missing value", "--model"}},
        BadCase{{"run", "--chip", "16"}, {"--chip", "unknown option"}},
        BadCase{{"report", "a.h5", "b.h5"}, {"'b.h5'", "unexpected argument"}},
        BadCase{{"trace", "a.h5", "b.h5", "--out", "t.json"}, {"'b.h5'", "unexpected argument"}},
        BadCase{{"list", "models", "systems"}, {"'systems'", "unexpected argument"}},
        BadCase{{"show", "system", "tpuv4", "x"}, {"'x'", "unexpected argument"}},
        BadCase{{"sweep", "a.ini", "b.ini"}, {"'b.ini'", "unexpected argument"}},
        BadCase{{"merge", "out.h5"}, {"merge", "OUT.h5 IN.h5"}},
        BadCase{{"run", "--config", "/"}, {"--config", "'/'", "directory"}},
        BadCase{{"sweep", "/"}, {"'/'", "directory"}},
        BadCase{{"sweep", "/nonexistent/x.ini", "--out", ""}, {"--out", "empty path"}},
        BadCase{{"sweep", "a.ini", "--out", "x.json"}, {"--out", "'x.json'", ".h5"}},
        BadCase{{"run", "--workload", "chain", "--out", "/tmp/meshsim_same.h5", "--trace",
                 "/tmp/../tmp/meshsim_same.h5"},
                {"--trace", "'/tmp/../tmp/meshsim_same.h5'", "HDF5 archive name"}},
        // An archive's name ends in .h5, .hdf5 or .he5 (--out x.json once wrote HDF5 silently);
        // a trace's in .json, .pftrace or .perfetto-trace, or --trace-format names its format.
        BadCase{{"run", "--workload", "chain", "--out", "/tmp/meshsim_run.json"},
                {"--out: '/tmp/meshsim_run.json' is not an HDF5 archive name; allowed: a name "
                 "ending in .h5, .hdf5 or .he5"}},
        BadCase{{"run", "--workload", "chain", "--out", "/tmp/meshsim_run"},
                {"--out", "'/tmp/meshsim_run'", ".h5, .hdf5 or .he5"}},
        BadCase{{"run", "--workload", "chain", "--out", "/tmp/.h5"},
                {"--out", "'/tmp/.h5'", ".h5, .hdf5 or .he5"}},
        BadCase{{"compare", "--chips", "4", "--algorithms", "meshslice", "--out", "/tmp/c.json"},
                {"--out", "'/tmp/c.json'", ".h5, .hdf5 or .he5"}},
        BadCase{{"reshard", "--src-mesh", "1x1", "--out", "/tmp/meshsim_reshard.txt"},
                {"--out", "'/tmp/meshsim_reshard.txt'", ".h5, .hdf5 or .he5"}},
        BadCase{{"merge", "/tmp/meshsim_merged.json", "/tmp/meshsim_in.h5"},
                {"'/tmp/meshsim_merged.json'", ".h5, .hdf5 or .he5"}},
        BadCase{{"run", "--workload", "chain", "--trace", "/tmp/meshsim_run.h5"},
                {"--trace", "'/tmp/meshsim_run.h5'", "HDF5 archive name", ".json"}},
        BadCase{{"run", "--workload", "chain", "--trace", "/tmp/meshsim_run.txt"},
                {"--trace", "'/tmp/meshsim_run.txt'", "no trace extension", "--trace-format"}},
        BadCase{{"run", "--workload", "chain", "--trace", "/tmp/meshsim_run.hdf5", "--trace-format",
                 "json"},
                {"--trace", "'/tmp/meshsim_run.hdf5'", "HDF5 archive name"}},
        BadCase{{"trace", "x.h5", "--out", "/tmp/meshsim_trace.h5"},
                {"--out", "'/tmp/meshsim_trace.h5'", "HDF5 archive name"}},
        BadCase{{"trace", "x.h5", "--out", "/tmp/meshsim_trace"},
                {"--out", "'/tmp/meshsim_trace'", "no trace extension"}},
        BadCase{{"run", "--model", "a\nb"}, {"--model", "'a\\nb'"}},  // Still one line.
        // Inputs that cannot be simulated sensibly: bounded, with the limit in the message.
        BadCase{{"run", "--workload", "chain", "--steps", "1048577"},
                {"--steps", "'1048577'", "16777216"}},
        BadCase{{"run", "--set", "core.scratchpad_bytes=4096"},
                {"core.scratchpad_bytes", "'4096'", "196608"}},
        BadCase{{"run", "--chips", "16385"}, {"--chips", "'16385'", "16384"}},
        // Once SIGABRT in PlanGemm: no tile fits an accumulator of under one fp32 element.
        BadCase{{"run", "--set", "core.accumulator_bytes=2"},
                {"core.accumulator_bytes", "'2'", "65536"}},
        // Products of sizes: once an int64 overflow (SIGABRT on a negative vector op, or a
        // silent endless loop over 2^52 tiles), now bounded before lowering.
        BadCase{{"run", "--workload", "layer", "--chips", "16", "--batch", "1073741824"},
                {"--batch", "'1073741824'", "256 TiB"}},
        BadCase{
            {"run", "--workload", "layer", "--chips", "16", "--batch", "1", "--seq", "1073741824"},
            {"--seq", "'1073741824'", "attention scores", "256 TiB"}},
        BadCase{{"run", "--workload", "gemm", "--chips", "1", "--gemm",
                 "4294967296,4294967296,4294967296"},
                {"--gemm", "'4294967296,4294967296,4294967296'", "256 TiB"}},
        // Work that cannot finish before the horizon even at peak: refused before it starts,
        // not after hours of simulation.
        BadCase{{"run", "--workload", "gemm", "--chips", "1", "--gemm", "8000000,8000000,8000000"},
                {"simulated time passes the limit", "1.024e+21 flop"}},
        BadCase{{"frobnicate"}, {"'frobnicate'", "not a command"}},
        // "Did you mean" when a known word is near (core/did_you_mean.h), in the same line.
        BadCase{{"run", "--chip", "16"},
                {"meshsim: --chip: unknown option of `meshsim run`; did you mean --chips? (see "
                 "`meshsim run --help`)\n"}},
        BadCase{{"trace", "x.h5", "--ouy", "t.json"}, {"--ouy", "did you mean --out?"}},
        BadCase{{"run", "--link.bandwith", "1GB/s"}, {"did you mean --link.bandwidth?"}},
        BadCase{{"run", "--set", "link.bandwith=1GB/s"},
                {"--set: unknown system parameter 'link.bandwith'; did you mean link.bandwidth? "
                 "(known: "}},
        BadCase{{"run", "--set", "node.fabric=nvswtch"},
                {"node.fabric", "'nvswtch'", "did you mean nvswitch?"}},
        BadCase{{"runn", "--chips", "4"},
                {"'runn' is not a command", "; did you mean run? (meshsim --help)"}},
        BadCase{{"compair"}, {"'compair'", "did you mean compare?"}},
        BadCase{{"run", "--algorithm", "meshslise"},
                {"--algorithm: 'meshslise' is not allowed", "did you mean meshslice?"}},
        BadCase{{"compare", "--algorithms", "meshslice,summ"},
                {"--algorithm: 'summ' is not allowed", "did you mean summa?"}},
        BadCase{{"run", "--topology", "fatree"}, {"--topology", "did you mean fattree?"}},
        BadCase{{"run", "--system", "tpuv9"},
                {"--system: unknown system 'tpuv9'; did you mean tpuv4? (known: "}},
        BadCase{{"run", "--workload", "pipline"}, {"--workload", "did you mean pipeline?"}},
        BadCase{{"run", "--model", "megatron-ngl"}, {"--model", "did you mean megatron-nlg?"}},
        BadCase{{"run", "--collective", "allgahter"}, {"--collective", "did you mean allgather?"}},
        BadCase{{"list", "algoritms"}, {"list: 'algoritms'", "did you mean algorithms?"}},
        BadCase{{"tune", "--cost-model", "simulation-fited"},
                {"--cost-model: 'simulation-fited'", "did you mean simulation-fitted?"}},
        BadCase{{"tune", "--format", "jsno"}, {"--format: 'jsno'", "did you mean json?"}},
        BadCase{{"trace", "x.h5", "--out", "/tmp/t.json", "--detail", "ful"},
                {"--detail: 'ful'", "did you mean full?"}},
        BadCase{
            {"run", "--workload", "chain", "--trace", "/tmp/t.json", "--trace-format", "perfeto"},
            {"--trace-format: 'perfeto'", "did you mean perfetto?"}},
        BadCase{{"report", "x.h5", "--format", "jsno"}, {"--format", "did you mean json?"}},
        BadCase{{"reshard", "--system",        "p3.8xlarge", "--chips",    "8",  "--src-mesh",
                 "1x1",     "--src-placement", "0",          "--src-spec", "RR", "--dst-mesh",
                 "1x1",     "--dst-placement", "4",          "--dst-spec", "RR", "--shape",
                 "64,64",   "--strategy",      "brodcast"},
                {"--strategy: 'brodcast'", "did you mean broadcast?"}},
        BadCase{{"list", "spaceships"}, {"'spaceships'", "algorithms"}},
        BadCase{{"show", "system", "cray1"}, {"'cray1'", "tpuv4"}},
        BadCase{{"show", "chip"}, {"'chip'", "show system NAME"}},
        BadCase{{"report", "/nonexistent/r.h5"}, {"/nonexistent/r.h5"}},
        BadCase{{"report", "x.h5", "--format", "yaml"}, {"--format", "'yaml'"}},
        BadCase{{"trace", "x.h5"}, {"--out", "required"}},
        BadCase{{"trace", "x.h5", "--out", "/nonexistent-dir/t.json"}, {"--out", "does not exist"}},
        BadCase{{"trace", "x.h5", "--colour", "red"}, {"--colour", "unknown option"}},
        BadCase{{"trace", "x.h5", "--out", "/tmp/t.json", "--detail", "huge"},
                {"--detail", "'huge'", "auto, full, minimal"}},
        BadCase{{"trace", "x.h5", "--out", "/tmp/t.pftrace", "--trace-format", "protobuf"},
                {"--trace-format", "'protobuf'", "json, perfetto"}},
        BadCase{{"trace", "x.h5", "--out", "/tmp/t.pftrace", "--trace-format", "json"},
                {"--trace-format", "'json'", "/tmp/t.pftrace", "perfetto"}},
        BadCase{{"run", "--workload", "chain", "--trace", "/tmp/t.json", "--trace-format", "xml"},
                {"--trace-format", "'xml'", "json, perfetto"}},
        BadCase{
            {"run", "--workload", "chain", "--trace", "/tmp/t.json", "--trace-format", "perfetto"},
            {"--trace-format", "'perfetto'", "/tmp/t.json"}},
        BadCase{{"run", "--workload", "chain", "--trace-detail", "most"},
                {"--trace-detail", "'most'", "auto, full, minimal"}},
        // Memory budgets (--max-ops, --max-flows): refused before the graph or the flows exist,
        // with what the run would need and the limit.
        BadCase{{"run", "--max-ops", "0"}, {"--max-ops", "'0'", "at least 1"}},
        BadCase{{"run", "--max-ops", "lots"}, {"--max-ops", "'lots'"}},
        BadCase{{"run", "--max-ops", "5e9"}, {"--max-ops", "'5e9'", "at most 4294967295"}},
        BadCase{{"run", "--max-flows", "-1"}, {"--max-flows", "'-1'", "at least 1"}},
        BadCase{{"run", "--workload", "chain", "--out", "/tmp/meshsim_budget.h5",
                 "--max-timeline-bytes", "0"},
                {"--max-timeline-bytes", "'0'", "at least 1"}},
        BadCase{{"run", "--workload", "chain", "--out", "/tmp/meshsim_budget.h5",
                 "--max-timeline-bytes", "lots"},
                {"--max-timeline-bytes", "'lots'"}},
        // The timeline kept for --out/--trace: bounded while it grows, refused as it passes.
        BadCase{{"run", "--chips", "16", "--mesh", "4x4", "--algorithm", "summa", "--hidden", "512",
                 "--batch", "8", "--seq", "256", "--trace", "/tmp/meshsim_budget.json",
                 "--max-timeline-bytes", "64KiB"},
                {"--chips", "'16'", "--algorithm summa on mesh 4x4 and --trace",
                 "passes the limit of 64 KiB (--max-timeline-bytes 65536)", "counter samples",
                 "ops done", "raise --max-timeline-bytes"}},
        // Folded (sim/fold.h): the box's tables fit, the whole run's would not.
        BadCase{{"run", "--chips", "64", "--mesh", "8x8", "--batch", "16", "--seq", "512", "--out",
                 "/tmp/meshsim_budget_folded.h5", "--max-timeline-bytes", "8MiB"},
                {"--chips", "'64'", "passes the limit of 8.0 MiB (--max-timeline-bytes 8388608)",
                 "276928 counter samples", "for every chip of the finished run",
                 "raise --max-timeline-bytes"}},
        BadCase{{"run", "--chips", "16", "--algorithm", "tp1d", "--max-ops", "1000"},
                {"--chips", "'16'", "--algorithm tp1d", "would hold 3702 ops at --slices auto",
                 "1302 at --slices 1, still too many", "limit of 1000 ops (--max-ops 1000)"}},
        BadCase{
            {"run", "--chips", "16", "--mesh", "4x4", "--algorithm", "summa", "--max-ops", "100"},
            {"--chips", "'16'", "--algorithm summa on mesh 4x4",
             "passes the limit of 100 ops while it is built"}},
        BadCase{
            {"run", "--chips", "8", "--workload", "layer", "--algorithm", "atp", "--max-ops", "20"},
            {"--chips", "'8'", "--workload layer", "passes the limit of 20 ops"}},
        BadCase{{"run", "--chips", "64", "--workload", "collective", "--collective", "alltoall",
                 "--group", "all", "--bytes", "1MiB", "--max-flows", "4031"},
                {"--chips", "'64'", "--collective alltoall --group all", "4032 flows", "P*(P-1)",
                 "limit of 4031 flows (--max-flows 4031)"}},
        BadCase{{"run", "--chips", "64", "--workload", "chain", "--out", "/tmp/meshsim_budget.h5",
                 "--max-ops", "100"},
                {"--chips", "'64'", "--workload chain", "limit of 100 ops"}},
        // System parameters only some topologies read, set to another value than the preset's
        // on a topology that does not (from --set or a config file's `set =`).
        BadCase{{"run", "--workload", "chain", "--set", "fattree.k=8"},
                {"--set: 'fattree.k=8' does not apply to --topology torus2d; it is read by "
                 "--topology fattree, hierarchical"}},
        BadCase{{"run", "--workload", "chain", "--system", "a100", "--chips", "8", "--set",
                 "nvlink.bandwidth=1e11"},
                {"--set: 'nvlink.bandwidth=1e11' does not apply to --topology switch",
                 "--topology hierarchical"}},
        BadCase{{"run", "--workload", "chain", "--topology", "fattree", "--set",
                 "comm.torus_algorithm=dimension-order"},
                {"--set: 'comm.torus_algorithm=dimension-order' does not apply to --topology "
                 "fattree; it is read by --topology torus2d, torus3d"}},
        BadCase{{"run", "--workload", "chain", "--topology", "mesh2d", "--set",
                 "comm.torus_algorithm=dimension-order"},
                {"does not apply to --topology mesh2d", "--topology torus2d, torus3d"}},
        BadCase{{"run", "--workload", "chain", "--topology", "mesh2d", "--set",
                 "torus.length2_links=1"},
                {"--set: 'torus.length2_links=1' does not apply to --topology mesh2d; it is read "
                 "by --topology ring, torus2d, torus3d"}},
        BadCase{{"run", "--set", "torus.length2_links=3"},
                {"torus.length2_links", "'3'", "allowed 1 to 2"}},
        BadCase{{"run", "--set", "comm.torus_algorithm=dimension"},
                {"comm.torus_algorithm", "'dimension'", "flat, dimension-order"}},
        BadCase{
            {"compare", "--chips", "16", "--algorithms", "meshslice,wang", "--set", "fattree.k=8"},
            {"--fattree.k: '8' is read by none of the compared runs (meshslice, wang)",
             "--topology fattree, hierarchical"}},
        // Options given that nothing reads for the run's workload, algorithm or other options:
        // refused (after their values are validated), naming what reads them. One per class.
        BadCase{{"run", "--workload", "gemm", "--gemm", "1024,1024,1024", "--chips", "4", "--bytes",
                 "1MiB"},
                {"--bytes: '1MiB' does not apply to --workload gemm; it is read by --workload "
                 "collective"}},
        BadCase{{"run", "--collective", "allgather"},
                {"--collective: 'allgather' does not apply to --workload llm",
                 "--workload collective"}},
        BadCase{{"run", "--group", "col"}, {"--group: 'col' does not apply to --workload llm"}},
        BadCase{{"run", "--gemm", "8,8,8"}, {"--gemm: '8,8,8' does not apply to --workload llm"}},
        BadCase{
            {"run", "--workload", "gemm", "--gemm", "64,64,64", "--chips", "4", "--model", "gpt3"},
            {"--model: 'gpt3' does not apply to --workload gemm",
             "--workload llm, layer, pipeline"}},
        BadCase{{"run", "--workload", "collective", "--collective", "allgather", "--bytes", "1MiB",
                 "--chips", "4", "--seq", "512"},
                {"--seq: '512' does not apply to --workload collective"}},
        BadCase{
            {"run", "--workload", "gemm", "--gemm", "64,64,64", "--chips", "4", "--pass", "fwd"},
            {"--pass: 'fwd' does not apply to --workload gemm"}},
        BadCase{{"run", "--model", "gpt3", "--hidden", "1024", "--chips", "16"},
                {"--model: 'gpt3' does not apply with --hidden"}},
        BadCase{{"run", "--workload", "layer", "--chips", "8", "--microbatches", "4"},
                {"--microbatches: '4' does not apply to --workload layer", "--workload pipeline"}},
        // --seed is read only where something is random: the pipeline's greedy resharding.
        BadCase{{"run", "--seed", "3"},
                {"--seed: '3' does not apply to --workload llm", "--workload pipeline"}},
        BadCase{{"run", "--workload", "pipeline", "--system", "p3.8xlarge", "--chips", "8",
                 "--model", "gpt-2.6b", "--mesh", "4x1", "--batch", "8", "--microbatches", "4",
                 "--reshard-scheduler", "dfs", "--seed", "3"},
                {"--seed: '3' does not apply to --reshard-scheduler dfs",
                 "--reshard-scheduler greedy, ensemble"}},
        BadCase{{"run", "--chunks", "1"},
                {"--chunks: '1' does not apply to --workload llm", "--workload layer, pipeline"}},
        BadCase{
            {"run", "--dropout", "0.1"},
            {"--dropout: '0.1' does not apply to --workload llm", "--workload layer, pipeline"}},
        BadCase{{"run", "--workload", "layer", "--chips", "8", "--dropout", "1"},
                {"--dropout: '1' is not allowed", "a probability in [0, 1)"}},
        BadCase{{"run", "--workload", "layer", "--chips", "8", "--dropout", "x"},
                {"--dropout: 'x' is not allowed", "a probability in [0, 1)"}},
        BadCase{{"run", "--workload", "stream", "--chips", "4"},
                {"--bytes: required by --workload stream"}},
        BadCase{{"run", "--chips", "16", "--algorithm", "collective", "--slices", "auto"},
                {"--slices: 'auto' does not apply to --algorithm collective",
                 "--algorithm meshslice, wang, summa, tp1d, fsdp"}},
        BadCase{
            {"run", "--workload", "layer", "--chips", "8", "--algorithm", "atp", "--slices", "2"},
            {"--slices: '2' does not apply to --algorithm atp"}},
        BadCase{{"run", "--workload", "layer", "--chips", "8", "--algorithm", "atp", "--dataflow",
                 "os"},
                {"--dataflow: 'os' does not apply to --algorithm atp", "meshslice, collective"}},
        BadCase{{"run", "--workload", "collective", "--collective", "allgather", "--bytes", "1MiB",
                 "--chips", "4", "--algorithm", "summa"},
                {"--algorithm: 'summa' does not apply to --workload collective"}},
        BadCase{
            {"run", "--workload", "gemm", "--gemm", "64,64,64", "--chips", "1", "--dataflow", "ls"},
            {"--dataflow: 'ls' does not apply to --workload gemm on --chips 1"}},
        BadCase{{"run", "--steps", "4"},
                {"--steps: '4' does not apply to --workload llm", "--workload chain"}},
        BadCase{{"run", "--workload", "gemm", "--gemm", "64,64,64", "--chips", "4", "--step-time",
                 "1us"},
                {"--step-time: '1us' does not apply to --workload gemm"}},
        BadCase{{"run", "--workload", "chain", "--trace-detail", "full"},
                {"--trace-detail: 'full' does not apply without --trace"}},
        BadCase{{"run", "--workload", "chain", "--trace-format", "json"},
                {"--trace-format: 'json' does not apply without --trace"}},
        BadCase{{"run", "--max-flows", "100"},
                {"--max-flows: '100' does not apply to --workload llm"}},
        BadCase{{"run", "--workload", "chain", "--max-timeline-bytes", "1GiB"},
                {"--max-timeline-bytes: '1GiB' does not apply without --out or --trace"}},
        BadCase{{"tune", "--chips", "16", "--bytes", "1MiB"},
                {"--bytes: '1MiB' does not apply to --workload llm"}},
        BadCase{{"compare", "--chips", "16", "--slices", "4", "--algorithms", "collective,cannon"},
                {"--slices: '4' is read by none of the compared runs (collective, cannon)",
                 "--algorithm meshslice, wang"}}),
    [](const testing::TestParamInfo<BadCase>& info) {
      // e.g. "7_run_chips_0": the index, then the arguments with non-alphanumerics dropped.
      std::string name = std::to_string(info.index);
      for (const std::string& a : info.param.args) {
        name += "_";
        for (char c : a.substr(0, 24)) {
          if (std::isalnum(static_cast<unsigned char>(c))) name += c;
        }
      }
      return name;
    });

// A --config file is the command line written down, for one run: a key of it that the run does
// not read is refused like the option would be (sweeps share keys between runs; configs do not).
TEST(CliTest, ConfigKeysNothingReadsAreRefused) {
  const std::string cfg =
      testing_cli::WriteTemp("unread.ini", "workload = gemm\ngemm = 64,64,64\nbytes = 1MiB\n");
  const Result r = Cli({"run", "--config", cfg, "--chips", "4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--bytes: '1MiB' does not apply to --workload gemm"));
  // The command line decides the workload; the file's collective keys then apply.
  const std::string both = testing_cli::WriteTemp(
      "collective.ini", "collective = allgather\nbytes = 1MiB\ngroup = row\n");
  EXPECT_EQ(Cli({"run", "--config", both, "--chips", "4", "--workload", "collective"}).status, 0);
  EXPECT_EQ(Cli({"run", "--config", both, "--chips", "4", "--workload", "chain"}).status, 2);
}

// compare runs several algorithms on the same options: an option need only be read by one.
TEST(CliCompareTest, AnOptionOneAlgorithmReadsIsAllowed) {
  const Result r =
      Cli({"compare", "--chips", "4", "--mesh", "2x2", "--hidden", "256", "--batch", "4", "--seq",
           "128", "--slices", "1", "--algorithms", "meshslice,collective"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// Nothing near: no guess (a two-letter value is never a "typo" of another two-letter one).
TEST(CliTest, NoSuggestionWhenNothingIsNear) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"frobnicate"},
                                               {"run", "--bogus", "1"},
                                               {"run", "--dataflow", "xs"},
                                               {"run", "--workload", "video"},
                                               {"run", "--set", "warp.speed=9"},
                                               {"list", "spaceships"}}) {
    const Result r = Cli(args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_THAT(r.err, Not(HasSubstr("did you mean"))) << r.err;
  }
}

TEST(CliTest, UnknownConfigKeySuggestsTheNearestKey) {
  const testing_cli::ScopedTempDir dir;
  const std::string cfg = dir.Path("typo.ini");
  std::ofstream(cfg) << "workload = chain\nchip = 4\n";
  Result r = Cli({"run", "--config", cfg});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "meshsim: --config: unknown key 'chip' in '" + cfg +
                       "'; did you mean chips? (see `meshsim run --help`)\n");
  std::ofstream(cfg) << "workload = chain\nlink.bandwith = 1GB/s\n";
  r = Cli({"compare", "--config", cfg});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("'link.bandwith' in '" + cfg +
                               "'; did you mean link.bandwidth? (see `meshsim compare --help`)"));
}

TEST(CliTest, UnknownConfigKeyNamesKeyAndFile) {
  const std::string cfg = TempPath("bad.ini");
  std::ofstream(cfg) << "chips = 4\nwarp = 9\n";
  const Result r = Cli({"run", "--config", cfg});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("unknown key 'warp'"), HasSubstr(cfg)));
}

// "command-line values win" (--config's help) holds for system parameters too: a file's
// `set = KEY=VALUE` once overrode the command line's --set KEY=... and --KEY.
TEST(CliTest, CommandLineParametersWinOverConfigFileSets) {
  const std::string cfg = testing_cli::WriteTemp(
      "sets.ini", "workload = chain\nchips = 4\nset = link.bandwidth=1GB/s\n");
  for (const std::vector<std::string>& given :
       {std::vector<std::string>{"--set", "link.bandwidth=2GB/s"},
        std::vector<std::string>{"--link.bandwidth", "2GB/s"}}) {
    std::vector<std::string> args = {"run", "--config", cfg, "--format", "json"};
    args.insert(args.end(), given.begin(), given.end());
    const Result r = Cli(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"link.bandwidth\": 2e+09,")) << given[0];
  }
  const Result file_only = Cli({"run", "--config", cfg, "--format", "json"});
  ASSERT_EQ(file_only.status, 0) << file_only.err;
  EXPECT_THAT(file_only.out, HasSubstr("\"link.bandwidth\": 1e+09,"));
}

TEST(CliTest, MalformedValueInConfigFileIsBadInput) {
  const std::string cfg = TempPath("bad_value.ini");
  std::ofstream(cfg) << "workload = chain\nchips = many\n";
  const Result r = Cli({"run", "--config", cfg});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--chips"), HasSubstr("'many'")));
}

// The extensions that name an archive and a trace, in any case; a trace of another name says its
// format with --trace-format.
TEST(CliTest, ArchiveAndTraceNamesThatAreAccepted) {
  const testing_cli::ScopedTempDir dir;
  for (const char* name : {"a.h5", "b.HDF5", "c.he5"}) {
    const Result r = Cli({"run", "--workload", "chain", "--chips", "2", "--out", dir.Path(name)});
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
  }
  Result r = Cli({"run", "--workload", "chain", "--chips", "2", "--trace", dir.Path("d.trace"),
                  "--trace-format", "perfetto"});
  EXPECT_EQ(r.status, 0) << r.err;
  r = Cli({"trace", dir.Path("a.h5"), "--out", dir.Path("e.JSON")});
  EXPECT_EQ(r.status, 0) << r.err;
  r = Cli({"merge", dir.Path("f.h5"), dir.Path("a.h5"), dir.Path("c.he5")});
  EXPECT_EQ(r.status, 2) << r.err;  // The same run name twice, but the names pass.
  EXPECT_THAT(r.err, HasSubstr("is in both"));
  EXPECT_THAT(dir.Files(), testing::ElementsAre("a.h5", "b.HDF5", "c.he5", "d.trace", "e.JSON"));
}

TEST(CliTest, DamagedArchiveIsBadInputWithOneLine) {
  const std::string h5 = TempPath("to_damage.h5"), damaged = TempPath("damaged.h5");
  ASSERT_EQ(Cli({"run", "--workload", "chain", "--chips", "4", "--out", h5}).status, 0);
  std::ifstream in(h5, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 4000u);
  bytes[3075] = static_cast<char>(bytes[3075] ^ 0x80);  // Once a segfault inside libhdf5.
  std::ofstream(damaged, std::ios::binary | std::ios::trunc) << bytes;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", damaged},
        std::vector<std::string>{"trace", damaged, "--out", TempPath("damaged.json")},
        std::vector<std::string>{"merge", TempPath("merged.h5"), damaged}}) {
    const Result r = Cli(args);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("damaged")) << args[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(TempPath("damaged.json")));
  EXPECT_FALSE(std::filesystem::exists(TempPath("merged.h5")));
}

// A timeline row whose op kind is outside the enum (a newer meshsim, or damage): merge, report
// and trace refuse the archive with exit 2 and one line naming the file, the run, the column
// and the value, and write nothing.
TEST(CliTest, EnumValueOutsideItsEnumIsBadInputNamingIt) {
  const testing_cli::ScopedTempDir dir;
  const std::string h5 = dir.Path("run.h5");
  ASSERT_EQ(Cli({"run", "--workload", "chain", "--chips", "2", "--out", h5}).status, 0);
  {
    // Row 1's op_kind set to 200 in the file's own enum type, so that HDF5 converts nothing.
    const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hid_t dataset = H5Dopen2(file, "/runs/run/timeline", H5P_DEFAULT);
    ASSERT_GE(dataset, 0);
    const hid_t type = H5Dget_type(dataset);
    const hid_t space = H5Dget_space(dataset);
    const size_t size = H5Tget_size(type);
    std::vector<unsigned char> raw(size * H5Sget_simple_extent_npoints(space));
    ASSERT_GT(raw.size(), size);
    ASSERT_GE(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
    raw[size + H5Tget_member_offset(type, H5Tget_member_index(type, "op_kind"))] = 200;
    ASSERT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(dataset);
    H5Fclose(file);
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"merge", dir.Path("merged.h5"), h5},
        std::vector<std::string>{"report", h5},
        std::vector<std::string>{"trace", h5, "--out", dir.Path("t.json")}}) {
    const Result r = Cli(args);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("meshsim: cannot read '" + h5 +
                                  "': run 'run': dataset 'timeline': row 1: op_kind is 200, "
                                  "which this meshsim does not know (allowed: 0 to "))
        << args[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_THAT(dir.Files(), testing::ElementsAre("run.h5"));
}

// Every output path is checked before the first simulation (or the first read of an input):
// a bad one is exit 2 and one line, with nothing printed or simulated. The scenario's own
// simulation would fail differently (its kept timeline passes --max-timeline-bytes; the inputs
// of trace and merge do not exist), so an output checked only afterwards shows. A name that
// fits the file system but whose temporary `<name>.tmp.<pid>` does not once failed only when
// the file was written, after the simulation.
TEST(CliTest, OutputPathsAreCheckedBeforeAnythingIsSimulatedOrRead) {
  const testing_cli::ScopedTempDir dir;
  const std::string long_h5 = dir.Path(std::string(250, 'x') + ".h5");
  const std::string long_json = dir.Path(std::string(248, 'x') + ".json");
  const std::string too_long = std::strerror(ENAMETOOLONG);
  const std::string missing = "/nonexistent-meshsim-dir/x";
  const std::vector<std::string> failing = {"--chips",
                                            "16",
                                            "--mesh",
                                            "4x4",
                                            "--hidden",
                                            "512",
                                            "--batch",
                                            "8",
                                            "--seq",
                                            "256",
                                            "--max-timeline-bytes",
                                            "64KiB"};
  const std::vector<std::string> reshard = {
      "reshard", "--system",        "p3.8xlarge", "--chips",    "8",  "--src-mesh",
      "1x1",     "--src-placement", "0",          "--src-spec", "RR", "--dst-mesh",
      "1x1",     "--dst-placement", "4",          "--dst-spec", "RR", "--shape",
      "64,64"};
  struct Case {
    std::vector<std::string> args;
    std::string message;  // What stderr must start with, after "meshsim: ".
  };
  const auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const std::vector<Case> cases = {
      {with({"run", "--algorithm", "summa"}, with(failing, {"--out", long_h5})),
       "--out: cannot write '" + long_h5 + "': " + too_long},
      {with({"run", "--algorithm", "summa"}, with(failing, {"--trace", long_json})),
       "--trace: cannot write '" + long_json + "': " + too_long},
      {with({"run", "--algorithm", "summa"}, with(failing, {"--out", missing + ".h5"})),
       "--out: cannot write '" + missing + ".h5': directory"},
      {with({"run", "--algorithm", "summa"}, with(failing, {"--trace", missing + ".json"})),
       "--trace: cannot write '" + missing + ".json': directory"},
      {with({"compare", "--algorithms", "summa"}, with(failing, {"--out", long_h5})),
       "--out: cannot write '" + long_h5 + "': " + too_long},
      {with(reshard, {"--out", long_h5}), "--out: cannot write '" + long_h5 + "': " + too_long},
      {with(reshard, {"--trace", missing + ".json"}), "--trace: cannot write '" + missing},
      {{"trace", missing + ".h5", "--out", long_json},
       "--out: cannot write '" + long_json + "': " + too_long},
      {{"trace", missing + ".h5", "--out", missing + ".json"}, "--out: cannot write '" + missing},
      {{"merge", long_h5, missing + ".h5"}, "--out: cannot write '" + long_h5 + "': " + too_long},
      {{"merge", missing + ".h5", dir.Path("in.h5")}, "--out: cannot write '" + missing},
  };
  for (const Case& c : cases) {
    const Result r = Cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args[0] << " " << c.message;
    EXPECT_THAT(r.err, StartsWith("meshsim: " + c.message)) << c.args[0];
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "") << c.args[0];
  }
  EXPECT_THAT(dir.Files(), testing::IsEmpty());
}

TEST(CliTest, EverySubcommandHasHelp) {
  for (const char* command :
       {"run", "compare", "sweep", "merge", "tune", "trace", "report", "list", "show"}) {
    for (const char* flag : {"--help", "-h"}) {
      const Result r = Cli({command, flag});
      EXPECT_EQ(r.status, 0) << command << " " << flag << ": " << r.err;
      EXPECT_THAT(r.out, HasSubstr("usage: meshsim ")) << command;
      EXPECT_EQ(r.err, "") << command;
    }
  }
}

TEST(CliTest, TraceOfARunStoredWithoutTimelineNamesTimelines) {
  const std::string ini =
      testing_cli::WriteTemp("no_timeline.ini", "workload = chain\nchips = 4\nsteps = 2 3\n");
  const std::string h5 = TempPath("no_timeline.h5"), json = TempPath("no_timeline.json");
  std::filesystem::remove(json);
  ASSERT_EQ(Cli({"sweep", ini, "--out", h5, "--jobs", "1"}).status, 0);
  const Result r = Cli({"trace", h5, "--run", "run0001", "--out", json});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--timelines"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(json));
  // With --timelines the same trace works.
  ASSERT_EQ(Cli({"sweep", ini, "--out", h5, "--jobs", "1", "--timelines"}).status, 0);
  EXPECT_EQ(Cli({"trace", h5, "--run", "run0001", "--out", json}).status, 0);
}

TEST(CliTest, HugeSweepIsRefusedBeforeExpanding) {
  // 10^8 runs: expanding them all died with bad_alloc.
  std::string text = "workload = chain\n";
  for (const char* key : {"steps", "chips", "seq", "batch", "hidden", "layers", "heads", "ffn"}) {
    text += std::string(key) + " = 1 2 3 4 5 6 7 8 9 10\n";
  }
  const std::string ini = testing_cli::WriteTemp("huge.ini", text);
  const std::string h5 = TempPath("huge.h5");
  const Result r = Cli({"sweep", ini, "--out", h5});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("more than 100000 runs"));
  EXPECT_FALSE(std::filesystem::exists(h5));
}

// CLI.md: the archive and --format json hold the resolved values, typed. Before, config was
// every value as a string, with "auto" for dataflow/slices and 0 for a built-in model's sizes.
TEST(CliTest, ArchiveAndJsonHoldResolvedTypedConfig) {
  const std::string h5 = TempPath("resolved.h5");
  const Result r = Cli({"run", "--chips", "16", "--model", "gpt3", "--batch", "8", "--seq", "512",
                        "--algorithm", "wang", "--out", h5, "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"chips\": 16,"));
  EXPECT_THAT(r.out, HasSubstr("\"hidden\": 12288,"));
  EXPECT_THAT(r.out, HasSubstr("\"link.bandwidth\": 3e+10,"));
  EXPECT_THAT(r.out, HasSubstr("\"mesh\": \"4x4\""));
  EXPECT_THAT(r.out, Not(HasSubstr("\"auto\"")));
  hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const auto type_class = [&](const char* key) {
    hid_t attr = H5Aopen_by_name(file, "/runs/run/config", key, H5P_DEFAULT, H5P_DEFAULT);
    hid_t type = H5Aget_type(attr);
    const H5T_class_t c = H5Tget_class(type);
    H5Tclose(type);
    H5Aclose(attr);
    return c;
  };
  EXPECT_EQ(type_class("chips"), H5T_INTEGER);
  EXPECT_EQ(type_class("heads"), H5T_INTEGER);
  EXPECT_EQ(type_class("link.bandwidth"), H5T_FLOAT);
  EXPECT_EQ(type_class("mesh"), H5T_STRING);
  H5Fclose(file);
  absl::StatusOr<formats::RunRecord> back = formats::ReadRun(h5, "");
  ASSERT_TRUE(back.ok()) << back.status();
  for (const auto& [key, value] : back->config) {
    EXPECT_NE(value, "auto") << key;
    if (key == "chips") {
      EXPECT_EQ(value, "16");
    }
    if (key == "hidden") {
      EXPECT_EQ(value, "12288");
    }
    if (key == "slices") {  // Wang's default S = P = 4.
      EXPECT_EQ(value, "4,4,4,4");
    }
  }
}

// The runs' config holds the resolved dataflow; the sweep's /summary (and a merge of it) keeps
// the swept value as the experiment wrote it, so plots still group by "os" / "auto".
TEST(CliTest, SweepSummaryKeepsSweptValuesAsWritten) {
  const std::string ini = testing_cli::WriteTemp(
      "dataflow.ini", "chips = 4\nhidden = 1024\nbatch = 8\nseq = 256\ndataflow = os auto\n");
  const std::string h5 = TempPath("dataflow.h5"), merged = TempPath("dataflow_merged.h5");
  std::filesystem::remove(merged);
  ASSERT_EQ(Cli({"sweep", ini, "--out", h5, "--jobs", "1"}).status, 0);
  ASSERT_EQ(Cli({"merge", merged, h5}).status, 0);
  for (const std::string& path : {h5, merged}) {
    absl::StatusOr<formats::SummaryTable> summary = formats::ReadSummary(path);
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_EQ(summary->keys, std::vector<std::string>{"dataflow"});
    EXPECT_EQ(summary->key_values[0], (std::vector<std::string>{"os", "auto"})) << path;
    absl::StatusOr<formats::RunRecord> auto_run = formats::ReadRun(path, "run0001");
    ASSERT_TRUE(auto_run.ok()) << auto_run.status();
    for (const auto& [k, v] : auto_run->config) {
      if (k == "dataflow") {  // AutoStationary per layer.
        EXPECT_EQ(v, "os,ls,os,ls") << path;
      }
    }
  }
}

TEST(CliTest, HelpAndVersion) {
  Result r = Cli({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("run"), HasSubstr("trace"), HasSubstr("report")));
  r = Cli({"--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, StartsWith("meshsim "));
  r = Cli({"run", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("--chips"), HasSubstr("link.bandwidth"),
                           HasSubstr("link.bandwidth_axis0"), HasSubstr("link.bandwidth_axis1")));
}

TEST(CliTest, ListAndShow) {
  Result r = Cli({"list", "systems"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("tpuv4"), HasSubstr("tpuv4-slice"), HasSubstr("a100"),
                           HasSubstr("v100")));
  for (const char* what : {"algorithms", "models", "topologies", "collectives", "workloads"}) {
    EXPECT_EQ(Cli({"list", what}).status, 0) << what;
  }
  // Every workload `--workload` accepts is listed with its summary and the options it reads
  // (pipeline was missing once).
  r = Cli({"list", "workloads"});
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    EXPECT_THAT(r.out, HasSubstr(w.name + " ")) << w.name;
    EXPECT_THAT(r.out, HasSubstr(w.summary)) << w.name;
  }
  EXPECT_THAT(r.out, HasSubstr("reads --collective, --group, --bytes, --max-flows, --placement"));
  r = Cli({"show", "system", "tpuv4"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("link.bandwidth"), HasSubstr("GB/s"), HasSubstr("hbm.capacity"),
                    HasSubstr("32 GiB"), HasSubstr("peak 272 TFLOPS")));
}

TEST(CliTest, ShowSystemOutputIsAValidConfigFile) {
  for (const char* system : {"tpuv4", "tpuv4-slice", "a100", "v100"}) {
    const std::string cfg = TempPath(std::string(system) + ".ini");
    std::ofstream(cfg) << Cli({"show", "system", system}).out;
    const Result r =
        Cli({"run", "--config", cfg, "--workload", "chain", "--chips", "2", "--format", "json"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string("\"system\": \"") + system + "\""));
  }
}

TEST(CliTest, CommandLineOverridesConfigAndSetOverridesPreset) {
  const std::string cfg = TempPath("override.ini");
  std::ofstream(cfg) << "workload = chain\nchips = 8\nset = link.latency=3us\n";
  const Result r = Cli({"run", "--config", cfg, "--chips", "2", "--set", "hbm.bandwidth=0.6TB/s",
                        "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"chips\": 2,"));
  EXPECT_THAT(r.out, HasSubstr("\"link.latency\": 3e-06"));
  EXPECT_THAT(r.out, HasSubstr("\"hbm.bandwidth\": 6e+11"));
}

TEST(CliTest, JsonIsOneObjectWithTheContractKeys) {
  const Result r = Cli({"run", "--workload", "chain", "--chips", "4", "--format", "json"});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  for (const char* key :
       {"\"makespan_s\": 8e-05", "\"flops\"", "\"flop_utilization\"", "\"chips\": 4",
        "\"comm\": {\"launch_s\"", "\"sync_s\"", "\"transfer_s\"", "\"exposed_s\"",
        "\"bytes_sent_per_chip\"", "\"events\"", "\"wall_s\"", "\"config\": {"}) {
    EXPECT_THAT(r.out, HasSubstr(key));
  }
}

TEST(CliTest, SeedIsAPipelineRunsResolvedOptionAndAbsentElsewhere) {
  // CLI.md's --seed: the pipeline's randomized greedy resharding scheduler reads it (default 1);
  // the config of a run with nothing random leaves it out, like other workloads' keys.
  const std::vector<std::string> pipeline = {
      "run",        "--workload",     "pipeline", "--system",
      "p3.8xlarge", "--chips",        "8",        "--model",
      "gpt-2.6b",   "--mesh",         "4x1",      "--batch",
      "8",          "--microbatches", "4",        "--reshard-scheduler",
      "greedy",     "--format",       "json"};
  const Result given = Cli([&] {
    std::vector<std::string> a = pipeline;
    a.insert(a.end(), {"--seed", "7"});
    return a;
  }());
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_THAT(given.out, HasSubstr("\"seed\": 7"));
  const Result fallback = Cli(pipeline);
  ASSERT_EQ(fallback.status, 0) << fallback.err;
  EXPECT_THAT(fallback.out, HasSubstr("\"seed\": 1"));
  const Result llm = Cli({"run", "--workload", "chain", "--chips", "4", "--format", "json"});
  ASSERT_EQ(llm.status, 0) << llm.err;
  EXPECT_THAT(llm.out, Not(HasSubstr("\"seed\"")));
}

TEST(CliTest, PipelineGemmTableUtilizationsAreFractions) {
  // Each GeMM runs once per microbatch on one stage's chips: its first start to last end spans
  // the step, so the table sums busy time (it once printed 0.2% FLOP util, 3920% share util).
  const Result r =
      Cli({"run", "--workload", "pipeline", "--system", "p3.8xlarge", "--chips", "8", "--model",
           "gpt-2.6b", "--stages", "2", "--mesh", "4x1", "--batch", "8", "--microbatches", "4"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int gemms = 0;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.find("GeMM") != std::string::npos && line.find("FLOP util") != std::string::npos) {
      in_table = true;
      continue;
    }
    if (!in_table || line.find('%') == std::string::npos || line.find('(') != std::string::npos)
      continue;
    std::vector<double> percents;
    std::istringstream words(line);
    for (std::string w; words >> w;)
      if (w.size() > 1 && w.back() == '%') percents.push_back(std::stod(w));
    ASSERT_EQ(percents.size(), 2u) << line;
    SCOPED_TRACE(line);
    EXPECT_GT(percents[0], 20);  // FLOP util: a V100 GeMM of GPT-2.6B, 30-85%
    EXPECT_LE(percents[0], 100);
    EXPECT_GT(percents[1], 0);  // of step
    EXPECT_LE(percents[1], 100);
    ++gemms;
  }
  EXPECT_EQ(gemms, 18);  // 6 forward GeMMs, 12 backward
}

TEST(CliTest, RunWritesHdf5AndTraceThatReportAndTraceReadBack) {
  const std::string h5 = TempPath("roundtrip.h5"), t1 = TempPath("t1.json"),
                    t2 = TempPath("t2.json");
  Result r = Cli({"run", "--workload", "chain", "--chips", "3", "--steps", "4", "--out", h5,
                  "--trace", t1, "--format", "csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string csv_from_run = r.out;
  EXPECT_THAT(r.err, HasSubstr("wrote " + h5));
  r = Cli({"report", h5, "--format", "csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, csv_from_run);  // Every metric and config value survives the archive.
  r = Cli({"trace", h5, "--out", t2});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t1), ReadFile(t2));  // `trace` on the file == `run --trace`.
}

TEST(CliTest, GpuTraceDrawsEachChipAsOneComputeTrackUnlessFull) {
  // A V100 has 80 SMs, each with a row of every GeMM: by default one compute track per chip and
  // an SM occupancy counter; --trace-detail full keeps a thread per SM.
  const std::string t = TempPath("gpu.json"), full = TempPath("gpu_full.json");
  const std::vector<std::string> run = {"run",     "--system", "p3.8xlarge",
                                        "--chips", "4",        "--workload",
                                        "gemm",    "--gemm",   "4096,4096,4096"};
  std::vector<std::string> args = run;
  args.insert(args.end(), {"--trace", t});
  Result r = Cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = ReadFile(t);
  EXPECT_THAT(text, HasSubstr("{\"name\":\"compute\"}"));
  EXPECT_THAT(text, HasSubstr("\"chip0.sms busy\""));
  EXPECT_THAT(text, Not(HasSubstr("{\"name\":\"core 1\"}")));
  args = run;
  args.insert(args.end(), {"--trace", full, "--trace-detail", "full"});
  r = Cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string full_text = ReadFile(full);
  EXPECT_THAT(full_text, HasSubstr("{\"name\":\"core 79\"}"));
  EXPECT_THAT(full_text, Not(HasSubstr("\"chip0.sms busy\"")));
  EXPECT_GT(full_text.size(), text.size());
}

TEST(CliTest, PerfettoTraceByExtensionOrOption) {
  const std::string h5 = TempPath("pf_roundtrip.h5"), t1 = TempPath("t1.pftrace"),
                    t2 = TempPath("t2.pftrace"), t3 = TempPath("t3.trace");
  Result r = Cli(
      {"run", "--workload", "chain", "--chips", "3", "--steps", "4", "--out", h5, "--trace", t1});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote " + t1 + " (Perfetto trace)"));
  r = Cli({"trace", h5, "--out", t2});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(Perfetto trace of run"));
  EXPECT_EQ(ReadFile(t1), ReadFile(t2));  // `trace` on the file == `run --trace`.
  r = Cli({"trace", h5, "--out", t3, "--trace-format", "perfetto", "--detail", "full"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t1), ReadFile(t3));  // The chain run is below every budget.
  const std::string bytes = ReadFile(t1);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes[0], '\x0a');  // Trace.packet, length-delimited: not JSON.
  r = Cli({"trace", h5, "--out", t3, "--trace-format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(t3).substr(0, 15), "{\"traceEvents\":");
}

TEST(CliTest, GoldenChainScenario) {
  const std::string h5 = TempPath("golden.h5");
  const Result r =
      Cli({"run", "--config", SourceDir() + "/tests/golden/chain_ring4.ini", "--out", h5});
  ASSERT_EQ(r.status, 0) << r.err;
  absl::StatusOr<formats::RunRecord> rec = formats::ReadRun(h5, "");
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::vector<std::string> expected = absl::StrSplit(
      ReadFile(SourceDir() + "/tests/golden/chain_ring4.timeline.csv"), '\n', absl::SkipEmpty());
  ASSERT_FALSE(expected.empty());
  expected.erase(expected.begin());  // Header.
  std::vector<core::TimelineRow> rows(rec->timeline.begin(), rec->timeline.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.op < b.op; });
  std::vector<std::string> actual;
  for (const core::TimelineRow& row : rows) {
    actual.push_back(absl::StrCat(row.op.value(), ",", row.chip.value(), ",", row.start.ps(), ",",
                                  row.end.ps()));
  }
  EXPECT_EQ(actual, expected);
  // Closed form: makespan = steps · step-time = 3 · 2.5 us.
  EXPECT_DOUBLE_EQ(rec->Metric("makespan_s"), 7.5e-6);
}

TEST(CliTest, GoldenAllGatherScenario) {
  const std::string h5 = TempPath("golden_allgather.h5");
  const Result r =
      Cli({"run", "--config", SourceDir() + "/tests/golden/allgather_ring4.ini", "--out", h5});
  ASSERT_EQ(r.status, 0) << r.err;
  absl::StatusOr<formats::RunRecord> rec = formats::ReadRun(h5, "");
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::vector<std::tuple<uint32_t, int64_t, int64_t, std::string>> rows;
  for (const core::TimelineRow& row : rec->timeline) {
    rows.emplace_back(row.chip.value(), row.start.ps(), row.end.ps(), core::ToString(row.phase));
  }
  std::sort(rows.begin(), rows.end());
  std::vector<std::string> actual;
  for (const auto& [chip, start, end, phase] : rows) {
    actual.push_back(absl::StrCat(chip, ",", phase, ",", start, ",", end));
  }
  std::vector<std::string> expected =
      absl::StrSplit(ReadFile(SourceDir() + "/tests/golden/allgather_ring4.timeline.csv"), '\n',
                     absl::SkipEmpty());
  expected.erase(expected.begin());  // Header.
  EXPECT_EQ(actual, expected);
}
}  // namespace
}  // namespace meshsim::sim::cli

namespace meshsim::sim::cli {
namespace {

TEST(CliCompareTest, RunsEveryAlgorithmIntoOneArchive) {
  const std::string h5 = TempPath("compare.h5");
  const Result r = Cli({"compare", "--algorithms", "meshslice,collective", "--chips", "16",
                        "--hidden", "1024", "--batch", "8", "--seq", "512", "--out", h5});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("meshslice"), HasSubstr("collective"), HasSubstr("1.00x")));
  absl::StatusOr<std::vector<std::string>> runs = formats::ListRuns(h5);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(*runs, (std::vector<std::string>{"meshslice", "collective"}));
}

TEST(CliCompareTest, BaselinesShareMeshSlicesTunedMeshButCannonStaysSquare) {
  const Result r = Cli({"compare", "--algorithms", "meshslice,collective,cannon", "--chips", "64",
                        "--hidden", "1024", "--batch", "32", "--seq", "512", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto mesh_of = [&](const std::string& run) {
    const size_t at = r.out.find("{\"run\": \"" + run + "\"");
    const size_t m = r.out.find("\"mesh\": \"", at);
    return r.out.substr(m + 9, r.out.find('"', m + 9) - (m + 9));
  };
  EXPECT_EQ(mesh_of("collective"), mesh_of("meshslice"));
  EXPECT_EQ(mesh_of("cannon"), "8x8");
}

TEST(CliCompareTest, PreconditionsFailBeforeAnySimulation) {
  const std::string h5 = TempPath("compare_bad.h5");
  fs::remove(h5);
  const Result r = Cli({"compare", "--algorithms", "meshslice,cannon", "--chips", "16", "--mesh",
                        "2x8", "--hidden", "1024", "--batch", "8", "--seq", "512", "--out", h5});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("cannon: mesh 2x8 is not square"));
  EXPECT_THAT(r.err, Not(HasSubstr("simulating")));
  EXPECT_FALSE(fs::exists(h5));
  EXPECT_EQ(Cli({"compare", "--algorithms", "meshslice,nope", "--chips", "4"}).status, 2);
}

// An empty list, an empty entry or a repeated algorithm is refused, not replaced by the default
// set (`--algorithms ''` used to run all seven).
TEST(CliCompareTest, EmptyOrRepeatedAlgorithmsAreRefused) {
  for (const std::string list : {"", ",", "meshslice,,collective", "meshslice,"}) {
    SCOPED_TRACE("'" + list + "'");
    const Result r = Cli({"compare", "--algorithms", list, "--chips", "4"});
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.err, HasSubstr("--algorithms: '" + list + "' is not allowed"));
    EXPECT_THAT(r.err, Not(HasSubstr("simulating")));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const Result twice = Cli({"compare", "--algorithms", "collective,collective", "--chips", "4"});
  EXPECT_EQ(twice.status, 2);
  EXPECT_THAT(twice.err, HasSubstr("'collective' is listed twice"));
}

// The outputs are opened before the first simulation: a path that passes the directory checks
// but cannot be created (here /proc, where not even root creates files) costs no simulation and
// prints one line (it used to simulate every algorithm, then fail).
TEST(CliCompareTest, AnUnwritableOutputFailsBeforeAnySimulation) {
  for (const std::string option : {"--out", "--trace"}) {
    SCOPED_TRACE(option);
    const std::string path =
        option == "--out" ? "/proc/meshsim_compare.h5" : "/proc/meshsim_compare.json";
    const Result r = Cli({"compare", "--algorithms", "collective,summa", "--chips", "16",
                          "--hidden", "1024", "--batch", "8", "--seq", "512", option, path});
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.err, HasSubstr(option + ": cannot write '" + path + "'"));
    EXPECT_THAT(r.err, Not(HasSubstr("simulating")));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// Each run's timeline is written when the run ends: the archive holds every run with its
// timeline, the trace is the first run's, and a failure after the first run leaves neither file
// (the trace is staged until every run succeeded).
TEST(CliCompareTest, TimelinesAreWrittenAsTheRunsEndAndPublishedTogether) {
  const std::string h5 = TempPath("compare_stream.h5"), json = TempPath("compare_stream.json");
  fs::remove(h5);
  fs::remove(json);
  const Result r =
      Cli({"compare", "--algorithms", "meshslice,collective", "--chips", "16", "--hidden", "1024",
           "--batch", "8", "--seq", "512", "--out", h5, "--trace", json});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string name : {"meshslice", "collective"}) {
    absl::StatusOr<formats::RunRecord> run = formats::ReadRun(h5, name);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_FALSE(run->timeline.empty()) << name;
    EXPECT_FALSE(run->counters.empty()) << name;
  }
  std::ifstream trace(json);
  const std::string text((std::istreambuf_iterator<char>(trace)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("traceEvents"));
  for (const auto& entry : fs::directory_iterator(fs::path(json).parent_path())) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".part.")));
  }
  // The second run is refused while it runs (its timeline passes the limit the first fits in):
  // nothing is published, and no staging file is left.
  fs::remove(h5);
  fs::remove(json);
  const Result failed = Cli({"compare", "--algorithms", "collective,summa", "--chips", "16",
                             "--mesh", "4x4", "--hidden", "1024", "--batch", "8", "--seq", "512",
                             "--out", h5, "--trace", json, "--max-timeline-bytes", "600KiB"});
  EXPECT_EQ(failed.status, 2) << failed.err;
  EXPECT_THAT(failed.err, HasSubstr("simulating summa"));
  EXPECT_THAT(failed.err, HasSubstr("--max-timeline-bytes"));
  EXPECT_FALSE(fs::exists(h5));
  EXPECT_FALSE(fs::exists(json));
  for (const auto& entry : fs::directory_iterator(fs::path(json).parent_path())) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr("compare_stream.json.")));
  }
}

TEST(CliLlmTest, TrainingBlockReportsEveryGemmAndScalesToTheModel) {
  const Result r = Cli({"run", "--chips", "16", "--mesh", "4x4", "--hidden", "1024", "--layers",
                        "10", "--batch", "8", "--seq", "512", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Twelve FC GeMMs: forward, backward-data and backward-weight of four layers.
  for (const char* g : {"qkv.fwd", "attn_out.fwd", "ffn_up.fwd", "ffn_down.fwd",
                        "ffn_down.bwd-data", "qkv.bwd-weight"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("\"name\": \"") + g + "\""));
  }
  EXPECT_THAT(r.out, HasSubstr("\"share_s\": "));  // Each GeMM's part of the block.
  // 72·T·H² flops for one block (T = 8·512, H = 1024).
  EXPECT_THAT(r.out, HasSubstr("\"flops\": 309237645312,"));
  EXPECT_THAT(r.out, HasSubstr("\"model_layers\": 10"));
}

TEST(CliLlmTest, OneDimensionalAlgorithmsRunOnARing) {
  const Result r = Cli({"run", "--chips", "8", "--algorithm", "fsdp", "--hidden", "1024", "--batch",
                        "8", "--seq", "512", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"topology\": \"ring\""));
  EXPECT_THAT(r.out, HasSubstr("\"mesh\": \"1x8\""));
  EXPECT_EQ(Cli({"run", "--chips", "8", "--mesh", "2x4", "--algorithm", "tp1d"}).status, 2);
}

// The number after `"key": ` in a JSON line, -1 when absent.
double JsonNumber(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\": ";
  const size_t at = json.find(k);
  return at == std::string::npos ? -1 : std::stod(json.substr(at + k.size()));
}

// The closed form sim/ refuses a run by (Algorithm::CountOps) is the real op count: a run at
// --max-ops = its ops is unaffected (same makespan and fingerprint), one op less is refused
// naming exactly that count.
TEST(CliBudgetTest, ClosedFormIsTheRealOpCountAndTheLimitIsExact) {
  for (const std::string algorithm : {"tp1d", "fsdp"}) {
    for (const std::string slices : {"auto", "2"}) {
      SCOPED_TRACE(algorithm + " --slices " + slices);
      const std::vector<std::string> args = {
          "run", "--chips", "8",   "--algorithm", algorithm, "--hidden", "512", "--batch",
          "8",   "--seq",   "256", "--slices",    slices,    "--format", "json"};
      const Result free = Cli(args);
      ASSERT_EQ(free.status, 0) << free.err;
      const int64_t ops = static_cast<int64_t>(JsonNumber(free.out, "ops"));
      ASSERT_GT(ops, 0);
      std::vector<std::string> at_limit = args;
      at_limit.insert(at_limit.end(), {"--max-ops", std::to_string(ops)});
      const Result fits = Cli(at_limit);
      ASSERT_EQ(fits.status, 0) << fits.err;
      for (const char* key : {"ops", "makespan_s", "fingerprint_hi", "fingerprint_lo"}) {
        EXPECT_EQ(JsonNumber(fits.out, key), JsonNumber(free.out, key)) << key;
      }
      std::vector<std::string> below = args;
      below.insert(below.end(), {"--max-ops", std::to_string(ops - 1)});
      const Result refused = Cli(below);
      EXPECT_EQ(refused.status, 2);
      EXPECT_THAT(refused.err,
                  HasSubstr(absl::StrCat("would hold ", ops, " ops at --slices ", slices)));
      EXPECT_THAT(refused.err, HasSubstr(absl::StrCat("limit of ", ops - 1, " ops")));
    }
  }
}

// The default budgets come from the memory this process may use (physical, or a lower cgroup
// limit) and are far above what the paper's largest MeshSlice runs need (305 k ops at 4096
// chips, 1.2 M at 16384). With the timeline kept, the op graph and the timeline get a quarter
// each.
TEST(CliBudgetTest, DefaultsFollowAvailableMemory) {
  EXPECT_LE(AvailableMemory().bytes, PhysicalMemoryBytes());
  const int64_t half = AvailableMemory().bytes / 2;
  EXPECT_EQ(DefaultMaxOps(false), std::min<int64_t>(half / kBytesPerOp, kMaxOpsLimit));
  EXPECT_EQ(DefaultMaxOps(true), std::min<int64_t>(half / 2 / kBytesPerOp, kMaxOpsLimit));
  EXPECT_EQ(DefaultMaxFlows(), half / kBytesPerFlow);
  EXPECT_EQ(DefaultMaxTimelineBytes(), half / 2);
  // Even a 4 GiB container keeps the 16384-chip MeshSlice run (1.2 M ops) with its timeline.
  EXPECT_GT((int64_t{4} << 30) / 4 / kBytesPerOp, 1200000);
  RunOptions o;
  o.keep_timeline = false;
  EXPECT_EQ(o.op_budget(), DefaultMaxOps(false));
  o.max_ops = 7;
  EXPECT_EQ(o.op_budget(), 7);
  EXPECT_EQ(o.flow_budget(), DefaultMaxFlows());
  EXPECT_EQ(o.timeline_budget(), DefaultMaxTimelineBytes());
  // Runs simulated at once (sweep --jobs) share the default budgets; explicit ones are per run.
  o.concurrent_runs = 2;
  EXPECT_EQ(o.op_budget(), 7);
  EXPECT_EQ(o.flow_budget(), DefaultMaxFlows() / 2);
  EXPECT_EQ(o.timeline_budget(), DefaultMaxTimelineBytes() / 2);
  o.max_ops = 0;
  EXPECT_EQ(o.op_budget(), DefaultMaxOps(false) / 2);
  o.max_timeline_bytes = 1000;
  EXPECT_EQ(o.timeline_budget(), 1000);
}

// `run --help` and the refusals say where the defaults came from.
TEST(CliBudgetTest, HelpAndRefusalsNameTheMemoryTheDefaultsComeFrom) {
  const std::string memory = AvailableMemory().Describe();
  const Result help = Cli({"run", "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  // Boost wraps the help text: compare without white space.
  const auto squeeze = [](std::string text) {
    text.erase(std::remove_if(text.begin(), text.end(),
                              [](unsigned char c) { return std::isspace(c) != 0; }),
               text.end());
    return text;
  };
  EXPECT_THAT(squeeze(help.out),
              HasSubstr(squeeze(absl::StrCat("half of ", memory, " at ~200 B per op"))));
  EXPECT_THAT(squeeze(help.out),
              HasSubstr(squeeze(absl::StrCat("half of ", memory, " at ~1024 B per flow"))));
  EXPECT_THAT(squeeze(help.out),
              HasSubstr(squeeze(absl::StrCat("--max-timeline-bytes arg with --out/--trace"))));
  EXPECT_THAT(squeeze(help.out), HasSubstr(squeeze(absl::StrCat("a quarter of ", memory))));
  EXPECT_THAT(squeeze(help.out), HasSubstr(squeeze(absl::StrCat("on a torus whose graph folds, ~",
                                                                kFoldedBytesPerOp, " B per op"))));
  // 4096 chips of tp1d (235 M ops) pass the default budget of any machine under 54 GiB: on the
  // default torus its graph might fold (~125 B per op); on a fat-tree it is simulated whole.
  if (AvailableMemory().bytes < (int64_t{54} << 30)) {
    const Result r = Cli({"run", "--chips", "4096", "--algorithm", "tp1d"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("(--max-ops; default: half of ", memory,
                                              " at ~125 B per op of a graph that folds)")));
    const Result f =
        Cli({"run", "--chips", "4096", "--algorithm", "tp1d", "--topology", "fattree"});
    EXPECT_EQ(f.status, 2) << f.err;
    EXPECT_THAT(f.err, HasSubstr(absl::StrCat("(--max-ops; default: half of ", memory,
                                              " at ~200 B per op)")));
  }
}

// The timeline kept for --out grows with collective steps x members, not with ops: a run whose
// op graph is far under --max-ops is stopped as its timeline passes --max-timeline-bytes, exit
// 2, no file. A budget it fits in changes nothing (same fingerprint, same rows).
TEST(CliBudgetTest, TimelineIsBoundedWhileItGrows) {
  const std::string out = TempPath("timeline_budget.h5");
  fs::remove(out);
  const std::vector<std::string> args = {
      "run", "--chips", "16", "--mesh", "4x4", "--algorithm", "summa", "--hidden",
      "512", "--batch", "8",  "--seq",  "256", "--format",    "json"};
  const Result free = Cli(args);
  ASSERT_EQ(free.status, 0) << free.err;
  std::vector<std::string> with_out = args;
  with_out.insert(with_out.end(), {"--out", out});
  const Result kept = Cli(with_out);
  ASSERT_EQ(kept.status, 0) << kept.err;
  for (const char* key : {"ops", "makespan_s", "fingerprint_hi", "fingerprint_lo"}) {
    EXPECT_EQ(JsonNumber(kept.out, key), JsonNumber(free.out, key)) << key;
  }
  absl::StatusOr<formats::RunRecord> run = formats::ReadRun(out);
  ASSERT_TRUE(run.ok()) << run.status();
  const size_t rows = run->timeline.size(), samples = run->counters.size();
  ASSERT_GT(rows, 1000u);
  fs::remove(out);
  // Far more than the rows and samples need, counting a growth's two buffers: unchanged.
  std::vector<std::string> roomy = with_out;
  roomy.insert(roomy.end(),
               {"--max-timeline-bytes", std::to_string(4 * (rows * 64 + samples * 24))});
  const Result fits = Cli(roomy);
  ASSERT_EQ(fits.status, 0) << fits.err;
  for (const char* key : {"ops", "makespan_s", "fingerprint_hi", "fingerprint_lo"}) {
    EXPECT_EQ(JsonNumber(fits.out, key), JsonNumber(free.out, key)) << key;
  }
  run = formats::ReadRun(out);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->timeline.size(), rows);
  EXPECT_EQ(run->counters.size(), samples);
  fs::remove(out);
  // Half of the rows alone, within a --max-ops that holds the graph many times over.
  std::vector<std::string> tight = with_out;
  const int64_t ops = static_cast<int64_t>(JsonNumber(free.out, "ops"));
  tight.insert(tight.end(), {"--max-ops", std::to_string(10 * ops), "--max-timeline-bytes",
                             std::to_string(rows * 64 / 2)});
  const Result refused = Cli(tight);
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_THAT(refused.err,
              AllOf(HasSubstr("--chips: '16' is not allowed with --algorithm summa on mesh 4x4 "
                              "and --out: the timeline kept for it passes the limit"),
                    HasSubstr(absl::StrCat("(--max-timeline-bytes ", rows * 64 / 2, ")")),
                    HasSubstr("leave out --out")));
  EXPECT_FALSE(fs::exists(out)) << "a refused run left its --out file";
}

TEST(CliTest, ShowTopologyAndItsDotGraph) {
  Result r = Cli({"show", "topology", "hierarchical", "--system", "a100-ib", "--chips", "8"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("chips 8, hosts 2"), HasSubstr("nvlink"), HasSubstr("nic")));
  r = Cli({"show", "topology", "torus2d", "--chips", "16", "--dot"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("graph"), HasSubstr("kind=")));
  r = Cli({"show", "topology"});
  EXPECT_EQ(r.status, 2);
  r = Cli({"list", "topologies"});
  EXPECT_THAT(r.out, AllOf(HasSubstr("hierarchical"), HasSubstr("graphviz:FILE"),
                           Not(HasSubstr("not in this build"))));
}

TEST(CliTest, GpuSystemsRunOnTheirHierarchicalMachines) {
  // Every built-in system builds its machine and runs a small collective on it.
  for (const char* system : {"h100", "dgx-a100", "a100-nvlink2", "a100-pcie", "a100-pcie-shm",
                             "a100-ib", "p3.8xlarge", "nvl-switch", "gpu-torus"}) {
    const Result r =
        Cli({"run", "--system", system, "--chips", "16", "--workload", "collective", "--collective",
             "allgather", "--group", "all", "--bytes", "1MiB", "--format", "json"});
    EXPECT_EQ(r.status, 0) << system << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"makespan_s\"")) << system;
  }
}

TEST(CliTest, PlacementPutsTheMeshOnTheNamedChips) {
  Result r = Cli({"run", "--chips", "32", "--mesh", "4x4", "--placement", "16-31", "--algorithm",
                  "collective", "--batch", "8", "--format", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"placement\": \"16-31\""));
  for (const auto& [args, what] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--placement", "0-40"}, "chip 40 is not on the machine"},
           {{"--placement", "1,1,2,3"}, "chip 1 appears twice"},
           {{"--placement", "3-1"}, "expected chip ids and ranges"},
           {{"--placement", "0-7"}, "R*C = 16 must equal the 8 chips of --placement"}}) {
    std::vector<std::string> argv = {"run", "--chips", "32", "--mesh", "4x4"};
    argv.insert(argv.end(), args.begin(), args.end());
    r = Cli(argv);
    EXPECT_EQ(r.status, 2) << args[1];
    EXPECT_THAT(r.err, HasSubstr(what)) << args[1];
  }
}

}  // namespace
}  // namespace meshsim::sim::cli
