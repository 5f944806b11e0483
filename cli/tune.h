// `meshsim tune`: the MeshSlice LLM autotuner (algorithms/autotune/autotuner.h) on the command
// line, and its validation against the simulator (MeshSlice §5.2, Figures 13 and 14).
//
//   meshsim tune [run options]
//                [--cost-model simulation-fitted|simulation-fitted-max|authors-simulation|
//                              tpuv4-measured]
//                [--validate] [--format table|json]
//
// Run options (`meshsim run --help`) describe the workload: --model or --hidden …, --chips,
// --batch, --seq, --pass, --dataflow (auto = phase 1), --system and --set for the simulated
// machine of --validate, and --mesh RxC to tune S on that one mesh (default auto: the tuner's
// candidate shapes). Not allowed: --workload other than llm, --algorithm other than meshslice,
// --slices, --out, --trace.
//
// Output. table: the chosen mesh, the estimate, each layer's dataflow, S and estimate, and every
// candidate mesh's total. json: exactly the CLI.md object
//   {"mesh": "32x8", "estimate_s": 0.0993,
//    "layers": [{"name": "qkv", "dataflow": "os", "slices": 8}, …]}
// where estimate_s is the cost model's time of one block's FC layers (forward + backward for the
// default --pass train).
//
// --validate also simulates (sim::Simulate, --workload llm, --algorithm meshslice):
//   mesh points   every valid candidate mesh with the tuner's per-layer S for that mesh;
//   slice points  on the chosen mesh, every candidate S of every layer, the other layers at their
//                 tuned S;
// and prints estimate and simulation side by side (seconds and FLOP utilization = 2·M·N·K
// summed / (chips · chip peak · time), both with the simulated system's peak), marks the tuner's
// choice and the simulated optimum of each group, and says whether they agree. JSON adds
//   "validation": [{"kind": "mesh"|"slices", "mesh": "32x8", "layer": "qkv" (slice points),
//                   "slices": [8, 4, 8, 4], "estimate_s": …, "simulated_s": …,
//                   "estimated_utilization": …, "simulated_utilization": …,
//                   "tuned": true|false, "simulated_best": true|false}, …]
// Estimates come from the cost model and simulations from the simulator; neither is adjusted.
//
// Example:
//   std::ostringstream out, err;
//   absl::Status s = Tune({"--chips", "256", "--format", "json"}, out, err);
#ifndef MESHSIM_CLI_TUNE_H_
#define MESHSIM_CLI_TUNE_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "algorithms/autotune/autotuner.h"
#include "formats/run_record.h"
#include "sim/options.h"

namespace meshsim::sim::cli {

// The --cost-model values joined by `separator` (algorithms::CostModel::Names(), the one list).
std::string CostModelChoices(const std::string& separator = "|");

// `meshsim tune` (banner); `args` exclude the subcommand. Bad input → InvalidArgument/NotFound
// one-liners (exit 2).
// The options `meshsim tune` takes besides the run options (--cost-model, --validate, …).
boost::program_options::options_description TuneDescription();

absl::Status Tune(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace meshsim::sim::cli

#endif  // MESHSIM_CLI_TUNE_H_
