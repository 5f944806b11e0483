#include "cli/cli.h"

#include <unistd.h>

#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "algorithms/registry.h"
#include "boost/program_options.hpp"
#include "cli/cli_reference.h"
#include "cli/report.h"
#include "cli/reshard.h"
#include "cli/sweep.h"
#include "cli/tune.h"
#include "core/did_you_mean.h"
#include "core/op.h"
#include "core/status_macros.h"
#include "formats/chrome_trace.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_writer.h"
#include "formats/temp_files.h"
#include "network/topology.h"
#include "sim/args.h"
#include "sim/machine.h"
#include "sim/options.h"
#include "sim/run.h"
#include "sim/system.h"
#include "sim/version.h"
#include "sim/workload_registry.h"
#include "workloads/transformer.h"

#ifndef MESHSIM_VERSION
#define MESHSIM_VERSION "dev"
#endif

namespace meshsim::sim::cli {

namespace {

constexpr char kUsage[] = R"(usage: meshsim <command> [options]

commands:
  run     [--config FILE] [OPTIONS] [--out RUN.h5] [--trace RUN.json|RUN.pftrace]
          [--trace-format json|perfetto] [--trace-detail auto|full|minimal] [--format F]
          simulate one scenario (`meshsim run --help` lists every option)
  sweep   EXPERIMENT.ini [--out SWEEP.h5] [--jobs N] [--shard K/N] [--timelines] [--format F]
          every combination of the experiment's values, in parallel (docs/experiments.md)
  merge   OUT.h5 IN.h5...                          join the archives of a sharded sweep
  tune    [OPTIONS] [--cost-model M] [--validate] [--format F]
          the MeshSlice autotuner's mesh and per-layer S (`meshsim tune --help`);
          M: $COST_MODELS
  compare [--algorithms A,B,...] [run options] [--out RUNS.h5] [--trace FIRST.json]
          the same scenario under several algorithms, side by side (with --mesh auto the
          2D baselines share MeshSlice's tuned mesh; Cannon keeps a square one)
  reshard --src-mesh RxC --src-placement A-B --src-spec SPEC --dst-mesh RxC --dst-placement
          A-B --dst-spec SPEC --shape D0,D1,.. [--strategy S] [--scheduler S] [run options]
          one cross-mesh resharding task (`meshsim reshard --help`, docs/resharding.md)
  trace   FILE.h5 [--run NAME] --out TRACE.json|TRACE.pftrace [--detail auto|full|minimal]
          [--trace-format json|perfetto]
          export a stored run as a Chrome (JSON) or Perfetto (protobuf) trace
  report  FILE.h5 [--format table|json|csv]        print the metrics of stored runs
  list    algorithms|models|systems|topologies|collectives|workloads
  show    system NAME                              every parameter with its unit (a config file)
  show    topology NAME [--chips N] [--system S] [--set K=V]... [--dot]
          the built topology: nodes, hosts, links by class; --dot: a Graphviz graph
  help    [COMMAND] [--markdown]                   this list, COMMAND --help, or the Markdown
          reference of every command and option (docs/cli.md)
  completion bash|zsh                              a shell completion script
  --help, --version

exit status: 0 success, 2 bad input, 1 failure inside the simulator
)";

// kUsage with the cost-model names filled in from their one list.
std::string Usage() { return absl::StrReplaceAll(kUsage, {{"$COST_MODELS", CostModelChoices()}}); }

// Prefixes an output error with the option that named the file: "--out: cannot write ...".
absl::Status ForOption(const std::string& key, absl::Status s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("--", key, ": ", s.message()));
}

bool IsBadInput(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kDataLoss:  // A damaged input file.
      return true;
    default:
      return false;
  }
}

namespace po = boost::program_options;

// The options of a small subcommand: --help plus `(name, help)` pairs that each take a value.
po::options_description Options(const std::vector<std::pair<const char*, const char*>>& valued) {
  po::options_description d("options");
  d.add_options()("help,h", "print this help");
  for (const auto& [name, help] : valued) d.add_options()(name, po::value<std::string>(), help);
  return d;
}

