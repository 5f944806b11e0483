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

namespace {

// Cuts a comment off an experiment line: '#' or ';' at the start of the line or after white space.
void StripComment(std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if ((text[i] == '#' || text[i] == ';') &&
        (i == 0 || absl::ascii_isspace(static_cast<unsigned char>(text[i - 1])))) {
      text.resize(i);
      return;
    }
  }
}

// The values of `key` in the experiment; null when it is not set.
const std::vector<std::string>* ValuesOf(const Experiment& e, const std::string& key) {
  for (const auto& [k, v] : e.keys)
    if (k == key) return &v;
  return nullptr;
}

// Checks the [zip] lines (line, keys) against the keys set and adds them to e.zips: each zip of
// at least two set keys with equal value counts, no key in two zips.
absl::Status CheckZips(const std::string& path,
                       const std::vector<std::pair<int, std::vector<std::string>>>& zip_lines,
                       Experiment& e) {
  std::set<std::string> zipped;
  for (const auto& [line, keys] : zip_lines) {
    if (keys.size() < 2) return LineError(path, line, "a zip needs at least two keys");
    for (const std::string& k : keys) {
      const std::vector<std::string>* v = ValuesOf(e, k);
      if (v == nullptr) return LineError(path, line, absl::StrCat("zip key '", k, "' is not set"));
      if (v->size() != ValuesOf(e, keys[0])->size()) {
        return LineError(path, line,
                         absl::StrFormat("zipped keys need equal value counts: '%s' has %d, "
                                         "'%s' has %d",
                                         keys[0], ValuesOf(e, keys[0])->size(), k, v->size()));
      }
      if (!zipped.insert(k).second) {
        return LineError(path, line, absl::StrCat("'", k, "' is in two zips"));
      }
    }
    e.zips.push_back(keys);
  }
  return absl::OkStatus();
}

