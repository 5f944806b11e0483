#include "algorithms/reshard/scheduler.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "absl/strings/str_format.h"
#include "core/did_you_mean.h"

namespace meshsim::algorithms::reshard {

namespace {

int NumHosts(const std::vector<HostTask>& tasks) {
  int n = 0;
  for (const HostTask& t : tasks) {
    for (int h : t.sender_hosts) n = std::max(n, h + 1);
    for (int h : t.receiver_hosts) n = std::max(n, h + 1);
  }
  return n;
}

// Host sides' free times during list scheduling.
struct Frontier {
  std::vector<double> send, recv;
  explicit Frontier(int hosts) : send(hosts, 0.0), recv(hosts, 0.0) {}
  double Start(const HostTask& t, int c) const {
    double s = send[t.sender_hosts[c]];
    for (int r : t.receiver_hosts) s = std::max(s, recv[r]);
    return s;
  }
  double Place(const HostTask& t, int c) {
    const double end = Start(t, c) + t.duration_s[c];
    send[t.sender_hosts[c]] = end;
    for (int r : t.receiver_hosts) recv[r] = end;
    return end;
  }
};

Schedule Naive(const std::vector<HostTask>& tasks) {
  Schedule s;
  s.order.resize(tasks.size());
  std::iota(s.order.begin(), s.order.end(), 0);
  s.choice.assign(tasks.size(), 0);  // Hosts ascend, so 0 is the lowest-index device's host.
  return s;
}

Schedule LoadBalance(const std::vector<HostTask>& tasks) {
  Schedule s;
  s.order.resize(tasks.size());
  std::iota(s.order.begin(), s.order.end(), 0);
  std::stable_sort(s.order.begin(), s.order.end(), [&](int a, int b) {
    return tasks[a].duration_s.front() > tasks[b].duration_s.front();
  });
  s.choice.assign(tasks.size(), 0);
  std::vector<double> load(NumHosts(tasks), 0.0);
  for (int i : s.order) {
    const HostTask& t = tasks[i];
    int best = 0;
    for (size_t c = 1; c < t.sender_hosts.size(); ++c) {
      if (load[t.sender_hosts[c]] < load[t.sender_hosts[best]]) best = static_cast<int>(c);
    }
    s.choice[i] = best;
    load[t.sender_hosts[best]] += t.duration_s[best];
  }
  return s;
}

// Depth-first branch and bound over (next task, sender host).
class Dfs {
 public:
  Dfs(const std::vector<HostTask>& tasks, int64_t budget)
      : tasks_(tasks),
        hosts_(NumHosts(tasks)),
        budget_(budget),
        done_(tasks.size(), false),
        choice_(tasks.size(), 0) {
    // Work that must land on a host side whatever the choices: every receive side gets all its
    // tasks; a send side the tasks with it as only candidate (minimum duration).
    rem_recv_.assign(hosts_, 0.0);
    rem_send_.assign(hosts_, 0.0);
    for (const HostTask& t : tasks_) {
      for (int r : t.receiver_hosts) rem_recv_[r] += MinDuration(t);
      if (t.sender_hosts.size() == 1) rem_send_[t.sender_hosts[0]] += t.duration_s[0];
    }
    // Identical tasks (same candidates, durations, receivers) are interchangeable.
    klass_.assign(tasks_.size(), -1);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      for (size_t j = 0; j < i && klass_[i] < 0; ++j) {
        const HostTask& a = tasks_[i];
        const HostTask& b = tasks_[j];
        if (a.sender_hosts == b.sender_hosts && a.duration_s == b.duration_s &&
            a.receiver_hosts == b.receiver_hosts) {
          klass_[i] = klass_[j];
        }
      }
      if (klass_[i] < 0) klass_[i] = static_cast<int>(i);
    }
  }

  Schedule Run() {
    Frontier f(hosts_);
    root_bound_ = LowerBound(f, 0.0);
    // The load-balance schedule is the first incumbent: a budget too small to reach a leaf
    // still returns a complete schedule, never worse than Eq. 4's greedy.
    best_ = LoadBalance(tasks_);
    best_.makespan_s = Makespan(tasks_, best_.order, best_.choice);
    reached_bound_ = best_.makespan_s <= root_bound_ * (1 + 1e-12);
    Visit(f, 0.0);
    best_.dfs_exhausted = nodes_ < budget_ || reached_bound_;
    return best_;
  }

