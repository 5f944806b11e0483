#include "sim/run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "algorithms/autotune/atp_tuner.h"
#include "algorithms/autotune/autotuner.h"
#include "algorithms/dataflow.h"
#include "algorithms/gemm_layer.h"
#include "algorithms/layer_algorithm.h"
#include "algorithms/llm.h"
#include "algorithms/microbench.h"
#include "algorithms/pipeline/pipeline.h"
#include "algorithms/registry.h"
#include "algorithms/reshard/reshard.h"
#include "algorithms/smoke.h"
#include "core/check.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "core/status_macros.h"
#include "network/network_model.h"
#include "sim/fold.h"
#include "sim/machine.h"
#include "sim/metrics.h"
#include "sim/ring_check.h"
#include "sim/tuning.h"
#include "sim/workload.h"
#include "sim/workloads/common.h"
#include "workloads/layer.h"
#include "workloads/stack.h"
#include "workloads/transformer.h"

namespace meshsim::sim {

namespace {

using workload_support::BudgetSource;
using workload_support::Count;

// Where the op budget comes from, its default counted at `bytes_per_op` (kFoldedBytesPerOp: a
// graph that folds).
std::string OpBudgetSource(const RunOptions& o, int64_t bytes_per_op) {
  return BudgetSource(
      o, "max-ops", o.max_ops,
      absl::StrFormat("%s of %s at ~%d B per op%s%s", o.keep_timeline ? "a quarter" : "half",
                      AvailableMemory().Describe(), bytes_per_op,
                      bytes_per_op == kFoldedBytesPerOp ? " of a graph that folds"
                      : o.may_fold                      ? " of a graph simulated whole"
                                                        : "",
                      o.keep_timeline ? ", the timeline kept has another" : ""));
}

// The one-line error of a run whose op graph passes its budget (counted at `bytes_per_op`);
// `why` says by how much.
absl::Status OpBudgetError(const RunOptions& o, const algorithms::Mesh& mesh,
                           const std::string& why, int64_t bytes_per_op) {
  const Workload& w = WorkloadOf(o);
  return absl::InvalidArgumentError(absl::StrFormat(
      "--chips: '%d' is not allowed with %s: %s %s; use fewer %s, or raise "
      "--max-ops",
      o.chips, w.Describe(o, mesh), why, OpBudgetSource(o, bytes_per_op), w.Fewer()));
}

// "5.9 GiB", "12.5 MiB", "64 KiB", "100 B": a memory size.
std::string MemorySize(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= int64_t{1} << 30) return absl::StrFormat("%.1f GiB", b / double(int64_t{1} << 30));
  if (bytes >= int64_t{1} << 20) return absl::StrFormat("%.1f MiB", b / double(int64_t{1} << 20));
  if (bytes >= 1024) return absl::StrFormat("%.0f KiB", b / 1024);
  return absl::StrFormat("%d B", bytes);
}

// What keeps the run's timeline: "--out", "--trace", "--out and --trace", "sweep --timelines".
std::string TimelineKeptFor(const RunOptions& o) {
  if (o.sweep_timelines) return "sweep --timelines";
  if (!o.out.empty() && !o.trace.empty()) return "--out and --trace";
  return o.trace.empty() ? "--out" : "--trace";
}

// The one-line error of a run whose kept timeline passed --max-timeline-bytes with `rows` rows
// and `samples` counter samples, `when` (", at simulated 3 ms with 10 of 20 ops done").
absl::Status TimelineBudgetError(const RunOptions& o, const algorithms::Mesh& mesh, size_t rows,
                                 size_t samples, const std::string& when) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "--chips: '%d' is not allowed with %s and %s: the timeline kept for it passes the limit "
      "of %s %s with %s rows and %s counter samples%s; "
      "use fewer chips, leave out %s (the metrics need no timeline), or raise "
      "--max-timeline-bytes",
      o.chips, WorkloadOf(o).Describe(o, mesh), TimelineKeptFor(o), MemorySize(o.timeline_budget()),
      BudgetSource(o, "max-timeline-bytes", o.max_timeline_bytes,
                   absl::StrFormat("a quarter of %s, the op graph has another",
                                   AvailableMemory().Describe())),
      Count(static_cast<int64_t>(rows)), Count(static_cast<int64_t>(samples)), when,
      o.sweep_timelines ? "--timelines" : TimelineKeptFor(o)));
}

