// Cross-mesh resharding, part 2: load balance and scheduling of unit tasks at host level
// (MLSys'23 §3.2, Eq. 1–4).
//
// Model. Hosts are the bottleneck (§3: full-duplex NICs, a fully connected fabric between hosts),
// so each host has a send side and a receive side. Task i, sent from host n_i* ∈ n_i (its
// candidate sender hosts) to its receiver hosts m_i, occupies send side n_i* and the receive side
// of every host of m_i for its duration T_i(n_i*), and
//   minimise  max_i S_i + T_i                                                         (Eq. 1)
//   s.t.      n_i* ∈ n_i                                                               (Eq. 2)
//             (S_i, S_i+T_i) ∩ (S_j, S_j+T_j) = ∅  if n_i* = n_j* or m_i ∩ m_j ≠ ∅    (Eq. 3)
// A schedule is a launch order plus a sender per task; start times follow by list scheduling:
// S_i = max(send_free[n_i*], max_{r ∈ m_i} recv_free[r]). Every feasible schedule, sorted by start
// time and list-scheduled, starts no task later, so (order, senders) pairs cover the optimum.
//
// Durations (reshard.h fills them per strategy, t = bytes / inter-host bandwidth, intra-host
// hops at the NVLink bandwidth): send/recv T = Σ receivers, local all-gather T = Σ receiver hosts,
// broadcast T = t (§3.1: T^sr = ABt, T^srla = At, T^bc ≈ t).
//
// Schedulers:
//   naive          lowest-index sender device's host, tasks in index order (§3.2 baseline).
//   load-balance   Eq. 4 greedy: tasks by T_i descending, each to the candidate host with the
//                  lightest send load so far; that order is the launch order.
//   dfs            starting from the load-balance schedule as incumbent (so never worse than
//                  it), depth-first search over (next task, its sender host), children in order of
//                  finish time, pruned when the lower bound — the busiest single host side's
//                  committed time plus its remaining work (Eq. 4's per-device sum) — reaches the
//                  best makespan; identical tasks are tried once per node; it stops early when a
//                  schedule meets the root's lower bound (optimal). The time budget is a
//                  count of search nodes (visited + generated children, `dfs_budget`), so
//                  results are deterministic and the cost is bounded even for many tasks.
//   greedy         randomised greedy (seeded): each round draws `greedy_draws` random orders of
//                  the remaining tasks, packs non-conflicting tasks (a free sender host, free
//                  receiver hosts), keeps the packing with the most hosts busy, and appends it;
//                  `greedy_restarts` whole runs, the best kept (over 256 tasks: one run of
//                  two draws per round, to bound the cost).
//   ensemble       dfs and greedy, the lower makespan kept (the paper's "ours").
//
// Example:
//   Schedule s = ScheduleTasks(tasks, SchedulerKind::kEnsemble, {.seed = 1});
#ifndef MESHSIM_ALGORITHMS_RESHARD_SCHEDULER_H_
#define MESHSIM_ALGORITHMS_RESHARD_SCHEDULER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace meshsim::algorithms::reshard {

enum class SchedulerKind { kNaive, kLoadBalance, kDfs, kGreedy, kEnsemble };
absl::StatusOr<SchedulerKind> ParseScheduler(const std::string& name);  // InvalidArgument
const char* ToString(SchedulerKind kind);

// A unit task as the scheduler sees it.
struct HostTask {
  std::vector<int> sender_hosts;    // Candidates n_i, ascending, non-empty.
  std::vector<double> duration_s;   // T_i per candidate (same index as sender_hosts).
  std::vector<int> receiver_hosts;  // m_i, ascending, non-empty.
};

struct SchedulerOptions {
  uint64_t seed = 1;
  int64_t dfs_budget = 200000;  // DFS search nodes (visited + generated children).
  int greedy_draws = 16;
  int greedy_restarts = 8;
};

struct Schedule {
  std::vector<int> order;   // Task indices in launch order (a permutation).
  std::vector<int> choice;  // Per task: index into its sender_hosts.
  double makespan_s = 0;    // Eq. 1 under the model.
  // DFS finished its search within the budget, or reached the root's lower bound: optimal.
  bool dfs_exhausted = false;
};

// The Eq. 1 makespan of launching `order` with senders `choice` (list scheduling). O(Σ|m_i|).
double Makespan(const std::vector<HostTask>& tasks, const std::vector<int>& order,
                const std::vector<int>& choice);

// Runs scheduler `kind`. Cost: naive/load-balance O(n log n + Σ|n_i|), greedy
// O(restarts·n·draws·n·hosts), dfs at most dfs_budget nodes of O(n·hosts) each.
Schedule ScheduleTasks(const std::vector<HostTask>& tasks, SchedulerKind kind,
                       const SchedulerOptions& options = {});

// The exact optimum by enumerating every order and sender choice (tests only: n ≤ 7).
Schedule BruteForceOptimum(const std::vector<HostTask>& tasks);

}  // namespace meshsim::algorithms::reshard

#endif  // MESHSIM_ALGORITHMS_RESHARD_SCHEDULER_H_