std::string HelpText(const std::string& usage, const po::options_description& d) {
  std::ostringstream os;
  os << usage << "\n\n" << d;
  return os.str();
}

absl::Status CheckFormat(const std::string& format, std::vector<std::string> allowed) {
  if (std::find(allowed.begin(), allowed.end(), format) != allowed.end()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("--format: '%s' is not allowed; allowed: %s%s",
                                                    format, absl::StrJoin(allowed, ", "),
                                                    core::DidYouMean(format, allowed)));
}

absl::Status Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  MESHSIM_ASSIGN_OR_RETURN(RawOptions raw, ParseRunArgs(args));
  if (raw.help) {
    out << RunHelp();
    return absl::OkStatus();
  }
  MESHSIM_ASSIGN_OR_RETURN(RunOptions options, ResolveRunOptions(raw));
  options.keep_timeline = !options.out.empty() || !options.trace.empty();
  options.fold = true;  // Where nothing is kept per chip (sim/fold.h).
  options.progress =
      isatty(STDERR_FILENO) != 0 ? RunOptions::Progress::kTerminal : RunOptions::Progress::kLog;
  options.warn = [&err](const std::string& w) { err << "meshsim: warning: " << w << std::endl; };
  MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord record, Simulate(options));
  if (!options.out.empty()) {
    MESHSIM_RETURN_IF_ERROR(
        ForOption("out", formats::WriteRuns(options.out, {&record}, Version())));
  }
  if (!options.trace.empty()) {
    MESHSIM_RETURN_IF_ERROR(ForOption(
        "trace", formats::WriteChromeTrace(record, options.trace, options.trace_options)));
  }
  PrintRuns({&record}, options.format, out);
  // Where the files went is for people: on stderr when stdout is machine-readable.
  std::ostream& note = options.format == "table" ? out : err;
  if (!options.out.empty()) note << "wrote " << options.out << " (HDF5)\n";
  if (!options.trace.empty()) {
    note << "wrote " << options.trace << " (" << formats::TraceKind(options.trace_options) << ")\n";
  }
  return absl::OkStatus();
}

// Whether the raw options give `key` a value for which `pred(value)` holds.
template <typename Pred>
bool Gives(const RawOptions& raw, const std::string& key, Pred pred) {
  return std::any_of(raw.values.begin(), raw.values.end(),
                     [&](const auto& kv) { return kv.first == key && pred(kv.second); });
}

// --algorithms (or its default, kCompareLayerDefault for --workload layer) as a list: no empty
// entry, none twice.
absl::StatusOr<std::vector<std::string>> ComparedAlgorithms(const RawOptions& raw, bool layer) {
  std::optional<std::string> list;  // Given, possibly empty: an empty list is refused.
  for (const auto& [key, value] : raw.own) {
    if (key == "algorithms") list = value;
  }
  if (!list.has_value()) list = layer ? kCompareLayerDefault : kCompareDefault;
  std::vector<std::string> names = absl::StrSplit(*list, ',');
  if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.empty(); })) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--algorithms: '%s' is not allowed; expected a comma-separated list of algorithms "
        "without empty entries (`meshsim list algorithms`)",
        *list));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::find(names.begin(), names.begin() + i, names[i]) != names.begin() + i) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--algorithms: '%s' is not allowed; '%s' is listed twice", *list, names[i]));
    }
  }
  return names;
}

