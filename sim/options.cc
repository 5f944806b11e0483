#include "sim/options.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "algorithms/registry.h"
#include "boost/program_options.hpp"
#include "core/check.h"
#include "core/did_you_mean.h"
#include "core/status_macros.h"
#include "formats/temp_files.h"
#include "network/topology.h"
#include "sim/args.h"
#include "sim/workload.h"
#include "sim/workload_registry.h"
#include "workloads/transformer.h"

namespace meshsim::sim {

namespace po = boost::program_options;

const std::vector<std::string>& Workloads() {
  static const auto* v = [] {
    auto* names = new std::vector<std::string>;
    for (const WorkloadInfo& w : WorkloadRegistry()) names->push_back(w.name);
    return names;
  }();
  return *v;
}
const std::vector<std::string>& Topologies() {
  static const auto* v = new std::vector<std::string>{"torus2d", "torus3d", "ring",        "mesh2d",
                                                      "fattree", "switch",  "hierarchical"};
  return *v;
}
const std::vector<std::string>& Collectives() {
  static const auto* v = new std::vector<std::string>{
      "allgather", "reducescatter", "allreduce", "broadcast", "reduce", "sendrecv", "alltoall"};
  return *v;
}

namespace {

std::vector<std::string> Models() {
  std::vector<std::string> names;
  for (const workloads::ModelShape& m : workloads::Models()) names.push_back(m.name);
  return names;
}
std::vector<std::string> Algorithms() {
  std::vector<std::string> names;
  for (const algorithms::AlgorithmInfo& a : algorithms::Algorithms()) names.push_back(a.name);
  return names;
}

// The topologies that read --dims, and why another does not.
bool TakesDims(const std::string& topology) {
  return topology == "torus2d" || topology == "torus3d" || topology == "mesh2d";
}
std::string DimsNotRead(const std::string& topology) {
  return absl::StrCat("does not apply to --topology ", topology,
                      "; it is read by --topology torus2d, torus3d, mesh2d");
}

// Every option is read as text and validated by ResolveRunOptions, so that messages are ours
// and name the allowed values.
po::typed_value<std::string>* Text() { return po::value<std::string>(); }

// The machine and where the run lies on it: --system, --stack, --chips, --mesh, --placement,
// --topology, --dims (and --help, --config).
void AddMachineOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("help,h", "print this help")
      ("config", Text(), "read options from FILE (command-line values win)")
      ("system", Text(), "machine preset (default tpuv4; `meshsim list systems`)")
      ("stack", Text(), "software stack the machine runs: ideal, nccl, pytorch-nccl, alpa "
                        "(default: the system's, ideal on TPUs and nccl on GPUs; `meshsim list "
                        "stacks`; stack.* keys override its values)")
      ("chips", Text(), "number of chips (default 256)")
      ("mesh", Text(), "logical mesh RxC with R*C = chips (or = the placement's chips), or auto "
                       "(default): the autotuner's mesh for meshslice on llm, else the squarest")
      ("placement", Text(), "the physical chips of the mesh, row-major: ids and ranges, e.g. "
                            "8-15 or 0,4,1,5 (default: chips 0..R*C-1 = every chip)")
      ("topology", Text(), "torus2d, torus3d, ring, mesh2d, fattree, switch, hierarchical, "
                           "graphviz:FILE (default: the system's; `meshsim list topologies`)")
      ("dims", Text(), "extents of a torus2d or mesh2d (RxC) or torus3d (XxYxZ), product = "
                       "chips (default: torus2d/mesh2d the unplaced mesh's RxC, else the "
                       "most-square); e.g. --topology torus3d --dims 4x8x8 gives each of 4 "
                       "pipeline stages its own 8x8 torus");
  // clang-format on
}

// What is simulated: --workload, its model and batch, and the sizes of the other workloads.
void AddProblemOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("workload", Text(), "llm, gemm, collective, chain, layer, pipeline (default llm); layer = "
                           "one whole transformer layer, forward + backward, by a layer plugin "
                           "(atp, megatron, tp2d); pipeline = a training step of every layer "
                           "over --stages x --dp x --mesh chips")
      ("model", Text(), "gpt3, megatron-nlg, atp-m1..atp-m4, gpt-2.6b, u-transformer (default "
                        "gpt3; `meshsim list models`)")
      ("hidden", Text(), "custom model: hidden size H (replaces --model)")
      ("heads", Text(), "custom model: attention heads (default H/128)")
      ("ffn", Text(), "custom model: FFN size (default 4H)")
      ("layers", Text(), "custom model: transformer blocks (default 1)")
      ("batch", Text(), "global batch in sequences (default: the mesh's chips / 2; 4 for "
                        "--workload layer, as in ATP §5)")
      ("seq", Text(), "sequence length (default 2048)")
      ("pass", Text(), "fwd, bwd, train (default train)")
      ("gemm", Text(), "M,N,K of --workload gemm")
      ("collective", Text(), "allgather, reducescatter, allreduce, broadcast, reduce, sendrecv, "
                             "alltoall (--workload collective)")
      ("group", Text(), "row, col, all: the chips of each collective group (default row)")
      ("bytes", Text(), "per-chip size, e.g. 64MiB: the shard of --workload collective, the "
                        "copy of --workload stream");
  // clang-format on
}

// The --algorithm plugin and its parameters.
void AddAlgorithmOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("algorithm", Text(), "algorithm plugin (default meshslice; see `meshsim list algorithms`)")
      ("dataflow", Text(), "auto, os, ls, rs (default auto); for --workload llm, layer also one "
                           "per FC layer (qkv,attn_out,ffn_up,ffn_down), as the run's config "
                           "shows them, e.g. os,ls,os,ls")
      ("slices", Text(), "slice count / unrolled iterations, or auto (default): for meshslice on "
                         "llm the autotuner's per-layer S (the run's config shows e.g. 6,3,8,8), "
                         "else the plugin's default; for --workload llm, layer also one S per "
                         "FC layer, e.g. 6,3,8,8")
      ("chunks", Text(), "--workload layer, pipeline: 1, 2 or 4 chunks of the batch for ATP's "
                         "chunk-based overlap (§4.1); must divide --batch (default 1); the "
                         "plugin parameter chunks (= --param chunks=N)")
      ("param", po::value<std::vector<std::string>>()->composing(),
                "KEY=VALUE: set a typed parameter of the --algorithm plugin (repeatable; each "
                "plugin's parameters with type, range and default: `meshsim list algorithms`); "
                "--param slices=4 is --slices 4, --param chunks=2 is --chunks 2");
  // clang-format on
}

