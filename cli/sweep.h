// Sweeps: an experiment file lists values of run options; the runs are their cartesian product
// (with optional zipped keys and filters), simulated in parallel and streamed into one HDF5
// archive with a summary table (DESIGN.md §9, CLI.md `meshsim sweep`).
//
// Experiment file (docs/experiments.md):
//
//   # GPT-3 weak scaling, two algorithms          comments start with # or ;
//   model = gpt3
//   chips = 16 64 256                             several values: a swept key
//   algorithm = meshslice collective
//   mesh = 4x4 8x8 16x16                          zipped with chips below
//   set = comm.t_launch=50us                      fixed overrides for every run
//
//   [zip]
//   keys = chips mesh                             advanced together, not crossed
//
//   [filter]
//   skip = algorithm=collective chips=16          drop runs matching every pair
//   only = ...                                    if present, keep runs matching one line
//
// Values are separated by white space; quote a value with "…" to keep spaces. Every run is
// validated (options and plugin preconditions) before the first simulation starts.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(Experiment e, ParseExperiment("fig9.ini"));
//   MESHSIM_ASSIGN_OR_RETURN(std::vector<SweepRun> runs, ExpandExperiment(e));
#ifndef MESHSIM_CLI_SWEEP_H_
#define MESHSIM_CLI_SWEEP_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/options.h"

namespace meshsim::sim::cli {

// The most runs one experiment may expand to (before [filter]s).
inline constexpr uint64_t kMaxSweepRuns = 100000;

using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct Experiment {
  std::string path;
  // Every key in file order with its values; a key with several values is swept.
  std::vector<std::pair<std::string, std::vector<std::string>>> keys;
  std::vector<std::string> sets;               // Fixed `set = KEY=VALUE` overrides.
  std::vector<std::vector<std::string>> zips;  // Groups of keys advanced together.
  std::vector<KeyValues> skips;                // [filter] skip lines.
  std::vector<KeyValues> onlys;                // [filter] only lines.
};

struct SweepRun {
  std::string name;  // "run0007": its index in the whole (filtered) product.
  RawOptions raw;    // The run's options.
  KeyValues swept;   // The values of the swept keys, in file order.
};

// Parses and checks an experiment file: known keys only, no duplicates, zips of swept keys with
// equal lengths, filters naming existing keys and values. Errors say "FILE:LINE: ...".
absl::StatusOr<Experiment> ParseExperiment(const std::string& path);

// The runs of the experiment in a stable order (first key slowest). InvalidArgument for an
// empty product.
absl::StatusOr<std::vector<SweepRun>> ExpandExperiment(const Experiment& experiment);

// Resolves every run of `runs` (all shards: a shard cannot hide a typo). A run need not read
// every key of the file (a sweep may set a key for runs of several workloads or algorithms, e.g.
// slices zipped with algorithm); a key that none of the runs reads is refused (CheckReadByAny).
// Errors name the run: "run0003 (chips=16): --mesh: ...". `timelines` (the sweep's
// --timelines) keeps every run's timeline, which --max-timeline-bytes bounds.
absl::StatusOr<std::vector<RunOptions>> ResolveSweepRuns(const Experiment& experiment,
                                                         const std::vector<SweepRun>& runs,
                                                         bool timelines = false);

// The swept keys, in file order (zipped keys included).
std::vector<std::string> SweptKeys(const Experiment& experiment);

// "K/N" with 1 ≤ K ≤ N → {K, N}; InvalidArgument otherwise.
absl::StatusOr<std::pair<int, int>> ParseShard(const std::string& text);

// `meshsim sweep EXPERIMENT.ini [--out SWEEP.h5] [--jobs N] [--shard K/N] [--timelines]
// [--format table|json|csv]`.
// The options of `meshsim sweep` besides EXPERIMENT.ini (its --help, the generated reference).
boost::program_options::options_description SweepDescription();

absl::Status RunSweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The progress line `meshsim sweep` redraws in place on a terminal's stderr (after a carriage
// return, followed by ESC[K) as soon as it starts and every 200 ms: runs finished, in any order,
// of all, a 30-column bar, the elapsed time and, once one has finished, the time left at the
// mean pace so far. Pipes and files get no progress.
//   SweepProgressLine(0, 12, 3)    == "  0/12 runs [..............................] 0m03s elapsed "
//   SweepProgressLine(3, 12, 41.2) == "  3/12 runs [#######.......................] 0m41s elapsed,
//                                      ~2m04s left "
std::string SweepProgressLine(int finished, int total, double elapsed_s);

// The line drawn before, while the runs are checked (every run lowered, autotuner included):
//   SweepCheckLine(5, 12, 2) == "  checking 12 runs: 5/12 [############..................] 0m02s
//                                elapsed "
std::string SweepCheckLine(int checked, int total, double elapsed_s);

// The rule that bounds what a sweep with --timelines holds: its runs are written in run order,
// so a slow run holds back the finished ones after it, and with their timelines those would pile
// up. Item i may start only once item i − width has been written, so at most `width` items are
// unwritten (in flight or finished) at any time. Thread-safe: workers call WaitToStart, the
// writer calls Written once per item in order, and Close on an error or an interrupt.
//   InOrderWindow w(2);
//   w.MayStart(1);  // true
//   w.MayStart(2);  // false until w.Written()
class InOrderWindow {
 public:
  explicit InOrderWindow(int width) : width_(width) {}
  // Whether item i may start now (or the window is closed).
  bool MayStart(int i) const;
  // Blocks until item i may start; false when the window was closed instead (stop working).
  bool WaitToStart(int i);
  // One more item is written, in order: wakes the worker that waits for the next slot.
  void Written();
  // Wakes every waiting worker; WaitToStart returns false from now on.
  void Close();

 private:
  mutable std::mutex mu_;
  std::condition_variable room_;
  const int width_;
  int written_ = 0;
  bool closed_ = false;
};

// `meshsim merge OUT.h5 IN.h5...`.
absl::Status RunMerge(const std::vector<std::string>& args, std::ostream& out);

}  // namespace meshsim::sim::cli

#endif  // MESHSIM_CLI_SWEEP_H_
