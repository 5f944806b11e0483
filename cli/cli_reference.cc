#include "cli/cli_reference.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "algorithms/autotune/cost_model.h"
#include "algorithms/registry.h"
#include "boost/program_options.hpp"
#include "cli/reshard.h"
#include "cli/sweep.h"
#include "cli/tune.h"
#include "core/params.h"
#include "network/topology.h"
#include "sim/options.h"
#include "sim/system.h"
#include "workloads/transformer.h"

namespace meshsim::sim::cli {

namespace po = boost::program_options;

namespace {

// Options whose value is a file name, in every subcommand that has them.
bool IsPathOption(const std::string& name) {
  return name == "config" || name == "out" || name == "trace";
}

std::vector<OptionDoc> Docs(const po::options_description& d) {
  std::vector<OptionDoc> docs;
  for (const auto& option : d.options()) {
    OptionDoc doc;
    doc.name = option->long_name();
    const std::string display =
        option->canonical_display_name(po::command_line_style::allow_dash_for_short);
    if (display.size() == 2 && display[0] == '-' && display[1] != '-') {
      doc.short_name = display.substr(1);
    }
    doc.takes_value = option->semantic()->max_tokens() > 0;
    doc.repeatable = option->semantic()->is_composing();
    doc.path = doc.takes_value && IsPathOption(doc.name);
    doc.description = option->description();
    docs.push_back(std::move(doc));
  }
  return docs;
}

// The options of a subcommand: --help plus `(name, description)` pairs that each take a value.
po::options_description Valued(const std::vector<std::pair<const char*, const char*>>& valued) {
  po::options_description d("options");
  d.add_options()("help,h", "print this help");
  for (const auto& [name, help] : valued) d.add_options()(name, po::value<std::string>(), help);
  return d;
}

// Fills in the choices of the options that match a run option with a fixed set of values.
std::vector<OptionDoc> WithChoices(std::vector<OptionDoc> docs) {
  for (OptionDoc& d : docs) {
    if (d.takes_value && d.choices.empty()) d.choices = RunOptionChoices(d.name);
  }
  return docs;
}

std::vector<std::string> SystemNames() { return RunOptionChoices("system"); }

std::vector<std::string> Names(const std::vector<CommandDoc>& commands) {
  std::vector<std::string> names;
  for (const CommandDoc& c : commands) names.push_back(c.name);
  return names;
}

}  // namespace

po::options_description TraceDescription() {
  return Valued({{"run", "the run to export (default: the first)"},
                 {"out",
                  "the trace to write: Chrome JSON for a .json name, Perfetto protobuf for a "
                  ".pftrace / .perfetto-trace name, another name with --trace-format"},
                 {"detail", "auto (default: budgets keep a large trace loadable), full, minimal"},
                 {"trace-format",
                  "json, perfetto (default: by the extension of --out; required for another "
                  "name)"}});
}

po::options_description ReportDescription() {
  return Valued(
      {{"format", "table (default), json, csv"}, {"run", "one run (default: every run)"}});
}

po::options_description CompareDescription() {
  po::options_description own("Options of `meshsim compare`");
  own.add_options()("algorithms", po::value<std::string>(),
                    absl::StrCat("A,B,...: the algorithms (default ", kCompareDefault,
                                 "; with --workload layer: ", kCompareLayerDefault, ")")
                        .c_str());
  return own;
}

po::options_description HelpDescription() {
  po::options_description d("options");
  d.add_options()("help,h", "print this help")(
      "markdown", po::bool_switch(),
      "print the reference of every command and option as Markdown (docs/cli.md)");
  return d;
}

const std::vector<std::string>& ListTopics() {
  static const auto* topics = new std::vector<std::string>{
      "algorithms", "models", "systems", "stacks", "topologies", "collectives", "workloads"};
  return *topics;
}

std::vector<OptionDoc> RunOptionDocs(bool portable) {
  return WithChoices(Docs(
      RunOnlyDescription(portable ? BudgetDefaults::kPortable : BudgetDefaults::kThisMachine)));
}

namespace {

// The options of a command that has --help only.
std::vector<OptionDoc> HelpOnly() { return Docs(Valued({})); }

// Sets the value choices of the option `name` among `options`.
void SetChoices(std::vector<OptionDoc>& options, const std::string& name,
                std::vector<std::string> choices) {
  for (OptionDoc& o : options) {
    if (o.name == name) o.choices = choices;
  }
}

CommandDoc RunCommand() {
  CommandDoc d;
  d.name = "run";
  d.synopsis =
      "run [--config FILE] [OPTIONS] [--out RUN.h5] [--trace RUN.json|RUN.pftrace] "
      "[--format table|json|csv]";
  d.summary = "Simulate one scenario.";
  d.options = RunOptionDocs(/*portable=*/true);
  d.note =
      "An option given (on the command line or in the --config file) that the run does not "
      "read is refused, e.g. --bytes without --workload collective. Every system parameter "
      "below is an option too (`--hbm.bandwidth 600GB/s`). A run on a torus whose chips run in "
      "step (MeshSlice's rings on its rows and columns, a "
      "pipeline's slices) is folded: meshsim proves the symmetry on the op graph and simulates "
      "one chip of each class (metric simulated_chips), with the makespan, fingerprint, "
      "metrics and --out/--trace timeline of the whole run (docs/performance.md); `meshsim "
      "compare --algorithms A` with the same options simulates every chip, to check it.";
  return d;
}

CommandDoc SweepCommand() {
  CommandDoc d;
  d.name = "sweep";
  d.synopsis =
      "sweep EXPERIMENT.ini [--out SWEEP.h5] [--jobs N] [--shard K/N] [--timelines] "
      "[--keep-going] [--format table|json|csv]";
  d.summary =
      "Every combination of the experiment's values, in parallel, into one HDF5 archive "
      "(docs/experiments.md).";
  d.positional = {{"FILE"}};
  d.options = WithChoices(Docs(SweepDescription()));
  d.note = "The experiment's keys are the options of `meshsim run`.";
  return d;
}

CommandDoc MergeCommand() {
  CommandDoc d;
  d.name = "merge";
  d.synopsis = "merge OUT.h5 IN.h5...";
  d.summary = "Join the archives of a sharded sweep.";
  d.positional = {{"FILE"}, {"FILE"}};
  d.repeat_last = true;
  d.options = HelpOnly();
  return d;
}

CommandDoc TuneCommand() {
  CommandDoc d;
  d.name = "tune";
  d.synopsis = absl::StrCat("tune [run options] [--cost-model ", CostModelChoices(),
                            "] [--validate] [--format table|json]");
  d.summary =
      "The MeshSlice autotuner's mesh and per-layer slice count, or with --algorithm atp ATP's "
      "mesh search.";
  d.options = Docs(TuneDescription());
  SetChoices(d.options, "cost-model", algorithms::CostModel::Names());
  d.all_run_options = true;
  d.note = "`meshsim tune --help` says which run options each search reads.";
  return d;
}

CommandDoc CompareCommand() {
  CommandDoc d;
  d.name = "compare";
  d.synopsis = "compare [--algorithms A,B,...] [run options] [--out RUNS.h5] [--trace FIRST.json]";
  d.summary =
      "The same scenario under several algorithms, side by side (with --mesh auto the 2D "
      "baselines share MeshSlice's tuned mesh; Cannon keeps a square one).";
  d.options = Docs(CompareDescription());
  d.all_run_options = true;
  d.note = "Takes every option of `meshsim run` except --algorithm.";
  return d;
}

CommandDoc ReshardCommand() {
  CommandDoc d;
  d.name = "reshard";
  d.synopsis =
      "reshard --src-mesh RxC --src-placement A-B --src-spec SPEC --dst-mesh RxC "
      "--dst-placement A-B --dst-spec SPEC --shape D0,D1,... [--strategy S] [--scheduler S] "
      "[run options]";
  d.summary = "One cross-mesh resharding task (docs/resharding.md).";
  d.options = Docs(ReshardDescription());
  SetChoices(d.options, "strategy", RunOptionChoices("reshard"));
  SetChoices(d.options, "scheduler", RunOptionChoices("reshard-scheduler"));
  d.options.insert(d.options.begin(), HelpOnly().front());
  d.run_options = ReshardRunKeys();
  d.run_options.push_back("set");
  d.run_options.push_back("config");
  d.note = "comm.packets defaults to 100 here (the paper's K ~ 100 broadcast chunks).";
  return d;
}

CommandDoc TraceCommand() {
  CommandDoc d;
  d.name = "trace";
  d.synopsis =
      "trace FILE.h5 [--run NAME] --out TRACE.json|TRACE.pftrace [--detail auto|full|minimal] "
      "[--trace-format json|perfetto]";
  d.summary = "Export a stored run as a Chrome (JSON) or Perfetto (protobuf) trace.";
  d.positional = {{"FILE"}};
  d.options = Docs(TraceDescription());
  SetChoices(d.options, "detail", RunOptionChoices("trace-detail"));
  SetChoices(d.options, "trace-format", RunOptionChoices("trace-format"));
  return d;
}

CommandDoc ReportCommand() {
  CommandDoc d;
  d.name = "report";
  d.synopsis = "report FILE.h5 [--run NAME] [--format table|json|csv]";
  d.summary = "Print the metrics of stored runs.";
  d.positional = {{"FILE"}};
  d.options = WithChoices(Docs(ReportDescription()));
  return d;
}

CommandDoc ListCommand() {
  CommandDoc d;
  d.name = "list";
  d.synopsis = absl::StrCat("list ", absl::StrJoin(ListTopics(), "|"));
  d.summary = "The registered names of one kind, with their descriptions.";
  d.positional = {ListTopics()};
  d.options = HelpOnly();
  return d;
}

CommandDoc ShowCommand() {
  CommandDoc d;
  d.name = "show";
  d.synopsis =
      "show system NAME | show topology NAME [--chips N] [--system S] [--set KEY=VALUE]... "
      "[--mesh RxC] [--dims D] [--dot]";
  d.summary =
      "Every parameter of a system preset with its unit (a valid config file), or a built "
      "topology: nodes, hosts and links by class.";
  std::vector<std::string> names = SystemNames();
  for (const std::string& t : Topologies()) names.push_back(t);
  d.positional = {{"system", "topology"}, names};
  d.options = HelpOnly();
  d.options.push_back(
      OptionDoc{.name = "dot",
                .takes_value = false,
                .description = "show topology: print the topology as a Graphviz graph"});
  d.run_options = {"chips", "system", "set", "mesh", "dims", "config"};
  d.note = "`show topology` takes the run options that shape the machine.";
  return d;
}

CommandDoc HelpCommand() {
  CommandDoc d;
  d.name = "help";
  d.synopsis = "help [COMMAND] [--markdown]";
  d.summary =
      "The list of commands, one command's help (as `COMMAND --help`), or with --markdown this "
      "reference.";
  d.options = Docs(HelpDescription());
  return d;
}

CommandDoc CompletionCommand() {
  CommandDoc d;
  d.name = "completion";
  d.synopsis = "completion bash|zsh";
  d.summary =
      "A shell completion script for commands, options and their values (install: "
      "README.md).";
  d.positional = {{"bash", "zsh"}};
  d.options = HelpOnly();
  return d;
}

}  // namespace

std::vector<CommandDoc> Commands() {
  std::vector<CommandDoc> c = {RunCommand(),   SweepCommand(),   MergeCommand(),
                               TuneCommand(),  CompareCommand(), ReshardCommand(),
                               TraceCommand(), ReportCommand(),  ListCommand(),
                               ShowCommand(),  HelpCommand(),    CompletionCommand()};
  // `help` completes command names.
  for (CommandDoc& d : c) {
    if (d.name == "help") d.positional = {Names(c)};
  }
  return c;
}

// --- Markdown ---

namespace {

// Escapes Markdown in `text` outside `code spans`; in a table cell also the column bar.
std::string Md(const std::string& text, bool table = false) {
  std::string out;
  bool code = false;
  for (char ch : text) {
    if (ch == '`') code = !code;
    if (ch == '|' && table) {
      out += "\\|";
    } else if (!code && (ch == '*' || ch == '_' || ch == '[' || ch == ']')) {
      out += '\\';
      out += ch;
    } else if (!code && ch == '<') {
      out += "&lt;";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string Anchor(const std::string& command) { return absl::StrCat("meshsim-", command); }

std::string OptionLine(const OptionDoc& o) {
  std::string flag = absl::StrCat("--", o.name);
  if (!o.short_name.empty()) flag = absl::StrCat("-", o.short_name, ", ", flag);
  if (o.takes_value) {
    // A short set of values is the placeholder; a long one (registered names) is listed under
    // "Registered names" or in the description.
    absl::StrAppend(&flag, " ",
                    o.path                                        ? "FILE"
                    : !o.choices.empty() && o.choices.size() <= 5 ? absl::StrJoin(o.choices, "|")
                    : !o.choices.empty()                          ? "NAME"
                                                                  : "VALUE");
  }
  return absl::StrCat("- `", flag, "`: ", Md(o.description), "\n");
}

void NameTable(std::ostream& os, const std::string& what,
               const std::vector<std::pair<std::string, std::string>>& rows) {
  os << "| " << what << " | description |\n|---|---|\n";
  for (const auto& [name, description] : rows) {
    os << "| `" << name << "` | " << Md(description, /*table=*/true) << " |\n";
  }
  os << "\n";
}

}  // namespace

std::string MarkdownReference() {
  const std::vector<CommandDoc> commands = Commands();
  std::ostringstream os;
  os << "# meshsim command-line reference\n\n"
        "<!-- Generated by `meshsim help --markdown`; regenerate with scripts/gen-docs.sh. A test "
        "(CliReferenceTest) fails when this file and the binary's output differ. -->\n\n"
        "Every command, option and registered name of `meshsim`, generated from the option "
        "descriptions its parsers use. Usage: `meshsim <command> [options]`; `meshsim <command> "
        "--help` prints one command's options. Exit status: 0 success; 2 bad input (one line on "
        "stderr naming the key, the value and what is allowed); 1 a failure inside the simulator "
        "(including a hang report).\n\n"
        "| command | what it does |\n|---|---|\n";
  for (const CommandDoc& c : commands) {
    os << "| [`" << c.name << "`](#" << Anchor(c.name) << ") | " << Md(c.summary, true) << " |\n";
  }
  os << "\nThe values of --system, --topology, --algorithm, --model, --workload and --collective "
        "are listed under [Registered names](#registered-names).\n";
  for (const CommandDoc& c : commands) {
    os << "\n## meshsim " << c.name << "\n\n```\nmeshsim " << c.synopsis << "\n```\n\n"
       << Md(c.summary) << "\n\n";
    if (!c.note.empty()) os << Md(c.note) << "\n\n";
    os << "Options:\n\n";
    for (const OptionDoc& o : c.options) os << OptionLine(o);
    if (c.all_run_options) {
      os << "- every option of [`meshsim run`](#meshsim-run)\n";
    } else if (!c.run_options.empty()) {
      std::vector<std::string> flags;
      for (const std::string& k : c.run_options) flags.push_back(absl::StrCat("`--", k, "`"));
      os << "- these options of [`meshsim run`](#meshsim-run): " << absl::StrJoin(flags, ", ")
         << "\n";
    }
    if (c.name == "run") {
      SystemConfig sys = *SystemPreset("tpuv4");
      os << "\n### System parameters\n\n"
            "Each overrides the preset's value: `--KEY VALUE`, `--set KEY=VALUE`, or `KEY = "
            "VALUE` in a --config file. The defaults shown are `tpuv4`'s; `meshsim show system "
            "NAME` prints another preset's.\n\n"
            "| key | unit | tpuv4 | description |\n|---|---|---|---|\n";
      for (const core::Param& p : sys.Params()) {
        std::string description = p.description;
        if (!p.choices.empty()) {
          absl::StrAppend(&description, " (", absl::StrJoin(p.choices, ", "), ")");
        }
        const std::string unit = core::UnitSymbol(p.unit);
        os << "| `" << p.key << "` | " << (unit.empty() ? "-" : Md(unit, true)) << " | `"
           << core::FormatParam(p) << "` | " << Md(description, true) << " |\n";
      }
    }
  }

  os << "\n## Registered names\n\n### Systems (`--system`)\n\n";
  {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const SystemInfo& s : Systems()) rows.emplace_back(s.name, s.description);
    NameTable(os, "system", rows);
  }
  os << "### Software stacks (`--stack`)\n\n";
  {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const stack::StackInfo& st : stack::Stacks()) rows.emplace_back(st.name, st.description);
    NameTable(os, "stack", rows);
  }
  os << "### Topologies (`--topology`)\n\n";
  {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const network::TopologyInfo& t : network::TopologyFamilies()) {
      rows.emplace_back(t.name, t.description);
    }
    NameTable(os, "topology", rows);
  }
  os << "### Algorithms (`--algorithm`)\n\n";
  {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const algorithms::AlgorithmInfo& a : algorithms::Algorithms()) {
      std::string text = a.description;
      if (a.one_dimensional) absl::StrAppend(&text, " [1D: ring of every chip]");
      if (!a.mesh.empty()) absl::StrAppend(&text, ". `--mesh`: ", a.mesh);
      std::vector<std::string> params;
      for (const core::ParamSpec& p : a.params) {
        params.push_back(
            absl::StrCat("`", p.key, "` ", core::DescribeSpec(p).substr(p.key.size() + 1)));
      }
      if (!params.empty()) {
        absl::StrAppend(&text, ". Parameters (`--param KEY=VALUE`): ", absl::StrJoin(params, "; "));
      }
      rows.emplace_back(a.name, text);
    }
    NameTable(os, "algorithm", rows);
  }
  os << "### Models (`--model`)\n\n";
  {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const workloads::ModelShape& m : workloads::Models()) {
      rows.emplace_back(m.name, m.description);
    }
    NameTable(os, "model", rows);
  }
  os << "### Workloads (`--workload`)\n\n"
     << absl::StrJoin(Workloads(), ", ")
     << " (`meshsim list workloads` describes them).\n\n"
        "### Collectives (`--collective`)\n\n"
     << absl::StrJoin(Collectives(), ", ") << " (`meshsim list collectives` describes them).\n";
  return os.str();
}

