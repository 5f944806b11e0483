#include "sim/run.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "algorithms/smoke.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "core/status_macros.h"
#include "sim/metrics.h"

namespace meshsim::sim {

namespace {

absl::Status BuildWorkload(const RunOptions& o, core::OpGraph& graph) {
  if (o.workload == "chain") {
    return algorithms::BuildChain({.chips = o.chips, .steps = o.steps, .step = o.step_time}, graph);
  }
  return absl::UnimplementedError(absl::StrCat(
      "--workload ", o.workload,
      ": not available in this build yet (the machine model and algorithm plugins are being "
      "built); try --workload chain"));
}

}  // namespace

absl::StatusOr<RunRecord> Simulate(const RunOptions& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  core::OpGraph graph;
  MESHSIM_RETURN_IF_ERROR(BuildWorkload(o, graph));

  core::Simulator sim;
  core::FairShare fair_share(sim);
  fair_share.set_record_counters(true);
  core::Executor exec(sim, graph);
  core::DelayRunner delays;
  exec.SetRunner(core::OpKind::kDelay, &delays);
  MESHSIM_RETURN_IF_ERROR(exec.Run());

  RunRecord rec;
  rec.chips = o.chips;
  rec.config = o.Resolved();
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