// The whole layer's and the pipeline's own options: --dropout, then --stages ... --seed.
void AddLayerAndPipelineOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("dropout", Text(), "--workload layer, pipeline: dropout probability of each layer, as "
                          "Megatron-LM's GPT applies it (attention probabilities, each block's "
                          "output); > 0 runs the dropout kernels, whose cost does not depend on "
                          "it; 0 = none (default 0)")
      ("stages", Text(), "--workload pipeline: pipeline stages, each on its own chips (default 2)")
      ("dp", Text(), "--workload pipeline: data-parallel replicas per stage (default 1)")
      ("microbatches", Text(), "--workload pipeline: microbatches per step; must divide --batch "
                               "(default 8)")
      ("schedule", Text(), "--workload pipeline: gpipe, 1f1b, eager-1f1b (default eager-1f1b)")
      ("overlap", Text(), "--workload pipeline: 1 = cross-stage transfers start as soon as their "
                          "data is ready and overlap compute; 0 = a transfer waits until the "
                          "receiving stage reaches it (default 1)")
      ("delay-dw", Text(), "--workload pipeline: 1 = backward-weight delaying: a backward sends "
                           "its input gradient before computing its weight gradients (default 0)")
      ("recompute", Text(), "--workload pipeline: 1 = activation recomputation: keep each "
                            "layer's input only and re-run its forward before its backward "
                            "(default 0)")
      ("reshard", Text(), "--workload pipeline: cross-mesh strategy send-recv, local-allgather, "
                          "global-allgather, broadcast, signal (default broadcast)")
      ("reshard-scheduler", Text(), "--workload pipeline: naive, load-balance, dfs, greedy, "
                                    "ensemble (default ensemble)")
      ("seed", Text(), "--workload pipeline with --reshard-scheduler greedy or ensemble: seed of "
                       "the randomized greedy resharding scheduler, the one random thing in a "
                       "run (default 1)");
  // clang-format on
}

// --set KEY=VALUE, the system parameters' override (they are options too: RunDescription).
void AddSystemOverrides(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("set", po::value<std::vector<std::string>>()->composing(),
              "KEY=VALUE: override a system parameter (repeatable; keys: `meshsim show system`)");
  // clang-format on
}

// The chain's own options: --steps, --step-time.
void AddChainOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("steps", Text(), "--workload chain: steps per chip (default 8)")
      ("step-time", Text(), "--workload chain: duration of one step (default 10us)");
  // clang-format on
}

// The help of the memory budgets (--max-ops, --max-flows, --max-timeline-bytes): with
// kThisMachine this machine's defaults, for `--help`; with kPortable only how they are derived,
// so that the generated reference reads the same wherever it is generated.
struct BudgetHelp {
  std::string max_ops, max_flows, max_timeline_bytes;
};
BudgetHelp BudgetHelpTexts(BudgetDefaults budgets) {
  const bool here = budgets == BudgetDefaults::kThisMachine;
  const std::string memory =
      here ? AvailableMemory().Describe()
           : "the memory limit (physical memory, or the cgroup's limit when lower)";
  const double gib = double(int64_t{1} << 30);
  BudgetHelp help;
  help.max_ops = absl::StrCat(
      absl::StrFormat(
          "refuse the run before building it when its op graph would hold more ops "
          "(default: half of %s at ~%d B per op, a quarter with --out/--trace%s; "
          "on a torus whose graph folds, ~%d B per op%s",
          memory, kBytesPerOp,
          here ? absl::StrFormat(": here %d, %d", DefaultMaxOps(false), DefaultMaxOps(true)) : "",
          kFoldedBytesPerOp,
          here ? absl::StrFormat(": here %d, %d", DefaultMaxOps(false, kFoldedBytesPerOp),
                                 DefaultMaxOps(true, kFoldedBytesPerOp))
               : ""),
      ")");
  help.max_flows = absl::StrCat(
      absl::StrFormat(
          "--workload collective: refuse the run when one step would start more network flows "
          "at once (an all-to-all of P chips starts P*(P-1); default: half of %s at ~%d B per "
          "flow",
          memory, kBytesPerFlow),
      here ? absl::StrFormat(": here %d)", DefaultMaxFlows()) : ")");
  help.max_timeline_bytes = absl::StrCat(
      absl::StrFormat(
          "with --out/--trace: stop and refuse the run when the timeline they keep in memory (64 "
          "B per row, 24 B per counter sample; rows grow with collective steps x members, not "
          "with ops) would take more, e.g. 4GiB (default: a quarter of %s, the op graph has "
          "another",
          memory),
      here ? absl::StrFormat(": here %.1f GiB)", DefaultMaxTimelineBytes() / gib) : ")");
  return help;
}

// The run's outputs and its memory budgets: --out, --trace and its format and detail, --format,
// --max-ops, --max-flows, --max-timeline-bytes.
void AddOutputOptions(po::options_description& d, const BudgetHelp& budgets) {
  // clang-format off
  d.add_options()
      ("out", Text(), "write the run to this HDF5 file (a name ending in .h5, .hdf5 or .he5)")
      ("trace", Text(), "write a trace of the run to this file: Chrome JSON for a .json name, "
                        "Perfetto protobuf for a .pftrace / .perfetto-trace name, another name "
                        "with --trace-format (docs/traces.md)")
      ("trace-format", Text(), "json, perfetto: the --trace file's format (default: by its "
                               "extension, .json = json, .pftrace and .perfetto-trace = "
                               "perfetto; required for another name)")
      ("trace-detail", Text(), "auto (default: budgets keep a large trace loadable), full, "
                               "minimal: what the --trace file holds")
      ("format", Text(), "table, json, csv (default table)")
      ("max-ops", Text(), budgets.max_ops.c_str())
      ("max-flows", Text(), budgets.max_flows.c_str())
      ("max-timeline-bytes", Text(), budgets.max_timeline_bytes.c_str());
  // clang-format on
}

}  // namespace

// One description for the command line and config files, in the order `--help` and
// docs/cli.md list the options.
po::options_description RunOnlyDescription(BudgetDefaults budgets) {
  po::options_description d(
      "Options of `meshsim run` (also `KEY = VALUE` lines in --config files)");
  AddMachineOptions(d);
  AddProblemOptions(d);
  AddAlgorithmOptions(d);
  AddLayerAndPipelineOptions(d);
  AddSystemOverrides(d);
  AddChainOptions(d);
  AddOutputOptions(d, BudgetHelpTexts(budgets));
  return d;
}

po::options_description RunDescription(BudgetDefaults budgets) {
  po::options_description d = RunOnlyDescription(budgets);
  // System parameters are options too, so `meshsim show system` output is a valid config file.
  po::options_description params("System parameters (override the preset; also via --set)");
  SystemConfig sys = *SystemPreset("tpuv4");
  for (const core::Param& p : sys.Params()) {
    params.add_options()(p.key.c_str(), po::value<std::string>(),
                         absl::StrCat(p.description, " [", core::UnitSymbol(p.unit), "]").c_str());
  }
  d.add(params);
  return d;
}

