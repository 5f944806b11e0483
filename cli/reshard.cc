#include "cli/reshard.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "algorithms/reshard/reshard.h"
#include "boost/program_options.hpp"
#include "cli/report.h"
#include "core/status_macros.h"
#include "formats/chrome_trace.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_writer.h"
#include "sim/machine.h"
#include "sim/options.h"
#include "sim/run.h"

#ifndef MESHSIM_VERSION
#define MESHSIM_VERSION "dev"
#endif

namespace meshsim::sim::cli {

namespace {

namespace po = boost::program_options;
namespace rs = algorithms::reshard;

constexpr char kUsage[] =
    "usage: meshsim reshard --system S [--stack NAME] --chips N --src-mesh RxC --src-placement A-B "
    "--src-spec "
    "SPEC --dst-mesh RxC --dst-placement A-B --dst-spec SPEC --shape D0,D1,... [--dtype-bytes 2] "
    "[--strategy send-recv|local-allgather|global-allgather|broadcast|signal] "
    "[--scheduler naive|load-balance|dfs|greedy|ensemble] [--seed N] [--dfs-budget NODES] "
    "[--format table|json] [--out RUN.h5] [--trace RUN.json|RUN.pftrace] [--set KEY=VALUE]...";

// The run options that make sense for a resharding task; the others (workload, model, mesh …)
// are rejected instead of ignored.
constexpr const char* kRunKeys[] = {"system", "stack", "chips", "topology",     "format",
                                    "out",    "trace", "seed",  "trace-format", "trace-detail"};

absl::Status Invalid(const std::string& key, const std::string& value, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s: '%s' is not allowed; %s", key, value, why));
}

absl::StatusOr<int64_t> Integer(const std::string& key, const std::string& v, int64_t lo,
                                int64_t hi) {
  int64_t x = 0;
  if (!absl::SimpleAtoi(v, &x) || x < lo || x > hi) {
    return Invalid(key, v, absl::StrFormat("expected an integer in [%d, %d]", lo, hi));
  }
  return x;
}

// "8-15" or "0,4,1,5": chip ids and ranges on a machine of `chips`.
absl::StatusOr<std::vector<core::ChipId>> ParsePlacement(const std::string& key,
                                                         const std::string& v, int chips) {
  std::vector<core::ChipId> out;
  for (absl::string_view part : absl::StrSplit(v, ',')) {
    const std::vector<std::string> ends = absl::StrSplit(part, '-');
    int lo = -1, hi = -1;
    if (ends.size() > 2 || !absl::SimpleAtoi(ends[0], &lo) || !absl::SimpleAtoi(ends.back(), &hi) ||
        lo < 0 || hi < lo) {
      return Invalid(key, v, "expected chip ids and ranges A-B (A <= B), e.g. 8-15 or 0,4,1,5");
    }
    if (hi >= chips) {
      return Invalid(
          key, v, absl::StrFormat("chip %d is not on the machine; ids are 0..%d", hi, chips - 1));
    }
    if (out.size() + (hi - lo + 1) > static_cast<size_t>(chips)) {
      return Invalid(key, v, absl::StrFormat("names more than the %d chips", chips));
    }
    for (int c = lo; c <= hi; ++c) out.push_back(core::ChipId(c));
  }
  return out;
}

absl::StatusOr<algorithms::Mesh> ParseMesh(const std::string& side, const std::string& mesh_text,
                                           const std::string& placement_text, int chips) {
  const std::string key = absl::StrCat(side, "-mesh");
  std::vector<std::string> parts = absl::StrSplit(mesh_text, 'x');
  int r = 0, c = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &r) || !absl::SimpleAtoi(parts[1], &c) ||
      r < 1 || c < 1 || int64_t{r} * c > chips) {
    return Invalid(key, mesh_text,
                   absl::StrFormat("expected RxC with R, C >= 1 and R*C <= --chips %d", chips));
  }
  const std::string pkey = absl::StrCat(side, "-placement");
  MESHSIM_ASSIGN_OR_RETURN(std::vector<core::ChipId> placed,
                           ParsePlacement(pkey, placement_text, chips));
  if (static_cast<int64_t>(placed.size()) != int64_t{r} * c) {
    return Invalid(
        pkey, placement_text,
        absl::StrFormat("names %d chips but --%s %s has %d", placed.size(), key, mesh_text, r * c));
  }
  absl::StatusOr<algorithms::Mesh> m = algorithms::Mesh::Placed(r, c, std::move(placed));
  if (!m.ok()) return Invalid(pkey, placement_text, std::string(m.status().message()));
  return m;
}

