// The CLI.md contract, checked on the real `meshsim` binary in child processes: exit status 0, 1
// or 2 (never a signal or a hang), one stderr line on 2, no partial or temporary file left —
// after SIGINT/SIGTERM, on a full disk, and on generated inputs (the seeded fuzz test).
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/sim/contract_testing.h"

namespace meshsim::sim {
namespace {

namespace fs = std::filesystem;
using contract::FilesIn;
using contract::Outcome;
using contract::Spawn;
using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

const std::string kBinary = MESHSIM_BINARY;

// A fresh directory for one test.
std::string Dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("meshsim_contract_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Runs `args` in `dir`; once `<output>.tmp.<pid>` exists, sends `signal`. The child must exit 1
// with one line and leave no temporary file. Returns false if the child finished before the
// temporary file was seen (the test then retries).
bool InterruptedWhileWriting(const std::string& dir, const std::vector<std::string>& args,
                             const std::string& output, int signal) {
  bool sent = false;
  const Outcome o = Spawn(kBinary, args, dir, milliseconds(60000), 0, [&](pid_t pid) {
    if (!fs::exists(fs::path(dir) / (output + ".tmp." + std::to_string(pid)))) return false;
    ::kill(pid, signal);
    sent = true;
    return true;
  });
  if (!sent) return false;
  EXPECT_TRUE(o.exited) << "signal " << o.status;
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_EQ(Lines(o.err), 1) << o.err;
  EXPECT_THAT(o.err, HasSubstr("interrupted"));
  for (const std::string& f : FilesIn(dir)) {
    EXPECT_EQ(f.find(".tmp."), std::string::npos) << "left " << f;
    EXPECT_NE(f, output) << "a partial output";
  }
  return true;
}

TEST(ContractTest, SigtermOrSigintWhileWritingLeavesNoTemporaryFile) {
  const std::string dir = Dir("signals");
  // An archive with a timeline big enough that writing its full trace takes a while.
  const Outcome made =
      Spawn(kBinary, {"run", "--chips", "64", "--out", "big.h5"}, dir, milliseconds(60000));
  ASSERT_TRUE(made.exited && made.status == 0) << made.err;
  struct Case {
    std::vector<std::string> args;
    std::string output;
    int signal;
  };
  const std::vector<Case> cases = {
      {{"trace", "big.h5", "--out", "t.json", "--detail", "full"}, "t.json", SIGTERM},
      {{"trace", "big.h5", "--out", "t.json", "--detail", "full"}, "t.json", SIGINT},
      {{"merge", "m.h5", "big.h5"}, "m.h5", SIGTERM},
      {{"run", "--chips", "64", "--out", "r.h5", "--trace", "r.json"}, "r.h5", SIGINT},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.output);
    bool seen = false;
    for (int attempt = 0; attempt < 5 && !seen; ++attempt) {
      seen = InterruptedWhileWriting(dir, c.args, c.output, c.signal);
      for (const char* f : {"t.json", "m.h5", "r.h5", "r.json"}) fs::remove(fs::path(dir) / f);
    }
    EXPECT_TRUE(seen) << "never caught the temporary file";
  }
}

TEST(ContractTest, FullDiskIsAnErrorNotACrash) {
  const std::string dir = Dir("disk_full");
  // RLIMIT_FSIZE with SIGXFSZ ignored: writes fail (EFBIG) as on a full disk.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--workload", "chain", "--chips", "16", "--steps", "640",
                                 "--out", "x.h5"},
        std::vector<std::string>{"run", "--workload", "chain", "--chips", "16", "--steps", "640",
                                 "--trace", "x.json"}}) {
    const Outcome o = Spawn(kBinary, args, dir, milliseconds(60000), 8192);
    EXPECT_TRUE(o.exited) << args.back() << ": signal " << o.status << " " << o.err;
    EXPECT_TRUE(o.status == 1 || o.status == 2) << o.err;
    EXPECT_EQ(Lines(o.err), 1) << o.err;
    EXPECT_THAT(FilesIn(dir), ElementsAre()) << args.back();
  }
}

}  // namespace
}  // namespace meshsim::sim
