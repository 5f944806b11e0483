// Experiment files, their expansion, shards, and whole sweeps through the CLI.
#include "cli/sweep.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_writer.h"
#include "formats/temp_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "tests/cli/cli_testing.h"

namespace meshsim::sim::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Files of this suite carry a prefix so that ctest's parallel processes never share one.
std::string Write(const std::string& name, const std::string& text) {
  return testing_cli::WriteTemp("sweep_" + name, text);
}
std::string Temp(const std::string& name) { return testing_cli::TempPath("sweep_" + name); }

// Runs the CLI; returns the exit status and, optionally, what it printed.
int Cli(std::vector<std::string> args, std::string* out = nullptr, std::string* err = nullptr) {
  const testing_cli::Result r = testing_cli::Cli(std::move(args));
  if (out) *out = r.out;
  if (err) *err = r.err;
  return r.status;
}

TEST(SweepTest, ProductZipAndFiltersInStableOrder) {
  const std::string path = Write("expand.ini", R"(# comment
workload = chain
chips = 2 4 8
steps = 1 2 3
step-time = 1us 2us     ; swept too
[zip]
keys = chips steps
[filter]
skip = chips=4 step-time=2us
)");
  absl::StatusOr<cli::Experiment> e = cli::ParseExperiment(path);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(cli::SweptKeys(*e), (std::vector<std::string>{"chips", "steps", "step-time"}));
  absl::StatusOr<std::vector<cli::SweepRun>> runs = cli::ExpandExperiment(*e);
  ASSERT_TRUE(runs.ok()) << runs.status();
  // (chips, steps) zipped: 3 values × step-time 2 values = 6, minus (4, *, 2us) = 5.
  ASSERT_EQ(runs->size(), 5u);
  const auto v = [&](int i) {
    std::string s;
    for (const auto& [k, val] : (*runs)[i].swept) s += k + "=" + val + " ";
    return s;
  };
  EXPECT_EQ(v(0), "chips=2 steps=1 step-time=1us ");
  EXPECT_EQ(v(1), "chips=2 steps=1 step-time=2us ");
  EXPECT_EQ(v(2), "chips=4 steps=2 step-time=1us ");
  EXPECT_EQ(v(3), "chips=8 steps=3 step-time=1us ");
  EXPECT_EQ((*runs)[4].name, "run0004");
  EXPECT_EQ((*runs)[0].raw.values.front(),
            (std::pair<std::string, std::string>{"workload", "chain"}));
}

TEST(SweepTest, OnlyKeepsMatchingRuns) {
  const std::string path = Write(
      "only.ini", "workload = chain\nchips = 2 4 8\n[filter]\nonly = chips=4\nonly = chips=8\n");
  auto runs = cli::ExpandExperiment(*cli::ParseExperiment(path));
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u);
}

struct BadFile {
  std::string text;
  std::string message;
};

class BadExperimentTest : public testing::TestWithParam<BadFile> {};

TEST_P(BadExperimentTest, FailsWithLineAndReason) {
  // A directory per process: ctest -j runs the cases in parallel processes, which shared one
  // bad.ini (a flaky failure when one process rewrote it while another parsed it).
  const std::filesystem::path dir = Temp("bad_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.ini").string();
  std::ofstream(path) << GetParam().text;
  absl::StatusOr<cli::Experiment> e = cli::ParseExperiment(path);
  absl::Status s = e.ok() ? cli::ExpandExperiment(*e).status() : e.status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, BadExperimentTest,
    testing::Values(BadFile{"chipz = 4\n", "bad.ini:1: unknown key 'chipz'"},
                    BadFile{"chips = 4\nchips = 8\n", "bad.ini:2: 'chips' is set twice"},
                    BadFile{"[sweep]\n", "unknown section [sweep]"},
                    BadFile{"out = x.h5\n", "'out' is set by `meshsim sweep`"},
                    BadFile{"chips = \n", "no value for 'chips'"},
                    BadFile{"chips 4\n", "expected KEY = VALUES"},
                    BadFile{"chips = \"4\n", "unclosed quote"},
                    BadFile{"chips = 4 8\nmesh = 2x2\n[zip]\nkeys = chips mesh\n",
                            "equal value counts"},
                    BadFile{"chips = 4 8\n[filter]\nskip = chips=16\n",
                            "'chips=16' is not one of chips's values"},
                    BadFile{"chips = 4 8\n[filter]\nskip = mesh=2x2\n", "filter key 'mesh'"},
                    BadFile{"chips = 4\n[filter]\nskip = chips=4\n", "empty product"}));

