#include "core/executor.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/check.h"

namespace meshsim::core {

Executor::Executor(Simulator& sim, const OpGraph& graph)
    : sim_(sim),
      graph_(graph),
      pending_deps_(graph.size()),
      state_(graph.size(), State::kWaiting),
      start_(graph.size()),
      end_(graph.size()) {
  // Successor lists in CSR form: count, prefix-sum, fill.
  const size_t n = graph.size();
  succ_begin_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const auto deps = graph.deps(OpId(static_cast<uint32_t>(i)));
    pending_deps_[i] = static_cast<uint32_t>(deps.size());
    for (OpId d : deps) ++succ_begin_[d.value() + 1];
  }
  for (size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(graph.num_deps());
  std::vector<uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    for (OpId d : graph.deps(OpId(static_cast<uint32_t>(i)))) {
      succ_[fill[d.value()]++] = static_cast<uint32_t>(i);
    }
  }
}

void Executor::set_order_edges(const std::vector<std::pair<OpId, OpId>>& edges) {
  MESHSIM_CHECK(order_begin_.empty()) << "set_order_edges called twice";
  const size_t n = graph_.size();
  order_begin_.assign(n + 1, 0);
  for (const auto& [a, b] : edges) {
    MESHSIM_CHECK(a.value() < b.value() && b.value() < n)
        << "order edge " << a.value() << " -> " << b.value() << " is not forward";
    ++order_begin_[a.value() + 1];
    ++pending_deps_[b.value()];
  }
  for (size_t i = 0; i < n; ++i) order_begin_[i + 1] += order_begin_[i];
  order_succ_.resize(edges.size());
  std::vector<uint32_t> fill(order_begin_.begin(), order_begin_.end() - 1);
  for (const auto& [a, b] : edges) order_succ_[fill[a.value()]++] = b.value();
}

void Executor::set_begin_edges(const std::vector<BeginEdge>& edges) {
  MESHSIM_CHECK(begin_begin_.empty()) << "set_begin_edges called twice";
  const size_t n = graph_.size();
  begin_begin_.assign(n + 1, 0);
  for (const BeginEdge& e : edges) {
    MESHSIM_CHECK(e.before.value() < e.after.value() && e.after.value() < n)
        << "begin edge " << e.before.value() << " -> " << e.after.value() << " is not forward";
    ++begin_begin_[e.before.value() + 1];
    ++pending_deps_[e.after.value()];
  }
  begin_pending_.assign(n, 0);
  queued_since_.assign(n, Time::Max());
  for (const BeginEdge& e : edges) ++begin_pending_[e.after.value()];
  for (size_t i = 0; i < n; ++i) begin_begin_[i + 1] += begin_begin_[i];
  begin_succ_.resize(edges.size());
  std::vector<uint32_t> fill(begin_begin_.begin(), begin_begin_.end() - 1);
  for (const BeginEdge& e : edges) {
    begin_succ_[fill[e.before.value()]++] = {e.after.value(), e.chip};
  }
}

void Executor::Begun(OpId id, ChipId chip) {
  if (begin_begin_.empty()) return;
  const uint32_t i = id.value();
  for (uint32_t j = begin_begin_[i]; j < begin_begin_[i + 1]; ++j) {
    const auto& [s, c] = begin_succ_[j];
    if (c == chip) Satisfy(s, /*begin=*/true);
  }
}

void Executor::Satisfy(uint32_t s, bool begin) {
  MESHSIM_CHECK(pending_deps_[s] > 0) << "dependency count of op " << s << " went negative";
  --pending_deps_[s];
  if (begin_pending_.empty()) {
    if (pending_deps_[s] == 0) Release(s);
    return;
  }
  if (begin) --begin_pending_[s];
  const Time now = sim_.Now();
  if (pending_deps_[s] > 0) {
    // Only begin edges hold it now: the queue's wait starts (or its release time, if later).
    if (pending_deps_[s] == begin_pending_[s] && !begin) {
      queued_since_[s] = release_.empty() ? now : std::max(now, release_[s]);
    }
    return;
  }
  if (begin && queued_since_[s] < now) {
    const Op& op = graph_.op(OpId(s));
    if (op.kind == OpKind::kCollective) {
      for (ChipId c : graph_.group(op.group)) {
        Record(MakeRow(OpId(s), c, Phase::kQueue, UnitKind::kNic, 0, queued_since_[s], now));
      }
    } else if (op.chip.valid()) {
      Record(MakeRow(OpId(s), op.chip, Phase::kQueue, UnitKind::kChip, 0, queued_since_[s], now));
    }
  }
  Release(s);
}

