#include "algorithms/reshard/reshard.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_format.h"
#include "core/did_you_mean.h"
#include "core/op.h"
#include "core/time.h"

namespace meshsim::algorithms::reshard {

namespace {

// Receivers grouped by host, hosts ascending, devices ascending within a host.
std::map<int, std::vector<core::ChipId>> ByHost(const std::vector<core::ChipId>& chips,
                                                const HostModel& hosts) {
  std::map<int, std::vector<core::ChipId>> out;
  for (core::ChipId c : chips) out[hosts.HostOf(c)].push_back(c);
  return out;
}

// T_i when host `h` sends task `t` under `strategy` (scheduler.h's model).
double Duration(const UnitTask& t, int h, Strategy strategy, const HostModel& hosts) {
  const auto bw = [&](int r) {
    return r == h ? hosts.intra_host_bytes_per_s : hosts.inter_host_bytes_per_s;
  };
  const double bytes = static_cast<double>(t.bytes);
  double total = 0;
  const auto groups = ByHost(t.receivers, hosts);
  switch (strategy) {
    case Strategy::kSendRecv:
      for (const auto& [r, devs] : groups) total += devs.size() * bytes / bw(r);
      break;
    case Strategy::kSignal:
      for (const auto& [r, devs] : groups) total += devs.size() * 1.0 / bw(r);
      break;
    case Strategy::kLocalAllGather:
      for (const auto& [r, devs] : groups) {
        const int b = static_cast<int>(devs.size());
        total += (SplitsEvenly(t, b) ? 1 : b) * bytes / bw(r);
      }
      break;
    case Strategy::kGlobalAllGather: {
      const int n = static_cast<int>(t.receivers.size());
      if (!SplitsEvenly(t, n)) {  // Falls back to send-recv.
        for (const auto& [r, devs] : groups) total += devs.size() * bytes / bw(r);
        break;
      }
      bool remote = false;
      for (const auto& [r, devs] : groups) remote |= r != h;
      total = bytes / (remote ? hosts.inter_host_bytes_per_s : hosts.intra_host_bytes_per_s);
      // The ring all-gather crosses hosts: each boundary carries (n−1)/n of the tile.
      if (groups.size() > 1) total += bytes * (n - 1) / n / hosts.inter_host_bytes_per_s;
      break;
    }
    case Strategy::kBroadcast: {
      bool remote = false;
      for (const auto& [r, devs] : groups) remote |= r != h;
      total = bytes / (remote ? hosts.inter_host_bytes_per_s : hosts.intra_host_bytes_per_s);
      break;
    }
  }
  return total;
}

class Lowerer {
 public:
  Lowerer(const HostModel& hosts, core::OpGraph& graph, HostTraffic* traffic,
          const core::OpTags& tags)
      : hosts_(hosts), graph_(graph), traffic_(traffic), tags_(tags) {}

  core::OpId Transfer(core::ChipId from, core::ChipId to, int64_t bytes,
                      const std::vector<core::OpId>& deps, const std::string& name) {
    core::Op op = core::Op::Transfer(from, to, bytes);
    op.tags = tags_;
    op.tags.name = graph_.Intern(name);
    Count(from, to, bytes);
    return graph_.Add(op, deps);
  }

  core::OpId Collective(core::CollectiveKind kind, const std::vector<core::ChipId>& group,
                        int64_t bytes, const std::vector<core::OpId>& deps,
                        const std::string& name) {
    core::Op op = core::Op::Collective(kind, graph_.AddGroup(group), bytes);
    op.tags = tags_;
    op.tags.name = graph_.Intern(name);
    if (kind == core::CollectiveKind::kBroadcast) {
      for (size_t i = 1; i < group.size(); ++i) Count(group[i - 1], group[i], bytes);
    } else {  // AllGather ring: every member's shard passes each hop once (P−1 shards per hop).
      const int64_t per_hop = bytes * static_cast<int64_t>(group.size() - 1);
      for (size_t i = 0; i < group.size(); ++i) {
        Count(group[i], group[(i + 1) % group.size()], per_hop);
      }
    }
    return graph_.Add(op, deps);
  }

  core::OpId Join(core::ChipId chip, const std::vector<core::OpId>& deps, const std::string& name) {
    core::Op op = core::Op::Delay(chip, core::Time());
    op.tags = tags_;
    op.tags.name = graph_.Intern(name);
    return graph_.Add(op, deps);
  }

