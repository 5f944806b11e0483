// Options of `meshsim run` (and of each run of a sweep): one Boost.Program_options description
// read from the command line and from `--config` files, then resolved and validated into a
// RunOptions. Every problem is an InvalidArgument/NotFound status whose one-line message names
// the key, the value and what is allowed.
//
// Parsing is split in two so that sweeps can reuse the second half: `ParseRunArgs` turns argv
// and config files into raw (key, value) strings; `ResolveRunOptions` validates raw strings.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(RawOptions raw, ParseRunArgs({"--chips", "16", "--mesh", "4x4"}));
//   MESHSIM_ASSIGN_OR_RETURN(RunOptions opt, ResolveRunOptions(raw));
#ifndef MESHSIM_SIM_OPTIONS_H_
#define MESHSIM_SIM_OPTIONS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/params.h"
#include "core/time.h"
#include "formats/chrome_trace.h"
#include "sim/memory_limit.h"
#include "sim/system.h"

namespace boost::program_options {
class options_description;
}  // namespace boost::program_options

namespace meshsim::sim {

// Raw option values in the order given; `set` entries are "KEY=VALUE".
struct RawOptions {
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> sets;
  // The subcommand's own options (ParseRunArgs' `own`), as text; a switch given is "1", a
  // repeatable option one entry per value.
  std::vector<std::pair<std::string, std::string>> own;
  bool help = false;
  // The keys of `values` given as --param KEY=VALUE (ExpandPluginParams), named so in messages.
  std::vector<std::string> given_as_param;
};

// Bounds on what one run may ask for, so that a run that cannot be simulated sensibly is bad
// input (exit 2 naming the limit) rather than an out-of-memory crash.
inline constexpr int64_t kMaxChips = 16384;                // --chips (DESIGN.md asks for 4096).
inline constexpr int64_t kMaxChainOps = int64_t{1} << 24;  // --workload chain: chips x steps.
// Any one matrix of the workload (--gemm's A, B, C; a layer's activations or attention scores):
// 256 TiB, so that byte and flop counts times chips or element-wise factors stay in int64.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 48;

// Memory budgets. Some lowerings grow as P² (tp1d's and fsdp's ReduceScatter accumulates, an
// all-to-all's flows), and so does the timeline kept for --out/--trace (a ring collective of P
// members records rows per member per step), so a run is refused, with exit 2 naming the limit,
// when its op graph (--max-ops, before it is built), the flows one collective step starts
// (--max-flows) or its kept timeline (--max-timeline-bytes, as soon as it passes) would not fit
// in half of the memory this process may use (AvailableMemory(): physical memory, or the
// cgroup's limit when lower). With the timeline kept, the op graph and the timeline get half of
// that half each. Measured costs (peak RSS over count, sim/README.md):
inline constexpr int64_t kBytesPerOp = 200;  // tp1d, fsdp at 256 and 1024 chips.
// A graph lowered whole, folded (sim/fold.h) and simulated on its period box: the whole graph
// and its fold, 119.6–120.7 B per op at the peak (results/scale_pod at 512, 1024 and 8192
// chips, 80 B ops).
inline constexpr int64_t kFoldedBytesPerOp = 125;
inline constexpr int64_t kBytesPerFlow = 1024;  // All-to-all of every chip: 635 B at 1024 chips,
                                                // 766 B at 2048; routes grow with the machine.
// The defaults of --max-ops (`bytes_per_op` each in half of AvailableMemory(), a quarter when
// the run keeps its timeline), --max-flows (kBytesPerFlow each in half) and
// --max-timeline-bytes (a quarter: the timeline's rows and counter samples,
// core::TimelineBudget).
int64_t DefaultMaxOps(bool keep_timeline, int64_t bytes_per_op = kBytesPerOp);
int64_t DefaultMaxFlows();
int64_t DefaultMaxTimelineBytes();
inline constexpr int64_t kMaxOpsLimit = (int64_t{1} << 32) - 1;  // Op ids are 32-bit.

// The workload of a run that names none (--workload); messages leave it unnamed.
inline constexpr char kDefaultWorkload[] = "llm";

struct RunOptions {
  std::string system_name = "tpuv4";
  SystemConfig system;  // The preset with every override applied.
  int chips = 256;
  int mesh_rows = 0, mesh_cols = 0;  // 0 = auto.
  std::vector<int> placement;        // Physical chips of the mesh, row-major; empty = 0..R·C−1.
  std::string topology;              // Resolved: the system's default unless given.
  bool topology_given = false;       // 1D algorithms default to a ring unless a topology is given.
  std::vector<int> dims;             // --dims of a grid topology; empty = derived (machine.cc).
  std::string workload = kDefaultWorkload;
  std::string model = "gpt3";
  int64_t hidden = 0, heads = 0, ffn = 0, layers = 0;  // Custom model when hidden > 0.
  int64_t batch = 0;                                   // Resolved: chips/2 unless given.
  int64_t seq = 2048;
  std::string pass = "train";
  int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;
  std::string collective;
  std::string group = "row";
  int64_t bytes = 0;
  std::string algorithm = "meshslice";
  // auto, os, ls, rs, or one per FC layer of the block in model order (qkv, attn_out, ffn_up,
  // ffn_down: "os,ls,os,ls", as the resolved config writes it) for --workload llm, layer.
  std::string dataflow = "auto";
  int slices = 0;  // 0 = auto.
  // --slices S0,S1,S2,S3: one S per FC layer of the block (as the resolved config writes the
  // autotuner's choice) for --workload llm, layer; empty = `slices` for every layer.
  std::vector<int> layer_slices;
  // The typed parameters of the --algorithm plugin but dataflow and slices (above): --param
  // KEY=VALUE or the option of that name (--chunks), resolved against its declaration
  // (algorithms/registry.h ResolveParams); empty before ResolveRunOptions, which plugins then
  // read as their defaults (PluginParams).
  core::ParamValues params;
  // --workload layer, pipeline: the dropout probability of Megatron-LM's layer; > 0 adds its
  // attention and hidden dropout kernels (workloads/layer.h), whose cost does not depend on it.
  double dropout = 0;
  // --workload pipeline (algorithms/pipeline/): stages × DP replicas × the operator mesh.
  int stages = 2;
  int dp = 1;
  int microbatches = 8;
  std::string schedule = "eager-1f1b";
  bool overlap = true;
  bool delay_dw = false;
  bool recompute = false;
  std::string reshard = "broadcast";
  std::string reshard_scheduler = "ensemble";
  int64_t seed = 1;  // The randomized greedy resharding scheduler (greedy, ensemble).
  int steps = 8;     // `chain` workload: steps per chip.
  core::Time step_time = core::Time::Microseconds(10);  // `chain` workload: step duration.
  std::string out;                                      // HDF5 output path, empty = none.
  std::string trace;                                    // Trace output path, empty = none.
  // How the trace is written: --trace-format (or the extension of --trace), --trace-detail.
  formats::ChromeTraceOptions trace_options;
  std::string format = "table";
  // Whether Simulate keeps the timeline rows and counter samples in its RunRecord (the HDF5 file
  // and the Chrome trace need them). Without, the metrics and GeMM spans are streamed from the
  // rows (bit-identical) and memory stays small at thousands of chips. Not a config key.
  bool keep_timeline = true;
  // Simulate chips that run in step once (sim/fold.h) where the graph and machine are
  // symmetric; results are the whole run's (a kept timeline, its counter samples and resources
  // expanded to every chip). `meshsim run`, `sweep` and the tuners set it (`compare` does not). Not
  // a config key.
  bool fold = false;
  // How Simulate reports a long run on stderr (the CLI picks by whether stderr is a terminal):
  // kTerminal redraws a line in place from 2 s of wall time on (events, simulated time, ops
  // done) and clears it at the end; kLog writes that line once a minute from the first minute
  // on, for batch logs; kNone is silent (sweeps draw their own).
  enum class Progress { kNone, kTerminal, kLog };
  Progress progress = Progress::kNone;
  // --max-ops, --max-flows, --max-timeline-bytes: the most ops the op graph may hold, the most
  // flows one step of --workload collective may start, the most bytes the kept timeline's rows
  // and counter samples may take; 0 = the machine's default (DefaultMaxOps, DefaultMaxFlows,
  // DefaultMaxTimelineBytes). Bounds on resources, not part of the scenario: Resolved() leaves
  // them out.
  int64_t max_ops = 0;
  int64_t max_flows = 0;
  int64_t max_timeline_bytes = 0;
  // Runs simulated at once (a sweep's --jobs): the default budgets are shared among them.
  int concurrent_runs = 1;
  // A sweep with --timelines stores its runs' timelines: --max-timeline-bytes is read (NotReadBy)
  // although the runs have no --out or --trace of their own. Not a config key.
  bool sweep_timelines = false;
  // When set and true, Simulate stops at its next check (every 65536 events) and returns
  // Cancelled: a sweep's interrupt ends its runs in flight. Not owned; not a config key.
  const std::atomic<bool>* cancel = nullptr;
  // When set, Simulate hands it each of the run's warnings (RunRecord::warnings) as soon as the
  // run is planned, before it is simulated (`meshsim run` writes them on stderr). Not a config
  // key.
  std::function<void(const std::string&)> warn;