 private:
  static double MinDuration(const HostTask& t) {
    return *std::min_element(t.duration_s.begin(), t.duration_s.end());
  }

  double LowerBound(const Frontier& f, double makespan) const {
    double lb = makespan;
    for (int h = 0; h < hosts_; ++h) {
      lb = std::max(lb, f.recv[h] + rem_recv_[h]);
      lb = std::max(lb, f.send[h] + rem_send_[h]);
    }
    return lb;
  }

  void Visit(Frontier& f, double makespan) {
    if (reached_bound_ || nodes_++ >= budget_) return;
    if (order_.size() == tasks_.size()) {
      if (makespan < best_.makespan_s) {
        best_.order = order_;
        best_.choice = choice_;
        best_.makespan_s = makespan;
        // Nothing can beat the root's lower bound: the search is over.
        reached_bound_ = makespan <= root_bound_ * (1 + 1e-12);
      }
      return;
    }
    struct Child {
      double end;
      int task, c;
    };
    std::vector<Child> children;
    std::vector<bool> class_tried(tasks_.size(), false);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (done_[i] || class_tried[klass_[i]]) continue;
      class_tried[klass_[i]] = true;
      const HostTask& t = tasks_[i];
      for (size_t c = 0; c < t.sender_hosts.size(); ++c) {
        children.push_back({f.Start(t, static_cast<int>(c)) + t.duration_s[c], static_cast<int>(i),
                            static_cast<int>(c)});
      }
    }
    nodes_ += static_cast<int64_t>(children.size());  // The budget counts generated children.
    std::stable_sort(children.begin(), children.end(),
                     [](const Child& a, const Child& b) { return a.end < b.end; });
    for (const Child& ch : children) {
      if (reached_bound_ || nodes_ >= budget_) return;
      const HostTask& t = tasks_[ch.task];
      Frontier g = f;
      g.Place(t, ch.c);
      done_[ch.task] = true;
      for (int r : t.receiver_hosts) rem_recv_[r] -= MinDuration(t);
      if (t.sender_hosts.size() == 1) rem_send_[t.sender_hosts[0]] -= t.duration_s[0];
      const double ms = std::max(makespan, ch.end);
      if (LowerBound(g, ms) < best_.makespan_s) {
        order_.push_back(ch.task);
        choice_[ch.task] = ch.c;
        Visit(g, ms);
        order_.pop_back();
      }
      done_[ch.task] = false;
      for (int r : t.receiver_hosts) rem_recv_[r] += MinDuration(t);
      if (t.sender_hosts.size() == 1) rem_send_[t.sender_hosts[0]] += t.duration_s[0];
    }
  }

  const std::vector<HostTask>& tasks_;
  int hosts_;
  int64_t budget_;
  int64_t nodes_ = 0;
  double root_bound_ = 0;
  bool reached_bound_ = false;
  std::vector<bool> done_;
  std::vector<int> order_, choice_, klass_;
  std::vector<double> rem_recv_, rem_send_;
  Schedule best_;
};