absl::StatusOr<std::vector<int64_t>> ParseShape(const std::string& v) {
  std::vector<int64_t> shape;
  for (absl::string_view part : absl::StrSplit(v, ',')) {
    int64_t x = 0;
    if (!absl::SimpleAtoi(part, &x) || x < 1 || x > (int64_t{1} << 40)) {
      return Invalid("shape", v,
                     "expected positive extents separated by commas, e.g. 1024,1024,512");
    }
    shape.push_back(x);
  }
  if (shape.size() > 8) return Invalid("shape", v, "at most 8 dimensions");
  int64_t elements = 1;
  for (int64_t x : shape) {
    if (elements > (int64_t{1} << 50) / x) {
      return Invalid("shape", v, "more than 2^50 elements");
    }
    elements *= x;
  }
  return shape;
}

std::string Bytes(double b) {
  if (b >= 1 << 30) return absl::StrFormat("%.3f GiB", b / (1 << 30));
  if (b >= 1 << 20) return absl::StrFormat("%.3f MiB", b / (1 << 20));
  return absl::StrFormat("%.0f B", b);
}

}  // namespace

po::options_description ReshardDescription() {
  po::options_description own("Options of `meshsim reshard`");
  const auto text = [] { return po::value<std::string>(); };
  own.add_options()("src-mesh", text(), "sender mesh RxC")(
      "src-placement", text(), "the sender mesh's chips, row-major (ids and ranges: 0-7)")(
      "src-spec", text(), "sharding spec on the sender mesh: per dimension R, S0, S1, S01")(
      "dst-mesh", text(), "receiver mesh RxC")("dst-placement", text(),
                                               "the receiver mesh's chips (must not overlap)")(
      "dst-spec", text(), "sharding spec on the receiver mesh")(
      "shape", text(), "tensor extents D0,D1,... (e.g. 1024,1024,512)")(
      "dtype-bytes", text(), "bytes per element (default 2: fp16)")(
      "strategy", text(),
      "send-recv, local-allgather, global-allgather, broadcast (default), signal")(
      "scheduler", text(), "naive, load-balance, dfs, greedy, ensemble (default)")(
      "dfs-budget", text(),
      "--scheduler dfs, ensemble: DFS budget in expanded search nodes (default 200000)");
  return own;
}

std::vector<std::string> ReshardRunKeys() { return {std::begin(kRunKeys), std::end(kRunKeys)}; }

namespace {

// The values of reshard's own options (--seed included), by key.
class OwnValues {
 public:
  explicit OwnValues(std::map<std::string, std::string> values) : values_(std::move(values)) {}

