// Golden fingerprints: small deterministic runs whose op-completion fingerprint and makespan are
// stored here. A change that alters any simulated result (a refactor of the plugins, the network
// or the executor that should be behaviour-preserving) fails this test; a change that alters
// results on purpose updates the table and says why in its commit message.
//
// To print the current values: MESHSIM_PRINT_GOLDEN=1 build/tests/sim_tests
//   --gtest_filter='GoldenFingerprint*'
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "tests/sim/run_pairs.h"
#include "tests/test_temp_dir.h"

namespace meshsim::sim {
namespace {

struct Golden {
  std::string name;
  std::string args;  // "key=value key=value ..." (run options; "set=K=V" for --set).
  uint64_t fingerprint;
  int64_t makespan_ps;
};

// clang-format off
const std::vector<Golden>& Goldens() {
  static const auto* g = new std::vector<Golden>{
      {"MeshsliceGemm", "chips=16 mesh=4x4 workload=gemm gemm=4096,4096,4096 algorithm=meshslice slices=4", 12339972883104658507ull, 590982525},
      {"CollectiveGemm", "chips=16 mesh=4x4 workload=gemm gemm=4096,4096,4096 algorithm=collective", 5680965852876117186ull, 262754813},
      {"WangGemm", "chips=16 mesh=4x4 workload=gemm gemm=4096,4096,4096 algorithm=wang", 17439951904416044968ull, 436108705},
      {"SummaGemm", "chips=16 mesh=4x4 workload=gemm gemm=4096,4096,4096 algorithm=summa slices=4", 14116371601756993568ull, 834776463},
      {"CannonGemm", "chips=16 mesh=4x4 workload=gemm gemm=4096,4096,4096 algorithm=cannon", 4698384769393350571ull, 787776438},
      {"Tp1dGemm", "chips=16 workload=gemm gemm=4096,4096,4096 algorithm=tp1d", 4355258457844240198ull, 2120010202},
      {"MeshsliceLlmAuto", "chips=16 model=gpt3 batch=8 seq=512", 13295395374381653780ull, 22278972430},
      {"WangLlmLsDataflow", "chips=16 mesh=4x4 model=gpt3 batch=8 seq=512 algorithm=wang dataflow=ls", 18289931010705737754ull, 49406301362},
      {"Tp1dLlm", "chips=16 model=gpt3 batch=8 seq=512 algorithm=tp1d", 1589221021110648793ull, 35245530055},
      {"FsdpLlmRs", "chips=16 model=gpt3 batch=8 seq=512 algorithm=fsdp dataflow=rs", 3524384539667093302ull, 198735127856},
      {"AllGatherRow", "chips=16 mesh=4x4 workload=collective collective=allgather bytes=1MiB", 7614966880753054729ull, 170428801},
      {"ReduceScatterCol", "chips=16 mesh=4x4 workload=collective collective=reducescatter group=col bytes=1MiB", 11754316463396887022ull, 178293121},
      {"AllReduceFattree", "chips=16 mesh=4x4 topology=fattree workload=collective collective=allreduce group=all bytes=1MiB", 3976674871196458643ull, 348851203},
      {"Chain", "chips=16 workload=chain steps=32", 11592776562935653690ull, 320000000},
      {"PipelineEager", "system=p3.8xlarge chips=8 workload=pipeline hidden=1024 heads=16 layers=4 stages=2 dp=2 mesh=2x1 microbatches=4 batch=16 seq=512 schedule=eager-1f1b delay-dw=1", 15683791188044630801ull, 20619764911},
      {"PipelineUnet1f1bAlpa", "system=p3.8xlarge chips=8 workload=pipeline model=u-transformer stages=2 dp=2 mesh=2x1 microbatches=4 batch=8 seq=1024 schedule=1f1b overlap=0 reshard=local-allgather recompute=1", 13073911157712093606ull, 78599224884},
  };
  return *g;
}
// clang-format on

void PrintTo(const Golden& g, std::ostream* os) { *os << g.name; }

class GoldenFingerprint : public testing::TestWithParam<Golden> {};

TEST_P(GoldenFingerprint, MatchesStoredValue) {
  const Golden& g = GetParam();
  const RawOptions raw = ScenarioOptions(g.args);
  absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
  ASSERT_TRUE(o.ok()) << o.status();
  absl::StatusOr<formats::RunRecord> r = Simulate(*o);
  ASSERT_TRUE(r.ok()) << r.status();
  const uint64_t fingerprint = Fingerprint(*r);
  const int64_t makespan_ps = std::llround(r->Metric("makespan_s", -1) * 1e12);
  if (std::getenv("MESHSIM_PRINT_GOLDEN") != nullptr) {
    std::cout << "      {\"" << g.name << "\", \"" << g.args << "\", " << fingerprint << "ull, "
              << makespan_ps << "},\n";
  }
  EXPECT_EQ(fingerprint, g.fingerprint) << g.name;
  EXPECT_EQ(makespan_ps, g.makespan_ps) << g.name;
}

// The same runs as `meshsim run` makes them without --out: folded where the torus's symmetry
// allows (sim/fold.h; the 4×4 tori fold to 2×2), with the stored fingerprints and makespans.
TEST_P(GoldenFingerprint, FoldedMatchesStoredValue) {
  const Golden& g = GetParam();
  absl::StatusOr<RunOptions> o = ResolveRunOptions(ScenarioOptions(g.args));
  ASSERT_TRUE(o.ok()) << o.status();
  o->keep_timeline = false;
  o->fold = true;
  absl::StatusOr<formats::RunRecord> r = Simulate(*o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Fingerprint(*r), g.fingerprint) << g.name;
  EXPECT_EQ(std::llround(r->Metric("makespan_s", -1) * 1e12), g.makespan_ps) << g.name;
}

INSTANTIATE_TEST_SUITE_P(Runs, GoldenFingerprint, testing::ValuesIn(Goldens()),
                         [](const auto& info) { return info.param.name; });

// The resolved config of a run (the JSON `config`, the archive's) holds what the run used and
// only what it reads, so read back as options (ResolveRunOptions refuses any key the run does
// not read) it gives the same run: the same fingerprint and makespan, and the same config. Both
// ways: the record's config as options, and the archive's config as a --config file.
void ExpectReplaysTheSameRun(const std::string& name, const std::string& args) {
  SCOPED_TRACE(name);
  const RawOptions raw = ScenarioOptions(args);
  absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
  ASSERT_TRUE(o.ok()) << o.status();
  absl::StatusOr<formats::RunRecord> first = Simulate(*o);
  ASSERT_TRUE(first.ok()) << first.status();
  for (const auto& [key, value] : first->config) EXPECT_NE(value, "") << key;

  RawOptions again;
  again.values = first->config;
  absl::StatusOr<RunOptions> replay = ResolveRunOptions(again);
  ASSERT_TRUE(replay.ok()) << replay.status();
  absl::StatusOr<formats::RunRecord> second = Simulate(*replay);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(Fingerprint(*second), Fingerprint(*first));
  EXPECT_EQ(second->Metric("makespan_s"), first->Metric("makespan_s"));
  EXPECT_EQ(second->config, first->config);

  const std::string dir = testing_temp::TestDir().string();
  const std::string archive = absl::StrCat(dir, "/replay_", name, ".h5");
  const std::string config_file = absl::StrCat(dir, "/replay_", name, ".ini");
  ASSERT_TRUE(formats::WriteRuns(archive, {&*first}, "test").ok());
  absl::StatusOr<formats::RunRecord> stored = formats::ReadRun(archive);
  ASSERT_TRUE(stored.ok()) << stored.status();
  {
    std::ofstream out(config_file);
    for (const auto& [key, value] : stored->config) out << key << " = " << value << "\n";
  }
  absl::StatusOr<RawOptions> from_file = ParseRunArgs({"--config", config_file});
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  absl::StatusOr<RunOptions> replay_file = ResolveRunOptions(*from_file);
  ASSERT_TRUE(replay_file.ok()) << replay_file.status();
  absl::StatusOr<formats::RunRecord> third = Simulate(*replay_file);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(Fingerprint(*third), Fingerprint(*first));
  EXPECT_EQ(third->config, first->config);
  std::remove(archive.c_str());
  std::remove(config_file.c_str());
}

TEST_P(GoldenFingerprint, ReplayedFromItsResolvedConfigGivesTheSameRun) {
  ExpectReplaysTheSameRun(GetParam().name, GetParam().args);
}

// Workloads and choices the goldens do not cover: a whole layer by a layer plugin on its own
// mesh (atp) and by a GeMM plugin with per-layer dataflows and S (meshslice), a custom model, a
// given per-layer S, a 1-chip GeMM, a pipeline with the deterministic scheduler (no seed).
TEST(ResolvedConfigTest, ReplaysTheSameRunForMoreWorkloads) {
  ExpectReplaysTheSameRun("LayerAtp", "chips=8 workload=layer algorithm=atp model=atp-m1 seq=512");
  ExpectReplaysTheSameRun("LayerMeshslice",
                          "chips=16 workload=layer algorithm=meshslice hidden=2048 seq=512");
  ExpectReplaysTheSameRun("LlmCustomSlices",
                          "chips=16 mesh=4x4 hidden=4096 heads=32 ffn=8192 layers=2 batch=8 "
                          "seq=512 slices=2,4,2,4 dataflow=ls");
  ExpectReplaysTheSameRun("LocalGemm", "chips=1 workload=gemm gemm=1024,1024,1024");
  ExpectReplaysTheSameRun("PipelineNaive",
                          "system=p3.8xlarge chips=8 workload=pipeline hidden=1024 heads=16 "
                          "layers=4 stages=2 dp=2 mesh=2x1 microbatches=4 batch=16 seq=512 "
                          "reshard-scheduler=naive");
}

// A run whose cancel flag is up stops at its first check (65536 events) with Cancelled, and an
// unset flag changes nothing: the same fingerprint as without one.
TEST(CancelTest, ARaisedFlagStopsTheRunAndALoweredOneChangesNothing) {
  RawOptions raw;
  raw.values = {{"chips", "64"}};  // About 1.2 M events.
  absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
  ASSERT_TRUE(o.ok()) << o.status();
  o->keep_timeline = false;
  absl::StatusOr<formats::RunRecord> plain = Simulate(*o);
  ASSERT_TRUE(plain.ok()) << plain.status();
  std::atomic<bool> cancel{false};
  o->cancel = &cancel;
  absl::StatusOr<formats::RunRecord> watched = Simulate(*o);
  ASSERT_TRUE(watched.ok()) << watched.status();
  EXPECT_EQ(Fingerprint(*watched), Fingerprint(*plain));
  cancel = true;
  absl::StatusOr<formats::RunRecord> stopped = Simulate(*o);
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kCancelled) << stopped.status();
  EXPECT_THAT(std::string(stopped.status().message()), testing::HasSubstr("cancelled after"));
}

}  // namespace
}  // namespace meshsim::sim
