#include "sim/run.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "algorithms/microbench.h"
#include "algorithms/smoke.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "core/status_macros.h"
#include "sim/machine.h"
#include "sim/metrics.h"

namespace meshsim::sim {

namespace {

absl::Status BuildWorkload(const RunOptions& o, const algorithms::Mesh& mesh,
                           core::OpGraph& graph) {
  if (o.workload == "chain") {
    return algorithms::BuildChain({.chips = o.chips, .steps = o.steps, .step = o.step_time}, graph);
  }
  if (o.workload == "gemm" && o.chips == 1) {
    return algorithms::BuildLocalGemm(o.gemm_m, o.gemm_n, o.gemm_k, graph);
  }
  if (o.workload == "collective") {
    MESHSIM_ASSIGN_OR_RETURN(core::CollectiveKind kind, algorithms::ParseCollective(o.collective));
    return algorithms::BuildCollectiveBench(mesh, kind, o.group, o.bytes, graph);
  }
  return absl::UnimplementedError(
      absl::StrCat("--workload ", o.workload, o.workload == "gemm" ? " on more than one chip" : "",
                   ": not available in this build yet (the algorithm plugins are being built); try "
                   "--workload chain, collective, or gemm with --chips 1"));
}

}  // namespace

absl::StatusOr<RunRecord> Simulate(const RunOptions& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  const algorithms::Mesh mesh = o.mesh_rows > 0 ? algorithms::Mesh{o.mesh_rows, o.mesh_cols}
                                                : algorithms::Mesh::Squarest(o.chips);
  core::OpGraph graph;
  MESHSIM_RETURN_IF_ERROR(BuildWorkload(o, mesh, graph));

  core::Simulator sim;
  core::FairShare fair_share(sim);
  fair_share.set_record_counters(true);
  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<Machine> machine, BuildMachine(o, mesh, fair_share));
  core::Executor exec(sim, graph);
  machine->Attach(exec);
  MESHSIM_RETURN_IF_ERROR(exec.Run());

  RunRecord rec;
  rec.chips = o.chips;
  rec.config = o.Resolved();
  for (auto& [key, value] : rec.config) {
    if (key == "mesh") value = mesh.ToString();  // The mesh actually used.
  }
  rec.names = graph.names().all();
  rec.timeline = exec.TakeTimeline();
  rec.edges.reserve(graph.num_deps());
  for (uint32_t i = 0; i < graph.size(); ++i) {
    for (core::OpId d : graph.deps(core::OpId(i))) rec.edges.push_back({d, core::OpId(i)});
  }
  rec.resources = fair_share.ResourceReport();
  rec.counters = fair_share.counters();

  RunMetrics m = ComputeMetrics(rec.timeline, o.chips, o.system.chip.PeakFlops(), exec.makespan());
  m.ops = static_cast<double>(graph.size());
  m.events = static_cast<double>(sim.events_executed());
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rec.metrics = m.Pairs();
  const uint64_t fp = exec.fingerprint();
  rec.metrics.emplace_back("fingerprint_hi", static_cast<double>(fp >> 32));
  rec.metrics.emplace_back("fingerprint_lo", static_cast<double>(fp & 0xffffffffu));
  return rec;
}

uint64_t Fingerprint(const RunRecord& record) {
  return (static_cast<uint64_t>(record.Metric("fingerprint_hi")) << 32) |
         static_cast<uint64_t>(record.Metric("fingerprint_lo"));
}

}  // namespace meshsim::sim