void Executor::SetRunner(OpKind kind, OpRunner* runner) {
  runners_[static_cast<size_t>(kind)] = runner;
}

absl::Status Executor::Run() {
  for (size_t i = 0; i < graph_.size(); ++i) {
    const Op& op = graph_.op(OpId(static_cast<uint32_t>(i)));
    if (runners_[static_cast<size_t>(op.kind)] == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("no runner for '", ToString(op.kind), "' ops (op ", i,
                       "): the chosen system does not model them"));
    }
  }
  MESHSIM_CHECK(release_.empty() || release_.size() == graph_.size())
      << "release times for " << release_.size() << " of " << graph_.size() << " ops";
  for (uint32_t i = 0; i < graph_.size(); ++i) {
    if (pending_deps_[i] == 0) Release(i);
    // Held by begin edges alone from the start.
    if (!begin_pending_.empty() && pending_deps_[i] > 0 && pending_deps_[i] == begin_pending_[i]) {
      queued_since_[i] = release_.empty() ? Time::Zero() : release_[i];
    }
  }
  sim_.Run();
  if (sim_.horizon_exceeded()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "simulated time passes the limit of %s (%d of %d ops finished by %s); the scenario "
        "cannot be simulated: lower its sizes, step counts or durations, or raise bandwidths",
        Time::Horizon().ToString(), finished_count_, graph_.size(), sim_.Now().ToString()));
  }
  if (finished_count_ != graph_.size()) {
    return absl::InternalError(HangReport());
  }
  return absl::OkStatus();
}

void Executor::Release(uint32_t op) {
  if (!release_.empty() && release_[op] > sim_.Now()) {
    sim_.ScheduleAt(release_[op], [this, op] { MakeReady(op); });
    return;
  }
  MakeReady(op);
}

void Executor::MakeReady(uint32_t op) {
  state_[op] = State::kReady;
  ready_.push_back(op);
  std::push_heap(ready_.begin(), ready_.end(), std::greater<>());
  if (!dispatch_pending_) {
    dispatch_pending_ = true;
    sim_.ScheduleAt(sim_.Now(), [this] { Dispatch(); });
  }
}

void Executor::Dispatch() {
  dispatch_pending_ = false;
  while (!ready_.empty()) {
    std::pop_heap(ready_.begin(), ready_.end(), std::greater<>());
    const uint32_t i = ready_.back();
    ready_.pop_back();
    const OpId id(i);
    state_[i] = State::kRunning;
    start_[i] = sim_.Now();
    const Op& op = graph_.op(id);
    runners_[static_cast<size_t>(op.kind)]->Start(id, op, *this);
  }
}

void Executor::Finish(OpId id) {
  const uint32_t i = id.value();
  MESHSIM_CHECK(state_[i] == State::kRunning) << "Finish(" << i << ") on an op not running";
  state_[i] = State::kFinished;
  const Time now = sim_.Now();
  end_[i] = now;
  makespan_ = std::max(makespan_, now);
  ++finished_count_;
  // A sum of one mixed (id, finish time) per op: the same for every order in which equal-time
  // events ran.
  fingerprint_ += FingerprintTerm(i, now);
  for (uint32_t j = succ_begin_[i]; j < succ_begin_[i + 1]; ++j) Satisfy(succ_[j], false);
  if (!order_begin_.empty()) {
    for (uint32_t j = order_begin_[i]; j < order_begin_[i + 1]; ++j) {
      Satisfy(order_succ_[j], false);
    }
  }
}

bool Executor::GrowTimeline() {
  if (timeline_budget_ == nullptr) return true;  // push_back grows it.
  if (timeline_budget_->Grow(timeline_)) return true;
  sim_.Stop();
  return false;
}

TimelineRow Executor::MakeRow(OpId id, ChipId chip, Phase phase, UnitKind unit, uint16_t unit_index,
                              Time start, Time end) const {
  const Op& op = graph_.op(id);
  TimelineRow row;
  row.start = start;
  row.end = end;
  row.op = id;
  row.chip = chip;
  row.name = op.tags.name;
  row.layer = op.tags.layer;
  row.slice = static_cast<int16_t>(op.tags.slice);
  row.pass = op.tags.pass;
  row.stage = op.tags.stage;
  row.microbatch = op.tags.microbatch;
  row.task = op.tags.task;
  row.kind = op.kind;
  row.collective = op.collective;
  row.phase = phase;
  row.unit_kind = unit;
  row.unit_index = unit_index;
  return row;
}