// --- Completion scripts ---

namespace {

// Every option a command takes: its own, then the run options it accepts.
std::vector<OptionDoc> AllOptions(const CommandDoc& c, const std::vector<OptionDoc>& run) {
  std::vector<OptionDoc> all = c.options;
  std::set<std::string> seen;
  for (const OptionDoc& o : all) seen.insert(o.name);
  for (const OptionDoc& o : run) {
    if (seen.count(o.name)) continue;
    const bool wanted =
        c.name == "run" || (c.all_run_options && !(c.name == "compare" && o.name == "algorithm")) ||
        std::find(c.run_options.begin(), c.run_options.end(), o.name) != c.run_options.end();
    if (wanted) all.push_back(o);
  }
  return all;
}

// A word list safe inside single quotes in both shells (names are [a-z0-9.-]).
std::string Words(const std::vector<std::string>& words) { return absl::StrJoin(words, " "); }

std::string BashScript(const std::vector<CommandDoc>& commands, const std::vector<OptionDoc>& run) {
  std::ostringstream os;
  os << "# bash completion for meshsim. Generated by `meshsim completion bash`; install as\n"
        "# <prefix>/share/bash-completion/completions/meshsim or source it from ~/.bashrc.\n"
        "_meshsim() {\n"
        "  local cur prev cmd\n"
        "  COMPREPLY=()\n"
        "  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
        "  prev=\"\"\n"
        "  (( COMP_CWORD > 0 )) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
        "  if (( COMP_CWORD == 1 )); then\n"
        "    COMPREPLY=( $(compgen -W '"
     << Words(Names(commands))
     << " --help --version' -- \"$cur\") )\n"
        "    return 0\n"
        "  fi\n"
        "  cmd=\"${COMP_WORDS[1]}\"\n"
        "  local opts='' files=0\n"
        "  case \"$cmd\" in\n";
  for (const CommandDoc& c : commands) {
    const std::vector<OptionDoc> options = AllOptions(c, run);
    std::vector<std::string> flags;
    for (const OptionDoc& o : options) flags.push_back("--" + o.name);
    os << "    " << c.name << ")\n      opts='" << Words(flags) << "'\n";
    // The value of the option before the cursor.
    os << "      case \"$prev\" in\n";
    for (const OptionDoc& o : options) {
      if (!o.takes_value) continue;
      if (!o.choices.empty()) {
        os << "        --" << o.name << ") COMPREPLY=( $(compgen -W '" << Words(o.choices)
           << "' -- \"$cur\") ); return 0 ;;\n";
      } else if (o.path) {
        os << "        --" << o.name << ") COMPREPLY=( $(compgen -f -- \"$cur\") ); return 0 ;;\n";
      } else {
        os << "        --" << o.name << ") return 0 ;;\n";
      }
    }
    os << "      esac\n";
    // Positional words: the first ones with fixed values, or files.
    if (!c.positional.empty() && c.positional.front() != std::vector<std::string>{"FILE"}) {
      os << "      if [[ \"$cur\" != -* ]]; then\n";
      for (size_t i = 0; i < c.positional.size(); ++i) {
        os << "        if (( COMP_CWORD == " << i + 2 << " )); then COMPREPLY=( $(compgen -W '"
           << Words(c.positional[i]) << "' -- \"$cur\") ); return 0; fi\n";
      }
      os << "      fi\n";
    } else if (!c.positional.empty()) {
      os << "      files=1\n";
    }
    os << "      ;;\n";
  }
  os << "    *) return 0 ;;\n"
        "  esac\n"
        "  if [[ \"$cur\" == -* || $files == 0 ]]; then\n"
        "    COMPREPLY=( $(compgen -W \"$opts\" -- \"$cur\") )\n"
        "  else\n"
        "    COMPREPLY=( $(compgen -f -- \"$cur\") )\n"
        "  fi\n"
        "  return 0\n"
        "}\n"
        "complete -F _meshsim meshsim\n";
  return os.str();
}

// A description inside a zsh _arguments spec `--name[...]` in single quotes: the first clause,
// without the characters the spec would read, quotes escaped for the single-quoted word.
std::string ZshText(const std::string& text) {
  std::string first = text.substr(0, text.find_first_of(";(:"));
  std::string out;
  for (char ch : first) {
    if (ch == '[' || ch == ']' || ch == '\\' || ch == '`') continue;
    if (ch == '\'') {
      out += "'\\''";  // Ends the quote, an escaped quote, reopens it.
    } else {
      out += ch;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string ZshScript(const std::vector<CommandDoc>& commands, const std::vector<OptionDoc>& run) {
  std::ostringstream os;
  os << "#compdef meshsim\n"
        "# zsh completion for meshsim. Generated by `meshsim completion zsh`; install as _meshsim\n"
        "# in a directory of $fpath (e.g. <prefix>/share/zsh/site-functions).\n"
        "_meshsim() {\n"
        "  local -a commands\n"
        "  commands=(\n";
  for (const CommandDoc& c : commands) {
    os << "    '" << c.name << ":" << ZshText(c.summary) << "'\n";
  }
  os << "  )\n"
        "  if (( CURRENT == 2 )); then\n"
        "    _describe -t commands 'meshsim command' commands\n"
        "    return\n"
        "  fi\n"
        "  local cmd=$words[2]\n"
        "  shift words\n"
        "  (( CURRENT-- ))\n"
        "  curcontext=\"${curcontext%:*:*}:meshsim-$cmd:\"\n"
        "  case $cmd in\n";
  for (const CommandDoc& c : commands) {
    os << "    " << c.name << ")\n      _arguments -s \\\n";
    for (const OptionDoc& o : AllOptions(c, run)) {
      os << "        '" << (o.repeatable ? "*" : "") << "--" << o.name << "["
         << ZshText(o.description) << "]";
      if (o.takes_value) {
        if (!o.choices.empty()) {
          os << ":" << o.name << ":(" << Words(o.choices) << ")";
        } else if (o.path) {
          os << ":file:_files";
        } else {
          os << ":" << o.name << ": ";
        }
      }
      os << "' \\\n";
    }
    for (size_t i = 0; i < c.positional.size(); ++i) {
      const bool last = i + 1 == c.positional.size();
      const std::string spec = c.repeat_last && last ? "*" : absl::StrCat(i + 1);
      if (c.positional[i] == std::vector<std::string>{"FILE"}) {
        os << "        '" << spec << ":file:_files' \\\n";
      } else {
        os << "        '" << spec << ":word:(" << Words(c.positional[i]) << ")' \\\n";
      }
    }
    os << "        && return 0\n      ;;\n";
  }
  os << "  esac\n"
        "}\n"
        "_meshsim \"$@\"\n";
  return os.str();
}

}  // namespace

absl::StatusOr<std::string> CompletionScript(const std::string& shell) {
  const std::vector<CommandDoc> commands = Commands();
  // Completion lists names only, never descriptions with machine numbers, but stay portable.
  std::vector<OptionDoc> run = RunOptionDocs(/*portable=*/true);
  // The system parameters complete as options too (their names; values are free text).
  for (const core::Param& p : SystemPreset("tpuv4")->Params()) {
    run.push_back(OptionDoc{.name = p.key, .description = p.description, .choices = p.choices});
  }
  if (shell == "bash") return BashScript(commands, run);
  if (shell == "zsh") return ZshScript(commands, run);
  return absl::InvalidArgumentError(
      absl::StrFormat("completion: '%s' is not allowed; allowed: bash, zsh", shell));
}

}  // namespace meshsim::sim::cli
