// Speed targets of DESIGN.md §10 for the engine and the fair-share solver. Run:
//   build/tests/meshsim_benchmarks --benchmark_filter=BM_EventEngine
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/fair_share.h"
#include "core/simulator.h"

namespace meshsim::core {
namespace {

// Schedule + dispatch throughput with a steady queue of `range(0)` pending events: each event
// reschedules one successor at a pseudo-random future time, as a busy simulation does.
void BM_EventEngine(benchmark::State& state) {
  const int64_t queue = state.range(0);
  const int64_t per_iter = 1 << 20;
  for (auto _ : state) {
    Simulator sim;
    int64_t remaining = per_iter;
    uint64_t rng = 12345;
    std::function<void()> tick;
    tick = [&] {
      if (--remaining <= 0) return;
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      sim.ScheduleAfter(Time::Picoseconds(1 + static_cast<int64_t>((rng >> 33) % 1000)),
                        [&] { tick(); });
    };
    for (int64_t i = 0; i < queue; ++i) {
      sim.ScheduleAt(Time::Picoseconds(i), [&] { tick(); });
    }
    sim.Run();
    benchmark::DoNotOptimize(sim.events_executed());
    state.counters["events"] = static_cast<double>(sim.events_executed());
  }
  state.SetItemsProcessed(state.iterations() * per_iter);
}
// 1 << 20: about 10^6 pending, the heap of a P² lowering at 1024 chips (docs/performance.md).
BENCHMARK(BM_EventEngine)
    ->Arg(16)
    ->Arg(1024)
    ->Arg(65536)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond);

// Flows over a torus-like resource set: an n×n 2D torus where every chip has an HBM resource
// and four outgoing link directions. Each chip streams to its +x and +y neighbours (source HBM,
// link, destination HBM), so every HBM is shared by the NIC flows of its own chip and of its
// neighbours, and the whole torus is one fair-share component. A finished flow is replaced by
// the next one of that (chip, direction) with a different size, so rates keep changing.
void BM_FairShare(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int flows_per_pair = 16;
  uint64_t solves = 0, flows = 0;
  for (auto _ : state) {
    Simulator sim;
    FairShare fs(sim);
    std::vector<ResourceId> hbm(n * n), link_x(n * n), link_y(n * n);
    const auto resource = [&](double capacity) {
      ResourceInfo info;
      info.capacity_bytes_per_s = capacity;
      return fs.AddResource(info);
    };
    for (int c = 0; c < n * n; ++c) {
      hbm[c] = resource(1.2e12);
      link_x[c] = resource(50e9);
      link_y[c] = resource(50e9);
    }
    std::function<void(int, int, int)> launch = [&](int c, int dir, int left) {
      if (left == 0) return;
      const int x = c % n, y = c / n;
      const int dst = dir == 0 ? y * n + (x + 1) % n : ((y + 1) % n) * n + x;
      const ResourceId link = dir == 0 ? link_x[c] : link_y[c];
      const double bytes = 1e6 * (1 + (c * 7 + left * 3 + dir) % 5);
      fs.StartFlow(bytes, {hbm[c], link, hbm[dst]},
                   [&, c, dir, left] { launch(c, dir, left - 1); });
    };
    for (int c = 0; c < n * n; ++c) {
      launch(c, 0, flows_per_pair);
      launch(c, 1, flows_per_pair);
    }
    sim.Run();
    solves = fs.solves();
    flows = fs.flows_started();
  }
  state.SetItemsProcessed(state.iterations() * flows);
  state.counters["solves"] = static_cast<double>(solves);
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK(BM_FairShare)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim::core