  // Set before lowering (sim/run.cc): the machine folds a graph that is symmetric (sim/fold.h).
  // The default op budget then counts kFoldedBytesPerOp per op, and a graph that does not fold
  // is held to kBytesPerOp's before it is simulated. Not a config key.
  bool may_fold = false;

  // The most ops the graph may hold: --max-ops, else the default at `bytes_per_op`.
  int64_t op_budget(int64_t bytes_per_op) const {
    return max_ops > 0
               ? max_ops
               : std::max<int64_t>(1, DefaultMaxOps(keep_timeline, bytes_per_op) / concurrent_runs);
  }
  int64_t op_budget() const { return op_budget(may_fold ? kFoldedBytesPerOp : kBytesPerOp); }
  int64_t flow_budget() const {
    return max_flows > 0 ? max_flows : std::max<int64_t>(1, DefaultMaxFlows() / concurrent_runs);
  }
  int64_t timeline_budget() const {
    return max_timeline_bytes > 0
               ? max_timeline_bytes
               : std::max<int64_t>(1, DefaultMaxTimelineBytes() / concurrent_runs);
  }

  // Chips the logical mesh spans: the placement's, else every chip.
  int mesh_chips() const { return placement.empty() ? chips : static_cast<int>(placement.size()); }

  // Every option and system parameter as resolved text, in a stable order; unresolved values
  // ("auto", "" for no value) as they are. Simulate's record holds the run's resolved config
  // (sim/run.h), which replaces those and leaves out what the run does not read.
  std::vector<std::pair<std::string, std::string>> Resolved() const;
};

// "8-15,20": a placement in ids and ranges, as --placement reads it back ("" when empty).
std::string FormatPlacement(const std::vector<int>& placement);

// InvalidArgument "--KEY: 'VALUE' is not allowed; ALLOWED", the one-line form of a refused
// option value (ResolveRunOptions and the workloads' rules, sim/workload.h).
absl::Status InvalidOption(const std::string& key, const std::string& value,
                           const std::string& allowed);

// The help text of `meshsim run`.
std::string RunHelp();

// How option descriptions state the memory budgets' defaults (--max-ops, --max-flows,
// --max-timeline-bytes): with this machine's numbers (`meshsim run --help`), or only as fractions
// of the memory limit, so that the generated reference (`meshsim help --markdown`, docs/cli.md)
// reads the same on every machine.
enum class BudgetDefaults { kThisMachine, kPortable };

// The options of `meshsim run` without the system parameters, as parsed from the command line
// and --config files.
boost::program_options::options_description RunOnlyDescription(
    BudgetDefaults budgets = BudgetDefaults::kThisMachine);

// RunOnlyDescription plus every system parameter as an option (`--link.bandwidth 45GB/s`).
boost::program_options::options_description RunDescription(
    BudgetDefaults budgets = BudgetDefaults::kThisMachine);

// The values run option `key` allows when they are a fixed set (the lists ResolveRunOptions
// checks against): {"fwd", "bwd", "train"} for "pass", the registered algorithms for "algorithm".
// Empty for an option whose value is free (a number, a size, a path). --topology also takes
// graphviz:FILE besides the families returned.
std::vector<std::string> RunOptionChoices(const std::string& key);

// A plugin parameter given as `--param KEY=VALUE` (repeatable; a config file's `param =
// KEY=VALUE` lines, an experiment file's) is the option KEY = VALUE: `--param chunks=4` is
// `--chunks 4`, `--param tiles=2` (a parameter without an option of its own) is `tiles = 2`, also
// how a config file and a run's resolved config write it. Replaces the (param, KEY=VALUE) entries
// of `values` by (KEY, VALUE): InvalidArgument naming the key when KEY is a parameter of no
// plugin (`meshsim list algorithms`), when the entry is not KEY=VALUE, or when KEY is also given
// as an option. ParseRunArgs and ResolveRunOptions call it; calling it again changes nothing.
// `given_as_param` (optional) collects the KEYs so expanded.
absl::Status ExpandPluginParams(std::vector<std::pair<std::string, std::string>>& values,
                                std::vector<std::string>* given_as_param = nullptr);

// The parameters that some plugin declares (AlgorithmInfo::params, WorkloadInfo::params),
// sorted: the keys --param takes.
std::vector<std::string> PluginParamKeys();

// Reads argv (without the subcommand) and any `--config FILE`; command-line values win over
// the file's. Unknown options or config keys, repeated options and unreadable files are errors.
// `command` names the subcommand in messages; `own` (optional) adds the options of a subcommand
// that takes run options besides its own (compare, tune), parsed by the same parser into
// RawOptions::own.
absl::StatusOr<RawOptions> ParseRunArgs(
    const std::vector<std::string>& args, const std::string& command = "run",
    const boost::program_options::options_description* own = nullptr);

// What ResolveRunOptions does with an option given (command line, --config file, experiment
// file) that the resolved run does not read (NotReadBy): refuse it, or leave it to a caller that
// resolves several runs from the same options (sweep, compare) and refuses an option only when
// none of them reads it (CheckReadByAny).
enum class Unread { kRefuse, kAllow };

// Validates and resolves raw values (defaults, auto values, system overrides, output paths).
// With Unread::kRefuse, an option given that the run does not read is an error, e.g.
// "--bytes: '1MiB' does not apply to --workload gemm; it is read by --workload collective";
// defaults filled in are not given.
absl::StatusOr<RunOptions> ResolveRunOptions(const RawOptions& raw,
                                             Unread unread = Unread::kRefuse);

// Empty when the run `o` reads option `key`; else why not and what reads it: "does not apply to
// --workload gemm; it is read by --workload collective". An option that some workloads declare
// (workload_registry.h: `list workloads` prints them) is read only by those; then:
//   model                                   not with a custom --hidden (--model with its own
//                                           --hidden, --heads, --ffn, --layers is the model)
//   what the run's workload narrows         Workload::NotRead (sim/workloads/): pipeline's
//                                           overlap not with stack.p2p.mode paired, its seed
//                                           with --reshard-scheduler greedy, ensemble; gemm on
//                                           one chip reads no algorithm or plugin parameter
//   algorithm and plugin parameters         a parameter (dataflow, slices, chunks, ...) by the
//   (dataflow, slices, chunks, --param)     plugins that declare it
//   max-timeline-bytes                      with --out or --trace (a sweep's --timelines)
//   trace-format, trace-detail              with --trace
//   system parameters of some topologies    the topologies that list them
//   (fattree.*, node.*, nvlink.*, pcie.*,   (network::TopologyParamReaders), when set to another
//   socket.*, nic.*, inter.*,               value than the preset's
//   link.bandwidth_axis0/1/2)
// Every other option and system parameter is read by every run. ResolveRunOptions applies the
// same rule to `--set KEY=VALUE` (and a config file's `set =` lines).
std::string NotReadBy(const std::string& key, const RunOptions& o);

// Whether the run `o` reads option or system parameter `key` at all: NotReadBy's table, except
// that a system parameter of other topologies (fattree.k on torus2d) counts as unread whatever its
// value (NotReadBy lets the preset's value through, so that `show system` output is a valid
// config file). What a resolved config holds (sim/run.h).
bool RunReads(const std::string& key, const RunOptions& o);

// Leaves out of `config` the keys the run `o` does not read (RunReads) and those with no value:
// what a run's resolved config holds (a finished run's, and a failed sweep run's).
void KeepReadKeys(const RunOptions& o, std::vector<std::pair<std::string, std::string>>& config);

// Empty when resharding scheduler `scheduler` (naive, load-balance, dfs, greedy, ensemble) reads
// option `key`; else why not and which schedulers do, naming the scheduler option `scheduler_key`
// ("reshard-scheduler" for `run --workload pipeline`, "scheduler" for `reshard`): "does not
// apply to --scheduler dfs (deterministic); it is read by --scheduler greedy, ensemble". The
// schedulers' options (algorithms/reshard/scheduler.h):
//   seed         greedy, ensemble (the randomized greedy search)
//   dfs-budget   dfs, ensemble (the depth-first search)
// Every other key is read by every scheduler. One rule for `run` (NotReadBy) and `reshard`.
std::string NotReadByScheduler(const std::string& key, const std::string& scheduler,
                               const std::string& scheduler_key);

// InvalidArgument for the first of `given` (key, value) that none of `runs` reads: "--slices:
// '4' is read by none of the runs (--algorithm collective, cannon); it is read by --algorithm
// meshslice, wang, summa, tp1d, fsdp". `what` names the runs in the message. O(given x runs).
absl::Status CheckReadByAny(const std::vector<std::pair<std::string, std::string>>& given,
                            const std::vector<const RunOptions*>& runs, const std::string& what);

// `KEY=VALUE` system overrides (RawOptions::sets, `set =` lines) as (KEY, VALUE) pairs, for
// CheckReadByAny.
std::vector<std::pair<std::string, std::string>> SetPairs(const std::vector<std::string>& sets);

// InvalidArgument unless `path` can be created: its directory exists and is writable, it is not
// itself a directory, and the temporary file the writers create first (`<path>.tmp.<pid>`) can
// be created there (created and removed: a name too long for the file system fails here, not
// after the simulation). `key` names the option in the message. Every subcommand checks its
// output paths with it (or CheckArchivePath) before it simulates or reads anything.
absl::Status CheckOutputPath(const std::string& key, const std::string& path);

// The extensions of an HDF5 archive (--out, merge's OUT.h5), compared without case.
inline constexpr const char* kArchiveExtensions[] = {".h5", ".hdf5", ".he5"};

// CheckOutputPath, and InvalidArgument unless `path` ends in one of kArchiveExtensions: "--out:
// 'run.json' is not an HDF5 archive name; allowed: a name ending in .h5, .hdf5 or .he5 (--out
// writes HDF5)". Every option that writes an archive is to check it: --out of run, compare and
// reshard (ResolveRunOptions), merge's OUT.h5, a sweep's --out.
absl::Status CheckArchivePath(const std::string& key, const std::string& path);

// Every key `run` accepts (options and system parameters), e.g. "chips", "link.bandwidth".
std::vector<std::string> RunOptionKeys();

// The allowed values of the enumerated options, for `--help` and `list`. Workloads: the names
// of workload_registry.h's entries.
const std::vector<std::string>& Workloads();
const std::vector<std::string>& Topologies();
const std::vector<std::string>& Collectives();

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_OPTIONS_H_
