// BM_Gpt3Block256: a full training block (forward + backward-data + backward-weight of the four
// FC layers) of GPT-3 on 256 tpuv4 chips (16×16 torus), MeshSlice with S = 8 — the DESIGN.md §10
// target (≤ 2 s wall, ≤ 1 GiB). Reports simulated events per wall second and the ops lowered.
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "sim/options.h"
#include "sim/run.h"

namespace meshsim::sim {
namespace {

void RunBlock(benchmark::State& state, const std::string& algorithm, const std::string& mesh) {
  RawOptions raw;
  raw.values = {{"chips", "256"},  {"mesh", mesh},           {"workload", "llm"}, {"model", "gpt3"},
                {"pass", "train"}, {"algorithm", algorithm}, {"slices", "8"}};
  absl::StatusOr<RunOptions> options = ResolveRunOptions(raw);
  if (!options.ok()) {
    state.SkipWithError(std::string(options.status().message()).c_str());
    return;
  }
  double events = 0, ops = 0, makespan = 0;
  for (auto _ : state) {
    absl::StatusOr<RunRecord> rec = Simulate(*options);
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

void BM_Gpt3Block256(benchmark::State& state) { RunBlock(state, "meshslice", "32x8"); }
BENCHMARK(BM_Gpt3Block256)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace meshsim::sim