// Each algorithm's run of the scenario, every one validated before any is simulated. With
// --mesh auto, the 2D baselines run on the mesh the autotuner picks for MeshSlice, so the
// comparison is on equal terms (Cannon keeps the squarest mesh: it needs a square one).
absl::StatusOr<std::vector<RunOptions>> ResolveComparedRuns(const RawOptions& raw,
                                                            const std::vector<std::string>& names,
                                                            bool layer) {
  std::string shared_mesh;
  const bool mesh_given = Gives(raw, "mesh", [](const std::string& v) { return v != "auto"; });
  if (!mesh_given && !layer) {
    RawOptions r = raw;
    r.values.emplace_back("algorithm", "meshslice");
    MESHSIM_ASSIGN_OR_RETURN(RunOptions o, ResolveRunOptions(r, Unread::kAllow));
    MESHSIM_ASSIGN_OR_RETURN(shared_mesh, ResolvedMesh(o));
  }
  std::vector<RunOptions> runs;
  for (const std::string& name : names) {
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(name));
    RawOptions r = raw;
    if (info->one_dimensional) {  // A 2D --mesh is for the 2D algorithms; 1D ones use a ring.
      std::erase_if(r.values, [](const auto& kv) { return kv.first == "mesh"; });
    }
    r.values.emplace_back("algorithm", name);
    // An option need only be read by one of the algorithms (--slices: not by collective).
    MESHSIM_ASSIGN_OR_RETURN(RunOptions o, ResolveRunOptions(r, Unread::kAllow));
    if (!shared_mesh.empty() && !info->one_dimensional && name != "meshslice" && name != "cannon") {
      RawOptions shared = r;
      shared.values.emplace_back("mesh", shared_mesh);
      absl::StatusOr<RunOptions> on_shared = ResolveRunOptions(shared, Unread::kAllow);
      // Keep the squarest mesh if the plugin's preconditions reject the shared one.
      if (on_shared.ok() && CheckRun(*on_shared).ok()) o = std::move(*on_shared);
    }
    runs.push_back(std::move(o));
  }
  std::vector<const RunOptions*> ptrs;
  for (const RunOptions& o : runs) ptrs.push_back(&o);
  std::vector<std::pair<std::string, std::string>> given = raw.values;
  for (auto& kv : SetPairs(raw.sets)) given.push_back(std::move(kv));
  MESHSIM_RETURN_IF_ERROR(CheckReadByAny(
      given, ptrs, absl::StrCat("the compared runs (", absl::StrJoin(names, ", "), ")")));
  for (const RunOptions& o : runs) MESHSIM_RETURN_IF_ERROR(CheckRun(o));
  return runs;
}

// Simulates the compared runs one after the other; returns their config and metrics. Timelines
// only where an output needs them: every run for --out, the first for --trace. Each run's
// timeline goes to the files as soon as the run ends and is dropped, so one timeline at a time is
// in memory (the budget is per run, not divided among the algorithms). The outputs are opened
// before the first simulation, so a path that cannot be written costs no simulation.
absl::StatusOr<std::vector<formats::RunRecord>> SimulateCompared(
    std::vector<RunOptions>& runs, const std::vector<std::string>& names, std::ostream& err) {
  const RunOptions& first = runs.front();
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].keep_timeline = !runs[i].out.empty() || (i == 0 && !runs[i].trace.empty());
  }
  std::unique_ptr<formats::ArchiveWriter> writer;
  if (!first.out.empty()) {
    absl::StatusOr<std::unique_ptr<formats::ArchiveWriter>> w =
        formats::ArchiveWriter::Create(first.out, Version());
    MESHSIM_RETURN_IF_ERROR(ForOption("out", w.status()));
    writer = std::move(*w);
  }
  // The first run's trace is written when that run ends, under a staging name beside the
  // destination, and renamed into place only when every run has succeeded.
  std::optional<formats::StagedOutput> trace;
  if (!first.trace.empty()) {
    absl::StatusOr<formats::StagedOutput> staged = formats::StagedOutput::Create(first.trace);
    MESHSIM_RETURN_IF_ERROR(ForOption("trace", staged.status()));
    trace.emplace(std::move(*staged));
  }
  std::vector<formats::RunRecord> records;
  for (size_t i = 0; i < runs.size(); ++i) {
    err << "simulating " << names[i] << " ...\n";
    MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord rec, Simulate(runs[i]));
    rec.name = names[i];
    for (const std::string& w : rec.warnings) err << "meshsim: warning: " << w << "\n";
    if (writer) MESHSIM_RETURN_IF_ERROR(ForOption("out", writer->AddRun(rec, true)));
    if (i == 0 && trace) {
      MESHSIM_RETURN_IF_ERROR(ForOption(
          "trace", formats::WriteChromeTrace(rec, trace->staging_path(), first.trace_options)));
    }
    rec.ReleaseTimeline();
    records.push_back(std::move(rec));
  }
  if (writer) MESHSIM_RETURN_IF_ERROR(ForOption("out", writer->Commit({})));
  if (trace) MESHSIM_RETURN_IF_ERROR(ForOption("trace", trace->Commit()));
  return records;
}

