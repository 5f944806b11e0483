// The generated CLI reference (docs/cli.md) and the shell completions: current, complete, and
// (bash, zsh when installed) syntactically valid and working.
#include "cli/cli_reference.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/memory_limit.h"
#include "sim/options.h"
#include "tests/cli/cli_testing.h"

namespace meshsim::sim::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_cli::Cli;
using testing_cli::Result;
using testing_cli::WriteTemp;

// The source tree: $MESHSIM_SOURCE_DIR (set by ctest), else the path compiled in.
std::string SourceDir() {
  const char* d = std::getenv("MESHSIM_SOURCE_DIR");
  return d ? d : MESHSIM_SOURCE_DIR_DEFAULT;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs `script` with bash; its exit status and stdout.
Result Bash(const std::string& name, const std::string& script) {
  const std::string path = WriteTemp(name, script);
  const std::string out = path + ".out";
  const int status = std::system(absl::StrCat("bash '", path, "' > '", out, "' 2>&1").c_str());
  return {WEXITSTATUS(status), ReadFile(out), ""};
}

TEST(CliReferenceTest, CommittedDocsAreCurrent) {
  const Result r = Cli({"help", "--markdown"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string committed = ReadFile(SourceDir() + "/docs/cli.md");
  // On failure: scripts/gen-docs.sh regenerates docs/cli.md from the binary.
  EXPECT_TRUE(committed == r.out)
      << "docs/cli.md differs from `meshsim help --markdown`; run scripts/gen-docs.sh";
}

TEST(CliReferenceTest, MarkdownIsMachineIndependent) {
  const std::string md = cli::MarkdownReference();
  EXPECT_THAT(md, Not(HasSubstr(AvailableMemory().Describe())));
  EXPECT_THAT(md, Not(HasSubstr(": here ")));  // `run --help` gives this machine's numbers so.
  EXPECT_THAT(md, HasSubstr("half of the memory limit"));
  EXPECT_EQ(md, cli::MarkdownReference());
}

TEST(CliReferenceTest, MarkdownNamesEveryCommandOptionAndParameter) {
  const std::string md = cli::MarkdownReference();
  for (const CommandDoc& c : Commands()) {
    EXPECT_THAT(md, HasSubstr("\n## meshsim " + c.name + "\n")) << c.name;
    for (const OptionDoc& o : c.options) EXPECT_THAT(md, HasSubstr("--" + o.name)) << o.name;
  }
  // RunOptionKeys: every run option and system parameter the parser accepts.
  for (const std::string& key : RunOptionKeys()) {
    const bool listed = md.find("`--" + key) != std::string::npos ||
                        md.find("| `" + key + "` |") != std::string::npos;
    EXPECT_TRUE(listed) << key;
  }
  for (const std::string& w : Workloads()) EXPECT_THAT(md, HasSubstr(w));
  for (const std::string& name : RunOptionChoices("algorithm")) {
    EXPECT_THAT(md, HasSubstr("| `" + name + "` |"));
  }
}

// The table of commands and the dispatcher agree: every documented command runs (its --help),
// and `meshsim --help` lists every one.
TEST(CliReferenceTest, EveryDocumentedCommandExists) {
  const std::string usage = Cli({"--help"}).out;
  for (const CommandDoc& c : Commands()) {
    const Result r = Cli({c.name, "--help"});
    EXPECT_EQ(r.status, 0) << c.name << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << c.name;
    EXPECT_THAT(usage, HasSubstr("\n  " + c.name + " ")) << c.name;
    const Result help = Cli({"help", c.name});
    EXPECT_EQ(help.status, 0) << c.name << ": " << help.err;
  }
}

TEST(CliReferenceTest, HelpRefusesWhatItDoesNotRead) {
  EXPECT_EQ(Cli({"help", "nope"}).status, 2);
  EXPECT_EQ(Cli({"help", "run", "--markdown"}).status, 2);
  EXPECT_EQ(Cli({"help", "--markdown", "--bogus"}).status, 2);
  const Result fish = Cli({"completion", "fish"});
  EXPECT_EQ(fish.status, 2);
  EXPECT_THAT(fish.err, HasSubstr("allowed: bash, zsh"));
  EXPECT_EQ(Cli({"completion"}).status, 2);
}

// Found by scripts/cli_fuzz.py: with --help the positional words are not checked, and they used
// to stay in the parsed map among the options, where `run` read them as a string (exit 1,
// "unexpected exception: boost::bad_any_cast").
TEST(CliReferenceTest, HelpWithStrayWordsIsHelp) {
  for (const std::string cmd : {"run", "compare", "tune", "reshard"}) {
    const Result r = Cli({cmd, "--help", "1e3", "--chips", "4"});
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("usage: meshsim " + cmd)) << cmd;
  }
}

TEST(CliReferenceTest, CompletionsNameEveryCommandAndRunOption) {
  for (const std::string shell : {"bash", "zsh"}) {
    SCOPED_TRACE(shell);
    const Result r = Cli({"completion", shell});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const CommandDoc& c : Commands()) EXPECT_THAT(r.out, HasSubstr(c.name));
    for (const std::string& key : RunOptionKeys()) EXPECT_THAT(r.out, HasSubstr("--" + key));
    for (const std::string& w : Workloads()) EXPECT_THAT(r.out, HasSubstr(w));
    for (const std::string& s : RunOptionChoices("system")) EXPECT_THAT(r.out, HasSubstr(s));
  }
}

TEST(CliReferenceTest, BashCompletionParsesAndCompletes) {
  if (std::system("command -v bash > /dev/null 2>&1") != 0) GTEST_SKIP() << "no bash";
  const std::string script = Cli({"completion", "bash"}).out;
  const std::string path = WriteTemp("meshsim.bash", script);
  EXPECT_EQ(std::system(absl::StrCat("bash -n '", path, "'").c_str()), 0);
  // Completes `meshsim <words>` with the cursor after the last word; prints the candidates.
  const auto complete = [&](const std::string& words) {
    return Bash("complete.sh", absl::StrCat("source '", path, "'\nCOMP_WORDS=(meshsim ", words,
                                            ")\nCOMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
                                            "_meshsim\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"));
  };
  const Result commands = complete("''");
  EXPECT_EQ(commands.status, 0) << commands.out;
  EXPECT_THAT(commands.out, HasSubstr("reshard\n"));
  EXPECT_THAT(commands.out, HasSubstr("completion\n"));
  EXPECT_THAT(complete("run --work").out, HasSubstr("--workload\n"));
  EXPECT_THAT(complete("run --workload ''").out, HasSubstr("pipeline\n"));
  EXPECT_THAT(complete("compare --system dgx").out, HasSubstr("dgx-a100\n"));
  EXPECT_THAT(complete("run --hbm.band").out, HasSubstr("--hbm.bandwidth\n"));
  EXPECT_THAT(complete("list ''").out, HasSubstr("topologies\n"));
  EXPECT_THAT(complete("completion ''").out, HasSubstr("zsh\n"));
  EXPECT_THAT(complete("tune --cost-model ''").out, HasSubstr("tpuv4-measured\n"));
  EXPECT_THAT(complete("compare --al").out, Not(HasSubstr("--algorithm\n")));
}

TEST(CliReferenceTest, ZshCompletionParses) {
  if (std::system("command -v zsh > /dev/null 2>&1") != 0) GTEST_SKIP() << "no zsh installed";
  const std::string path = WriteTemp("_meshsim", Cli({"completion", "zsh"}).out);
  EXPECT_EQ(std::system(absl::StrCat("zsh -n '", path, "'").c_str()), 0);
}

}  // namespace
}  // namespace meshsim::sim::cli
