// Helpers for tests that drive the `meshsim` command line in-process (sim::Main).
#ifndef MESHSIM_TESTS_SIM_CLI_TESTING_H_
#define MESHSIM_TESTS_SIM_CLI_TESTING_H_

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "gtest/gtest.h"
#include "tests/test_temp_dir.h"

namespace meshsim::sim::testing_cli {

// What one `meshsim ARGS...` invocation returned and printed.
struct Result {
  int status;
  std::string out, err;
};

inline Result Cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = cli::Main(args, out, err);
  return {status, out.str(), err.str()};
}

// A path named `name` in this test binary's scratch directory (created on demand).
inline std::string TempPath(const std::string& name) { return testing_temp::TestPath(name); }

// A fresh directory for one test, removed with everything in it when the object goes.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("meshsim_") + std::to_string(::getpid()) + "_" +
                       (test ? std::string(test->test_suite_name()) + "_" + test->name() : "");
    for (char& c : name) {
      if (c == '/') c = '_';  // Parameterized tests: "Suite/Test/3".
    }
    path_ = std::filesystem::path(::testing::TempDir()) / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  // `name` inside the directory.
  std::string Path(const std::string& name) const { return (path_ / name).string(); }
  // The names of the files in it, sorted.
  std::vector<std::string> Files() const {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    return files;
  }

 private:
  std::filesystem::path path_;
};

// Writes `text` to TempPath(name) and returns the path.
inline std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace meshsim::sim::testing_cli

#endif  // MESHSIM_TESTS_SIM_CLI_TESTING_H_