std::string Executor::HangReport(size_t max_ops) const {
  if (finished_count_ == graph_.size()) return "";
  size_t running = 0, waiting = 0;
  std::vector<std::string> lines;
  const auto describe = [&](uint32_t i) {
    const OpId id(i);
    std::vector<std::string> chips;
    for (ChipId c : graph_.ChipsOf(id)) {
      if (chips.size() == 8) {
        chips.push_back("...");
        break;
      }
      chips.push_back(absl::StrCat(c.value()));
    }
    return absl::StrFormat("op %d '%s' on chip%s %s", i, graph_.Label(id),
                           chips.size() > 1 ? "s" : "", absl::StrJoin(chips, ","));
  };
  for (uint32_t i = 0; i < graph_.size(); ++i) {
    if (state_[i] == State::kFinished) continue;
    std::string line;
    if (state_[i] == State::kRunning) {
      ++running;
      const OpKind kind = graph_.op(OpId(i)).kind;
      line = absl::StrCat(describe(i), ": started at ", start_[i].ToString(), ", ",
                          runners_[static_cast<size_t>(kind)]->DescribeWait(OpId(i)));
    } else {
      ++waiting;
      // Only ops whose unfinished deps are all finished-or-running are the root causes; still,
      // list the first unfinished deps of any waiting op so the chain can be followed.
      std::vector<std::string> deps;
      for (OpId d : graph_.deps(OpId(i))) {
        if (state_[d.value()] == State::kFinished) continue;
        if (deps.size() == 4) {
          deps.push_back("...");
          break;
        }
        deps.push_back(absl::StrCat(d.value()));
      }
      // Orders the graph does not state: the stream's earlier op, the queue's earlier collective.
      std::vector<std::string> order, begin;
      for (size_t a = 0; a + 1 < order_begin_.size(); ++a) {
        for (uint32_t j = order_begin_[a]; j < order_begin_[a + 1]; ++j) {
          if (order_succ_[j] == i && state_[a] != State::kFinished) {
            order.push_back(absl::StrCat(a));
          }
        }
      }
      for (size_t a = 0; a + 1 < begin_begin_.size(); ++a) {
        for (uint32_t j = begin_begin_[a]; j < begin_begin_[a + 1]; ++j) {
          const auto& [s, c] = begin_succ_[j];
          if (s == i && state_[a] != State::kFinished) {
            begin.push_back(absl::StrCat(a, " on chip ", c.value()));
          }
        }
      }
      line = absl::StrCat(describe(i), ": waits for op", deps.size() > 1 ? "s " : " ",
                          absl::StrJoin(deps, ", "));
      if (deps.empty()) line = absl::StrCat(describe(i), ": waits");
      if (!order.empty()) {
        absl::StrAppend(&line, deps.empty() ? " for" : ",", " its stream's op",
                        order.size() > 1 ? "s " : " ", absl::StrJoin(order, ", "));
      }
      if (!begin.empty()) {
        absl::StrAppend(&line, deps.empty() && order.empty() ? " for" : ",",
                        " the queue's collective", begin.size() > 1 ? "s " : " ",
                        absl::StrJoin(begin, ", "), " to begin");
      }
    }
    if (lines.size() < max_ops) lines.push_back(std::move(line));
  }
  return absl::StrFormat(
      "hang: the event queue drained at %s with %d of %d ops unfinished (%d running, %d "
      "waiting):\n  %s%s",
      sim_.Now().ToString(), graph_.size() - finished_count_, graph_.size(), running, waiting,
      absl::StrJoin(lines, "\n  "),
      running + waiting > lines.size()
          ? absl::StrFormat("\n  ... and %d more", running + waiting - lines.size())
          : "");
}

void DelayRunner::Start(OpId id, const Op& op, Executor& exec) {
  Simulator& sim = exec.sim();
  const Time start = sim.Now();
  sim.ScheduleAfter(op.duration(), [&exec, id, chip = op.chip, unit = op.unit, start] {
    exec.Record(exec.MakeRow(id, chip, Phase::kOp, UnitKind::kCore, unit, start, exec.sim().Now()));
    exec.Finish(id);
  });
}

}  // namespace meshsim::core