// The torus dimensions a run of `o` on `mesh` folds over where its graph is symmetric; nullopt
// where the run is not folded: not asked for (RunOptions::fold), or a machine that is not
// symmetric under the torus's translations. The conditions on the machine: a torus (its
// wraparound makes every translation a symmetry), routes that do not hash, and nothing that
// orders one chip's ops by more than the graph (in-order streams, host issue, SMs held by
// communication kernels, a communicator's serial queue, blocking collectives, two-level
// collectives).
std::optional<std::vector<int>> FoldDims(const RunOptions& o, const algorithms::Mesh& mesh) {
  const stack::StackConfig& st = o.system.stack;
  const network::NetworkConfig& net = o.system.net;
  if (!o.fold || !o.placement.empty() || mesh.placed()) return std::nullopt;
  if (o.topology != "ring" && o.topology != "torus2d" && o.topology != "torus3d") {
    return std::nullopt;
  }
  if (st.kernel_in_order != 0 || st.comm_ctas > 0 || st.comm_serial != 0 ||
      st.host_op_overhead_s > 0 || st.host_gemm_overhead_s > 0 || st.host_comm_overhead_s > 0 ||
      net.collective_overlap == 0 || net.sendrecv_overlap == 0 || net.two_level != 0) {
    return std::nullopt;
  }
  const absl::StatusOr<network::Topology> topology = BuildTopology(o, &mesh);
  if (!topology.ok() || !topology->RoutesIgnoreHash() || topology->num_chips() != o.chips) {
    return std::nullopt;
  }
  std::vector<int> dims = topology->dims();
  if (dims.empty()) dims = {o.chips};  // The ring.
  // A folded extent of 2 needs both links of the pair (a + and a − link per chip, as every chip
  // of a longer ring has): with torus.length2_links = 1, only if no real extent is 2.
  if (net.torus_length2_links != 2 && std::count(dims.begin(), dims.end(), 2) > 0) {
    return std::nullopt;
  }
  return dims;
}

// Lowers the workload within the op budget (--max-ops; o.may_fold is set here, and says which
// default applies): refused before lowering when a plugin's closed form says the graph would
// pass it, else as soon as the graph does (the plugins check in their loops).
absl::Status BuildWorkload(RunOptions& o, const RunPlan& plan, core::OpGraph& graph) {
  o.may_fold = FoldDims(o, plan.mesh).has_value();
  graph.set_max_ops(static_cast<size_t>(o.op_budget()));
  absl::Status s = WorkloadOf(o).Lower(o, plan, graph);
  if (s.ok()) s = graph.CheckSize();
  if (s.code() != absl::StatusCode::kResourceExhausted) return s;
  // CheckOpCount's message says how many ops; OpGraph::CheckSize's only that the limit passed.
  const std::string why =
      graph.full() ? absl::StrFormat("its op graph passes the limit of %s ops while it is built",
                                     Count(o.op_budget()))
                   : std::string(s.message());
  return OpBudgetError(o, plan.mesh, why, o.may_fold ? kFoldedBytesPerOp : kBytesPerOp);
}

// The logical mesh placed on the chips of --placement (if any).
absl::StatusOr<algorithms::Mesh> ResolveMesh(const RunOptions& o, bool* one_dimensional) {
  MESHSIM_ASSIGN_OR_RETURN(algorithms::Mesh mesh, WorkloadOf(o).LogicalMesh(o, one_dimensional));
  if (o.placement.empty()) return mesh;
  std::vector<core::ChipId> chips;
  for (int c : o.placement) chips.push_back(core::ChipId(c));
  return algorithms::Mesh::Placed(mesh.rows, mesh.cols, std::move(chips));
}

// The workload's plan on its placed mesh; `layer_slices` (not null) fixes the FC layers' S.
absl::StatusOr<RunPlan> ResolvePlan(const RunOptions& o, const std::vector<int>* layer_slices) {
  RunPlan plan;
  MESHSIM_ASSIGN_OR_RETURN(plan.mesh, ResolveMesh(o, &plan.one_dimensional));
  MESHSIM_RETURN_IF_ERROR(WorkloadOf(o).Plan(o, layer_slices, plan));
  return plan;
}

