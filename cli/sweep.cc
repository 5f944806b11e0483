#include "cli/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "boost/program_options.hpp"
#include "cli/report.h"
#include "core/status_macros.h"
#include "formats/hdf5_reader.h"
#include "formats/hdf5_writer.h"
#include "formats/temp_files.h"
#include "sim/args.h"
#include "sim/run.h"
#include "sim/version.h"

namespace meshsim::sim::cli {

namespace {

// Keys an experiment may not set: the sweep decides where output goes.
const std::set<std::string>& ReservedKeys() {
  static const auto* keys = new std::set<std::string>{
      "out", "trace", "trace-format", "trace-detail", "format", "config", "help"};
  return *keys;
}

// Splits a value list on white space; "…" keeps spaces. Error text for an unclosed quote.
absl::StatusOr<std::vector<std::string>> SplitValues(const std::string& text) {
  std::vector<std::string> values;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && absl::ascii_isspace(static_cast<unsigned char>(c))) {
      if (any) values.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (quoted) return absl::InvalidArgumentError("unclosed quote");
  if (any) values.push_back(cur);
  return values;
}

absl::Status LineError(const std::string& path, int line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", path, line, what));
}

// "k1=v1 k2=v2" → pairs.
absl::StatusOr<KeyValues> ParsePairs(const std::vector<std::string>& words) {
  KeyValues pairs;
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", w, "' is not KEY=VALUE"));
    }
    pairs.emplace_back(w.substr(0, eq), w.substr(eq + 1));
  }
  return pairs;
}

std::atomic<bool> g_interrupted{false};
extern "C" void OnInterrupt(int) { g_interrupted = true; }

// Installs handlers of kInterruptSignals for the lifetime of the object.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = false;
    struct sigaction sa {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(formats::kInterruptSignals); ++i) {
      sigaction(formats::kInterruptSignals[i], &sa, &old_[i]);
    }
  }
  ~InterruptGuard() {
    for (size_t i = 0; i < std::size(formats::kInterruptSignals); ++i) {
      sigaction(formats::kInterruptSignals[i], &old_[i], nullptr);
    }
  }

 private:
  struct sigaction old_[std::size(formats::kInterruptSignals)]{};
};

std::string Clock(double s) {
  const int t = static_cast<int>(s + 0.5);
  return t >= 3600 ? absl::StrFormat("%dh%02dm", t / 3600, t / 60 % 60)
                   : absl::StrFormat("%dm%02ds", t / 60, t % 60);
}

// "[#########.....................]": `done` of `total` in 30 columns.
std::string Bar(int done, int total) {
  const int width = 30, filled = total > 0 ? width * done / total : 0;
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '.'), "]");
}

// How often the progress lines of a terminal are redrawn while nothing else happens.
constexpr std::chrono::milliseconds kPoll(200);

// Runs f(i) for i in [0, n) on `jobs` threads; returns the first error by index. With `tick`,
// the calling thread does no work: it calls tick(done) at once and then every kPoll until the
// workers stop (done = calls of f returned so far).
template <typename F>
absl::Status ParallelFor(int n, int jobs, F f, const std::function<void(int)>& tick = nullptr) {
  std::vector<absl::Status> status(n);
  std::atomic<int> next{0}, done{0};
  std::mutex mu;
  std::condition_variable stopped;
  int running = tick ? std::min(jobs, n) : 0;
  auto work = [&] {
    for (int i = next++; i < n && !g_interrupted; i = next++) {
      status[i] = f(i);
      ++done;
    }
  };
  std::vector<std::thread> threads;
  if (tick) {
    for (int t = 0; t < std::min(jobs, n); ++t) {
      threads.emplace_back([&] {
        work();
        std::lock_guard<std::mutex> lock(mu);
        --running;
        stopped.notify_one();
      });
    }
    tick(0);
    std::unique_lock<std::mutex> lock(mu);
    while (!stopped.wait_for(lock, kPoll, [&] { return running == 0; })) tick(done);
  } else {
    for (int t = 1; t < std::min(jobs, n); ++t) threads.emplace_back(work);
    work();
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : status) MESHSIM_RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

}  // namespace

