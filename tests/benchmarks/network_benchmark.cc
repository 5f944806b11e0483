// BM_RingAllGather256: a 16×16 torus where every row and every column runs an AllGather at the
// same time (32 rings, 256 chips, each chip in two rings), the pattern of a MeshSlice step.
// Reports simulated events per wall second.
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/op_graph.h"
#include "core/simulator.h"
#include "network/network_config.h"
#include "network/network_model.h"
#include "network/topology.h"

namespace meshsim::network {
namespace {

void BM_RingAllGather256(benchmark::State& state) {
  const int n = 16;
  const NetworkConfig config = *NetworkPreset("tpuv4");
  TopologyParams params;
  params.name = "torus2d";
  params.chips = n * n;
  params.dims = {n, n};
  params.link_bandwidth_bytes_per_s = config.link_bandwidth_bytes_per_s;
  params.link_latency_s = config.link_latency_s;
  const Topology topology = *Topology::Build(params);
  uint64_t events = 0;
  for (auto _ : state) {
    core::Simulator sim;
    core::FairShare fs(sim);
    std::vector<core::ResourceId> hbm;
    for (int c = 0; c < n * n; ++c) {
      core::ResourceInfo info;
      info.capacity_bytes_per_s = 1.2e12;
      hbm.push_back(fs.AddResource(info));
    }
    NetworkModel net(fs, topology, config, hbm, 51e12);
    core::OpGraph graph;
    for (int i = 0; i < n; ++i) {
      std::vector<core::ChipId> row, col;
      for (int j = 0; j < n; ++j) {
        row.push_back(core::ChipId(i * n + j));
        col.push_back(core::ChipId(j * n + i));
      }
      graph.Add(core::Op::Collective(core::CollectiveKind::kAllGather, graph.AddGroup(row),
                                     int64_t{state.range(0)} << 20));
      graph.Add(core::Op::Collective(core::CollectiveKind::kAllGather, graph.AddGroup(col),
                                     int64_t{state.range(0)} << 20));
    }
    core::Executor exec(sim, graph);
    exec.SetRunner(core::OpKind::kCollective, &net);
    if (!exec.Run().ok()) state.SkipWithError("simulation failed");
    events = sim.events_executed();
    state.counters["sim_ms"] = exec.makespan().seconds() * 1e3;
  }
  state.counters["events"] = static_cast<double>(events);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}
BENCHMARK(BM_RingAllGather256)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim::network