// The run's configuration with every `auto` replaced by what was used (CLI.md: the archive and
// `--format json` hold the resolved values): the mesh, and what the workload decided
// (Workload::ResolveConfig: per-layer dataflows and slice counts in model order, the model's
// dimensions). Keys the run does not read (NotReadBy: the dataflow of a collective, the stages
// of an llm run) are left out, and so is a value the run leaves to a plugin's default (the S of
// a pipeline stage's plugin) and --placement when not given: an unplaced mesh is not the same
// run as one placed on chips 0..n-1 (the machine takes an unplaced mesh's extents). Read back as
// options (`--config`), it gives the same run.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ResolvedConfig(
    const RunOptions& o, const RunPlan& plan, const core::OpGraph& graph) {
  ResolvedValues v;
  v.dataflow = o.dataflow == "auto" ? "" : o.dataflow;
  MESHSIM_RETURN_IF_ERROR(WorkloadOf(o).ResolveConfig(o, plan, graph, v));
  std::vector<std::pair<std::string, std::string>> config = o.Resolved();
  for (auto& [key, value] : config) {
    if (key == "mesh") value = plan.mesh.ToString();  // The mesh actually used.
    if (key == "dataflow") value = v.dataflow;
    if (key == "slices" && o.slices == 0) value = v.slices;  // A given S stays as given.
    if (key == "hidden") value = v.hidden;
    if (key == "heads") value = v.heads;
    if (key == "ffn") value = v.ffn;
    if (key == "layers") value = v.layers;
  }
  // The config replays the run on the mesh it used: what only chose that mesh (ATP's search
  // reading) is no longer read.
  RunOptions replay = o;
  replay.mesh_rows = plan.mesh.rows;
  replay.mesh_cols = plan.mesh.cols;
  KeepReadKeys(replay, config);
  return config;
}