std::vector<std::string> RunOptionChoices(const std::string& key) {
  if (key == "system") {
    std::vector<std::string> names;
    for (const SystemInfo& s : Systems()) names.push_back(s.name);
    return names;
  }
  if (key == "stack") {
    std::vector<std::string> names;
    for (const stack::StackInfo& s : stack::Stacks()) names.push_back(s.name);
    return names;
  }
  if (key == "topology") return Topologies();
  if (key == "workload") return Workloads();
  if (key == "model") return Models();
  if (key == "collective") return Collectives();
  if (key == "algorithm") return Algorithms();
  if (key == "pass") return {"fwd", "bwd", "train"};
  if (key == "dataflow") return {"auto", "os", "ls", "rs"};
  if (const std::vector<std::string> readers = algorithms::AlgorithmsDeclaring(key);
      !readers.empty() && key != "dataflow") {
    // A plugin parameter's values, when its declarations list them (chunks: 1, 2, 4).
    std::vector<std::string> values;
    for (const std::string& name : readers) {
      for (const core::ParamSpec& p : (*algorithms::FindAlgorithm(name))->params) {
        if (p.key != key) continue;
        for (const std::string& c : p.choices) {
          if (std::find(values.begin(), values.end(), c) == values.end()) values.push_back(c);
        }
      }
    }
    return values;
  }
  if (const core::ParamSpec* p = WorkloadParam(key)) {
    // A workload's typed option (workload_registry.h): group, schedule, overlap, reshard, ...
    if (p->type == core::ParamType::kEnum) return p->choices;
    if (p->type == core::ParamType::kBool) return {"0", "1"};
  }
  if (key == "format") return {"table", "json", "csv"};
  if (key == "trace-format") return {"json", "perfetto"};
  if (key == "trace-detail") return {"auto", "full", "minimal"};
  return {};
}

absl::Status InvalidOption(const std::string& key, const std::string& value,
                           const std::string& allowed) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s: '%s' is not allowed; %s", key, value, allowed));
}

namespace {

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

absl::Status CheckOneOf(const std::string& key, const std::string& value,
                        const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return absl::OkStatus();
  return InvalidOption(
      key, value,
      absl::StrCat("allowed: ", absl::StrJoin(allowed, ", "), core::DidYouMean(value, allowed)));
}

// How the user gave option or plugin parameter `key`: "--param chunks" when by --param (a key
// of `given_as_param`) or for a plugin parameter without an option of its own, else "--chunks".
std::string OptionName(const std::string& key, const std::vector<std::string>& given_as_param) {
  if (std::find(given_as_param.begin(), given_as_param.end(), key) != given_as_param.end()) {
    return "--param " + key;
  }
  static const auto* options = [] {
    auto* names = new std::vector<std::string>;
    const po::options_description description = RunOnlyDescription(BudgetDefaults::kPortable);
    for (const auto& option : description.options()) {
      names->push_back(option->long_name());
    }
    return names;
  }();
  const std::vector<std::string> plugin = algorithms::AlgorithmsDeclaring(key);
  if (plugin.empty() || std::find(options->begin(), options->end(), key) != options->end()) {
    return "--" + key;
  }
  return "--param " + key;
}

}  // namespace

int64_t DefaultMaxOps(bool keep_timeline, int64_t bytes_per_op) {
  const int64_t ops = AvailableMemory().bytes / (keep_timeline ? 4 : 2) / bytes_per_op;
  return std::clamp<int64_t>(ops, 1, kMaxOpsLimit);
}

int64_t DefaultMaxFlows() {
  return std::max<int64_t>(1, AvailableMemory().bytes / 2 / kBytesPerFlow);
}

int64_t DefaultMaxTimelineBytes() { return std::max<int64_t>(1, AvailableMemory().bytes / 4); }

std::vector<std::string> RunOptionKeys() {
  std::vector<std::string> keys;
  const po::options_description description = RunDescription();
  for (const auto& option : description.options()) {
    if (option->long_name() != "help") keys.push_back(option->long_name());
  }
  return keys;
}

std::string RunHelp() {
  std::ostringstream os;
  os << "usage: meshsim run [--config FILE] [OPTIONS] [--out RUN.h5] "
        "[--trace RUN.json|RUN.pftrace] "
        "[--format table|json|csv]\n\n"
        "An option given (here or in the --config file) that the run does not read is refused, "
        "e.g. --bytes without --workload collective, --slices with --algorithm collective.\n\n"
     << RunDescription();
  return os.str();
}

absl::StatusOr<RawOptions> ParseRunArgs(const std::vector<std::string>& args,
                                        const std::string& command,
                                        const po::options_description* own) {
  po::options_description desc = RunDescription();
  if (own != nullptr) desc.add(*own);
  // No positional words: `meshsim run 64` or `run --chips 16 run.h5` is an error, not ignored.
  MESHSIM_ASSIGN_OR_RETURN(
      ParsedArgs parsed,
      ParseArgs(command, args, desc, 0, 0,
                absl::StrCat("options are --KEY VALUE (usage: meshsim ", command, " --help)")));
  po::variables_map& cli = parsed.vm;
  po::variables_map file;
  std::vector<std::pair<std::string, std::string>> file_params;  // Unregistered plugin keys.
  RawOptions raw;
  raw.help = parsed.help;
  if (cli.count("config")) {
    const std::string path = cli["config"].as<std::string>();
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--config: cannot read '%s': it is a directory", path));
    }
    std::ifstream in(path);
    if (!in) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--config: cannot read '%s': %s", path, std::strerror(errno)));
    }
    try {
      // Unregistered keys: a plugin parameter without an option of its own (`tiles = 2`, as a
      // resolved config writes it) is one; any other key is unknown.
      po::parsed_options parsed = po::parse_config_file(in, desc, /*allow_unregistered=*/true);
      const std::vector<std::string> plugin_keys = PluginParamKeys();
      for (const po::option& option : parsed.options) {
        if (!option.unregistered) continue;
        if (std::find(plugin_keys.begin(), plugin_keys.end(), option.string_key) !=
                plugin_keys.end() &&
            option.value.size() == 1) {
          file_params.emplace_back(option.string_key, option.value[0]);
          continue;
        }
        std::vector<std::string> names = OptionNames(desc);
        names.insert(names.end(), plugin_keys.begin(), plugin_keys.end());
        return absl::InvalidArgumentError(absl::StrFormat(
            "--config: unknown key '%s' in '%s'%s (see `meshsim %s --help`)", option.string_key,
            path, core::DidYouMean(option.string_key, names), command));
      }
      po::store(parsed, file);
    } catch (const po::error& e) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--config: '%s': %s", path, OneLine(e.what())));
    }
    if (file.count("config")) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--config: '%s' sets config again; nested configs are not allowed", path));
    }
  }
  // Command-line values first, then the file's for keys the command line did not give. Sets are
  // applied in order, so the file's come first: a later command-line --set wins, and a file's
  // `set = KEY=...` yields to a command-line --KEY.
  std::vector<std::string> cli_sets;
  // Whether the command line gives plugin parameter KEY of `param` (KEY=VALUE) by --param.
  const auto param_on_cli_params = [&](const std::string& param) {
    if (!cli.count("param")) return false;
    const std::string key = param.substr(0, param.find('='));
    for (const std::string& s : cli["param"].as<std::vector<std::string>>()) {
      if (s.substr(0, s.find('=')) == key) return true;
    }
    return false;
  };
  const auto param_on_cli = [&](const std::string& set) {
    const std::string key = set.substr(0, set.find('='));
    SystemConfig sys = *SystemPreset("tpuv4");
    for (const core::Param& p : sys.Params()) {
      if (p.key == key) return cli.count(key) > 0;
    }
    return false;
  };
  for (const po::variables_map* vm : {&cli, &file}) {
    for (const auto& [key, value] : *vm) {
      if (key == "help" || key == "config") continue;
      if (own != nullptr && own->find_nothrow(key, false) != nullptr) {
        if (vm != &cli) continue;  // Only from the command line.
        const boost::any& v = value.value();
        if (const bool* b = boost::any_cast<bool>(&v)) {
          if (*b) raw.own.emplace_back(key, "1");
        } else if (const auto* list = boost::any_cast<std::vector<std::string>>(&v)) {
          for (const std::string& item : *list) raw.own.emplace_back(key, item);
        } else {
          raw.own.emplace_back(key, value.as<std::string>());
        }
        continue;
      }
      if (key == "param") {
        // One entry per --param; ExpandPluginParams below turns them into KEY = VALUE.
        for (const std::string& s : value.as<std::vector<std::string>>()) {
          if (vm == &file && (cli.count(s.substr(0, s.find('='))) || param_on_cli_params(s))) {
            continue;  // The command line's value wins.
          }
          raw.values.emplace_back("param", s);
        }
        continue;
      }
      if (key == "set") {
        for (const std::string& s : value.as<std::vector<std::string>>()) {
          if (vm == &cli) {
            cli_sets.push_back(s);
          } else if (!param_on_cli(s)) {
            raw.sets.push_back(s);
          }
        }
        continue;
      }
      if (vm == &file && cli.count(key)) continue;
      raw.values.emplace_back(key, value.as<std::string>());
    }
  }
  raw.sets.insert(raw.sets.end(), cli_sets.begin(), cli_sets.end());
  for (const auto& [key, value] : file_params) {
    const std::string as_param = absl::StrCat(key, "=", value);
    if (!param_on_cli_params(as_param)) raw.values.emplace_back(key, value);
  }
  MESHSIM_RETURN_IF_ERROR(ExpandPluginParams(raw.values, &raw.given_as_param));
  return raw;
}