std::string SweepProgressLine(int finished, int total, double elapsed_s) {
  std::string line = absl::StrFormat("  %d/%d runs %s %s elapsed", finished, total,
                                     Bar(finished, total), Clock(elapsed_s));
  if (finished > 0) {
    absl::StrAppend(&line, ", ~", Clock(elapsed_s / finished * (total - finished)), " left");
  }
  return line + " ";
}

std::string SweepCheckLine(int checked, int total, double elapsed_s) {
  return absl::StrFormat("  checking %d runs: %d/%d %s %s elapsed ", total, checked, total,
                         Bar(checked, total), Clock(elapsed_s));
}

absl::StatusOr<Experiment> ParseExperiment(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("sweep: cannot read '%s': it is a directory", path));
  }
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrFormat("sweep: cannot read '%s': %s", path, std::strerror(errno)));
  }
  const std::vector<std::string> known = RunOptionKeys();
  Experiment e;
  e.path = path;
  std::string section;
  std::map<std::string, int> key_line;
  std::vector<std::pair<int, std::vector<std::string>>> zip_lines;
  std::vector<std::pair<int, KeyValues>> filter_lines;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    // Comments: '#' or ';' at the start of the line or after white space.
    for (size_t i = 0; i < text.size(); ++i) {
      if ((text[i] == '#' || text[i] == ';') &&
          (i == 0 || absl::ascii_isspace(static_cast<unsigned char>(text[i - 1])))) {
        text.resize(i);
        break;
      }
    }
    const std::string trimmed(absl::StripAsciiWhitespace(text));
    if (trimmed.empty()) continue;
    if (trimmed.front() == '[') {
      if (trimmed.back() != ']') return LineError(path, line, "malformed section header");
      section = trimmed.substr(1, trimmed.size() - 2);
      if (section != "zip" && section != "filter") {
        return LineError(path, line,
                         absl::StrCat("unknown section [", section, "]; allowed: [zip], [filter]"));
      }
      continue;
    }
    const size_t eq = trimmed.find('=');
    if (eq == std::string::npos) return LineError(path, line, "expected KEY = VALUES");
    const std::string key(absl::StripAsciiWhitespace(trimmed.substr(0, eq)));
    absl::StatusOr<std::vector<std::string>> values = SplitValues(trimmed.substr(eq + 1));
    if (!values.ok()) return LineError(path, line, std::string(values.status().message()));
    if (values->empty()) return LineError(path, line, absl::StrCat("no value for '", key, "'"));
    if (section == "zip") {
      if (key != "keys") return LineError(path, line, "[zip] takes 'keys = KEY KEY ...'");
      zip_lines.emplace_back(line, *values);
      continue;
    }
    if (section == "filter") {
      if (key != "skip" && key != "only") {
        return LineError(path, line, "[filter] takes 'skip = K=V ...' or 'only = K=V ...'");
      }
      absl::StatusOr<KeyValues> pairs = ParsePairs(*values);
      if (!pairs.ok()) return LineError(path, line, std::string(pairs.status().message()));
      filter_lines.emplace_back(line, *pairs);
      (key == "skip" ? e.skips : e.onlys).push_back(*pairs);
      continue;
    }
    if (key == "set") {
      for (const std::string& v : *values) e.sets.push_back(v);
      continue;
    }
    if (ReservedKeys().count(key)) {
      return LineError(path, line,
                       absl::StrCat("'", key, "' is set by `meshsim sweep`, not the experiment"));
    }
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return LineError(path, line,
                       absl::StrCat("unknown key '", key, "' (see `meshsim run --help`)"));
    }
    if (key_line.count(key)) {
      return LineError(path, line,
                       absl::StrFormat("'%s' is set twice (first on line %d); list its values on "
                                       "one line",
                                       key, key_line[key]));
    }
    key_line[key] = line;
    e.keys.emplace_back(key, *values);
  }
  const auto values_of = [&](const std::string& key) -> const std::vector<std::string>* {
    for (const auto& [k, v] : e.keys)
      if (k == key) return &v;
    return nullptr;
  };
  std::set<std::string> zipped;
  for (const auto& [line, keys] : zip_lines) {
    if (keys.size() < 2) return LineError(path, line, "a zip needs at least two keys");
    for (const std::string& k : keys) {
      const std::vector<std::string>* v = values_of(k);
      if (v == nullptr) return LineError(path, line, absl::StrCat("zip key '", k, "' is not set"));
      if (v->size() != values_of(keys[0])->size()) {
        return LineError(path, line,
                         absl::StrFormat("zipped keys need equal value counts: '%s' has %d, "
                                         "'%s' has %d",
                                         keys[0], values_of(keys[0])->size(), k, v->size()));
      }
      if (!zipped.insert(k).second) {
        return LineError(path, line, absl::StrCat("'", k, "' is in two zips"));
      }
    }
    e.zips.push_back(keys);
  }
  for (const auto& [line, pairs] : filter_lines) {
    for (const auto& [k, v] : pairs) {
      const std::vector<std::string>* values = values_of(k);
      if (values == nullptr) {
        return LineError(path, line, absl::StrCat("filter key '", k, "' is not set"));
      }
      if (std::find(values->begin(), values->end(), v) == values->end()) {
        return LineError(path, line,
                         absl::StrFormat("filter value '%s=%s' is not one of %s's values (%s)", k,
                                         v, k, absl::StrJoin(*values, " ")));
      }
    }
  }
  return e;
}