// `compare`: the same scenario under several algorithms, one table, one HDF5 file.
absl::Status Compare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description own = CompareDescription();
  MESHSIM_ASSIGN_OR_RETURN(RawOptions raw, ParseRunArgs(args, "compare", &own));
  if (raw.help) {
    out << "usage: meshsim compare [--algorithms A,B,...] [run options] [--out RUNS.h5] "
           "[--trace FIRST.json]\n(default algorithms: "
        << kCompareDefault << "; with --workload layer: " << kCompareLayerDefault << ")\n";
    return absl::OkStatus();
  }
  if (Gives(raw, "algorithm", [](const std::string&) { return true; })) {
    return absl::InvalidArgumentError(
        "--algorithm: not allowed with compare; use --algorithms A,B,...");
  }
  // --workload layer compares the layer plugins, each on its own `--mesh auto`
  // (ResolveLayerMesh); the other workloads the GeMM plugins.
  const bool layer = Gives(raw, "workload", [](const std::string& v) { return v == "layer"; });
  MESHSIM_ASSIGN_OR_RETURN(const std::vector<std::string> names, ComparedAlgorithms(raw, layer));
  MESHSIM_ASSIGN_OR_RETURN(std::vector<RunOptions> runs, ResolveComparedRuns(raw, names, layer));
  MESHSIM_ASSIGN_OR_RETURN(const std::vector<formats::RunRecord> records,
                           SimulateCompared(runs, names, err));
  const RunOptions& first = runs.front();
  std::vector<const formats::RunRecord*> ptrs;
  for (const formats::RunRecord& r : records) ptrs.push_back(&r);
  if (first.format == "table") {
    PrintComparison(ptrs, out);
  } else {
    PrintRuns(ptrs, first.format, out);
  }
  std::ostream& note = first.format == "table" ? out : err;
  if (!first.out.empty()) note << "wrote " << first.out << " (HDF5, one group per algorithm)\n";
  if (!first.trace.empty()) {
    note << "wrote " << first.trace << " (" << formats::TraceKind(first.trace_options) << " of "
         << names.front() << ")\n";
  }
  return absl::OkStatus();
}

absl::Status Trace(const std::vector<std::string>& args, std::ostream& out) {
  const std::string usage =
      "usage: meshsim trace FILE.h5 [--run NAME] --out TRACE.json|TRACE.pftrace "
      "[--detail auto|full|minimal] [--trace-format json|perfetto]";
  const po::options_description d = TraceDescription();
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("trace", args, d, 1, 1, usage));
  if (a.help) {
    out << HelpText(usage, d);
    return absl::OkStatus();
  }
  MESHSIM_ASSIGN_OR_RETURN(formats::ChromeTraceOptions trace_options,
                           formats::TraceOptionsForDetail("detail", ArgOr(a, "detail", "auto")));
  if (!a.vm.count("out")) {
    return absl::InvalidArgumentError("--out: required (the trace file to write)");
  }
  const std::string path = ArgOr(a, "out");
  MESHSIM_ASSIGN_OR_RETURN(
      trace_options.format,
      formats::ResolveTraceFormat("out", path, "trace-format", ArgOr(a, "trace-format")));
  MESHSIM_RETURN_IF_ERROR(CheckOutputPath("out", path));
  MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord record,
                           formats::ReadRun(a.positional[0], ArgOr(a, "run")));
  if (record.timeline.empty() && record.Metric("ops") > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "trace: run '%s' of '%s' was stored without its timeline; store it with `meshsim sweep "
        "--timelines` (or `meshsim run --out`) to export a trace",
        record.name, a.positional[0]));
  }
  MESHSIM_RETURN_IF_ERROR(ForOption("out", formats::WriteChromeTrace(record, path, trace_options)));
  out << "wrote " << path << " (" << formats::TraceKind(trace_options) << " of run '" << record.name
      << "')\n";
  return absl::OkStatus();
}