// The progress of a long run on stderr: the makespan is unknown until the end, so it shows what
// is known — events, simulated time, ops finished of all. On a terminal the line is redrawn in
// place at most every 0.25 s once the run has taken 2 s, and cleared at the end; in a log it is
// written once a minute from the first minute on, with the wall time so far.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(const core::Simulator& sim, const core::Executor& exec, Clock::time_point start,
               bool terminal)
      : sim_(sim),
        exec_(exec),
        start_(start),
        terminal_(terminal),
        next_(start + (terminal ? std::chrono::seconds(2) : kLogEvery)) {}
  void Update() {
    const Clock::time_point now = Clock::now();
    if (now < next_) return;
    next_ = now + (terminal_ ? std::chrono::milliseconds(250) : kLogEvery);
    const std::string line = absl::StrFormat("meshsim: %.1f M events, simulated %s, ops %d/%d",
                                             sim_.events_executed() / 1e6, sim_.Now().ToString(),
                                             exec_.finished_count(), exec_.graph().size());
    if (terminal_) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      drawn_ = true;
    } else {
      std::fprintf(stderr, "%s (%.0f s)\n", line.c_str(),
                   std::chrono::duration<double>(now - start_).count());
    }
    std::fflush(stderr);
  }
  void Clear() {
    if (!drawn_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  static constexpr std::chrono::seconds kLogEvery{60};
  const core::Simulator& sim_;
  const core::Executor& exec_;
  Clock::time_point start_;
  bool terminal_;
  Clock::time_point next_;
  bool drawn_ = false;
};

// `graph` folded for the run of `o` (sim/fold.h), with the folded machine's options in
// `folded_options`; nullopt where FoldDims rules it out or the graph is not symmetric.
std::optional<FoldedGraph> FoldRun(const RunOptions& o, const algorithms::Mesh& mesh,
                                   const core::OpGraph& graph, RunOptions* folded_options) {
  const std::optional<std::vector<int>> dims = FoldDims(o, mesh);
  if (!dims.has_value()) return std::nullopt;
  std::optional<FoldedGraph> folded = FoldTorusGraph(graph, *dims, nullptr);
  if (!folded.has_value()) return std::nullopt;
  *folded_options = o;
  folded_options->chips = folded->chips;
  if (o.topology != "ring") folded_options->dims = folded->periods;
  folded_options->system.net.torus_length2_links = 2;
  return folded;
}

// A folded run's timeline, counter samples and resources (with a timeline kept; else its
// resources alone) as the whole run would have kept them: rows by ExpandRows; each resource of the
// whole machine (built, not run, for its resources' numbering) takes the samples, bytes and busy
// time of the box resource it folds onto — the same kind and level on the box chip, or the link
// between the box chips from the same port (a torus's links come in duplex pairs: the forward entry
// leaves its sender's + port, the reverse one the other chip's − port). nullopt when a resource has
// no counterpart (the run is then simulated whole); `over_budget` when the tables would pass the
// timeline budget, with the samples and the rows counted so far.
struct ExpandedTables {
  core::TimelineRows rows;
  core::CounterSamples samples;
  std::vector<core::ResourceInfo> resources;
  bool over_budget = false;
  size_t rows_counted = 0, samples_counted = 0;
};

std::optional<ExpandedTables> ExpandTables(const RunOptions& o, const algorithms::Mesh& mesh,
                                           const core::OpGraph& graph, const FoldedGraph& folded,
                                           core::Executor& exec, core::FairShare& fair_share) {
  core::Simulator scratch;
  core::FairShare whole_share(scratch);
  if (!BuildMachine(o, mesh, whole_share).ok()) return std::nullopt;
  const std::vector<core::ResourceInfo> whole = whole_share.ResourceReport();
  const std::vector<core::ResourceInfo> box = fair_share.ResourceReport();
  // (kind, chip, peer, level or link port).
  using Key = std::tuple<int, int64_t, int64_t, std::string>;
  const auto key = [](const core::ResourceInfo& info, int64_t chip, int64_t peer, int link) {
    std::string level;
    if (link >= 0) {
      level = link % 2 == 0 ? "+" : "-";
    } else if (const size_t dot = info.name.rfind('.'); dot != std::string::npos) {
      level = info.name.substr(dot + 1);
    }
    return Key{static_cast<int>(info.kind), chip, peer, level};
  };
  const auto id = [](core::ChipId c) -> int64_t { return c.valid() ? int64_t{c.value()} : -1; };
  absl::flat_hash_map<Key, uint32_t> box_of;
  int links = 0;
  for (uint32_t r = 0; r < box.size(); ++r) {
    const core::ResourceInfo& info = box[r];
    const int link = info.kind == core::ResourceKind::kLink ? links++ : -1;
    const Key k = key(info, id(info.chip), id(info.peer), link);
    if (!box_of.emplace(k, r).second) return std::nullopt;  // Two alike: no counterpart.
  }
  std::vector<uint32_t> map(whole.size());
  links = 0;
  const auto box_chip = [&](core::ChipId c) -> int64_t {
    return c.valid() ? int64_t{folded.box_chip[c.value()]} : -1;
  };
  for (uint32_t r = 0; r < whole.size(); ++r) {
    const core::ResourceInfo& info = whole[r];
    const int link = info.kind == core::ResourceKind::kLink ? links++ : -1;
    const auto it = box_of.find(key(info, box_chip(info.chip), box_chip(info.peer), link));
    if (it == box_of.end()) return std::nullopt;
    map[r] = it->second;
  }
  // Samples: each box sample for every resource that folds onto its resource.
  const Preimages onto = PreimagesOf(map, box.size());
  const core::CounterSamples& box_samples = fair_share.counters();
  size_t samples = 0;
  for (const core::CounterSample& s : box_samples) samples += onto.of(s.resource.value()).size();
  const int64_t budget = o.timeline_budget();
  const int64_t sample_bytes = static_cast<int64_t>(samples * sizeof(core::CounterSample));
  ExpandedTables out;
  out.samples_counted = samples;
  if (sample_bytes > budget) {
    out.over_budget = true;
    return out;
  }
  const size_t max_rows =
      static_cast<size_t>((budget - sample_bytes) / int64_t{sizeof(core::TimelineRow)});
  std::optional<core::TimelineRows> rows = ExpandRows(graph, folded, exec.timeline(), max_rows);
  if (!rows.has_value()) {
    out.over_budget = true;
    out.rows_counted = max_rows + 1;
    return out;
  }
  out.rows = std::move(*rows);
  out.samples.reserve(samples);
  for (const core::CounterSample& s : box_samples) {
    for (const uint32_t r : onto.of(s.resource.value())) {
      out.samples.push_back({s.time, core::ResourceId(r), s.rate_bytes_per_s});
    }
  }
  out.resources = whole;
  for (uint32_t r = 0; r < whole.size(); ++r) {
    out.resources[r].bytes = box[map[r]].bytes;
    out.resources[r].busy = box[map[r]].busy;
  }
  return out;
}

// Runs `graph` on the machine of `o` and fills the record's timeline, edges, counters and base
// metrics (not its config). Folded where FoldRun allows: the record is the whole run's.
absl::StatusOr<formats::RunRecord> RunGraph(const RunOptions& o, const algorithms::Mesh& mesh,
                                            const core::OpGraph& graph,
                                            std::chrono::steady_clock::time_point wall_start) {
  // No chip computes faster than its peak: a graph whose flops need longer than the horizon on
  // every chip at once would only fail there, hours later; it is refused before it starts.
  double flops = 0;
  for (uint32_t i = 0; i < graph.size(); ++i) flops += graph.op(core::OpId(i)).flops();
  const double min_seconds = flops / (double(o.chips) * o.system.chip.PeakFlops());
  if (min_seconds > core::Time::Horizon().seconds()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "simulated time passes the limit of %s: %.4g flop take at least %.4g s at the peak of "
        "all %d chips; the scenario cannot be simulated: lower its sizes",
        core::Time::Horizon().ToString(), flops, min_seconds, o.chips));
  }
  RunOptions folded_options;
  const std::optional<FoldedGraph> folded = FoldRun(o, mesh, graph, &folded_options);
  // A graph lowered within the budget of one that folds and does not fold is held to the budget
  // of a graph simulated whole.
  if (!folded.has_value() && o.may_fold && graph.size() > size_t(o.op_budget(kBytesPerOp))) {
    return OpBudgetError(o, mesh,
                         absl::StrFormat("its op graph of %s ops does not fold (sim/fold.h) and "
                                         "passes the limit of %s ops of a graph simulated whole",
                                         Count(graph.size()), Count(o.op_budget(kBytesPerOp))),
                         kBytesPerOp);
  }
  const RunOptions& mo = folded.has_value() ? folded_options : o;  // The machine simulated.
  const core::OpGraph& run_graph = folded.has_value() ? folded->graph : graph;
  core::Simulator sim;
  core::FairShare fair_share(sim);
  fair_share.set_record_counters(o.keep_timeline);
  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<Machine> machine, BuildMachine(mo, mesh, fair_share));
  core::Executor exec(sim, run_graph);
  machine->Attach(exec);
  // Rows are streamed into the metrics as they are recorded, and kept only if asked for.
  // Only a pipeline's GeMM table reads the GeMMs' busy times (report.cc): other runs skip their
  // per-row cost on this hot path.
  // A folded run that keeps its timeline expands it first: its metrics are the whole run's rows'.
  MetricsAccumulator metrics(o.keep_timeline ? o.chips : mo.chips, &graph.names().all(),
                             WorkloadOf(o).TracksGemmBusyTime());
  exec.set_sink(o.keep_timeline ? nullptr : &metrics);
  // The rows and counter samples kept grow with events, not ops: bounded while they grow.
  core::TimelineBudget timeline_budget(o.timeline_budget());
  if (o.keep_timeline) {
    exec.set_timeline_budget(&timeline_budget);
    fair_share.set_timeline_budget(&timeline_budget);
  }
  OrderStreams(o.system.stack, run_graph, exec);
  IssueFromHost(o.system.stack, run_graph, exec);
  const bool report = o.progress != RunOptions::Progress::kNone;
  ProgressLine progress(sim, exec, wall_start, o.progress == RunOptions::Progress::kTerminal);
  if (report || o.cancel != nullptr) {
    sim.SetProgressHook(
        [&] {
          if (o.cancel != nullptr && o.cancel->load()) sim.Stop();
          if (report) progress.Update();
        },
        1 << 16);
  }
  const absl::Status run_status = exec.Run();
  sim.SetProgressHook(nullptr, 0);
  progress.Clear();
  if (o.cancel != nullptr && o.cancel->load()) {
    return absl::CancelledError(
        absl::StrFormat("cancelled after %d of %d ops", exec.finished_count(), graph.size()));
  }
  if (timeline_budget.exhausted()) {
    return TimelineBudgetError(
        o, mesh, exec.timeline().size(), fair_share.counters().size(),
        absl::StrFormat(", at simulated %s with %d of %d ops done", sim.Now().ToString(),
                        exec.finished_count(), exec.graph().size()));
  }
  MESHSIM_RETURN_IF_ERROR(run_status);

  formats::RunRecord rec;
  rec.chips = o.chips;
  rec.names = graph.names().all();
  if (folded.has_value()) {  // Without a timeline kept: the resources only.
    std::optional<ExpandedTables> tables = ExpandTables(o, mesh, graph, *folded, exec, fair_share);
    if (!tables.has_value()) {  // Simulated whole, with its own resources.
      RunOptions whole = o;
      whole.fold = false;
      return RunGraph(whole, mesh, graph, wall_start);
    }
    if (tables->over_budget) {
      return TimelineBudgetError(o, mesh, tables->rows_counted, tables->samples_counted,
                                 tables->rows_counted == 0
                                     ? ", the samples alone, for every chip of the finished run"
                                     : ", the rows counted until they passed it, for every chip "
                                       "of the finished run");
    }
    rec.timeline = std::move(tables->rows);
    rec.counters = std::move(tables->samples);
    rec.resources = std::move(tables->resources);
  } else {
    rec.timeline = exec.TakeTimeline();
    rec.counters = fair_share.TakeCounters();
    rec.resources = fair_share.ResourceReport();
  }
  if (!folded.has_value() || o.keep_timeline) {  // Only archives and traces show them.
    rec.edges.reserve(graph.num_deps());
    for (uint32_t i = 0; i < graph.size(); ++i) {
      for (core::OpId d : graph.deps(core::OpId(i))) rec.edges.push_back({d, core::OpId(i)});
    }
  }

  for (const core::TimelineRow& row : rec.timeline) metrics.Add(row);
  RunMetrics m = metrics.Metrics(o.system.chip.PeakFlops(), exec.makespan());
  rec.gemms = metrics.Gemms();
  uint64_t fp = exec.fingerprint();
  if (folded.has_value() && !o.keep_timeline) {
    // Per-chip averages and utilization are the box's; totals count every chip, which runs its
    // representative's ops at the same times.
    const int scale = folded->real_chips / folded->chips;  // Box chips divide the torus.
    m.chips = o.chips;
    m.flops *= scale;
    for (formats::GemmSpan& g : rec.gemms) {
      g.flops *= scale;
      g.chip_busy = core::Time::Picoseconds(g.chip_busy.ps() * scale);
      g.chips *= scale;
    }
  }
  if (folded.has_value()) {
    fp = 0;
    for (uint32_t i = 0; i < graph.size(); ++i) {
      fp +=
          core::Executor::FingerprintTerm(i, exec.end_time(core::OpId(folded->representative[i])));
    }
  }
  m.ops = static_cast<double>(graph.size());
  m.events = static_cast<double>(sim.events_executed());
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rec.metrics = m.Pairs();
  if (const int64_t* calls = machine->network->protocol_calls();
      calls[0] + calls[1] + calls[2] > 0) {  // A stack whose protocols cost something.
    for (int p = 0; p < stack::kProtocols; ++p) {
      rec.metrics.emplace_back(absl::StrCat("comm.calls_", stack::ToString(stack::Protocol(p))),
                               static_cast<double>(calls[p]));
    }
  }
  rec.metrics.emplace_back("events_cancelled", static_cast<double>(sim.events_cancelled()));
  // The chips simulated: fewer than `chips` where the run was folded (sim/fold.h).
  rec.metrics.emplace_back("simulated_chips", static_cast<double>(mo.chips));
  rec.metrics.emplace_back("fair_share_solves", static_cast<double>(fair_share.solves()));
  rec.metrics.emplace_back("flows", static_cast<double>(fair_share.flows_started()));
  rec.metrics.emplace_back("flow_groups", static_cast<double>(fair_share.groups_formed()));
  rec.metrics.emplace_back("fingerprint_hi", static_cast<double>(fp >> 32));
  rec.metrics.emplace_back("fingerprint_lo", static_cast<double>(fp & 0xffffffffu));
  return rec;
}

