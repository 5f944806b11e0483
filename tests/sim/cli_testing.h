// Helpers for tests that drive the `meshsim` command line in-process (sim::Main).
#ifndef MESHSIM_TESTS_SIM_CLI_TESTING_H_
#define MESHSIM_TESTS_SIM_CLI_TESTING_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/cli.h"

namespace meshsim::sim::testing_cli {

// What one `meshsim ARGS...` invocation returned and printed.
struct Result {
  int status;
  std::string out, err;
};

inline Result Cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = Main(args, out, err);
  return {status, out.str(), err.str()};
}

// A path named `name` in this test binary's scratch directory (created on demand).
inline std::string TempPath(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "meshsim_cli_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// Writes `text` to TempPath(name) and returns the path.
inline std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace meshsim::sim::testing_cli

#endif  // MESHSIM_TESTS_SIM_CLI_TESTING_H_