absl::Status Report(const std::vector<std::string>& args, std::ostream& out) {
  const std::string usage = "usage: meshsim report FILE.h5 [--run NAME] [--format table|json|csv]";
  const po::options_description d = ReportDescription();
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("report", args, d, 1, 1, usage));
  if (a.help) {
    out << HelpText(usage, d);
    return absl::OkStatus();
  }
  const std::string& file = a.positional[0];
  const std::string format = ArgOr(a, "format", "table");
  MESHSIM_RETURN_IF_ERROR(CheckFormat(format, {"table", "json", "csv"}));
  std::vector<std::string> names;
  if (a.vm.count("run")) {
    names.push_back(ArgOr(a, "run"));
  } else {
    MESHSIM_ASSIGN_OR_RETURN(names, formats::ListRuns(file));
  }
  std::vector<formats::RunRecord> records;
  for (const std::string& name : names) {
    MESHSIM_ASSIGN_OR_RETURN(formats::RunRecord r, formats::ReadRun(file, name));
    records.push_back(std::move(r));
  }
  std::vector<const formats::RunRecord*> ptrs;
  for (const formats::RunRecord& r : records) ptrs.push_back(&r);
  PrintRuns(ptrs, format, out);
  return absl::OkStatus();
}

absl::Status List(const std::vector<std::string>& args, std::ostream& out) {
  const std::vector<std::string>& what = ListTopics();
  const std::string usage = absl::StrCat("usage: meshsim list ", absl::StrJoin(what, "|"));
  const po::options_description d = Options({});
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("list", args, d, 1, 1, usage));
  if (a.help) {
    out << HelpText(usage, d);
    return absl::OkStatus();
  }
  const std::string& w = a.positional[0];
  if (std::find(what.begin(), what.end(), w) == what.end()) {
    return absl::InvalidArgumentError(absl::StrFormat("list: '%s' is not allowed; allowed: %s%s", w,
                                                      absl::StrJoin(what, ", "),
                                                      core::DidYouMean(w, what)));
  }
  if (w == "systems") {
    for (const SystemInfo& s : Systems())
      out << absl::StrFormat("%-13s %s [stack %s]\n", s.name, s.description, s.stack);
  } else if (w == "stacks") {
    for (const stack::StackInfo& s : stack::Stacks()) {
      out << absl::StrFormat("%-13s %s\n", s.name, s.description);
      stack::StackConfig config = *stack::StackPreset(s.name);
      for (const core::Param& p : config.Params()) {
        out << absl::StrFormat("%-13s   %-34s = %s\n", "", p.key, core::FormatHuman(p));
      }
    }
  } else if (w == "workloads") {
    for (const WorkloadInfo& w : WorkloadRegistry()) {
      out << absl::StrFormat("%-11s %s\n", w.name, w.summary);
      if (!w.reads.empty()) {
        out << absl::StrFormat("%-11s   reads --%s\n", "", absl::StrJoin(w.reads, ", --"));
      }
      for (const core::ParamSpec& p : w.params) {
        out << absl::StrFormat("%-11s   --%s\n", "", core::DescribeSpec(p));
      }
    }
  } else if (w == "collectives") {
    out << "allgather      ring, P-1 steps; --bytes = the shard each chip contributes\n"
           "reducescatter  ring, P-1 steps with HBM-bound reductions; --bytes = the piece each "
           "chip keeps\n"
           "allreduce      ring (2(P-1) steps) or halving-doubling on switch/fattree\n"
           "broadcast      pipelined chain from the root in comm.packets packets\n"
           "reduce         pipelined chain towards the root, reducing on the way\n"
           "sendrecv       one shift to the next chip of the group\n"
           "alltoall       every chip sends bytes/P to every other\n";
  } else if (w == "topologies") {
    for (const network::TopologyInfo& t : network::TopologyFamilies()) {
      out << absl::StrFormat("%-13s %s\n", t.name, t.description);
    }
  } else if (w == "algorithms") {
    for (const algorithms::AlgorithmInfo& a : algorithms::Algorithms()) {
      out << absl::StrFormat("%-11s %s%s\n", a.name, a.description,
                             a.one_dimensional ? " [1D: ring of every chip]" : "");
      if (!a.mesh.empty()) out << absl::StrFormat("%-11s   --mesh: %s\n", "", a.mesh);
      // Each typed parameter: type, allowed values, default; how to give it.
      const std::vector<std::string> options = RunOptionKeys();
      for (const core::ParamSpec& p : a.params) {
        const bool option = std::find(options.begin(), options.end(), p.key) != options.end();
        out << absl::StrFormat("%-11s   --param %s%s\n", "", core::DescribeSpec(p),
                               option ? absl::StrCat(" (also --", p.key, ")") : "");
      }
    }
  } else if (w == "models") {
    for (const workloads::ModelShape& m : workloads::Models()) {
      out << absl::StrFormat("%-13s %s\n", m.name, m.description);
    }
    out << "custom        --hidden H [--heads A] [--ffn F] [--layers L]\n";
  }
  return absl::OkStatus();
}