  absl::StatusOr<std::string> Get(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s: required (see `meshsim reshard --help`)", key));
    }
    return it->second;
  }
  std::string GetOr(const std::string& key, const std::string& fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  const std::string* Find(const std::string& key) const {
    auto it = values_.find(key);
    return it == values_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, std::string> values_;
};

void PrintReshardHelp(const po::options_description& own, std::ostream& out) {
  std::ostringstream os;
  os << own;
  out << kUsage << "\n\n"
      << os.str()
      << "  --seed arg            --scheduler greedy, ensemble: seed of the randomized greedy "
         "scheduler (default 1)\n"
      << "A scheduler option the --scheduler does not read is refused.\n"
      << "  run options: --system, --stack, --chips, --topology, --set KEY=VALUE, --config "
         "FILE, --format, --out, --trace\n"
      << "comm.packets defaults to 100 here (the paper's K ~ 100 broadcast chunks).\n";
}

// Refuses run options other than kRunKeys; takes --seed out of the run options into reshard's own.
absl::StatusOr<OwnValues> TakeOwnValues(RawOptions& raw) {
  for (const auto& [key, value] : raw.values) {
    if (std::find(std::begin(kRunKeys), std::end(kRunKeys), key) == std::end(kRunKeys)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s: not allowed with reshard; allowed run options: system, stack, chips, topology, "
          "set, config, format, out, trace, seed (see `meshsim reshard --help`)",
          key));
    }
  }
  std::map<std::string, std::string> own_values(raw.own.begin(), raw.own.end());
  // --seed is a run option (read there by the pipeline's resharding), but here the scheduler
  // is --scheduler's: it is read by ParseReshardOptions, not by ResolveRunOptions.
  for (auto it = raw.values.begin(); it != raw.values.end();) {
    if (it->first != "seed") {
      ++it;
      continue;
    }
    own_values["seed"] = it->second;
    it = raw.values.erase(it);
  }
  return OwnValues(std::move(own_values));
}

// The run options (system, chips, outputs) with reshard's default of comm.packets.
absl::StatusOr<RunOptions> ResolveReshardRunOptions(RawOptions& raw) {
  // The paper's broadcast uses K ≈ 100 chunks (§3.1); a user's --set wins.
  const bool packets_given = std::any_of(raw.sets.begin(), raw.sets.end(), [](const auto& s) {
    return s.rfind("comm.packets=", 0) == 0;
  });
  if (!packets_given) raw.sets.insert(raw.sets.begin(), "comm.packets=100");
  MESHSIM_ASSIGN_OR_RETURN(RunOptions options, ResolveRunOptions(raw));
  // Only the files need the timeline; the printed metrics are streamed from the rows.
  options.keep_timeline = !options.out.empty() || !options.trace.empty();
  if (options.format != "table" && options.format != "json") {
    return Invalid("format", options.format, "allowed: table, json");
  }
  return options;
}

// The tensor, its two placed meshes and their sharding specs, checked.
absl::StatusOr<rs::ReshardProblem> ParseReshardProblem(const OwnValues& own, int chips) {
  rs::ReshardProblem p;
  MESHSIM_ASSIGN_OR_RETURN(std::string shape_text, own.Get("shape"));
  MESHSIM_ASSIGN_OR_RETURN(p.shape, ParseShape(shape_text));
  MESHSIM_ASSIGN_OR_RETURN(int64_t dtype,
                           Integer("dtype-bytes", own.GetOr("dtype-bytes", "2"), 1, 64));
  p.element_bytes = static_cast<int>(dtype);
  for (const std::string side : {"src", "dst"}) {
    rs::ShardedTensor& t = side == "src" ? p.src : p.dst;
    MESHSIM_ASSIGN_OR_RETURN(std::string mesh_text, own.Get(side + "-mesh"));
    MESHSIM_ASSIGN_OR_RETURN(std::string placement_text, own.Get(side + "-placement"));
    MESHSIM_ASSIGN_OR_RETURN(std::string spec_text, own.Get(side + "-spec"));
    MESHSIM_ASSIGN_OR_RETURN(t.mesh, ParseMesh(side, mesh_text, placement_text, chips));
    absl::StatusOr<rs::ShardingSpec> spec =
        rs::ParseSpec(spec_text, static_cast<int>(p.shape.size()));
    if (!spec.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", side, "-spec: ", spec.status().message()));
    }
    t.spec = *spec;
  }
  MESHSIM_RETURN_IF_ERROR(rs::CheckProblem(p));
  return p;
}