absl::StatusOr<formats::RunRecord> SimulatePlan(const RunOptions& options,
                                                const std::vector<int>* layer_slices) {
  const auto wall_start = std::chrono::steady_clock::now();
  MESHSIM_ASSIGN_OR_RETURN(const RunPlan plan, ResolvePlan(options, layer_slices));
  RunOptions o = options;
  // Paper §4.3: two links.
  if (plan.one_dimensional && !o.topology_given && o.dims.empty()) o.topology = "ring";
  std::vector<std::string> warnings;
  {
    const RingMeshes rings = WorkloadOf(o).Rings(o, plan);
    MESHSIM_ASSIGN_OR_RETURN(const network::Topology topology, BuildTopology(o, &plan.mesh));
    if (std::string w = RingWarning(topology, rings.meshes, rings.rows, rings.cols); !w.empty()) {
      warnings.push_back(std::move(w));
    }
  }
  if (o.warn) {
    for (const std::string& w : warnings) o.warn(w);  // Before a long run starts.
  }
  core::OpGraph graph;
  MESHSIM_RETURN_IF_ERROR(BuildWorkload(o, plan, graph));
  MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord rec, RunGraph(o, plan.mesh, graph, wall_start));
  rec.warnings = std::move(warnings);
  // Keep the historical metric order: the run-specific metrics, then the engine counters.
  std::vector<std::pair<std::string, double>> tail(rec.metrics.end() - 5, rec.metrics.end());
  rec.metrics.resize(rec.metrics.size() - 5);
  MESHSIM_ASSIGN_OR_RETURN(rec.config, ResolvedConfig(o, plan, graph));
  MESHSIM_RETURN_IF_ERROR(WorkloadOf(o).AddMetrics(o, plan, rec.Metric("makespan_s"), rec));
  rec.metrics.emplace_back("chip_peak_flops_per_s", o.system.chip.PeakFlops());
  rec.metrics.insert(rec.metrics.end(), tail.begin(), tail.end());
  return rec;
}

}  // namespace

