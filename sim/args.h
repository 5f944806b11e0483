// One command-line parser for every subcommand: Boost.Program_options with the subcommand's
// options and its positional words declared, so that a stray word, a missing value or an
// abbreviated option is an error instead of being ignored or swallowed.
//
// Example (`meshsim trace FILE.h5 --out T.json`):
//   po::options_description d;
//   d.add_options()("help,h", "...")("out", po::value<std::string>(), "...");
//   MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("trace", args, d, {"FILE.h5"}, 1, 1,
//                                                   "usage: meshsim trace FILE.h5 --out T.json"));
//   a.positional[0], a.vm["out"]
#ifndef MESHSIM_SIM_ARGS_H_
#define MESHSIM_SIM_ARGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boost/program_options.hpp"

namespace meshsim::sim {

struct ParsedArgs {
  boost::program_options::variables_map vm;
  std::vector<std::string> positional;
  bool help = false;  // --help / -h was given (positional counts are then not checked).
};

// Parses `args` (without the subcommand) against `options` plus between `min_positional` and
// `max_positional` (-1 = any number) positional words. No abbreviations; an option may not be
// given twice (except multi-token ones); a value that is itself an option (`--trace --format`) is
// a missing value. Every error is InvalidArgument with one line naming the word and `usage`.
absl::StatusOr<ParsedArgs> ParseArgs(const std::string& command,
                                     const std::vector<std::string>& args,
                                     const boost::program_options::options_description& options,
                                     int min_positional, int max_positional,
                                     const std::string& usage);

// The long names of `options` ("chips", "set", ...), e.g. for core::DidYouMean.
std::vector<std::string> OptionNames(const boost::program_options::options_description& options);

// The string value of option `key`, or `fallback` when absent.
std::string ArgOr(const ParsedArgs& a, const std::string& key, const std::string& fallback = "");

// Replaces control characters (a newline in a value) by escapes, so a message stays one line.
std::string OneLineMessage(std::string message);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_ARGS_H_
