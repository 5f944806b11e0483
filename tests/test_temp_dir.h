// Scratch files of tests: every test gets its own directory, removed when the test ends.
//
// TestPath("t.json") is <TempDir>/meshsim_<pid>_<suite>_<test>/t.json (TempDir honours
// $TEST_TMPDIR and $TMPDIR); the directory is created on first use and removed with everything
// in it by a listener that including this header installs in the test binary. Code running
// outside a test (static setup) gets meshsim_<pid>_setup, removed when the program ends.
#ifndef MESHSIM_TESTS_TEST_TEMP_DIR_H_
#define MESHSIM_TESTS_TEST_TEMP_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace meshsim::testing_temp {

// The current test's directory (not created).
inline std::filesystem::path TestDirName() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "meshsim_" + std::to_string(::getpid()) + "_" +
                     (test ? std::string(test->test_suite_name()) + "_" + test->name() : "setup");
  for (char& c : name) {
    if (c == '/') c = '_';  // Parameterized tests: "Suite/Test/3".
  }
  return std::filesystem::path(::testing::TempDir()) / name;
}

// The current test's directory, created.
inline std::filesystem::path TestDir() {
  const std::filesystem::path dir = TestDirName();
  std::filesystem::create_directories(dir);
  return dir;
}

// `name` in the current test's directory.
inline std::string TestPath(const std::string& name) { return (TestDir() / name).string(); }

// Removes each test's directory when it ends, and the setup directory when the program ends.
class TempDirRemover : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::error_code ec;
    std::filesystem::remove_all(TestDirName(), ec);
  }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    std::error_code ec;
    std::filesystem::remove_all(TestDirName(), ec);
  }
};

inline const bool kTempDirRemoverInstalled = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new TempDirRemover);
  return true;
}();

}  // namespace meshsim::testing_temp

#endif  // MESHSIM_TESTS_TEST_TEMP_DIR_H_