TEST(SweepTest, ShardSpecs) {
  EXPECT_EQ(*cli::ParseShard("3/8"), std::make_pair(3, 8));
  for (const char* bad : {"3/2", "0/4", "a/b", "4", "1/0", "-1/2"}) {
    EXPECT_EQ(cli::ParseShard(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

const char kSmallSweep[] = R"(hidden = 1024
batch = 8
seq = 512
chips = 4 16
algorithm = meshslice collective
)";

TEST(SweepTest, JobsAndShardsGiveTheSameResults) {
  const std::string ini = Write("small.ini", kSmallSweep);
  const std::string one = Temp("one.h5"), two = Temp("two.h5"), s1 = Temp("s1.h5"),
                    s2 = Temp("s2.h5"), merged = Temp("merged.h5");
  std::string out;
  ASSERT_EQ(Cli({"sweep", ini, "--out", one, "--jobs", "1"}, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("4 runs"));
  ASSERT_EQ(Cli({"sweep", ini, "--out", two, "--jobs", "2"}), 0);
  ASSERT_EQ(Cli({"sweep", ini, "--out", s1, "--shard", "1/2"}), 0);
  ASSERT_EQ(Cli({"sweep", ini, "--out", s2, "--shard", "2/2"}), 0);
  ASSERT_EQ(Cli({"merge", merged, s1, s2}), 0);
  absl::StatusOr<formats::SummaryTable> a = formats::ReadSummary(one),
                                        b = formats::ReadSummary(two),
                                        m = formats::ReadSummary(merged);
  ASSERT_TRUE(a.ok() && b.ok() && m.ok()) << a.status() << b.status() << m.status();
  EXPECT_EQ(a->runs, (std::vector<std::string>{"run0000", "run0001", "run0002", "run0003"}));
  EXPECT_EQ(b->runs, a->runs);
  std::vector<std::string> merged_runs = m->runs;
  std::sort(merged_runs.begin(), merged_runs.end());
  EXPECT_EQ(merged_runs, a->runs);
  EXPECT_EQ(a->keys, (std::vector<std::string>{"chips", "algorithm"}));
  // Same simulated results whatever --jobs or the sharding (wall time aside).
  for (const formats::SummaryTable* t : {&*b, &*m}) {
    for (size_t c = 0; c < a->metrics.size(); ++c) {
      if (a->metrics[c] == "wall_s") continue;
      for (size_t row = 0; row < a->runs.size(); ++row) {
        const auto it = std::find(t->runs.begin(), t->runs.end(), a->runs[row]);
        const size_t other = it - t->runs.begin();
        const size_t col =
            std::find(t->metrics.begin(), t->metrics.end(), a->metrics[c]) - t->metrics.begin();
        ASSERT_LT(col, t->metrics.size());
        EXPECT_EQ(a->metric_values[c][row], t->metric_values[col][other])
            << a->metrics[c] << " " << a->runs[row];
      }
    }
  }
}

// Two runs whose row rings close over 7 hops (an 8x8 mesh on a 4x16 torus) and one whose mesh
// is the torus: the warning is said once, naming the first run it came from.
TEST(SweepTest, SaysEachDistinctWarningOnce) {
  const std::string ini = Write("warn.ini", R"(workload = collective
collective = allgather
bytes = 1MiB
chips = 64
mesh = 8x8
dims = 4x16 4x16 8x8
)");
  std::string out, err;
  ASSERT_EQ(Cli({"sweep", ini, "--out", Temp("warn.h5")}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("3 runs"));
  const std::string warning =
      "meshsim: warning: run 'run0000' (and any alike): the row rings of the 8x8 mesh on chips "
      "0-63 are not rings of torus2d 4x16";
  EXPECT_THAT(err, HasSubstr(warning));
  EXPECT_EQ(err.find("meshsim: warning"), err.rfind("meshsim: warning")) << err;
}

TEST(SweepTest, JsonSummaryCarriesTheSweptKeys) {
  const std::string ini = Write("json.ini", kSmallSweep);
  std::string out;
  ASSERT_EQ(Cli({"sweep", ini, "--out", Temp("json.h5"), "--format", "json"}, &out), 0);
  EXPECT_THAT(out, HasSubstr("{\"run\": \"run0000\", \"chips\": 4, \"algorithm\": \"meshslice\""));
  EXPECT_EQ(out.front(), '[');
}

TEST(SweepTest, ATypoInTheLastRunFailsBeforeAnySimulation) {
  const std::string ini =
      Write("typo.ini", "hidden = 1024\nbatch = 8\nseq = 512\nchips = 4 16 17\nmesh = auto\n");
  const std::string h5 = Temp("typo.h5");
  fs::remove(h5);
  std::string out, err;
  EXPECT_EQ(Cli({"sweep", ini, "--out", h5}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("run0002 (chips=17)"));
  EXPECT_FALSE(fs::exists(h5));
  // A plugin precondition (Cannon needs a square mesh) also fails before the first run.
  const std::string cannon = Write(
      "cannon.ini", "hidden = 1024\nbatch = 8\nseq = 512\nchips = 16 8\nalgorithm = cannon\n");
  EXPECT_EQ(Cli({"sweep", cannon, "--out", h5}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("run0001 (chips=8)"));
  EXPECT_THAT(err, HasSubstr("not square"));
  EXPECT_FALSE(fs::exists(h5));
}

// Every experiment file of results/ resolves (all its runs, the sweep's rule for options a run
// does not read): the rule must not make a committed experiment unusable.
TEST(SweepTest, EveryResultsExperimentResolves) {
  const char* env = std::getenv("MESHSIM_SOURCE_DIR");
  const fs::path results = fs::path(env ? env : MESHSIM_SOURCE_DIR_DEFAULT) / "results";
  int files = 0;
  size_t runs = 0;
  for (const auto& dir : fs::directory_iterator(results)) {
    if (!dir.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      if (entry.path().extension() != ".ini") continue;
      SCOPED_TRACE(entry.path().string());
      ++files;
      absl::StatusOr<cli::Experiment> e = cli::ParseExperiment(entry.path().string());
      ASSERT_TRUE(e.ok()) << e.status();
      absl::StatusOr<std::vector<cli::SweepRun>> all = cli::ExpandExperiment(*e);
      ASSERT_TRUE(all.ok()) << all.status();
      absl::StatusOr<std::vector<RunOptions>> options = cli::ResolveSweepRuns(*e, *all);
      ASSERT_TRUE(options.ok()) << options.status();
      runs += options->size();
    }
  }
  EXPECT_GE(files, 20);  // results/ holds 20 experiment files: none may go unseen.
  EXPECT_GT(runs, 500u);
}

// A sweep may set a key for runs that do not read it (model for the gemm runs, gemm for the llm
// runs of one file), but a key that no run reads is refused before any simulation, naming it.
TEST(SweepTest, AKeyNoRunReadsIsRefused) {
  const std::string mixed =
      "workload = llm gemm\nchips = 4\nhidden = 256\nbatch = 4\nseq = 128\n"
      "gemm = 256,256,256\nalgorithm = meshslice collective\nslices = 1\n";
  std::string out, err;
  EXPECT_EQ(Cli({"sweep", Write("mixed.ini", mixed), "--out", Temp("mixed.h5")}, &out, &err), 0)
      << err;
  const std::string h5 = Temp("unread.h5");
  fs::remove(h5);
  const std::string ini = Write("unread.ini", mixed + "bytes = 1MiB 2MiB\n");
  EXPECT_EQ(Cli({"sweep", ini, "--out", h5}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("--bytes: '1MiB 2MiB' is read by none of the 8 runs of '" + ini +
                             "'; it is read by --workload collective"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_FALSE(fs::exists(h5));
  // slices is read by meshslice only here: still one reader, still fine (the mixed file).
  // Without meshslice, nothing reads it.
  const std::string no_reader =
      Write("noreader.ini",
            "chips = 4\nhidden = 256\nbatch = 4\nseq = 128\nalgorithm = collective "
            "cannon\nmesh = 2x2\nslices = 2\n");
  EXPECT_EQ(Cli({"sweep", no_reader, "--out", h5}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("--slices: '2' is read by none of the 2 runs"));
  EXPECT_THAT(err, HasSubstr("it is read by --algorithm meshslice, wang, summa, tp1d, fsdp"));
}

// A `set =` system parameter that no run's topology reads is refused; one run reading it is
// enough (the sweep sets it for all).
TEST(SweepTest, ASystemParameterNoTopologyReadsIsRefused) {
  const std::string h5 = Temp("topo.h5");
  fs::remove(h5);
  std::string out, err;
  const std::string base = "workload = chain\nchips = 8\nset = fattree.k=4\n";
  EXPECT_EQ(Cli({"sweep", Write("topo.ini", base + "topology = torus2d ring\n"), "--out", h5}, &out,
                &err),
            2);
  EXPECT_THAT(err, HasSubstr("--fattree.k: '4' is read by none of the 2 runs"));
  EXPECT_THAT(err, HasSubstr("it is read by --topology fattree, hierarchical"));
  EXPECT_FALSE(fs::exists(h5));
  EXPECT_EQ(Cli({"sweep", Write("topo2.ini", base + "topology = torus2d fattree\n"), "--out", h5},
                &out, &err),
            0)
      << err;
}

// Runs simulated at once share the machine's default budgets: two all-to-alls whose step
// starts P·(P−1) ≈ 3/4 of the default --max-flows each fit one at a time, not two at a time.
TEST(SweepTest, ConcurrentRunsShareTheDefaultMemoryBudget) {
  const int p = static_cast<int>(std::ceil(std::sqrt(0.75 * double(DefaultMaxFlows())))) + 1;
  ASSERT_GT(int64_t{p} * (p - 1), DefaultMaxFlows() / 2);
  ASSERT_LE(int64_t{p} * (p - 1), DefaultMaxFlows());
  const std::string ini =
      Write("shared.ini", absl::StrCat("workload = collective\ncollective = alltoall\nchips = ", p,
                                       "\nmesh = 1x", p, "\nbytes = 1MiB 2MiB\n"));
  const std::string h5 = Temp("shared.h5");
  fs::remove(h5);
  std::string out, err;
  EXPECT_EQ(Cli({"sweep", ini, "--jobs", "2", "--out", h5}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("shared by --jobs 2 runs at once"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_FALSE(fs::exists(h5));
}

// max-timeline-bytes bounds the timelines a sweep stores: refused in a file swept without
// --timelines (nothing reads it), and with them a run whose timeline passes it stops the sweep
// with exit 2 and no archive, naming --timelines.
TEST(SweepTest, TimelineBudgetAppliesWithTimelines) {
  const std::string ini =
      Write("timeline.ini",
            "chips = 16\nmesh = 4x4\nalgorithm = summa\nhidden = 512\nbatch = 8\nseq = 256 128\n"
            "max-timeline-bytes = 64KiB\n");
  const std::string h5 = Temp("timeline.h5");
  fs::remove(h5);
  std::string out, err;
  EXPECT_EQ(Cli({"sweep", ini, "--out", h5}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("--max-timeline-bytes: '64KiB' is read by none of the 2 runs"));
  EXPECT_THAT(err, HasSubstr("; it is read with --out, --trace or a sweep's --timelines"));
  EXPECT_FALSE(fs::exists(h5));
  EXPECT_EQ(Cli({"sweep", ini, "--out", h5, "--timelines"}, &out, &err), 2);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_THAT(err, HasSubstr("and sweep --timelines: the timeline kept for it passes the limit "
                             "of 64 KiB (--max-timeline-bytes 65536)"));
  EXPECT_THAT(err, HasSubstr("leave out --timelines"));
  EXPECT_FALSE(fs::exists(h5));
}

// The terminal's progress lines: drawn from the start (0 runs, no time left yet), the count of
// finished runs whatever their order, the time left at the mean pace so far once one finished:
// 41.2 s / 3 runs × 9 runs left = 123.6 s ≈ 2m04s. The bar has 30 columns: 30·3/12 = 7 filled.
TEST(SweepTest, ProgressLines) {
  EXPECT_EQ(cli::SweepProgressLine(0, 12, 0),
            "  0/12 runs [..............................] 0m00s elapsed ");
  EXPECT_EQ(cli::SweepProgressLine(0, 12, 3.4),
            "  0/12 runs [..............................] 0m03s elapsed ");
  EXPECT_EQ(cli::SweepProgressLine(3, 12, 41.2),
            "  3/12 runs [#######.......................] 0m41s elapsed, ~2m04s left ");
  EXPECT_EQ(cli::SweepProgressLine(12, 12, 3725),
            "  12/12 runs [##############################] 1h02m elapsed, ~0m00s left ");
  EXPECT_EQ(cli::SweepCheckLine(0, 12, 0),
            "  checking 12 runs: 0/12 [..............................] 0m00s elapsed ");
  EXPECT_EQ(cli::SweepCheckLine(5, 12, 2),
            "  checking 12 runs: 5/12 [############..................] 0m02s elapsed ");
}

// Pipes and files (stderr under ctest) get no progress at all, neither while checking nor while
// running: their output stays what scripts and these tests compare.
TEST(SweepTest, NoProgressWithoutATerminal) {
  if (::isatty(STDERR_FILENO)) GTEST_SKIP() << "stderr is a terminal: the sweep draws progress";
  const std::string ini = Write("quiet.ini", "workload = chain\nchips = 2 4\n");
  std::string out, err;
  ASSERT_EQ(Cli({"sweep", ini, "--out", Temp("quiet.h5")}, &out, &err), 0) << err;
  EXPECT_EQ(err, "");
  EXPECT_THAT(out, HasSubstr("2 runs"));
}

TEST(SweepTest, BadCommandLinesExitTwo) {
  const std::string ini = Write("ok.ini", "workload = chain\nchips = 2 4\n");
  EXPECT_EQ(Cli({"sweep", ini, "--shard", "3/2"}), 2);
  EXPECT_EQ(Cli({"sweep", ini, "--jobs", "0"}), 2);
  EXPECT_EQ(Cli({"sweep", ini, "--format", "xml"}), 2);
  EXPECT_EQ(Cli({"sweep", "/nonexistent.ini"}), 2);
  EXPECT_EQ(Cli({"sweep"}), 2);
  EXPECT_EQ(Cli({"merge", Temp("m.h5")}), 2);
  EXPECT_EQ(Cli({"merge", Temp("m.h5"), "/nonexistent.h5"}), 2);
}

// More shards than runs (a job array with a fixed --shard K/N): a shard that gets no run writes
// an archive without runs, and merging it with the others gives the whole sweep.
TEST(SweepTest, AnEmptyShardWritesAnEmptyArchiveThatMergeAccepts) {
  const std::string ini = Write("few.ini", "workload = chain\nchips = 2 4\n");
  const std::string s1 = Temp("few1.h5"), s2 = Temp("few2.h5"), s3 = Temp("few3.h5"),
                    merged = Temp("few_merged.h5"), whole = Temp("few_whole.h5");
  std::string out, err;
  ASSERT_EQ(Cli({"sweep", ini, "--out", s1, "--shard", "1/3"}), 0);
  ASSERT_EQ(Cli({"sweep", ini, "--out", s2, "--shard", "2/3"}), 0);
  ASSERT_EQ(Cli({"sweep", ini, "--out", s3, "--shard", "3/3"}, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("0 runs (shard 3 of 3)"));
  absl::StatusOr<std::vector<std::string>> none = formats::ListRuns(s3);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  absl::StatusOr<formats::SummaryTable> empty = formats::ReadSummary(s3);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->runs.empty());
  ASSERT_EQ(Cli({"merge", merged, s1, s2, s3}, &out, &err), 0) << err;
  ASSERT_EQ(Cli({"sweep", ini, "--out", whole}), 0);
  absl::StatusOr<formats::SummaryTable> m = formats::ReadSummary(merged),
                                        w = formats::ReadSummary(whole);
  ASSERT_TRUE(m.ok() && w.ok()) << m.status() << w.status();
  EXPECT_EQ(m->runs, w->runs);
  EXPECT_EQ(m->metrics, w->metrics);
  // The empty shard first: the merged columns come from the shards that have runs.
  ASSERT_EQ(Cli({"merge", merged, s3, s1, s2}, &out, &err), 0) << err;
  m = formats::ReadSummary(merged);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->metrics, w->metrics);
}

// --keep-going: a run that fails its check (Cannon on a mesh that is not square) or fails while
// it runs (its timeline passes --max-timeline-bytes) is stored with its error and NaN metrics,
// the others run; the sweep then exits with the first failure's status and says how many failed.
TEST(SweepTest, KeepGoingStoresFailedRunsWithTheirErrors) {
  const std::string ini = Write("keep.ini",
                                "hidden = 1024\nbatch = 8\nseq = 512\nchips = 16 8\n"
                                "algorithm = cannon\n");
  const std::string h5 = Temp("keep.h5");
  fs::remove(h5);
  std::string out, err;
  EXPECT_EQ(Cli({"sweep", ini, "--out", h5}, &out, &err), 2);  // Without: nothing runs.
  EXPECT_FALSE(fs::exists(h5));
  EXPECT_EQ(Cli({"sweep", ini, "--out", h5, "--keep-going"}, &out, &err), 2);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_THAT(err, HasSubstr("sweep: 1 of 2 runs failed"));
  EXPECT_THAT(err, HasSubstr("run0001 (chips=8)"));
  EXPECT_THAT(out, HasSubstr("failed"));
  absl::StatusOr<formats::RunRecord> bad = formats::ReadRun(h5, "run0001"),
                                     good = formats::ReadRun(h5, "run0000");
  ASSERT_TRUE(bad.ok() && good.ok()) << bad.status() << good.status();
  EXPECT_THAT(bad->error, HasSubstr("not square"));
  EXPECT_TRUE(bad->metrics.empty());
  EXPECT_TRUE(good->error.empty());
  EXPECT_GT(good->Metric("makespan_s"), 0);
  absl::StatusOr<formats::SummaryTable> t = formats::ReadSummary(h5);
  ASSERT_TRUE(t.ok()) << t.status();
  const size_t makespan =
      std::find(t->metrics.begin(), t->metrics.end(), "makespan_s") - t->metrics.begin();
  ASSERT_LT(makespan, t->metrics.size());
  EXPECT_GT(t->metric_values[makespan][0], 0);
  EXPECT_TRUE(std::isnan(t->metric_values[makespan][1]));

  // Failing while it runs, first in the file: the summary's columns still come from a run that
  // has metrics; JSON and CSV name the error.
  const std::string sim_ini = Write("keep_sim.ini",
                                    "hidden = 1024\nbatch = 8\nseq = 512\nchips = 16\nmesh = 4x4\n"
                                    "algorithm = summa collective\nmax-timeline-bytes = 600KiB\n");
  fs::remove(h5);
  EXPECT_EQ(Cli({"sweep", sim_ini, "--out", h5, "--timelines", "--keep-going", "--format", "csv"},
                &out, &err),
            2);
  EXPECT_THAT(err, HasSubstr("sweep: 1 of 2 runs failed"));
  EXPECT_THAT(err, HasSubstr("the timeline kept for it passes the limit"));
  EXPECT_THAT(out, HasSubstr(",error\n"));
  t = formats::ReadSummary(h5);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NE(std::find(t->metrics.begin(), t->metrics.end(), "makespan_s"), t->metrics.end());
  absl::StatusOr<formats::RunRecord> collective = formats::ReadRun(h5, "run0001");
  ASSERT_TRUE(collective.ok()) << collective.status();
  EXPECT_FALSE(collective->timeline.empty());
  EXPECT_EQ(Cli({"sweep", sim_ini, "--out", h5, "--timelines", "--keep-going", "--format", "json"},
                &out, &err),
            2);
  EXPECT_THAT(out, HasSubstr("\"error\": \""));
}

// The bound of sweep --timelines: item i starts once item i − width is written; Close wakes the
// waiting workers and tells them to stop.
TEST(InOrderWindowTest, AnItemStartsOnceTheItemWidthBeforeItIsWritten) {
  cli::InOrderWindow window(2);
  EXPECT_TRUE(window.MayStart(0));
  EXPECT_TRUE(window.MayStart(1));
  EXPECT_FALSE(window.MayStart(2));
  std::atomic<bool> started{false};
  std::thread worker([&] { started = window.WaitToStart(2); });
  window.Written();  // Item 0 written: item 2 may start.
  worker.join();
  EXPECT_TRUE(started);
  EXPECT_TRUE(window.MayStart(2));
  EXPECT_FALSE(window.MayStart(3));
  std::atomic<bool> result{true};
  std::thread stopped([&] { result = window.WaitToStart(5); });
  window.Close();
  stopped.join();
  EXPECT_FALSE(result);  // Closed: the worker stops instead of starting item 5.
}

TEST(SweepTest, InterruptLeavesNoArchive) {
  // SIGINT is handled by the sweep (a flag), not fatal, only while the sweep's own handler is
  // installed: the signal is raised as soon as that handler replaces meshsim's (installed here
  // first, as Main does), not after a guessed delay. Eight runs of ~0.8 s each: the sweep cannot
  // finish (and restore meshsim's handler, which would exit) before the signal lands.
  const std::string ini = Write("long.ini",
                                "hidden = 1024\nbatch = 128\nseq = 512\nchips = 256\nmesh = "
                                "16x16\nslices = 8\nlayers = 1 2 3 4 5 6 7 8\n");
  const std::string h5 = Temp("interrupted.h5");
  fs::remove(h5);
  formats::InstallInterruptCleanup();
  struct sigaction meshsim_handler {};
  ASSERT_EQ(sigaction(SIGINT, nullptr, &meshsim_handler), 0);
  std::thread killer([&] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      struct sigaction now {};
      sigaction(SIGINT, nullptr, &now);
      if (now.sa_handler != meshsim_handler.sa_handler) {
        std::raise(SIGINT);  // The sweep's handler is in place.
        return;
      }
      std::this_thread::yield();
    }
    ADD_FAILURE() << "the sweep never installed its SIGINT handler";
  });
  std::string out, err;
  const int status = Cli({"sweep", ini, "--out", h5, "--jobs", "1"}, &out, &err);
  killer.join();
  EXPECT_EQ(status, 1) << err;
  EXPECT_THAT(err, HasSubstr("interrupted"));
  EXPECT_FALSE(fs::exists(h5));
  for (const auto& entry : fs::directory_iterator(fs::path(h5).parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find("interrupted.h5.tmp"), std::string::npos);
  }
}

}  // namespace
}  // namespace meshsim::sim::cli