std::vector<std::string> PluginParamKeys() {
  std::vector<std::string> keys;
  for (const algorithms::AlgorithmInfo& a : algorithms::Algorithms()) {
    for (const core::ParamSpec& p : a.params) keys.push_back(p.key);
  }
  for (const WorkloadInfo& w : WorkloadRegistry()) {
    for (const core::ParamSpec& p : w.params) keys.push_back(p.key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

absl::Status ExpandPluginParams(std::vector<std::pair<std::string, std::string>>& values,
                                std::vector<std::string>* given_as_param) {
  const std::vector<std::string> keys = PluginParamKeys();
  for (auto& [key, value] : values) {
    if (key != "param") continue;
    const size_t eq = value.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidOption("param", value,
                           absl::StrCat("expected KEY=VALUE, e.g. --param chunks=2; keys: ",
                                        absl::StrJoin(keys, ", ")));
    }
    const std::string k = value.substr(0, eq);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      return InvalidOption("param", value,
                           absl::StrCat("'", k, "' is a parameter of no plugin; keys: ",
                                        absl::StrJoin(keys, ", "), core::DidYouMean(k, keys),
                                        " (`meshsim list algorithms`, `list workloads`)"));
    }
    for (const auto& [other, other_value] : values) {
      if (other == k) {
        return InvalidOption(
            "param", value,
            absl::StrFormat("%s is also given as --%s %s; give it once", k, k, other_value));
      }
    }
    const std::string v = value.substr(eq + 1);
    key = k;
    value = v;
    if (given_as_param != nullptr) given_as_param->push_back(k);
  }
  return absl::OkStatus();
}

absl::Status CheckOutputPath(const std::string& key, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("--%s: empty path", key));
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s: cannot write '%s': it is a directory", key, path));
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s: cannot write '%s': directory '%s' does not exist", key, path, dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s: cannot write '%s': directory '%s' is not writable", key, path, dir.string()));
  }
  // What only creating a file tells (a name too long for the file system, a read-only mount,
  // root's writes refused by NFS, ...): create the very temporary file the writers will, then
  // remove it, so that such a name fails now rather than after the simulation. A file of that
  // name already there is left alone (the writer replaces it).
  const std::string probe = absl::StrCat(path, ".tmp.", static_cast<int64_t>(::getpid()));
  const formats::TempFile registration(probe);  // Removed on SIGINT/SIGTERM/SIGHUP.
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s: cannot write '%s': %s", key, path, std::strerror(errno)));
  }
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
  return absl::OkStatus();
}

absl::Status CheckArchivePath(const std::string& key, const std::string& path) {
  MESHSIM_RETURN_IF_ERROR(CheckOutputPath(key, path));
  const std::string name = absl::AsciiStrToLower(std::filesystem::path(path).filename().string());
  for (const char* extension : kArchiveExtensions) {
    if (absl::EndsWith(name, extension) && name.size() > std::strlen(extension)) {
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--%s: '%s' is not an HDF5 archive name; allowed: a name ending in .h5, .hdf5 or .he5 "
      "(--%s writes HDF5)",
      key, path, key));
}

// ResolveRunOptions in steps, in this order (an earlier step's error wins): each reads its
// options from `raw` into `o`.
class RunOptionsResolver {
 public:
  explicit RunOptionsResolver(const RawOptions& raw) : raw_(raw) {}

  absl::StatusOr<RunOptions> Resolve(Unread unread) {
    // Raw options not from ParseRunArgs (experiment files, replays).
    MESHSIM_RETURN_IF_ERROR(ExpandPluginParams(raw_.values, &raw_.given_as_param));
    MESHSIM_RETURN_IF_ERROR(System());
    MESHSIM_RETURN_IF_ERROR(Machine());
    MESHSIM_RETURN_IF_ERROR(Workload());
    MESHSIM_RETURN_IF_ERROR(Mesh());
    MESHSIM_RETURN_IF_ERROR(Topology());
    MESHSIM_RETURN_IF_ERROR(Model());
    MESHSIM_RETURN_IF_ERROR(Problem());
    MESHSIM_RETURN_IF_ERROR(Requirements());
    MESHSIM_RETURN_IF_ERROR(TensorBounds());
    MESHSIM_RETURN_IF_ERROR(Outputs());
    if (unread == Unread::kRefuse) MESHSIM_RETURN_IF_ERROR(RefuseUnread());
    return o;
  }

 private:
  // The value given for `key`, or null.
  const std::string* get(const std::string& key) const {
    for (const auto& [k, v] : raw_.values)
      if (k == key) return &v;
    return nullptr;
  }
  // An integer option in [min, max] into *out, when given.
  absl::Status integer(const std::string& key, int64_t min, int64_t max, int64_t* out) const {
    const std::string* v = get(key);
    if (v == nullptr) return absl::OkStatus();
    MESHSIM_ASSIGN_OR_RETURN(int64_t x,
                             core::ParseInteger("--" + key, *v, core::Unit::kCount, min));
    if (x > max) return InvalidOption(key, *v, absl::StrFormat("must be at most %d", max));
    *out = x;
    return absl::OkStatus();
  }
  // A workload's integer option into *out, when given, in its declared range (WorkloadParam).
  absl::Status declared(const std::string& key, int64_t* out) const {
    const core::ParamSpec* spec = WorkloadParam(key);
    MESHSIM_CHECK(spec != nullptr) << "option '" << key << "' is not declared by a workload";
    return integer(key, static_cast<int64_t>(spec->min), static_cast<int64_t>(spec->max), out);
  }
  // One of `allowed` into *out, when given.
  absl::Status choice(const std::string& key, const std::vector<std::string>& allowed,
                      std::string* out) const {
    const std::string* v = get(key);
    if (v == nullptr) return absl::OkStatus();
    MESHSIM_RETURN_IF_ERROR(CheckOneOf(key, *v, allowed));
    *out = *v;
    return absl::OkStatus();
  }