 private:
  void Count(core::ChipId from, core::ChipId to, int64_t bytes) {
    if (traffic_ == nullptr) return;
    const int a = hosts_.HostOf(from), b = hosts_.HostOf(to);
    if (a == b) return;
    const size_t need = static_cast<size_t>(std::max(a, b)) + 1;
    if (traffic_->sent.size() < need) traffic_->sent.resize(need, 0);
    if (traffic_->received.size() < need) traffic_->received.resize(need, 0);
    traffic_->sent[a] += bytes;
    traffic_->received[b] += bytes;
  }

  const HostModel& hosts_;
  core::OpGraph& graph_;
  HostTraffic* traffic_;
  core::OpTags tags_;
};

// link->send_after / recv_after of `chip` into `deps` when set.
void AddLinkDep(const std::vector<core::OpId>& after, core::ChipId chip,
                std::vector<core::OpId>& deps) {
  if (chip.value() < after.size() && after[chip.value()].valid()) {
    deps.push_back(after[chip.value()]);
  }
}

}  // namespace

absl::StatusOr<Strategy> ParseStrategy(const std::string& name) {
  for (Strategy s : {Strategy::kSendRecv, Strategy::kLocalAllGather, Strategy::kGlobalAllGather,
                     Strategy::kBroadcast, Strategy::kSignal}) {
    if (name == ToString(s)) return s;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--strategy: '%s' is not allowed; allowed: send-recv, local-allgather, global-allgather, "
      "broadcast, signal%s",
      name,
      core::DidYouMean(
          name, {"send-recv", "local-allgather", "global-allgather", "broadcast", "signal"})));
}

const char* ToString(Strategy s) {
  switch (s) {
    case Strategy::kSendRecv:
      return "send-recv";
    case Strategy::kLocalAllGather:
      return "local-allgather";
    case Strategy::kGlobalAllGather:
      return "global-allgather";
    case Strategy::kBroadcast:
      return "broadcast";
    case Strategy::kSignal:
      return "signal";
  }
  return "?";
}

bool SplitsEvenly(const UnitTask& task, int b) {
  return std::any_of(task.box.begin(), task.box.end(),
                     [b](const Interval& x) { return x.size() % b == 0; });
}

ReshardPlan PlanReshard(const ReshardProblem& p, const ReshardOptions& options,
                        const HostModel& hosts) {
  ReshardPlan plan;
  plan.options = options;
  plan.tasks = UnitTasks(p);
  for (const UnitTask& t : plan.tasks) {
    HostTask h;
    for (core::ChipId c : t.senders) h.sender_hosts.push_back(hosts.HostOf(c));
    std::sort(h.sender_hosts.begin(), h.sender_hosts.end());
    h.sender_hosts.erase(std::unique(h.sender_hosts.begin(), h.sender_hosts.end()),
                         h.sender_hosts.end());
    for (int s : h.sender_hosts) h.duration_s.push_back(Duration(t, s, options.strategy, hosts));
    for (const auto& [r, devs] : ByHost(t.receivers, hosts)) h.receiver_hosts.push_back(r);
    plan.host_tasks.push_back(std::move(h));
  }
  plan.schedule = ScheduleTasks(plan.host_tasks, options.scheduler, options.scheduler_options);
  // The device within the chosen host: the holder with the fewest bytes assigned so far, so
  // the host's devices share its sends (naive: always the lowest index).
  std::map<int, int64_t> device_bytes;
  plan.sender.assign(plan.tasks.size(), core::ChipId());
  for (int i : plan.schedule.order) {
    const UnitTask& t = plan.tasks[i];
    const int host = plan.host_tasks[i].sender_hosts[plan.schedule.choice[i]];
    core::ChipId best;
    for (core::ChipId c : t.senders) {
      if (hosts.HostOf(c) != host) continue;
      if (!best.valid() || (options.scheduler != SchedulerKind::kNaive &&
                            device_bytes[c.value()] < device_bytes[best.value()])) {
        best = c;
      }
    }
    device_bytes[best.value()] += t.bytes;
    plan.sender[i] = best;
  }
  return plan;
}