std::vector<std::string> SweptKeys(const Experiment& e) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : e.keys)
    if (v.size() > 1) keys.push_back(k);
  return keys;
}

absl::StatusOr<std::vector<SweepRun>> ExpandExperiment(const Experiment& e) {
  // Axes in file order; a zip is one axis at the position of its first key.
  struct Axis {
    std::vector<int> keys;  // Indices into e.keys.
    size_t count;           // Values per key.
  };
  std::vector<Axis> axes;
  std::map<std::string, int> index;
  for (size_t i = 0; i < e.keys.size(); ++i) index[e.keys[i].first] = static_cast<int>(i);
  std::set<int> placed;
  for (size_t i = 0; i < e.keys.size(); ++i) {
    if (placed.count(static_cast<int>(i))) continue;
    Axis axis{{static_cast<int>(i)}, e.keys[i].second.size()};
    for (const std::vector<std::string>& zip : e.zips) {
      if (std::find(zip.begin(), zip.end(), e.keys[i].first) == zip.end()) continue;
      axis.keys.clear();
      for (const std::string& k : zip) axis.keys.push_back(index[k]);
    }
    for (int k : axis.keys) placed.insert(k);
    axes.push_back(axis);
  }
  const std::set<std::string> swept = [&] {
    std::vector<std::string> v = SweptKeys(e);
    return std::set<std::string>(v.begin(), v.end());
  }();
  const auto matches = [](const KeyValues& run, const KeyValues& pattern) {
    for (const auto& [k, v] : pattern) {
      bool hit = false;
      for (const auto& [rk, rv] : run) hit = hit || (rk == k && rv == v);
      if (!hit) return false;
    }
    return true;
  };
  // Bound the product before expanding it: every run is resolved and validated up front.
  uint64_t product = 1;
  for (const Axis& axis : axes) {
    if (product > kMaxSweepRuns / std::max<size_t>(axis.count, 1)) {
      product = kMaxSweepRuns + 1;
      break;
    }
    product *= axis.count;
  }
  if (product > kMaxSweepRuns) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sweep: '%s' gives more than %d runs (the product of its value lists); split it into "
        "several experiments or use [zip]",
        e.path, kMaxSweepRuns));
  }
  std::vector<SweepRun> runs;
  std::vector<size_t> pos(axes.size(), 0);
  while (true) {
    KeyValues values;
    for (size_t a = 0; a < axes.size(); ++a) {
      for (int k : axes[a].keys) values.emplace_back(e.keys[k].first, e.keys[k].second[pos[a]]);
    }
    // Keep file order of keys in the run's option list.
    std::sort(values.begin(), values.end(),
              [&](const auto& x, const auto& y) { return index[x.first] < index[y.first]; });
    bool keep = true;
    for (const KeyValues& skip : e.skips) keep = keep && !matches(values, skip);
    if (keep && !e.onlys.empty()) {
      bool any = false;
      for (const KeyValues& only : e.onlys) any = any || matches(values, only);
      keep = any;
    }
    if (keep) {
      SweepRun run;
      run.name = absl::StrFormat("run%04d", runs.size());
      run.raw.values = values;
      run.raw.sets = e.sets;
      for (const auto& [k, v] : values)
        if (swept.count(k)) run.swept.emplace_back(k, v);
      runs.push_back(std::move(run));
    }
    // Odometer: the last axis varies fastest.
    int a = static_cast<int>(axes.size()) - 1;
    while (a >= 0 && ++pos[a] == axes[a].count) pos[a--] = 0;
    if (a < 0) break;
  }
  if (runs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sweep: '", e.path, "' gives an empty product (every run is filtered out)"));
  }
  return runs;
}

