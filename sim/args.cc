#include "sim/args.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/did_you_mean.h"

namespace meshsim::sim {

namespace po = boost::program_options;

namespace {

constexpr char kPositional[] = "meshsim-positional-words";

// Boost's default style without abbreviations: `--chip` must not silently mean `--chips`.
constexpr int kStyle = po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;

}  // namespace

std::vector<std::string> OptionNames(const po::options_description& options) {
  std::vector<std::string> names;
  for (const auto& option : options.options()) {
    if (!option->long_name().empty()) names.push_back(option->long_name());
  }
  return names;
}

std::string OneLineMessage(std::string message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
      out += absl::StrFormat("\\x%02x", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string ArgOr(const ParsedArgs& a, const std::string& key, const std::string& fallback) {
  if (!a.vm.count(key)) return fallback;
  return a.vm[key].as<std::string>();
}

absl::StatusOr<ParsedArgs> ParseArgs(const std::string& command,
                                     const std::vector<std::string>& args,
                                     const po::options_description& options, int min_positional,
                                     int max_positional, const std::string& usage) {
  po::options_description all;
  all.add(options);
  all.add_options()(kPositional, po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add(kPositional, -1);
  ParsedArgs out;
  try {
    const po::parsed_options parsed =
        po::command_line_parser(args).options(all).positional(positional).style(kStyle).run();
    for (const po::option& o : parsed.options) {
      if (o.position_key >= 0 || o.string_key == kPositional) continue;
      for (const std::string& v : o.value) {
        // `--trace --format json`: --trace took "--format" as its value.
        if (v.size() > 2 && v.rfind("--", 0) == 0) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "--%s: missing value (the next word '%s' is an option); %s", o.string_key, v, usage));
        }
      }
    }
    po::store(parsed, out.vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    const std::string bare = name.substr(std::min(name.find_first_not_of('-'), name.size()));
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: unknown option of `meshsim %s`%s (see `meshsim %s --help`)", name,
                        command, core::DidYouMean(bare, OptionNames(options), "--"), command));
  } catch (const po::invalid_command_line_syntax& e) {
    if (e.kind() == po::invalid_syntax::missing_parameter) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: missing value; %s", e.get_option_name(), usage));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(command, ": ", e.what(), " (see `meshsim ", command, " --help`)"));
  } catch (const po::error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(command, ": ", e.what(), " (see `meshsim ", command, " --help`)"));
  }
  out.help = out.vm.count("help") > 0;
  if (out.vm.count(kPositional)) {
    out.positional = out.vm[kPositional].as<std::vector<std::string>>();
    // Callers iterate `vm` as their own options (all strings, switches or string lists); the
    // positional words are not one of them (`run --help 1e3` threw bad_any_cast).
    out.vm.erase(kPositional);
  }
  if (out.help) return out;
  const int n = static_cast<int>(out.positional.size());
  if (max_positional >= 0 && n > max_positional) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: unexpected argument '%s'; %s", command,
                        out.positional[static_cast<size_t>(max_positional)], usage));
  }
  if (n < min_positional) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: missing argument; %s", command, usage));
  }
  return out;
}

}  // namespace meshsim::sim