void LowerReshard(const ReshardProblem& p, const ReshardPlan& plan, const HostModel& hosts,
                  core::OpGraph& graph, HostTraffic* traffic, ReshardLink* link) {
  (void)p;
  ReshardLink none;
  ReshardLink& l = link != nullptr ? *link : none;
  Lowerer low(hosts, graph, traffic, l.tags);
  std::map<int, core::OpId>& send_last = l.send_last;  // Per host side: the last task's join.
  std::map<int, core::OpId>& recv_last = l.recv_last;
  for (size_t k = 0; k < plan.schedule.order.size(); ++k) {
    const int i = plan.schedule.order[k];
    const UnitTask& t = plan.tasks[i];
    const core::ChipId s = plan.sender[i];
    const int sh = hosts.HostOf(s);
    const auto groups = ByHost(t.receivers, hosts);
    std::vector<core::OpId> deps;
    if (auto it = send_last.find(sh); it != send_last.end()) deps.push_back(it->second);
    for (const auto& [r, devs] : groups) {
      if (auto it = recv_last.find(r); it != recv_last.end()) deps.push_back(it->second);
    }
    AddLinkDep(l.send_after, s, deps);
    for (core::ChipId d : t.receivers) AddLinkDep(l.recv_after, d, deps);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const std::string name = absl::StrFormat("%s.task%d", l.name, i);
    std::vector<core::OpId> ops;
    // The tile split over `devs` (one piece each) and all-gathered among them, or, when it cannot
    // be split evenly (or there is one device), sent whole to each.
    const auto scatter_then_gather = [&](const std::vector<core::ChipId>& devs) {
      const int n = static_cast<int>(devs.size());
      if (n > 1 && SplitsEvenly(t, n)) {
        std::vector<core::OpId> parts;
        for (core::ChipId d : devs) {
          parts.push_back(low.Transfer(s, d, t.bytes / n, deps, name + ".scatter"));
        }
        ops.push_back(low.Collective(core::CollectiveKind::kAllGather, devs, t.bytes / n, parts,
                                     name + ".allgather"));
      } else {
        for (core::ChipId d : devs)
          ops.push_back(low.Transfer(s, d, t.bytes, deps, name + ".send"));
      }
    };
    switch (plan.options.strategy) {
      case Strategy::kSendRecv:
      case Strategy::kSignal: {
        const int64_t bytes = plan.options.strategy == Strategy::kSignal ? 1 : t.bytes;
        for (core::ChipId d : t.receivers) {
          ops.push_back(low.Transfer(s, d, bytes, deps, name + ".send"));
        }
        break;
      }
      case Strategy::kLocalAllGather:
        for (const auto& [r, devs] : groups) scatter_then_gather(devs);
        break;
      case Strategy::kGlobalAllGather: {
        // The ring: the sender's host first, then each other host's receivers together.
        std::vector<core::ChipId> ring;
        if (auto it = groups.find(sh); it != groups.end()) ring = it->second;
        for (const auto& [r, devs] : groups) {
          if (r != sh) ring.insert(ring.end(), devs.begin(), devs.end());
        }
        scatter_then_gather(ring);
        break;
      }
      case Strategy::kBroadcast: {
        // The chain: sender, receivers on its host, then each other host's receivers.
        std::vector<core::ChipId> group = {s};
        if (auto it = groups.find(sh); it != groups.end()) {
          group.insert(group.end(), it->second.begin(), it->second.end());
        }
        for (const auto& [r, devs] : groups) {
          if (r != sh) group.insert(group.end(), devs.begin(), devs.end());
        }
        // A broadcast to one receiver is a point-to-point send: no per-packet stage barriers.
        ops.push_back(group.size() == 2 ? low.Transfer(s, group[1], t.bytes, deps, name + ".send")
                                        : low.Collective(core::CollectiveKind::kBroadcast, group,
                                                         t.bytes, deps, name + ".broadcast"));
        break;
      }
    }
    const core::OpId end = low.Join(s, ops, name + ".done");
    send_last[sh] = end;
    for (const auto& [r, devs] : groups) recv_last[r] = end;
    if (link != nullptr) {
      for (core::ChipId d : t.receivers) {
        if (link->received.size() <= d.value()) link->received.resize(d.value() + 1);
        link->received[d.value()].push_back(end);
      }
    }
  }
}

}  // namespace meshsim::algorithms::reshard