// A run that failed under --keep-going, as the archive stores it: its resolved config, no metrics
// (NaN in /summary), and the error.
formats::RunRecord FailedRun(const SweepRun& run, const RunOptions& o, const absl::Status& error) {
  formats::RunRecord r;
  r.name = run.name;
  r.chips = o.chips;
  r.config = o.Resolved();
  // Only what the run reads, as a finished run's config.
  KeepReadKeys(o, r.config);
  for (const auto& [k, v] : run.swept) {
    if (k != "mesh" && k != "slices") r.requested.emplace_back(k, v);
  }
  r.error = std::string(error.message());
  return r;
}

absl::StatusOr<std::vector<RunOptions>> ResolveSweepRuns(const Experiment& e,
                                                         const std::vector<SweepRun>& runs,
                                                         bool timelines) {
  std::vector<RunOptions> options(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    absl::StatusOr<RunOptions> o = ResolveRunOptions(runs[i].raw, Unread::kAllow);
    if (!o.ok()) {
      return absl::Status(o.status().code(),
                          absl::StrCat(runs[i].name, " (",
                                       absl::StrJoin(runs[i].swept, " ", absl::PairFormatter("=")),
                                       "): ", o.status().message()));
    }
    options[i] = std::move(*o);
    // Only stored timelines need the rows in memory.
    options[i].keep_timeline = timelines;
    options[i].sweep_timelines = timelines;
  }
  // One file sets a key for runs of several workloads and algorithms (e.g. slices zipped with
  // algorithm): a key is refused only when none of its runs, in any shard, reads it.
  KeyValues given;
  for (const auto& [key, values] : e.keys) given.emplace_back(key, absl::StrJoin(values, " "));
  for (auto& kv : SetPairs(e.sets)) given.push_back(std::move(kv));  // `set =` lines.
  std::vector<const RunOptions*> ptrs;
  for (const RunOptions& o : options) ptrs.push_back(&o);
  MESHSIM_RETURN_IF_ERROR(
      CheckReadByAny(given, ptrs, absl::StrFormat("the %d runs of '%s'", ptrs.size(), e.path)));
  return options;
}

bool InOrderWindow::MayStart(int i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ || i < written_ + width_;
}

bool InOrderWindow::WaitToStart(int i) {
  std::unique_lock<std::mutex> lock(mu_);
  room_.wait(lock, [&] { return closed_ || i < written_ + width_; });
  return !closed_;
}

void InOrderWindow::Written() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++written_;
  }
  room_.notify_all();
}

void InOrderWindow::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  room_.notify_all();
}

absl::StatusOr<std::pair<int, int>> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  int k = 0, n = 0;
  if (slash == std::string::npos || !absl::SimpleAtoi(text.substr(0, slash), &k) ||
      !absl::SimpleAtoi(text.substr(slash + 1), &n) || n < 1 || k < 1 || k > n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--shard: '%s' is not allowed; expected K/N with 1 <= K <= N (e.g. 3/8)", text));
  }
  return std::make_pair(k, n);
}

boost::program_options::options_description SweepDescription() {
  namespace po = boost::program_options;
  po::options_description d("options");
  // clang-format off
  d.add_options()
      ("help,h", "print this help")
      ("out", po::value<std::string>(), "the archive (default: EXPERIMENT.h5, or "
                                        "EXPERIMENT.shardKofN.h5)")
      ("jobs", po::value<std::string>(), "parallel runs (default: the number of cores)")
      ("shard", po::value<std::string>(), "K/N: run every N-th run from the K-th (default 1/1)")
      ("timelines", po::bool_switch(), "store every run's timeline (for `meshsim trace`)")
      ("keep-going", po::bool_switch(), "a run that fails is stored with its error (attribute "
                                        "`error`, NaN metrics) and the others go on; the sweep "
                                        "then exits with the first failure's status")
      ("format", po::value<std::string>(), "table (default), json, csv");
  // clang-format on
  return d;
}