// `show topology NAME [--dot] [run options]`: the topology a run with those options would build.
absl::Status ShowTopology(const std::vector<std::string>& args, std::ostream& out) {
  constexpr char kShowTopologyUsage[] =
      "usage: meshsim show topology NAME [--chips N] [--system S] [--set KEY=VALUE...] [--mesh "
      "RxC] "
      "[--dims D] [--dot]";
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    out << kShowTopologyUsage << "\n";
    return absl::OkStatus();
  }
  if (args.empty() || args[0].empty() || args[0][0] == '-') {
    return absl::InvalidArgumentError(
        absl::StrFormat("show topology: expected a topology NAME (meshsim list topologies); %s",
                        kShowTopologyUsage));
  }
  bool dot = false;
  std::vector<std::string> run_args = {"--topology", args[0]};
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--dot") {
      dot = true;
    } else if (args[i] == "--topology") {
      return absl::InvalidArgumentError(
          absl::StrFormat("show topology: --topology is given as NAME; %s", kShowTopologyUsage));
    } else {
      run_args.push_back(args[i]);
    }
  }
  MESHSIM_ASSIGN_OR_RETURN(RawOptions raw, ParseRunArgs(run_args));
  MESHSIM_ASSIGN_OR_RETURN(RunOptions options, ResolveRunOptions(raw));
  algorithms::Mesh mesh;
  mesh.rows = options.mesh_rows;
  mesh.cols = options.mesh_cols;
  MESHSIM_ASSIGN_OR_RETURN(network::Topology t,
                           BuildTopology(options, options.mesh_rows > 0 ? &mesh : nullptr));
  if (dot) {
    out << t.ToDot();
    return absl::OkStatus();
  }

  out << absl::StrFormat("topology %s (system %s)\n", options.topology, options.system_name);
  std::vector<int> chips_per_host(t.num_hosts(), 0);
  for (int c = 0; c < t.num_chips(); ++c) ++chips_per_host[t.HostOf(core::ChipId(c))];
  const auto [fewest, most] = std::minmax_element(chips_per_host.begin(), chips_per_host.end());
  out << absl::StrFormat(
      "chips %d, hosts %d (chips per host: %s)", t.num_chips(), t.num_hosts(),
      *fewest == *most ? absl::StrCat(*most) : absl::StrCat(*fewest, "..", *most));
  if (!t.dims().empty()) {
    out << ", dims " << absl::StrJoin(t.dims(), "x");
  }
  out << "\n";

  constexpr network::NodeKind kKinds[] = {network::NodeKind::kChip, network::NodeKind::kSwitch,
                                          network::NodeKind::kPcieSwitch, network::NodeKind::kCpu,
                                          network::NodeKind::kNic};
  std::vector<std::string> kinds;
  for (network::NodeKind k : kKinds) {
    int n = 0;
    for (int v = 0; v < t.num_nodes(); ++v) n += t.node_kind(v) == k;
    if (n > 0) kinds.push_back(absl::StrCat(network::ToString(k), " ", n));
  }
  out << absl::StrFormat("nodes %d: %s\n", t.num_nodes(), absl::StrJoin(kinds, ", "));

  // Full-duplex links grouped by (class, bandwidth, latency), in order of first appearance.
  struct Group {
    network::LinkClass cls;
    double bandwidth_bytes_per_s, latency_s;
    int count;
  };
  std::vector<Group> groups;
  for (size_t l = 0; l < t.links().size(); l += 2) {
    const network::Link& link = t.links()[l];
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.cls == link.cls && g.bandwidth_bytes_per_s == link.bandwidth_bytes_per_s &&
             g.latency_s == link.latency_s;
    });
    if (it == groups.end()) {
      groups.push_back({link.cls, link.bandwidth_bytes_per_s, link.latency_s, 1});
    } else {
      ++it->count;
    }
  }
  out << absl::StrFormat("links %d full-duplex (%d directed):\n", t.links().size() / 2,
                         t.links().size());
  out << absl::StrFormat("  %-9s %8s %16s %12s\n", "class", "count", "GB/s per dir", "latency us");
  for (const Group& g : groups) {
    out << absl::StrFormat("  %-9s %8d %16.6g %12.6g\n", network::ToString(g.cls), g.count,
                           g.bandwidth_bytes_per_s / 1e9, g.latency_s * 1e6);
  }
  return absl::OkStatus();
}

