// The command line described as data: every subcommand with its synopsis, its own options (read
// from the same Boost.Program_options descriptions its parser uses), the run options it takes and
// the values of its positional words. From that one description come the Markdown reference
// (`meshsim help --markdown`, committed as docs/cli.md) and the shell completion scripts
// (`meshsim completion bash|zsh`), so neither can drift from what the parsers accept.
//
// Example:
//   for (const CommandDoc& c : Commands()) std::cout << c.name << ": " << c.summary << "\n";
//   std::cout << MarkdownReference();
//   absl::StatusOr<std::string> script = CompletionScript("bash");
#ifndef MESHSIM_CLI_CLI_REFERENCE_H_
#define MESHSIM_CLI_CLI_REFERENCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace boost::program_options {
class options_description;
}  // namespace boost::program_options

namespace meshsim::sim::cli {

// One option as the reference and the completions show it.
struct OptionDoc {
  std::string name;        // Long name without dashes: "chips".
  std::string short_name;  // One letter ("h") or empty.
  bool takes_value = true;
  bool repeatable = false;           // May be given more than once (--set).
  bool path = false;                 // The value is a file name.
  std::string description;           // Boost.PO's description text.
  std::vector<std::string> choices;  // The allowed values when they are a fixed set.
};

// One subcommand.
struct CommandDoc {
  std::string name;      // "run"
  std::string synopsis;  // Without "meshsim ": "trace FILE.h5 [--run NAME] --out TRACE.json".
  std::string summary;   // One sentence.
  // The allowed values of each positional word in order; an empty list is free text, "FILE" a
  // file name. `repeat_last`: the last one may be given any number of times.
  std::vector<std::vector<std::string>> positional;
  bool repeat_last = false;
  std::vector<OptionDoc> options;  // Its own options, --help included.
  // The options of `meshsim run` it also takes: every one (`all_run_options`), or those listed.
  bool all_run_options = false;
  std::vector<std::string> run_options;
  std::string note;  // A paragraph for the reference, or empty.
};

// Every subcommand in the order `meshsim --help` lists them. Cost: builds the descriptions
// (milliseconds).
std::vector<CommandDoc> Commands();

// The options of `meshsim run` (RunOnlyDescription), with choices and path flags filled in.
// `portable`: memory-budget defaults stated without this machine's numbers.
std::vector<OptionDoc> RunOptionDocs(bool portable);

// The options of small subcommands, shared by their parsers (cli.cc) and Commands().
boost::program_options::options_description TraceDescription();
boost::program_options::options_description ReportDescription();
// The algorithms `meshsim compare` runs when --algorithms is not given: the GeMM plugins, or
// with --workload layer the layer plugins.
inline constexpr const char* kCompareDefault = "meshslice,wang,collective,summa,cannon,tp1d,fsdp";
inline constexpr const char* kCompareLayerDefault = "atp,megatron,tp2d";
boost::program_options::options_description CompareDescription();
boost::program_options::options_description HelpDescription();  // `help`: --markdown.
// The words `meshsim list` takes: algorithms, models, systems, …
const std::vector<std::string>& ListTopics();

// The Markdown reference of every subcommand, option, system parameter and registered name.
// Deterministic: nothing in it depends on the machine that prints it.
std::string MarkdownReference();

// A completion script for `shell` ("bash" or "zsh"); InvalidArgument naming the allowed shells
// otherwise.
absl::StatusOr<std::string> CompletionScript(const std::string& shell);

}  // namespace meshsim::sim::cli

#endif  // MESHSIM_CLI_CLI_REFERENCE_H_
