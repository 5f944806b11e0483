// BM_Gpt3Block256: a full training block (forward + backward-data + backward-weight of the four
// FC layers) of GPT-3 on 256 tpuv4 chips (16×16 torus), MeshSlice with S = 8 — the DESIGN.md §10
// target (≤ 2 s wall, ≤ 1 GiB). Reports simulated events per wall second and the ops lowered.
// It keeps the timeline and folds, as `run --out` does: 2×2 chips simulated, their rows,
// counter samples and resources expanded to every chip (sim/fold.h).
//
// BM_Gpt3Block1024, BM_Gpt3Block16384: the same block on 1024 and 16384 chips as `meshsim run
// --chips N` runs it (mesh and S from the autotuner, no timeline kept: metrics streamed, the
// torus folded to its 2×2 period box, sim/fold.h):
//   build/tests/meshsim_benchmarks --benchmark_filter=BM_Gpt3Block1024
//
// BM_Gpt3BlockFatTree64: the block as `meshsim run --chips 64 --topology fattree` runs it (k = 8
// fat-tree, whose shared core links join every flow into one binding part that most solves
// re-fill): the fair-share solver's worst case among the built-in topologies.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "sim/options.h"
#include "sim/run.h"

namespace meshsim::sim {
namespace {

void RunBlock(benchmark::State& state,
              const std::vector<std::pair<std::string, std::string>>& values, bool keep_timeline,
              bool fold = false) {
  RawOptions raw;
  raw.values = values;
  absl::StatusOr<RunOptions> options = ResolveRunOptions(raw);
  if (!options.ok()) {
    state.SkipWithError(std::string(options.status().message()).c_str());
    return;
  }
  options->keep_timeline = keep_timeline;
  options->fold = fold;
  double events = 0, ops = 0, makespan = 0;
  for (auto _ : state) {
    absl::StatusOr<formats::RunRecord> rec = Simulate(*options);
    if (!rec.ok()) {
      state.SkipWithError(std::string(rec.status().message()).c_str());
      return;
    }
    events = rec->Metric("events");
    ops = rec->Metric("ops");
    makespan = rec->Metric("makespan_s");
    state.counters["rows"] = static_cast<double>(rec->timeline.size());
  }
  state.counters["events"] = events;
  state.counters["ops"] = ops;
  state.counters["sim_ms"] = makespan * 1e3;
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}

void BM_Gpt3Block256(benchmark::State& state) {
  RunBlock(state,
           {{"chips", "256"},
            {"mesh", "32x8"},
            {"workload", "llm"},
            {"model", "gpt3"},
            {"pass", "train"},
            {"algorithm", "meshslice"},
            {"slices", "8"}},
           /*keep_timeline=*/true, /*fold=*/true);
}
BENCHMARK(BM_Gpt3Block256)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Gpt3Block1024(benchmark::State& state) {
  RunBlock(state, {{"chips", "1024"}}, /*keep_timeline=*/false, /*fold=*/true);
}
BENCHMARK(BM_Gpt3Block1024)->Unit(benchmark::kMillisecond);

void BM_Gpt3Block16384(benchmark::State& state) {
  RunBlock(state, {{"chips", "16384"}}, /*keep_timeline=*/false, /*fold=*/true);
}
BENCHMARK(BM_Gpt3Block16384)->Unit(benchmark::kMillisecond);

void BM_Gpt3BlockFatTree64(benchmark::State& state) {
  RunBlock(state, {{"chips", "64"}, {"topology", "fattree"}}, /*keep_timeline=*/false);
}
BENCHMARK(BM_Gpt3BlockFatTree64)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace meshsim::sim
