// The `meshsim` command line: subcommand dispatch, output files and exit status (CLI.md).
//
// `Main` is the whole program minus process start-up, so tests drive it in-process with their
// own streams. Exit status: 0 success; 2 bad input (one line on `err`: the key, the value, what
// is allowed); 1 a failure inside the simulator (including a hang report).
//
// Example:
//   std::ostringstream out, err;
//   int status = Main({"run", "--workload", "chain", "--chips", "4"}, out, err);
#ifndef MESHSIM_CLI_CLI_H_
#define MESHSIM_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace meshsim::sim::cli {

// `args` excludes the program name.
int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace meshsim::sim::cli

#endif  // MESHSIM_CLI_CLI_H_