absl::Status Show(const std::vector<std::string>& args, std::ostream& out) {
  if (!args.empty() && args[0] == "topology") {
    return ShowTopology(std::vector<std::string>(args.begin() + 1, args.end()), out);
  }
  const std::string usage =
      "usage: meshsim show system NAME | meshsim show topology NAME [--chips N] [--system S] "
      "[--set KEY=VALUE...] [--mesh RxC] [--dims D] [--dot]";
  const po::options_description d = Options({});
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("show", args, d, 1, 2, usage));
  if (a.help) {
    out << HelpText(usage, d);
    return absl::OkStatus();
  }
  if (a.positional.size() != 2 || a.positional[0] != "system") {
    return absl::InvalidArgumentError(
        absl::StrFormat("show: '%s' is not allowed; %s", absl::StrJoin(a.positional, " "), usage));
  }
  MESHSIM_ASSIGN_OR_RETURN(SystemConfig sys, SystemPreset(a.positional[1]));
  out << "# meshsim system '" << sys.name << "' (" << Version()
      << "). A valid config file: meshsim run --config FILE\n";
  out << "system = " << sys.name << "\n";
  out << "stack = " << sys.stack_name << "\n";
  out << "topology = " << sys.net.topology << "\n";
  out << absl::StrFormat("# peak %.4g TFLOPS per chip\n", sys.chip.PeakFlops() / 1e12);
  for (const core::Param& p : sys.Params()) {
    out << absl::StrFormat("%-22s = %-22s # %s: %s\n", p.key, core::FormatParam(p),
                           core::FormatHuman(p), p.description);
  }
  return absl::OkStatus();
}

