// `meshsim reshard`: one cross-mesh resharding task (MLSys'23 §3) on the simulated machine —
// a tensor sharded by --src-spec on the placed --src-mesh, wanted as --dst-spec on --dst-mesh,
// moved by --strategy under --scheduler (algorithms/reshard/). Prints the simulated time, the
// unit-task count, the scheduler's model makespan and the inter-host bytes per host; --out and
// --trace write the run like `meshsim run`. Bad input: one line, exit 2 (cli.cc).
//
// Example:
//   meshsim reshard --system p3.8xlarge --chips 16 --src-mesh 2x4 --src-placement 0-7
//     --src-spec RS0R --dst-mesh 2x4 --dst-placement 8-15 --dst-spec S0RR --shape 1024,1024,512
#ifndef MESHSIM_CLI_RESHARD_H_
#define MESHSIM_CLI_RESHARD_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace boost::program_options {
class options_description;
}  // namespace boost::program_options

namespace meshsim::sim::cli {

// The options `meshsim reshard` takes besides the run options it allows (ReshardRunKeys).
boost::program_options::options_description ReshardDescription();

// The run options `meshsim reshard` accepts (--system, --chips, …); the others are refused.
std::vector<std::string> ReshardRunKeys();

// Runs the subcommand on `args` (without "reshard").
absl::Status Reshard(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace meshsim::sim::cli

#endif  // MESHSIM_CLI_RESHARD_H_