  // The system preset (--system, --stack), its parameters given as options, then --set.
  absl::Status System() {
    if (const std::string* v = get("system")) o.system_name = *v;
    const std::string* stack_name = get("stack");
    if (stack_name != nullptr)
      MESHSIM_RETURN_IF_ERROR(CheckOneOf("stack", *stack_name, RunOptionChoices("stack")));
    MESHSIM_ASSIGN_OR_RETURN(o.system,
                             SystemPreset(o.system_name, stack_name != nullptr ? *stack_name : ""));
    {
      const std::vector<core::Param> params = o.system.Params();
      for (const core::Param& p : params) {
        if (const std::string* v = get(p.key))
          MESHSIM_RETURN_IF_ERROR(core::SetParam(params, p.key, *v));
      }
      for (const std::string& s : raw_.sets) {
        const size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0) {
          return InvalidOption("set", s, "expected KEY=VALUE, e.g. --set link.bandwidth=45GB/s");
        }
        MESHSIM_RETURN_IF_ERROR(core::SetParam(params, s.substr(0, eq), s.substr(eq + 1)));
      }
      MESHSIM_RETURN_IF_ERROR(o.system.Validate());
    }
    return absl::OkStatus();
  }

  // --chips and --placement.
  absl::Status Machine() {
    int64_t chips = o.chips;
    MESHSIM_RETURN_IF_ERROR(integer("chips", 1, kMaxChips, &chips));
    o.chips = static_cast<int>(chips);

    if (const std::string* v = get("placement")) {
      for (absl::string_view part : absl::StrSplit(*v, ',')) {
        const std::vector<std::string> ends = absl::StrSplit(part, '-');
        int lo = -1, hi = -1;
        if (ends.size() > 2 || !absl::SimpleAtoi(ends[0], &lo) ||
            !absl::SimpleAtoi(ends.back(), &hi) || lo < 0 || hi < lo) {
          return InvalidOption("placement", *v,
                               "expected chip ids and ranges A-B (A <= B), e.g. 8-15 or 0,4,1,5");
        }
        if (hi >= o.chips) {
          return InvalidOption(
              "placement", *v,
              absl::StrFormat("chip %d is not on the machine; ids are 0..%d", hi, o.chips - 1));
        }
        if (o.placement.size() + (hi - lo + 1) > static_cast<size_t>(o.chips)) {
          return InvalidOption("placement", *v,
                               absl::StrFormat("names more than the %d chips", o.chips));
        }
        for (int c = lo; c <= hi; ++c) o.placement.push_back(c);
      }
      std::vector<int> sorted = o.placement;
      std::sort(sorted.begin(), sorted.end());
      if (const auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
        return InvalidOption(
            "placement", *v,
            absl::StrFormat("chip %d appears twice; the chips must be distinct", *dup));
      }
    }
    return absl::OkStatus();
  }

  // --workload and the pipeline's options (stages, dp, microbatches, schedule, overlap, resharding,
  // seed), then what the workload needs of --chips and --placement (Workload::CheckChips).
  absl::Status Workload() {
    MESHSIM_RETURN_IF_ERROR(choice("workload", Workloads(), &o.workload));
    {
      int64_t stages = o.stages, dp = o.dp, microbatches = o.microbatches;
      MESHSIM_RETURN_IF_ERROR(declared("stages", &stages));
      MESHSIM_RETURN_IF_ERROR(declared("dp", &dp));
      MESHSIM_RETURN_IF_ERROR(declared("microbatches", &microbatches));
      o.stages = static_cast<int>(stages);
      o.dp = static_cast<int>(dp);
      o.microbatches = static_cast<int>(microbatches);
      MESHSIM_RETURN_IF_ERROR(choice("schedule", RunOptionChoices("schedule"), &o.schedule));
      std::string flag;
      for (auto [key, out] : {std::pair{"overlap", &o.overlap}, std::pair{"delay-dw", &o.delay_dw},
                              std::pair{"recompute", &o.recompute}}) {
        flag = *out ? "1" : "0";
        MESHSIM_RETURN_IF_ERROR(choice(key, RunOptionChoices(key), &flag));
        *out = flag == "1";
      }
      MESHSIM_RETURN_IF_ERROR(choice("reshard", RunOptionChoices("reshard"), &o.reshard));
      MESHSIM_RETURN_IF_ERROR(
          choice("reshard-scheduler", RunOptionChoices("reshard-scheduler"), &o.reshard_scheduler));
      MESHSIM_RETURN_IF_ERROR(declared("seed", &o.seed));
    }
    return WorkloadOf(o).CheckChips(o);
  }

  // --mesh RxC (auto stays 0x0).
  absl::Status Mesh() {
    if (const std::string* v = get("mesh"); v != nullptr && *v != "auto") {
      std::vector<std::string> parts = absl::StrSplit(*v, 'x');
      int r = 0, c = 0;
      if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &r) || !absl::SimpleAtoi(parts[1], &c) ||
          r < 1 || c < 1) {
        return InvalidOption("mesh", *v,
                             "expected RxC with positive R and C (e.g. 16x16), or auto");
      }
      MESHSIM_RETURN_IF_ERROR(WorkloadOf(o).CheckMesh(o, *v, int64_t{r} * c));
      o.mesh_rows = r;
      o.mesh_cols = c;
    }
    return absl::OkStatus();
  }

  // --topology: the system's unless given; graphviz:FILE must be readable.
  absl::Status Topology() {
    o.topology = o.system.net.topology;
    if (const std::string* v = get("topology")) {
      if (v->rfind("graphviz:", 0) == 0) {
        const std::string path = v->substr(9);
        if (!std::ifstream(path)) {
          return InvalidOption("topology", *v, absl::StrFormat("cannot read '%s'", path));
        }
      } else {
        MESHSIM_RETURN_IF_ERROR(CheckOneOf("topology", *v, [] {
          std::vector<std::string> t = Topologies();
          t.push_back("graphviz:FILE");
          return t;
        }()));
      }
      o.topology = *v;
      o.topology_given = true;
    }
    return Dims();
  }

  // --dims: the extents of a grid topology (rank 2 for torus2d and mesh2d, 3 for torus3d), whose
  // product is --chips. Other topologies refuse it as not read (WhyNotRead).
  absl::Status Dims() {
    const std::string* v = get("dims");
    if (v == nullptr) return absl::OkStatus();
    if (!TakesDims(o.topology)) return InvalidOption("dims", *v, DimsNotRead(o.topology));
    const int rank = o.topology == "torus3d" ? 3 : 2;
    const char* form = rank == 3 ? "XxYxZ with X*Y*Z" : "RxC with R*C";
    std::vector<int> dims;
    int64_t product = 1;
    for (absl::string_view part : absl::StrSplit(*v, 'x')) {
      int extent = 0;
      if (!absl::SimpleAtoi(part, &extent) || extent < 1 || extent > kMaxChips) {
        dims.clear();
        break;
      }
      dims.push_back(extent);
      product *= extent;
    }
    if (static_cast<int>(dims.size()) != rank || product != o.chips) {
      return InvalidOption(
          "dims", *v,
          absl::StrFormat("--topology %s takes %s = --chips %d", o.topology, form, o.chips));
    }
    o.dims = std::move(dims);
    return absl::OkStatus();
  }

  // --model, or a custom model from --hidden, --heads, --ffn, --layers.
  absl::Status Model() {
    MESHSIM_RETURN_IF_ERROR(choice("model", Models(), &o.model));
    MESHSIM_RETURN_IF_ERROR(integer("hidden", 1, int64_t{1} << 24, &o.hidden));
    MESHSIM_RETURN_IF_ERROR(integer("heads", 1, int64_t{1} << 16, &o.heads));
    MESHSIM_RETURN_IF_ERROR(integer("ffn", 1, int64_t{1} << 26, &o.ffn));
    MESHSIM_RETURN_IF_ERROR(integer("layers", 1, int64_t{1} << 16, &o.layers));
    if (o.hidden == 0 && (o.heads || o.ffn || o.layers)) {
      return absl::InvalidArgumentError(
          "--hidden: required when --heads, --ffn or --layers describe a custom model");
    }
    if (o.hidden > 0 && get("model") != nullptr) {
      // --model with its own dimensions (a resolved config) is that model; other dimensions make a
      // custom model, and --model is then refused as not read (NotReadBy).
      const workloads::ModelShape* m = nullptr;
      for (const workloads::ModelShape& candidate : workloads::Models()) {
        if (candidate.name == o.model) m = &candidate;
      }
      if (m != nullptr && o.hidden == m->hidden && (o.heads == 0 || o.heads == m->heads) &&
          (o.ffn == 0 || o.ffn == m->ffn_dim()) && (o.layers == 0 || o.layers == m->layers)) {
        o.hidden = o.heads = o.ffn = o.layers = 0;
      }
    }
    if (o.hidden > 0) {
      o.model = "custom";
      if (o.heads == 0) o.heads = std::max<int64_t>(1, o.hidden / 128);
      if (o.layers == 0) o.layers = 1;
      if (o.hidden % o.heads != 0) {
        return InvalidOption("hidden", std::to_string(o.hidden),
                             absl::StrFormat("must be divisible by --heads %d", o.heads));
      }
    }
    return absl::OkStatus();
  }

  // The problem's sizes and the algorithm's choices: batch, seq, pass, gemm, collective, bytes,
  // algorithm, dataflow, slices, chunks, steps, step-time; the workload's defaults first
  // (Workload::ResolveDefaults: batch, algorithm).
  absl::Status Problem() {
    WorkloadOf(o).ResolveDefaults(o);
    MESHSIM_RETURN_IF_ERROR(integer("batch", 1, int64_t{1} << 30, &o.batch));
    MESHSIM_RETURN_IF_ERROR(integer("seq", 1, int64_t{1} << 30, &o.seq));
    MESHSIM_RETURN_IF_ERROR(choice("pass", RunOptionChoices("pass"), &o.pass));
    if (const std::string* v = get("gemm")) {
      std::vector<std::string> parts = absl::StrSplit(*v, ',');
      int64_t dims[3];
      bool ok = parts.size() == 3;
      for (int i = 0; ok && i < 3; ++i) ok = absl::SimpleAtoi(parts[i], &dims[i]) && dims[i] >= 1;
      if (!ok)
        return InvalidOption("gemm", *v,
                             "expected M,N,K with positive integers (e.g. 8192,8192,8192)");
      o.gemm_m = dims[0];
      o.gemm_n = dims[1];
      o.gemm_k = dims[2];
    }
    MESHSIM_RETURN_IF_ERROR(choice("collective", Collectives(), &o.collective));
    MESHSIM_RETURN_IF_ERROR(choice("group", RunOptionChoices("group"), &o.group));
    if (const std::string* v = get("bytes")) {
      MESHSIM_ASSIGN_OR_RETURN(o.bytes, core::ParseInteger("--bytes", *v, core::Unit::kBytes, 1));
    }
    MESHSIM_RETURN_IF_ERROR(choice("algorithm", Algorithms(), &o.algorithm));
    // One value, or one per FC layer of the block (the resolved config's lists, so that a run is
    // replayed from its config).
    const auto per_layer = [&](const std::string& key,
                               const std::string& v) -> absl::StatusOr<std::vector<std::string>> {
      std::vector<std::string> parts = absl::StrSplit(v, ',');
      if (parts.size() == 1) return parts;
      if (!WorkloadOf(o).PerFcLayerLists() || parts.size() != 4) {
        return InvalidOption(
            key, v,
            absl::StrCat("a list is one value per FC layer of the block (qkv, attn_out, ffn_up, "
                         "ffn_down), for --workload ",
                         absl::StrJoin(WorkloadsWhere(&Workload::PerFcLayerLists), ", "),
                         "; else one value"));
      }
      return parts;
    };
    if (const std::string* v = get("dataflow")) {
      MESHSIM_ASSIGN_OR_RETURN(const std::vector<std::string> parts, per_layer("dataflow", *v));
      for (const std::string& part : parts) {
        MESHSIM_RETURN_IF_ERROR(CheckOneOf("dataflow", parts.size() == 1 ? *v : part,
                                           parts.size() == 1
                                               ? RunOptionChoices("dataflow")
                                               : std::vector<std::string>{"os", "ls", "rs"}));
      }
      o.dataflow = *v;
    }
    if (const std::string* v = get("slices"); v != nullptr && *v != "auto") {
      MESHSIM_ASSIGN_OR_RETURN(const std::vector<std::string> parts, per_layer("slices", *v));
      for (const std::string& part : parts) {
        MESHSIM_ASSIGN_OR_RETURN(const int64_t s,
                                 core::ParseInteger("--slices", part, core::Unit::kCount, 1));
        if (s > 4096) return InvalidOption("slices", *v, "must be at most 4096");
        if (parts.size() == 1) {
          o.slices = static_cast<int>(s);
        } else {
          o.layer_slices.push_back(static_cast<int>(s));
        }
      }
    }
    MESHSIM_RETURN_IF_ERROR(PluginParams());
    if (const std::string* v = get("dropout")) {
      double p = 0;
      if (!absl::SimpleAtod(*v, &p) || !(p >= 0 && p < 1)) {
        return InvalidOption("dropout", *v, "expected a probability in [0, 1), e.g. 0.1; 0 = none");
      }
      o.dropout = p;
    }
    int64_t steps = o.steps;
    MESHSIM_RETURN_IF_ERROR(declared("steps", &steps));
    o.steps = static_cast<int>(steps);
    if (const std::string* v = get("step-time")) {
      MESHSIM_ASSIGN_OR_RETURN(double s,
                               core::ParseQuantity("--step-time", *v, core::Unit::kSeconds));
      if (s <= 0 || s > 1e3)
        return InvalidOption("step-time", *v, "must be a duration in (0, 1000 s]");
      o.step_time = core::Time::Seconds(s);
      if (o.step_time <= core::Time::Zero())
        return InvalidOption("step-time", *v, "must be at least 1 ps");
    }
    return absl::OkStatus();
  }

  // The typed parameters of the --algorithm plugin (but dataflow and slices, resolved above):
  // each from the option of its name (--chunks, or --param KEY=VALUE expanded), checked against
  // its declaration. Keys the plugin does not declare are left to RefuseUnread.
  absl::Status PluginParams() {
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    std::vector<algorithms::ParamGiven> given;
    for (const core::ParamSpec& spec : info->params) {
      if (algorithms::IsRunLevelParam(spec.key)) continue;
      if (const std::string* v = get(spec.key)) {
        given.push_back({spec.key, *v, OptionName(spec.key, raw_.given_as_param)});
      }
    }
    MESHSIM_ASSIGN_OR_RETURN(o.params, algorithms::ResolveParams(*info, given));
    return absl::OkStatus();
  }

  // What the run's workload requires of the options above: a U-shaped model only where it runs
  // one (Workload::RunsUShapedModels), then Workload::Validate.
  absl::Status Requirements() {
    const absl::StatusOr<workloads::ModelShape> model = workloads::FindModel(o.model);
    if (model.ok() && model->unet_levels > 0 && !WorkloadOf(o).RunsUShapedModels()) {
      return InvalidOption(
          "model", o.model,
          absl::StrCat("the U-Transformer's layers differ and skip across the stack; it runs with "
                       "--workload ",
                       absl::StrJoin(WorkloadsWhere(&Workload::RunsUShapedModels), ", "), " only"));
    }
    return WorkloadOf(o).Validate(o);
  }

  // Sizes are bounded one by one; the products the workload's matrices are (Workload::Tensors)
  // are bounded here, in doubles, before any int64 byte or flop count of the lowering can
  // overflow.
  absl::Status TensorBounds() {
    for (const TensorSize& t : WorkloadOf(o).Tensors(o)) {
      if (t.bytes <= double(kMaxTensorBytes)) continue;
      const char* key = t.keys.back();
      for (const char* k : t.keys) {
        if (get(k) != nullptr) {
          key = k;
          break;
        }
      }
      return InvalidOption(key, get(key) ? *get(key) : o.model,
                           absl::StrFormat("the %s would take %.4g bytes; at most %d (256 TiB) per "
                                           "matrix",
                                           t.what, t.bytes, kMaxTensorBytes));
    }
    return absl::OkStatus();
  }

  // --out, --trace and their formats, --format and the memory budgets.
  absl::Status Outputs() {
    if (const std::string* v = get("out")) {
      MESHSIM_RETURN_IF_ERROR(CheckArchivePath("out", *v));
      o.out = *v;
    }
    if (const std::string* v = get("trace")) {
      MESHSIM_RETURN_IF_ERROR(CheckOutputPath("trace", *v));
      o.trace = *v;
    }
    {
      const std::string* detail = get("trace-detail");
      MESHSIM_ASSIGN_OR_RETURN(o.trace_options, formats::TraceOptionsForDetail(
                                                    "trace-detail", detail ? *detail : "auto"));
      const std::string* format = get("trace-format");
      MESHSIM_ASSIGN_OR_RETURN(
          o.trace_options.format,
          formats::ResolveTraceFormat("trace", o.trace, "trace-format", format ? *format : ""));
    }
    if (!o.out.empty() && !o.trace.empty()) {
      std::error_code ec1, ec2;
      const std::filesystem::path a = std::filesystem::weakly_canonical(o.out, ec1);
      const std::filesystem::path b = std::filesystem::weakly_canonical(o.trace, ec2);
      if (ec1 || ec2 ? o.out == o.trace : a == b) {
        return InvalidOption("trace", o.trace,
                             "it is also --out; the archive and the trace need two files");
      }
    }
    MESHSIM_RETURN_IF_ERROR(choice("format", RunOptionChoices("format"), &o.format));
    MESHSIM_RETURN_IF_ERROR(integer("max-ops", 1, kMaxOpsLimit, &o.max_ops));
    MESHSIM_RETURN_IF_ERROR(declared("max-flows", &o.max_flows));
    if (const std::string* v = get("max-timeline-bytes")) {
      MESHSIM_ASSIGN_OR_RETURN(o.max_timeline_bytes, core::ParseInteger("--max-timeline-bytes", *v,
                                                                        core::Unit::kBytes, 1));
    }
    return absl::OkStatus();
  }

  // Options given that the run does not read (NotReadBy): last, so that a malformed value is
  // reported as such first.
  absl::Status RefuseUnread() {
    for (const auto& [key, value] : raw_.values) {
      if (const std::string why = NotReadBy(key, o); !why.empty()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: '%s' %s", OptionName(key, raw_.given_as_param), value, why));
      }
    }
    for (const std::string& set : raw_.sets) {
      if (const std::string why = NotReadBy(set.substr(0, set.find('=')), o); !why.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat("--set: '%s' %s", set, why));
      }
    }
    return absl::OkStatus();
  }

  RawOptions raw_;
  RunOptions o;
};