// The scheduler's options, with their values as given or defaulted, in the order they are
// validated and stored.
std::vector<std::pair<const char*, std::string>> SchedulerValues(const rs::ReshardOptions& ro) {
  return {{"seed", absl::StrCat(ro.scheduler_options.seed)},
          {"dfs-budget", absl::StrCat(ro.scheduler_options.dfs_budget)}};
}

// Whether the chosen scheduler reads its option `key` (NotReadByScheduler).
bool SchedulerReads(const rs::ReshardOptions& ro, const std::string& key) {
  return NotReadByScheduler(key, rs::ToString(ro.scheduler), "scheduler").empty();
}

// Strategy, scheduler and the scheduler's options.
absl::StatusOr<rs::ReshardOptions> ParseReshardOptions(const OwnValues& own) {
  rs::ReshardOptions ro;
  MESHSIM_ASSIGN_OR_RETURN(ro.strategy, rs::ParseStrategy(own.GetOr("strategy", "broadcast")));
  MESHSIM_ASSIGN_OR_RETURN(ro.scheduler, rs::ParseScheduler(own.GetOr("scheduler", "ensemble")));
  MESHSIM_ASSIGN_OR_RETURN(int64_t seed,
                           Integer("seed", own.GetOr("seed", "1"), 0, int64_t{1} << 62));
  ro.scheduler_options.seed = static_cast<uint64_t>(seed);
  MESHSIM_ASSIGN_OR_RETURN(ro.scheduler_options.dfs_budget,
                           Integer("dfs-budget", own.GetOr("dfs-budget", "200000"), 1, 1000000000));
  // Like `run --workload pipeline`: a scheduler option the chosen scheduler does not read is
  // refused, not ignored (after its value is validated).
  for (const auto& [key, value] : SchedulerValues(ro)) {
    if (const std::string* given = own.Find(key); given != nullptr && !SchedulerReads(ro, key)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s: '%s' %s", key, *given,
                          NotReadByScheduler(key, rs::ToString(ro.scheduler), "scheduler")));
    }
  }
  return ro;
}

int64_t TensorBytes(const rs::ReshardProblem& p) {
  int64_t bytes = p.element_bytes;
  for (int64_t x : p.shape) bytes *= x;
  return bytes;
}

// The run's config as reshard reads it: the system parameters, not the keys of `meshsim run`'s
// workloads (they mean nothing here), then the problem and the scheduler's options it reads.
void SetReshardConfig(const rs::ReshardProblem& p, const rs::ReshardOptions& ro,
                      const OwnValues& own, formats::RunRecord& rec) {
  constexpr const char* kOtherWorkloads[] = {"mesh",
                                             "placement",
                                             "workload",
                                             "model",
                                             "hidden",
                                             "heads",
                                             "ffn",
                                             "layers",
                                             "batch",
                                             "seq",
                                             "pass",
                                             "gemm",
                                             "collective",
                                             "group",
                                             "bytes",
                                             "algorithm",
                                             "dataflow",
                                             "slices",
                                             "chunks",
                                             "dropout",
                                             "steps",
                                             "step-time",
                                             "stages",
                                             "dp",
                                             "microbatches",
                                             "schedule",
                                             "overlap",
                                             "delay-dw",
                                             "recompute",
                                             "reshard",
                                             "reshard-scheduler",
                                             "seed"};
  std::erase_if(rec.config, [&](const auto& kv) {
    return std::find(std::begin(kOtherWorkloads), std::end(kOtherWorkloads), kv.first) !=
           std::end(kOtherWorkloads);
  });
  rec.config.insert(rec.config.end(), {{"src-mesh", p.src.mesh.ToString()},
                                       {"src-placement", own.GetOr("src-placement", "")},
                                       {"src-spec", p.src.spec.ToString()},
                                       {"dst-mesh", p.dst.mesh.ToString()},
                                       {"dst-placement", own.GetOr("dst-placement", "")},
                                       {"dst-spec", p.dst.spec.ToString()},
                                       {"shape", own.GetOr("shape", "")},
                                       {"dtype-bytes", absl::StrCat(p.element_bytes)},
                                       {"strategy", rs::ToString(ro.strategy)},
                                       {"scheduler", rs::ToString(ro.scheduler)}});
  // Only what the scheduler reads: the seed of the randomized greedy search, the DFS budget.
  for (const auto& [key, value] : SchedulerValues(ro)) {
    if (SchedulerReads(ro, key)) rec.config.emplace_back(key, value);
  }
}