absl::Status RunSweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "usage: meshsim sweep EXPERIMENT.ini [--out SWEEP.h5] [--jobs N] [--shard K/N] "
      "[--timelines] [--keep-going] [--format table|json|csv]";
  const boost::program_options::options_description d = SweepDescription();
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("sweep", args, d, 1, 1, usage));
  if (a.help) {
    out << usage
        << "\n\nEvery combination of the experiment's values (docs/experiments.md). Its keys are "
           "the options of `meshsim run --help`, including the memory budgets max-ops and "
           "max-flows: a run that would not fit is refused before any simulation starts.\n\n"
        << d;
    return absl::OkStatus();
  }
  const std::string experiment_path = a.positional[0];
  const std::string format = ArgOr(a, "format", "table");
  const std::string shard_text = ArgOr(a, "shard", "1/1");
  const bool timelines = a.vm["timelines"].as<bool>();
  const bool keep_going = a.vm["keep-going"].as<bool>();
  int jobs = std::max(1u, std::thread::hardware_concurrency());
  if (a.vm.count("jobs")) {
    const std::string j = ArgOr(a, "jobs");
    if (!absl::SimpleAtoi(j, &jobs) || jobs < 1 || jobs > 1024) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--jobs: '%s' is not allowed; expected 1 to 1024", j));
    }
  }
  if (format != "table" && format != "json" && format != "csv") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--format: '%s' is not allowed; allowed: table, json, csv", format));
  }
  // Like `run --out ''`: an empty path given is an error, not the default name.
  const bool out_given = a.vm.count("out") > 0;
  std::string out_path = ArgOr(a, "out");
  if (out_given) MESHSIM_RETURN_IF_ERROR(CheckArchivePath("out", out_path));
  MESHSIM_ASSIGN_OR_RETURN(auto shard, ParseShard(shard_text));
  if (!out_given) {
    out_path = std::filesystem::path(experiment_path).stem().string() + ".h5";
    if (shard.second > 1) {
      out_path = absl::StrFormat("%s.shard%dof%d.h5",
                                 std::filesystem::path(experiment_path).stem().string(),
                                 shard.first, shard.second);
    }
  }
  MESHSIM_RETURN_IF_ERROR(CheckOutputPath("out", out_path));

  // Validate everything before the first simulation: the file, every run's options (all shards,
  // so a shard cannot hide a typo), and the plugin preconditions of this shard's runs.
  MESHSIM_ASSIGN_OR_RETURN(Experiment e, ParseExperiment(experiment_path));
  MESHSIM_ASSIGN_OR_RETURN(std::vector<SweepRun> all, ExpandExperiment(e));
  MESHSIM_ASSIGN_OR_RETURN(std::vector<RunOptions> options, ResolveSweepRuns(e, all, timelines));
  std::vector<int> mine;
  for (int i = 0; i < static_cast<int>(all.size()); ++i) {
    if (i % shard.second == shard.first - 1) mine.push_back(i);
  }
  // A shard that gets no run (more shards than runs: a batch script's fixed --shard K/N) writes
  // an archive without runs, which `merge` accepts, so every shard of a job array succeeds.
  // This shard's runs simulate `jobs` at a time: each gets its part of the default memory
  // budgets (--max-ops and --max-flows given explicitly are per run).
  const int at_once = std::max(1, std::min(jobs, static_cast<int>(mine.size())));
  for (RunOptions& o : options) o.concurrent_runs = at_once;
  InterruptGuard guard;
  // On a terminal, a line that redraws itself in place on stderr (cleared with ESC[K): while the
  // runs are checked (CheckRun lowers every run, the autotuner included), then while they run.
  // Pipes and files get none of it.
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  // Each phase has its own clock: the time left is the runs' pace, checking excluded.
  auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::function<void(int)> checking;
  if (tty) {
    checking = [&](int checked) {
      err << "\r" << SweepCheckLine(checked, static_cast<int>(mine.size()), elapsed()) << "\033[K"
          << std::flush;
    };
  }
  // "<run> (<swept keys>): <message>": a run's error, as printed and as stored by --keep-going.
  const auto run_error = [&](int i, const absl::Status& s) {
    return absl::Status(
        s.code(), absl::StrCat(all[mine[i]].name, " (",
                               absl::StrJoin(all[mine[i]].swept, " ", absl::PairFormatter("=")),
                               "): ", s.message()));
  };
  const int n = static_cast<int>(mine.size());
  // A run's outcome, filled by the checks (a failure, with --keep-going) or by a worker.
  std::vector<std::optional<absl::StatusOr<formats::RunRecord>>> results(n);
  std::vector<char> check_failed(n, 0);  // Not simulated: results[i] holds the check's error.
  const absl::Status checked = ParallelFor(
      n, jobs,
      [&](int i) {
        absl::Status s = CheckRun(options[mine[i]]);
        if (s.ok()) return s;
        if (!keep_going) return run_error(i, s);
        results[i] = s;  // Each index is written by one thread; read after the join.
        check_failed[i] = 1;
        return absl::OkStatus();
      },
      checking);
  if (tty) err << "\r\033[K" << std::flush;
  MESHSIM_RETURN_IF_ERROR(checked);

  // Simulate on `jobs` threads; the main thread writes finished runs in run order, so the archive
  // is the same whatever --jobs is.
  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<formats::ArchiveWriter> writer,
                           formats::ArchiveWriter::Create(out_path, Version()));
  std::mutex mu;
  std::condition_variable done;  // A run finished (results[i] set).
  int written = 0;               // Runs written to the archive, in run order (this thread's).
  // With --timelines, at most at_once runs hold unwritten timelines (InOrderWindow).
  InOrderWindow window(at_once);
  std::atomic<int> next{0}, finished{0};  // Finished: in any order, failed ones too.
  for (const auto& r : results) finished += r.has_value() ? 1 : 0;
  std::atomic<bool> failed{false};
  std::atomic<bool> cancel{false};  // Set once interrupted: the runs in flight stop early.
  for (int i : mine) options[i].cancel = &cancel;
  auto work = [&] {
    for (int i = next++; i < n && !g_interrupted && !failed; i = next++) {
      if (timelines && !window.WaitToStart(i)) break;
      if (check_failed[i]) continue;  // Its error is in results[i] already (--keep-going).
      absl::StatusOr<formats::RunRecord> r = Simulate(options[mine[i]]);
      if (r.ok()) {
        r->name = all[mine[i]].name;
        // Swept keys group runs by what the experiment asked for (dataflow "auto", not the
        // per-layer list it resolved to); mesh and slices keep showing the resolved choice,
        // as /summary always has.
        for (const auto& [k, v] : all[mine[i]].swept) {
          if (k != "mesh" && k != "slices") r->requested.emplace_back(k, v);
        }
      } else if (!keep_going || absl::IsCancelled(r.status())) {
        failed = true;
      }
      std::lock_guard<std::mutex> lock(mu);
      results[i] = std::move(r);
      ++finished;
      done.notify_one();
    }
  };
  start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min(jobs, n); ++t) threads.emplace_back(work);

  // Not a terminal (a batch job's log): the same line once a minute, from the first minute on.
  double next_log = 60;
  const auto draw = [&] {
    if (tty) {
      err << "\r" << SweepProgressLine(finished, n, elapsed()) << "\033[K" << std::flush;
    } else if (const double t = elapsed(); t >= next_log) {
      next_log = t + 60;
      err << "sweep:" << absl::StripTrailingAsciiWhitespace(SweepProgressLine(finished, n, t))
          << "\n"
          << std::flush;
    }
  };
  draw();                                   // 0/N at once, not only when the first run is written.
  std::vector<formats::RunRecord> summary;  // Config and metrics only, for the printed summary.
  absl::Status status;
  absl::Status first_failure;  // With --keep-going: the first run that failed.
  int failures = 0;
  while (written < n && status.ok()) {
    std::optional<absl::StatusOr<formats::RunRecord>> r;
    {
      std::unique_lock<std::mutex> lock(mu);
      done.wait_for(lock, kPoll, [&] { return results[written].has_value(); });
      if (results[written].has_value()) r = std::move(results[written]), results[written].reset();
    }
    if (g_interrupted) {
      cancel = true;
      status = absl::CancelledError("sweep: interrupted; no archive written");
      break;
    }
    if (!r.has_value()) {
      draw();  // The elapsed time ticks; runs after `written` may have finished.
      continue;
    }
    if (!r->ok()) {
      const absl::Status error = run_error(written, r->status());
      if (!keep_going || absl::IsCancelled(r->status())) {
        status = error;
        break;
      }
      // Stored like a run, without metrics, with its error; the others go on.
      if (failures++ == 0) first_failure = error;
      formats::RunRecord f = FailedRun(all[mine[written]], options[mine[written]], error);
      status = writer->AddRun(f, false);
      r = std::move(f);
    } else {
      status = writer->AddRun(**r, timelines);
    }
    formats::RunRecord light;
    light.name = (*r)->name;
    light.chips = (*r)->chips;
    light.config = std::move((*r)->config);
    light.requested = std::move((*r)->requested);
    light.metrics = std::move((*r)->metrics);
    light.error = std::move((*r)->error);
    summary.push_back(std::move(light));
    r.reset();  // The timeline is written: free it before waiting for the next run.
    ++written;
    window.Written();
    draw();
  }
  failed = failed || !status.ok();
  window.Close();  // Workers waiting for room stop (after an error or an interrupt).
  if (tty && !status.ok() && finished < std::min(next.load(), n)) {
    // Interrupted: the runs in flight stop within a moment; failed: no new run starts, but
    // those in flight finish first.
    err << (cancel ? "\r  stopping the runs in flight\033[K"
                   : "\r  stopping: waiting for the runs in flight to finish\033[K")
        << std::flush;
  }
  for (std::thread& t : threads) t.join();
  if (tty) err << "\n";
  if (!status.ok()) {
    writer->Abort();
    return status;
  }
  std::vector<std::string> keys = SweptKeys(e);
  MESHSIM_RETURN_IF_ERROR(writer->Commit(keys));

  std::vector<const formats::RunRecord*> ptrs;
  for (const formats::RunRecord& r : summary) ptrs.push_back(&r);
  if (format == "table") {
    out << absl::StrFormat("sweep '%s': %d runs", experiment_path, n);
    if (shard.second > 1) out << absl::StrFormat(" (shard %d of %d)", shard.first, shard.second);
    out << "\n";
    PrintSummary(ptrs, keys, out);
    out << "wrote " << out_path << " (HDF5)\n";
  } else {
    PrintRuns(ptrs, format, out, keys);
    err << "wrote " << out_path << " (HDF5)\n";
  }
  if (failures > 0) {
    return absl::Status(first_failure.code(),
                        absl::StrFormat("sweep: %d of %d runs failed (stored in %s with their "
                                        "errors); the first: %s",
                                        failures, n, out_path, first_failure.message()));
  }
  return absl::OkStatus();
}