absl::StatusOr<RunOptions> ResolveRunOptions(const RawOptions& raw, Unread unread) {
  return RunOptionsResolver(raw).Resolve(unread);
}

namespace {

// Whether system parameter `key` of the run differs from its system preset's value.
bool SystemParamChanged(const RunOptions& o, const std::string& key) {
  absl::StatusOr<SystemConfig> preset = SystemPreset(o.system_name, o.system.stack_name);
  if (!preset.ok()) return true;
  SystemConfig resolved = o.system;
  const std::vector<core::Param> a = resolved.Params(), b = preset->Params();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].key == key) return core::FormatParam(a[i]) != core::FormatParam(b[i]);
  }
  return true;
}

// NotReadBy, and with `any_value` RunReads' rule for the system parameters of other topologies.
std::string WhyNotRead(const std::string& key, const RunOptions& o, bool any_value) {
  const auto is = [](const std::string& x, const std::vector<std::string>& set) {
    return std::find(set.begin(), set.end(), x) != set.end();
  };
  // The workloads' declarations (workload_registry.h) first, then what narrows them further.
  if (const std::vector<std::string> readers = WorkloadsReading(key);
      !readers.empty() && !is(o.workload, readers)) {
    return absl::StrCat("does not apply to --workload ", o.workload, "; it is read by --workload ",
                        absl::StrJoin(readers, ", "));
  }
  if (key == "model" && o.model == "custom") {
    return "does not apply with --hidden: the custom model of --hidden, --heads, --ffn, "
           "--layers replaces it";
  }
  // What the run's workload narrows further (Workload::NotRead: the pipeline's overlap and seed,
  // gemm's plugin parameters on one chip).
  if (const WorkloadInfo* w = FindWorkload(o.workload)) {
    if (std::string why = w->plugin().NotRead(key, o); !why.empty()) return why;
  }
  // The plugin's parameters (dataflow, slices, chunks, --param KEY=VALUE): read when the run's
  // plugin declares them (algorithms/registry.h).
  if (const std::vector<std::string> readers = algorithms::AlgorithmsDeclaring(key);
      key == "algorithm" || !readers.empty()) {
    const absl::StatusOr<const algorithms::AlgorithmInfo*> info =
        algorithms::FindAlgorithm(o.algorithm);
    if (key == "algorithm" || !info.ok() || (*info)->Declares(key)) return "";
    return absl::StrCat("does not apply to --algorithm ", o.algorithm,
                        "; it is read by --algorithm ", absl::StrJoin(readers, ", "));
  }
  if (key == "max-timeline-bytes" && o.out.empty() && o.trace.empty() && !o.sweep_timelines) {
    return "does not apply without --out or --trace; it is read with --out, --trace or a "
           "sweep's --timelines, which keep the timeline it bounds";
  }
  if (key == "dims" && !TakesDims(o.topology)) return DimsNotRead(o.topology);
  if ((key == "trace-format" || key == "trace-detail") && o.trace.empty()) {
    return "does not apply without --trace; it describes the --trace file";
  }
  // A system parameter that only some topologies read (fattree.k, nvlink.bandwidth, ...), set
  // to another value than the preset's (`show system` writes every key: a config file of its
  // output sets them all to what they are).
  if (const std::string readers = network::TopologyParamReaders(o.topology, key);
      !readers.empty() && (any_value || SystemParamChanged(o, key))) {
    return absl::StrCat("does not apply to --topology ", o.topology, "; it is read by --topology ",
                        readers);
  }
  return "";
}

}  // namespace