Schedule Greedy(const std::vector<HostTask>& tasks, const SchedulerOptions& o) {
  const int hosts = NumHosts(tasks);
  std::mt19937_64 rng(o.seed);
  Schedule best;
  // Beyond kLargeTasks tasks one run with two draws per round keeps the cost near O(n²).
  constexpr size_t kLargeTasks = 256;
  const bool large = tasks.size() > kLargeTasks;
  const int restarts = large ? 1 : std::max(1, o.greedy_restarts);
  const int draws = large ? std::min(2, std::max(1, o.greedy_draws)) : std::max(1, o.greedy_draws);
  for (int restart = 0; restart < restarts; ++restart) {
    Schedule s;
    s.choice.assign(tasks.size(), 0);
    std::vector<int> remaining(tasks.size());
    std::iota(remaining.begin(), remaining.end(), 0);
    while (!remaining.empty()) {
      std::vector<std::pair<int, int>> round;  // (task, choice)
      int round_hosts = -1;
      for (int draw = 0; draw < draws; ++draw) {
        std::vector<int> perm = remaining;
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<bool> send_busy(hosts, false), recv_busy(hosts, false);
        std::vector<std::pair<int, int>> picked;
        int busy = 0;
        for (int i : perm) {
          const HostTask& t = tasks[i];
          if (std::any_of(t.receiver_hosts.begin(), t.receiver_hosts.end(),
                          [&](int r) { return recv_busy[r]; })) {
            continue;
          }
          std::vector<int> free;
          for (size_t c = 0; c < t.sender_hosts.size(); ++c) {
            if (!send_busy[t.sender_hosts[c]]) free.push_back(static_cast<int>(c));
          }
          if (free.empty()) continue;
          const int c = free[std::uniform_int_distribution<size_t>(0, free.size() - 1)(rng)];
          send_busy[t.sender_hosts[c]] = true;
          for (int r : t.receiver_hosts) recv_busy[r] = true;
          busy += 1 + static_cast<int>(t.receiver_hosts.size());
          picked.emplace_back(i, c);
        }
        if (busy > round_hosts) {
          round_hosts = busy;
          round = std::move(picked);
        }
      }
      for (const auto& [i, c] : round) {
        s.order.push_back(i);
        s.choice[i] = c;
        std::erase(remaining, i);
      }
    }
    s.makespan_s = Makespan(tasks, s.order, s.choice);
    if (best.order.empty() || s.makespan_s < best.makespan_s) best = std::move(s);
  }
  return best;
}

}  // namespace

absl::StatusOr<SchedulerKind> ParseScheduler(const std::string& name) {
  for (SchedulerKind k : {SchedulerKind::kNaive, SchedulerKind::kLoadBalance, SchedulerKind::kDfs,
                          SchedulerKind::kGreedy, SchedulerKind::kEnsemble}) {
    if (name == ToString(k)) return k;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--scheduler: '%s' is not allowed; allowed: naive, load-balance, dfs, greedy, ensemble%s",
      name, core::DidYouMean(name, {"naive", "load-balance", "dfs", "greedy", "ensemble"})));
}

const char* ToString(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::kNaive:
      return "naive";
    case SchedulerKind::kLoadBalance:
      return "load-balance";
    case SchedulerKind::kDfs:
      return "dfs";
    case SchedulerKind::kGreedy:
      return "greedy";
    case SchedulerKind::kEnsemble:
      return "ensemble";
  }
  return "?";
}

double Makespan(const std::vector<HostTask>& tasks, const std::vector<int>& order,
                const std::vector<int>& choice) {
  Frontier f(NumHosts(tasks));
  double end = 0;
  for (int i : order) end = std::max(end, f.Place(tasks[i], choice[i]));
  return end;
}

Schedule ScheduleTasks(const std::vector<HostTask>& tasks, SchedulerKind kind,
                       const SchedulerOptions& options) {
  Schedule s;
  switch (kind) {
    case SchedulerKind::kNaive:
      s = Naive(tasks);
      break;
    case SchedulerKind::kLoadBalance:
      s = LoadBalance(tasks);
      break;
    case SchedulerKind::kDfs:
      s = Dfs(tasks, options.dfs_budget).Run();
      break;
    case SchedulerKind::kGreedy:
      s = Greedy(tasks, options);
      break;
    case SchedulerKind::kEnsemble: {
      Schedule d = Dfs(tasks, options.dfs_budget).Run();
      Schedule g = Greedy(tasks, options);
      s = d.makespan_s <= g.makespan_s ? std::move(d) : std::move(g);
      break;
    }
  }
  s.makespan_s = Makespan(tasks, s.order, s.choice);
  return s;
}

Schedule BruteForceOptimum(const std::vector<HostTask>& tasks) {
  Schedule best;
  std::vector<int> order(tasks.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int> choice(tasks.size(), 0);
  do {
    // Every sender choice, as a mixed-radix counter.
    std::fill(choice.begin(), choice.end(), 0);
    while (true) {
      const double ms = Makespan(tasks, order, choice);
      if (best.order.empty() || ms < best.makespan_s) {
        best.order = order;
        best.choice = choice;
        best.makespan_s = ms;
      }
      size_t k = 0;
      while (k < tasks.size() && ++choice[k] == static_cast<int>(tasks[k].sender_hosts.size())) {
        choice[k++] = 0;
      }
      if (k == tasks.size()) break;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace meshsim::algorithms::reshard