// Resharding's metrics, after the run's makespan_s.
void AddReshardMetrics(const rs::ReshardProblem& p, const rs::ReshardPlan& plan,
                       const rs::HostTraffic& traffic, double schedule_wall_s,
                       formats::RunRecord& rec) {
  int64_t inter_host = 0, max_sent = 0, max_received = 0;
  for (int64_t b : traffic.sent) {
    inter_host += b;
    max_sent = std::max(max_sent, b);
  }
  for (int64_t b : traffic.received) max_received = std::max(max_received, b);
  rec.metrics.insert(rec.metrics.begin() + 1,
                     {{"unit_tasks", static_cast<double>(plan.tasks.size())},
                      {"tensor_bytes", static_cast<double>(TensorBytes(p))},
                      {"model_makespan_s", plan.schedule.makespan_s},
                      {"schedule_wall_s", schedule_wall_s},
                      {"inter_host_bytes", static_cast<double>(inter_host)},
                      {"max_host_sent_bytes", static_cast<double>(max_sent)},
                      {"max_host_received_bytes", static_cast<double>(max_received)}});
}

// --out and --trace.
absl::Status WriteReshardFiles(const RunOptions& options, const formats::RunRecord& rec) {
  if (!options.out.empty()) {
    absl::Status s =
        formats::WriteRuns(options.out, {&rec}, absl::StrCat("meshsim ", MESHSIM_VERSION));
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--out: ", s.message()));
  }
  if (!options.trace.empty()) {
    absl::Status s = formats::WriteChromeTrace(rec, options.trace, options.trace_options);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--trace: ", s.message()));
  }
  return absl::OkStatus();
}

// The resharding metrics and configuration as one JSON object (PrintRuns' JSON is the GeMM
// workloads' contract).
void PrintReshardJson(const formats::RunRecord& rec, const rs::HostTraffic& traffic,
                      std::ostream& out) {
  std::vector<std::string> fields;
  for (const char* key : {"makespan_s", "unit_tasks", "tensor_bytes", "model_makespan_s",
                          "schedule_wall_s", "inter_host_bytes", "max_host_sent_bytes",
                          "max_host_received_bytes", "ops", "events", "wall_s"}) {
    fields.push_back(absl::StrCat(JsonString(key), ": ", JsonNumber(rec.Metric(key))));
  }
  fields.push_back(absl::StrCat("\"host_sent_bytes\": [", absl::StrJoin(traffic.sent, ", "), "]"));
  fields.push_back(
      absl::StrCat("\"host_received_bytes\": [", absl::StrJoin(traffic.received, ", "), "]"));
  std::vector<std::string> config;
  for (const auto& [key, value] : rec.config) {
    // Typed, as `meshsim run` writes its config: numbers as numbers.
    config.push_back(absl::StrCat(JsonString(key), ": ", JsonConfigValue(value)));
  }
  out << "{\"run\": \"reshard\", " << absl::StrJoin(fields, ", ") << ", \"config\": {"
      << absl::StrJoin(config, ", ") << "}}\n";
}