std::string NotReadBy(const std::string& key, const RunOptions& o) {
  return WhyNotRead(key, o, /*any_value=*/false);
}

bool RunReads(const std::string& key, const RunOptions& o) {
  return WhyNotRead(key, o, /*any_value=*/true).empty();
}

void KeepReadKeys(const RunOptions& o, std::vector<std::pair<std::string, std::string>>& config) {
  std::erase_if(config, [&](const std::pair<std::string, std::string>& kv) {
    return kv.second.empty() || !RunReads(kv.first, o);
  });
}

std::string NotReadByScheduler(const std::string& key, const std::string& scheduler,
                               const std::string& scheduler_key) {
  std::vector<std::string> readers;
  std::string what;  // What the schedulers that do not read `key` are.
  if (key == "seed") {
    readers = {"greedy", "ensemble"};
    what = " (deterministic)";
  } else if (key == "dfs-budget") {
    readers = {"dfs", "ensemble"};
  } else {
    return "";
  }
  if (std::find(readers.begin(), readers.end(), scheduler) != readers.end()) return "";
  return absl::StrCat("does not apply to --", scheduler_key, " ", scheduler, what,
                      "; it is read by --", scheduler_key, " ", absl::StrJoin(readers, ", "));
}

absl::Status CheckReadByAny(const std::vector<std::pair<std::string, std::string>>& given,
                            const std::vector<const RunOptions*>& runs, const std::string& what) {
  std::vector<std::pair<std::string, std::string>> expanded = given;  // `param` = KEY=VALUE.
  MESHSIM_RETURN_IF_ERROR(ExpandPluginParams(expanded));
  for (const auto& [key, value] : expanded) {
    if (runs.empty()) break;
    std::string why;
    for (const RunOptions* o : runs) {
      why = NotReadBy(key, *o);
      if (why.empty()) break;
    }
    if (why.empty()) continue;
    // NotReadBy of the last run: "does not apply to X; it is read by Y".
    const size_t semicolon = why.find("; ");
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s: '%s' is read by none of %s%s", key, value, what,
                        semicolon == std::string::npos ? absl::StrCat(" (it ", why, ")")
                                                       : absl::StrCat(why.substr(semicolon))));
  }
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> SetPairs(const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& set : sets) {
    const size_t eq = set.find('=');
    pairs.emplace_back(set.substr(0, eq), eq == std::string::npos ? "" : set.substr(eq + 1));
  }
  return pairs;
}