absl::StatusOr<std::string> ResolvedMesh(const RunOptions& options) {
  bool one_dimensional = false;
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::Mesh mesh, ResolveMesh(options, &one_dimensional));
  return mesh.ToString();
}

absl::Status CheckRun(const RunOptions& options) {
  MESHSIM_ASSIGN_OR_RETURN(const RunPlan plan, ResolvePlan(options, nullptr));
  RunOptions o = options;
  core::OpGraph graph;
  return BuildWorkload(o, plan, graph);
}

absl::StatusOr<formats::RunRecord> Simulate(const RunOptions& options) {
  return SimulatePlan(options, nullptr);
}

absl::StatusOr<formats::RunRecord> SimulateGraph(const RunOptions& options,
                                                 const algorithms::Mesh& mesh,
                                                 const core::OpGraph& graph) {
  MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord rec,
                           RunGraph(options, mesh, graph, std::chrono::steady_clock::now()));
  rec.config = options.Resolved();
  KeepReadKeys(options, rec.config);
  return rec;
}

absl::StatusOr<formats::RunRecord> SimulateWithLayerSlices(const RunOptions& options,
                                                           const std::vector<int>& layer_slices) {
  return SimulatePlan(options, &layer_slices);
}

uint64_t Fingerprint(const formats::RunRecord& record) {
  return (static_cast<uint64_t>(record.Metric("fingerprint_hi")) << 32) |
         static_cast<uint64_t>(record.Metric("fingerprint_lo"));
}

}  // namespace meshsim::sim