absl::Status Dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `help [COMMAND] [--markdown]`: the command list, COMMAND's --help, or the Markdown reference.
absl::Status Help(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string usage = "usage: meshsim help [COMMAND] [--markdown]";
  const po::options_description d = HelpDescription();
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("help", args, d, 0, 1, usage));
  const bool markdown = a.vm["markdown"].as<bool>();
  if (a.help) {
    out << HelpText(usage, d);
    return absl::OkStatus();
  }
  if (markdown && !a.positional.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--markdown: not allowed with a COMMAND ('%s'); the reference covers every command",
        a.positional[0]));
  }
  if (markdown) {
    out << MarkdownReference();
    return absl::OkStatus();
  }
  if (a.positional.empty()) {
    out << Usage();
    return absl::OkStatus();
  }
  const std::string& cmd = a.positional[0];
  if (cmd == "help") {
    out << HelpText(usage, d);
    return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (const CommandDoc& c : Commands()) names.push_back(c.name);
  if (std::find(names.begin(), names.end(), cmd) == names.end()) {
    return absl::InvalidArgumentError(absl::StrFormat("help: '%s' is not a command; allowed: %s",
                                                      cmd, absl::StrJoin(names, ", ")));
  }
  return Dispatch({cmd, "--help"}, out, err);
}

// `completion bash|zsh`: a completion script generated from the same descriptions.
absl::Status Completion(const std::vector<std::string>& args, std::ostream& out) {
  const std::string usage = "usage: meshsim completion bash|zsh";
  const po::options_description d = Options({});
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("completion", args, d, 1, 1, usage));
  if (a.help) {
    out << HelpText(usage, d)
        << "\nbash: source the output, or install it as "
           "<prefix>/share/bash-completion/completions/meshsim.\n"
           "zsh: install it as _meshsim in a directory of $fpath.\n";
    return absl::OkStatus();
  }
  MESHSIM_ASSIGN_OR_RETURN(const std::string script, CompletionScript(a.positional[0]));
  out << script;
  return absl::OkStatus();
}

absl::Status Dispatch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    out << Usage();
    return absl::OkStatus();
  }
  if (args[0] == "--version") {
    out << Version() << "\n";
    return absl::OkStatus();
  }
  const std::string& cmd = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "run") return Run(rest, out, err);
  if (cmd == "compare") return Compare(rest, out, err);
  if (cmd == "trace") return Trace(rest, out);
  if (cmd == "report") return Report(rest, out);
  if (cmd == "list") return List(rest, out);
  if (cmd == "show") return Show(rest, out);
  if (cmd == "sweep") return RunSweep(rest, out, err);
  if (cmd == "merge") return RunMerge(rest, out);
  if (cmd == "tune") return Tune(rest, out, err);
  if (cmd == "reshard") return Reshard(rest, out, err);
  if (cmd == "help") return Help(rest, out, err);
  if (cmd == "completion") return Completion(rest, out);
  const std::vector<std::string> commands = {"run",  "compare", "sweep", "merge",
                                             "tune", "reshard", "trace", "report",
                                             "list", "show",    "help",  "completion"};
  return absl::InvalidArgumentError(
      absl::StrFormat("'%s' is not a command; allowed: %s%s (meshsim --help)", cmd,
                      absl::StrJoin(commands, ", "), core::DidYouMean(cmd, commands)));
}

}  // namespace

int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  formats::QuietHdf5();
  formats::InstallInterruptCleanup();
  absl::Status status;
  try {
    status = Dispatch(args, out, err);
  } catch (const std::bad_alloc&) {
    status = absl::ResourceExhaustedError(
        "out of memory: the scenario is too large for this machine; use fewer chips, steps or "
        "sweep runs");
  } catch (const std::exception& e) {
    // Project code throws nothing; this is Boost or the standard library at the boundary.
    status = absl::InternalError(absl::StrCat("unexpected exception: ", e.what()));
  }
  if (status.ok()) return 0;
  // Bad input is one line (a value with a newline is escaped); a failure inside the simulator
  // may be longer (a hang report lists the stuck ops one per line).
  const bool bad_input = IsBadInput(status);
  const std::string message(status.message());
  err << "meshsim: " << (bad_input ? OneLineMessage(message) : message) << "\n";
  return bad_input ? 2 : 1;
}

}  // namespace meshsim::sim::cli