std::string FormatPlacement(const std::vector<int>& placement) {
  std::string out;
  for (size_t i = 0; i < placement.size();) {
    size_t j = i;
    while (j + 1 < placement.size() && placement[j + 1] == placement[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j > i ? absl::StrCat(placement[i], "-", placement[j]) : absl::StrCat(placement[i]);
    i = j + 1;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> RunOptions::Resolved() const {
  const auto mesh = mesh_rows == 0 ? std::string("auto") : absl::StrCat(mesh_rows, "x", mesh_cols);
  std::vector<std::pair<std::string, std::string>> r = {
      {"system", system_name},
      {"stack", system.stack_name},
      {"chips", absl::StrCat(chips)},
      {"mesh", mesh},
      {"placement", FormatPlacement(placement)},
      {"topology", topology},
      {"dims", absl::StrJoin(dims, "x")},
      {"workload", workload},
      {"model", model},
      {"hidden", absl::StrCat(hidden)},
      {"heads", absl::StrCat(heads)},
      {"ffn", absl::StrCat(ffn)},
      {"layers", absl::StrCat(layers)},
      {"batch", absl::StrCat(batch)},
      {"seq", absl::StrCat(seq)},
      {"pass", pass},
      {"gemm", gemm_m == 0 ? "" : absl::StrCat(gemm_m, ",", gemm_n, ",", gemm_k)},
      {"collective", collective},
      {"group", group},
      {"bytes", absl::StrCat(bytes)},
      {"algorithm", algorithm},
      {"dataflow", dataflow},
      {"slices", !layer_slices.empty() ? absl::StrJoin(layer_slices, ",")
                 : slices == 0         ? "auto"
                                       : absl::StrCat(slices)},
  };
  // The plugin's own parameters where --chunks was: each under its key (a config file's `KEY =
  // VALUE`, what --param KEY=VALUE sets).
  for (const core::ParamSpec& spec : params.specs()) {
    if (!algorithms::IsRunLevelParam(spec.key)) r.emplace_back(spec.key, params.Text(spec.key));
  }
  r.insert(r.end(), {
                        {"dropout", core::FormatDouble(dropout)},
                        {"stages", absl::StrCat(stages)},
                        {"dp", absl::StrCat(dp)},
                        {"microbatches", absl::StrCat(microbatches)},
                        {"schedule", schedule},
                        {"overlap", overlap ? "1" : "0"},
                        {"delay-dw", delay_dw ? "1" : "0"},
                        {"recompute", recompute ? "1" : "0"},
                        {"reshard", reshard},
                        {"reshard-scheduler", reshard_scheduler},
                        {"seed", absl::StrCat(seed)},
                        {"steps", absl::StrCat(steps)},
                        {"step-time", core::FormatDouble(step_time.seconds())},
                    });
  SystemConfig sys = system;
  for (const core::Param& p : sys.Params()) r.emplace_back(p.key, core::FormatParam(p));
  return r;
}

}  // namespace meshsim::sim