absl::Status RunMerge(const std::vector<std::string>& args, std::ostream& out) {
  namespace po = boost::program_options;
  const std::string usage = "usage: meshsim merge OUT.h5 IN.h5...";
  po::options_description d("options");
  d.add_options()("help,h", "print this help");
  MESHSIM_ASSIGN_OR_RETURN(ParsedArgs a, ParseArgs("merge", args, d, 2, -1, usage));
  if (a.help) {
    out << usage
        << "\n\nJoins the archives of a sharded sweep into OUT.h5 (a name ending in .h5, .hdf5 "
           "or .he5).\n\n"
        << d;
    return absl::OkStatus();
  }
  const std::string& target = a.positional[0];
  MESHSIM_RETURN_IF_ERROR(CheckArchivePath("out", target));
  const std::vector<std::string> inputs(a.positional.begin() + 1, a.positional.end());
  std::error_code ec;
  for (const std::string& in : inputs) {
    if (std::filesystem::equivalent(in, target, ec)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("merge: OUT.h5 '%s' is also an input; merge into a new file", target));
    }
  }
  MESHSIM_RETURN_IF_ERROR(formats::MergeArchives(target, inputs, Version()));
  out << "wrote " << target << " (" << inputs.size() << " archives merged)\n";
  return absl::OkStatus();
}

}  // namespace meshsim::sim::cli