// The problem, the times, and each host's traffic.
void PrintReshardTable(const rs::ReshardProblem& p, const rs::ReshardOptions& ro,
                       const rs::ReshardPlan& plan, const rs::HostTraffic& traffic,
                       const formats::RunRecord& rec, const std::string& shape_text,
                       std::ostream& out) {
  out << absl::StrFormat("reshard %s %s -> %s %s, shape (%s) x %d B, %s, scheduler %s\n",
                         p.src.mesh.ToString(), p.src.spec.ToString(), p.dst.mesh.ToString(),
                         p.dst.spec.ToString(), shape_text, p.element_bytes,
                         rs::ToString(ro.strategy), rs::ToString(ro.scheduler));
  out << absl::StrFormat("  time            %.6f s (simulated)\n", rec.Metric("makespan_s"));
  out << absl::StrFormat("  model makespan  %.6f s (scheduler's host model)\n",
                         plan.schedule.makespan_s);
  out << absl::StrFormat("  unit tasks      %d\n", plan.tasks.size());
  out << absl::StrFormat("  tensor          %s\n", Bytes(rec.Metric("tensor_bytes")));
  out << absl::StrFormat("  inter-host      %s\n", Bytes(rec.Metric("inter_host_bytes")));
  for (size_t host = 0; host < std::max(traffic.sent.size(), traffic.received.size()); ++host) {
    const int64_t s = host < traffic.sent.size() ? traffic.sent[host] : 0;
    const int64_t r = host < traffic.received.size() ? traffic.received[host] : 0;
    if (s == 0 && r == 0) continue;
    out << absl::StrFormat("    host %-3d sent %-14s received %s\n", host,
                           Bytes(static_cast<double>(s)), Bytes(static_cast<double>(r)));
  }
}

}  // namespace

absl::Status Reshard(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description own = ReshardDescription();
  MESHSIM_ASSIGN_OR_RETURN(RawOptions raw, ParseRunArgs(args, "reshard", &own));
  if (raw.help) {
    PrintReshardHelp(own, out);
    return absl::OkStatus();
  }
  MESHSIM_ASSIGN_OR_RETURN(const OwnValues own_values, TakeOwnValues(raw));
  MESHSIM_ASSIGN_OR_RETURN(const RunOptions options, ResolveReshardRunOptions(raw));
  MESHSIM_ASSIGN_OR_RETURN(const rs::ReshardProblem p,
                           ParseReshardProblem(own_values, options.chips));
  MESHSIM_ASSIGN_OR_RETURN(const rs::ReshardOptions ro, ParseReshardOptions(own_values));

  const algorithms::Mesh whole{1, options.chips};
  MESHSIM_ASSIGN_OR_RETURN(network::Topology topology, BuildTopology(options, &whole));
  const rs::HostModel hosts = MakeHostModel(topology, options);
  const auto t0 = std::chrono::steady_clock::now();
  const rs::ReshardPlan plan = rs::PlanReshard(p, ro, hosts);
  const double schedule_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  core::OpGraph graph;
  rs::HostTraffic traffic;
  rs::LowerReshard(p, plan, hosts, graph, &traffic);
  MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord rec, SimulateGraph(options, whole, graph));
  rec.name = "reshard";
  SetReshardConfig(p, ro, own_values, rec);
  AddReshardMetrics(p, plan, traffic, schedule_wall_s, rec);

  MESHSIM_RETURN_IF_ERROR(WriteReshardFiles(options, rec));
  if (options.format == "json") {
    PrintReshardJson(rec, traffic, out);
  } else {
    PrintReshardTable(p, ro, plan, traffic, rec, own_values.GetOr("shape", ""), out);
  }
  std::ostream& note = options.format == "table" ? out : err;
  if (!options.out.empty()) note << "wrote " << options.out << " (HDF5)\n";
  if (!options.trace.empty())
    note << "wrote " << options.trace << " (" << formats::TraceKind(options.trace_options) << ")\n";
  return absl::OkStatus();
}

}  // namespace meshsim::sim::cli