// Checks that every [filter] line (line, pairs) names keys set and values they take.
absl::Status CheckFilters(const std::string& path,
                          const std::vector<std::pair<int, KeyValues>>& filter_lines,
                          const Experiment& e) {
  for (const auto& [line, pairs] : filter_lines) {
    for (const auto& [k, v] : pairs) {
      const std::vector<std::string>* values = ValuesOf(e, k);
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
  return absl::OkStatus();
}

}  // namespace

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
    StripComment(text);
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
  MESHSIM_RETURN_IF_ERROR(CheckZips(path, zip_lines, e));
  MESHSIM_RETURN_IF_ERROR(CheckFilters(path, filter_lines, e));
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

namespace {

// "<run> (<swept keys>): <message>": a run's error, as printed and as stored by --keep-going.
absl::Status RunError(const SweepRun& run, const absl::Status& s) {
  return absl::Status(
      s.code(),
      absl::StrCat(run.name, " (", absl::StrJoin(run.swept, " ", absl::PairFormatter("=")),
                   "): ", s.message()));
}

// Swept keys group runs by what the experiment asked for (dataflow "auto", not the per-layer list
// it resolved to); mesh and slices keep showing the resolved choice, as /summary always has.
void AddRequested(const SweepRun& run, formats::RunRecord& r) {
  for (const auto& [k, v] : run.swept) {
    if (k != "mesh" && k != "slices") r.requested.emplace_back(k, v);
  }
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
  AddRequested(run, r);
  r.error = std::string(error.message());
  return r;
}

}  // namespace

absl::StatusOr<std::vector<RunOptions>> ResolveSweepRuns(const Experiment& e,
                                                         const std::vector<SweepRun>& runs,
                                                         bool timelines) {
  std::vector<RunOptions> options(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    absl::StatusOr<RunOptions> o = ResolveRunOptions(runs[i].raw, Unread::kAllow);
    if (!o.ok()) {
      return RunError(runs[i], o.status());
    }
    options[i] = std::move(*o);
    // Only stored timelines need the rows in memory.
    options[i].keep_timeline = timelines;
    options[i].fold = true;  // Where the torus's symmetry allows (sim/fold.h).
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

namespace {

// The command line of `meshsim sweep`, checked.
struct SweepArgs {
  std::string experiment_path;
  std::string format;         // table, json or csv.
  std::string out_path;       // The archive.
  std::pair<int, int> shard;  // {K, N} of --shard K/N.
  int jobs = 1;
  bool timelines = false;
  bool keep_going = false;
};

// Checks the options of `meshsim sweep`; --out defaults to EXPERIMENT.h5 (EXPERIMENT.shardKofN.h5
// for a shard).
absl::StatusOr<SweepArgs> CheckSweepArgs(const ParsedArgs& a) {
  SweepArgs s;
  s.experiment_path = a.positional[0];
  s.format = ArgOr(a, "format", "table");
  const std::string shard_text = ArgOr(a, "shard", "1/1");
  s.timelines = a.vm["timelines"].as<bool>();
  s.keep_going = a.vm["keep-going"].as<bool>();
  s.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (a.vm.count("jobs")) {
    const std::string j = ArgOr(a, "jobs");
    if (!absl::SimpleAtoi(j, &s.jobs) || s.jobs < 1 || s.jobs > 1024) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--jobs: '%s' is not allowed; expected 1 to 1024", j));
    }
  }
  if (s.format != "table" && s.format != "json" && s.format != "csv") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--format: '%s' is not allowed; allowed: table, json, csv", s.format));
  }
  // Like `run --out ''`: an empty path given is an error, not the default name.
  const bool out_given = a.vm.count("out") > 0;
  s.out_path = ArgOr(a, "out");
  if (out_given) MESHSIM_RETURN_IF_ERROR(CheckArchivePath("out", s.out_path));
  MESHSIM_ASSIGN_OR_RETURN(s.shard, ParseShard(shard_text));
  if (!out_given) {
    const std::string stem = std::filesystem::path(s.experiment_path).stem().string();
    s.out_path = s.shard.second > 1
                     ? absl::StrFormat("%s.shard%dof%d.h5", stem, s.shard.first, s.shard.second)
                     : stem + ".h5";
  }
  MESHSIM_RETURN_IF_ERROR(CheckOutputPath("out", s.out_path));
  return s;
}

// The experiment's runs (all shards), this shard's among them, and their outcomes.
struct ShardRuns {
  Experiment experiment;
  std::vector<SweepRun> all;
  std::vector<RunOptions> options;  // Per run of `all`.
  std::vector<int> mine;            // This shard's runs: indices into `all`.
  // Per run of `mine`: its outcome, filled by the checks (a failure, with --keep-going) or by a
  // worker.
  std::vector<std::optional<absl::StatusOr<formats::RunRecord>>> results;
  std::vector<char> check_failed;  // Not simulated: results[i] holds the check's error.

  int size() const { return static_cast<int>(mine.size()); }
  const SweepRun& RunOf(int i) const { return all[mine[i]]; }
  RunOptions& OptionsOf(int i) { return options[mine[i]]; }
};

// Reads the experiment and resolves every run's options (all shards, so a shard cannot hide a
// typo); selects this shard's runs.
absl::StatusOr<ShardRuns> ResolveShardRuns(const SweepArgs& args) {
  ShardRuns runs;
  MESHSIM_ASSIGN_OR_RETURN(runs.experiment, ParseExperiment(args.experiment_path));
  MESHSIM_ASSIGN_OR_RETURN(runs.all, ExpandExperiment(runs.experiment));
  MESHSIM_ASSIGN_OR_RETURN(runs.options,
                           ResolveSweepRuns(runs.experiment, runs.all, args.timelines));
  for (int i = 0; i < static_cast<int>(runs.all.size()); ++i) {
    if (i % args.shard.second == args.shard.first - 1) runs.mine.push_back(i);
  }
  // A shard that gets no run (more shards than runs: a batch script's fixed --shard K/N) writes
  // an archive without runs, which `merge` accepts, so every shard of a job array succeeds.
  // This shard's runs simulate `jobs` at a time: each gets its part of the default memory
  // budgets (--max-ops and --max-flows given explicitly are per run).
  const int at_once = std::max(1, std::min(args.jobs, runs.size()));
  for (RunOptions& o : runs.options) o.concurrent_runs = at_once;
  runs.results.resize(runs.size());
  runs.check_failed.assign(runs.size(), 0);
  return runs;
}

// The sweep's progress on stderr. On a terminal, a line that redraws itself in place (cleared
// with ESC[K): while the runs are checked, then while they run. Not a terminal (a batch job's
// log): the run line once a minute, from the first minute on. Each phase has its own clock
// (Restart): the time left is the runs' pace, checking excluded.
class SweepProgress {
 public:
  explicit SweepProgress(std::ostream& err) : err_(err), tty_(::isatty(STDERR_FILENO) == 1) {}

  bool tty() const { return tty_; }
  std::ostream& err() { return err_; }
  void Restart() { start_ = std::chrono::steady_clock::now(); }

  // The tick for ParallelFor while `total` runs are checked; none off a terminal.
  std::function<void(int)> CheckTick(int total) {
    if (!tty_) return nullptr;
    return [this, total](int checked) {
      err_ << "\r" << SweepCheckLine(checked, total, Elapsed()) << "\033[K" << std::flush;
    };
  }

  void DrawRuns(int finished, int total) {
    if (tty_) {
      err_ << "\r" << SweepProgressLine(finished, total, Elapsed()) << "\033[K" << std::flush;
    } else if (const double t = Elapsed(); t >= next_log_) {
      next_log_ = t + 60;
      err_ << "sweep:" << absl::StripTrailingAsciiWhitespace(SweepProgressLine(finished, total, t))
           << "\n"
           << std::flush;
    }
  }

  // Clears the terminal's line.
  void Clear() {
    if (tty_) err_ << "\r\033[K" << std::flush;
  }

 private:
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  std::ostream& err_;
  const bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double next_log_ = 60;
};

// Checks this shard's runs (CheckRun lowers every run, the autotuner included), `jobs` at a time.
// With --keep-going a run that fails is stored in runs.results and not simulated.
absl::Status CheckShardRuns(ShardRuns& runs, const SweepArgs& args, SweepProgress& progress) {
  const absl::Status checked = ParallelFor(
      runs.size(), args.jobs,
      [&](int i) {
        absl::Status s = CheckRun(runs.OptionsOf(i));
        if (s.ok()) return s;
        if (!args.keep_going) return RunError(runs.RunOf(i), s);
        runs.results[i] = s;  // Each index is written by one thread; read after the join.
        runs.check_failed[i] = 1;
        return absl::OkStatus();
      },
      progress.CheckTick(runs.size()));
  progress.Clear();
  return checked;
}

// A run's config and metrics without its timeline, for the printed summary.
formats::RunRecord SummaryRecord(formats::RunRecord&& r) {
  formats::RunRecord light;
  light.name = r.name;
  light.chips = r.chips;
  light.config = std::move(r.config);
  light.requested = std::move(r.requested);
  light.metrics = std::move(r.metrics);
  light.error = std::move(r.error);
  return light;
}

// Simulates this shard's runs on `jobs` threads while the calling thread writes the finished
// runs to the archive in run order, so the archive is the same whatever --jobs is.
class ShardSimulation {
 public:
  ShardSimulation(ShardRuns& runs, const SweepArgs& args, formats::ArchiveWriter& writer,
                  SweepProgress& progress)
      : runs_(runs),
        args_(args),
        writer_(writer),
        progress_(progress),
        n_(runs.size()),
        window_(std::max(1, std::min(args.jobs, runs.size()))) {}

  // Runs and writes every run; the error that stopped the sweep (an interrupt, or a run's failure
  // without --keep-going), which leaves the archive to be aborted.
  absl::Status Run();

  // Config and metrics of every run written, for the printed summary.
  const std::vector<formats::RunRecord>& summary() const { return summary_; }
  // With --keep-going: the runs that failed and the first of their errors.
  int failures() const { return failures_; }
  const absl::Status& first_failure() const { return first_failure_; }

 private:
  void Work();
  absl::Status WriteInOrder();
  std::optional<absl::StatusOr<formats::RunRecord>> TakeNext();
  absl::Status Write(absl::StatusOr<formats::RunRecord> r);

  ShardRuns& runs_;
  const SweepArgs& args_;
  formats::ArchiveWriter& writer_;
  SweepProgress& progress_;
  const int n_;
  std::mutex mu_;
  std::condition_variable done_;  // A run finished (runs_.results[i] set).
  int written_ = 0;               // Runs written to the archive, in run order (the writer's).
  // With --timelines, at most `jobs` runs hold unwritten timelines.
  InOrderWindow window_;
  std::atomic<int> next_{0}, finished_{0};  // Finished: in any order, failed ones too.
  std::atomic<bool> failed_{false};
  std::atomic<bool> cancel_{false};  // Set once interrupted: the runs in flight stop early.
  std::vector<formats::RunRecord> summary_;
  std::set<std::string> warned_;  // Warnings said once per sweep (Write).
  absl::Status first_failure_;
  int failures_ = 0;
};

absl::Status ShardSimulation::Run() {
  for (const auto& r : runs_.results) finished_ += r.has_value() ? 1 : 0;
  for (int i : runs_.mine) runs_.options[i].cancel = &cancel_;
  progress_.Restart();
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min(args_.jobs, n_); ++t) threads.emplace_back([this] { Work(); });
  progress_.DrawRuns(finished_, n_);  // 0/N at once, not only when the first run is written.
  const absl::Status status = WriteInOrder();
  failed_ = failed_ || !status.ok();
  window_.Close();  // Workers waiting for room stop (after an error or an interrupt).
  if (progress_.tty() && !status.ok() && finished_ < std::min(next_.load(), n_)) {
    // Interrupted: the runs in flight stop within a moment; failed: no new run starts, but
    // those in flight finish first.
    progress_.err() << (cancel_ ? "\r  stopping the runs in flight\033[K"
                                : "\r  stopping: waiting for the runs in flight to finish\033[K")
                    << std::flush;
  }
  for (std::thread& t : threads) t.join();
  if (progress_.tty()) progress_.err() << "\n";
  return status;
}

// A worker: simulates the next run not taken until none is left, a run failed or the sweep was
// interrupted.
void ShardSimulation::Work() {
  for (int i = next_++; i < n_ && !g_interrupted && !failed_; i = next_++) {
    if (args_.timelines && !window_.WaitToStart(i)) break;
    if (runs_.check_failed[i]) continue;  // Its error is in results[i] already (--keep-going).
    absl::StatusOr<formats::RunRecord> r = Simulate(runs_.OptionsOf(i));
    if (r.ok()) {
      r->name = runs_.RunOf(i).name;
      AddRequested(runs_.RunOf(i), *r);
    } else if (!args_.keep_going || absl::IsCancelled(r.status())) {
      failed_ = true;
    }
    std::lock_guard<std::mutex> lock(mu_);
    runs_.results[i] = std::move(r);
    ++finished_;
    done_.notify_one();
  }
}

// Writes the runs as they finish, in run order, redrawing the progress meanwhile.
absl::Status ShardSimulation::WriteInOrder() {
  absl::Status status;
  while (written_ < n_ && status.ok()) {
    std::optional<absl::StatusOr<formats::RunRecord>> r = TakeNext();
    if (g_interrupted) {
      cancel_ = true;
      return absl::CancelledError("sweep: interrupted; no archive written");
    }
    if (!r.has_value()) {
      progress_.DrawRuns(finished_, n_);  // The elapsed time ticks; later runs may have finished.
      continue;
    }
    if (!r->ok() && (!args_.keep_going || absl::IsCancelled(r->status()))) {
      return RunError(runs_.RunOf(written_), r->status());
    }
    status = Write(*std::move(r));
    ++written_;
    window_.Written();
    progress_.DrawRuns(finished_, n_);
  }
  return status;
}

// The outcome of run `written_` once it has finished (waiting at most kPoll); none before.
std::optional<absl::StatusOr<formats::RunRecord>> ShardSimulation::TakeNext() {
  std::optional<absl::StatusOr<formats::RunRecord>> r;
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait_for(lock, kPoll, [&] { return runs_.results[written_].has_value(); });
  if (runs_.results[written_].has_value()) {
    r = std::move(runs_.results[written_]);
    runs_.results[written_].reset();
  }
  return r;
}

// Adds run `written_` to the archive, a failed one (--keep-going) like a run, without metrics,
// with its error; keeps its config and metrics for the summary. Its timeline is freed on return,
// before waiting for the next run.
absl::Status ShardSimulation::Write(absl::StatusOr<formats::RunRecord> r) {
  absl::Status status;
  if (!r.ok()) {
    const absl::Status error = RunError(runs_.RunOf(written_), r.status());
    if (failures_++ == 0) first_failure_ = error;
    r = FailedRun(runs_.RunOf(written_), runs_.OptionsOf(written_), error);
    status = writer_.AddRun(*r, false);
  } else {
    for (const std::string& w : r->warnings) {
      if (!warned_.insert(w).second) continue;
      progress_.err() << (progress_.tty() ? "\r\033[K" : "") << "meshsim: warning: run '" << r->name
                      << "' (and any alike): " << w << "\n";
    }
    status = writer_.AddRun(*r, args_.timelines);
  }
  summary_.push_back(SummaryRecord(*std::move(r)));
  return status;
}

// The summary of the runs written (a table, or the runs as JSON or CSV) and where they went.
void PrintSweepSummary(const SweepArgs& args, const std::vector<formats::RunRecord>& summary,
                       const std::vector<std::string>& keys, std::ostream& out, std::ostream& err) {
  std::vector<const formats::RunRecord*> ptrs;
  for (const formats::RunRecord& r : summary) ptrs.push_back(&r);
  if (args.format == "table") {
    out << absl::StrFormat("sweep '%s': %d runs", args.experiment_path, summary.size());
    if (args.shard.second > 1) {
      out << absl::StrFormat(" (shard %d of %d)", args.shard.first, args.shard.second);
    }
    out << "\n";
    PrintSummary(ptrs, keys, out);
    out << "wrote " << args.out_path << " (HDF5)\n";
  } else {
    PrintRuns(ptrs, args.format, out, keys);
    err << "wrote " << args.out_path << " (HDF5)\n";
  }
}

}  // namespace

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
  MESHSIM_ASSIGN_OR_RETURN(const SweepArgs s, CheckSweepArgs(a));
  // Validate everything before the first simulation: the file, every run's options, and the
  // plugin preconditions of this shard's runs.
  MESHSIM_ASSIGN_OR_RETURN(ShardRuns runs, ResolveShardRuns(s));
  InterruptGuard guard;
  SweepProgress progress(err);
  MESHSIM_RETURN_IF_ERROR(CheckShardRuns(runs, s, progress));

  MESHSIM_ASSIGN_OR_RETURN(std::unique_ptr<formats::ArchiveWriter> writer,
                           formats::ArchiveWriter::Create(s.out_path, Version()));
  ShardSimulation simulation(runs, s, *writer, progress);
  if (const absl::Status status = simulation.Run(); !status.ok()) {
    writer->Abort();
    return status;
  }
  const std::vector<std::string> keys = SweptKeys(runs.experiment);
  MESHSIM_RETURN_IF_ERROR(writer->Commit(keys));
  PrintSweepSummary(s, simulation.summary(), keys, out, err);
  if (simulation.failures() > 0) {
    const absl::Status& first = simulation.first_failure();
    return absl::Status(
        first.code(),
        absl::StrFormat("sweep: %d of %d runs failed (stored in %s with their "
                        "errors); the first: %s",
                        simulation.failures(), runs.size(), s.out_path, first.message()));
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
