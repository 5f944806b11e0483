// The executor runs an OpGraph on the simulator: it starts each op when its dependencies have
// finished, hands it to the runner registered for its kind, and collects the timeline.
//
// Ready ops start in id order: ops that become ready at one timestamp are started together by a
// single dispatch event, lowest id first. A collective is one op whose dependencies come from
// every member's stream, so it starts only when all members have reached it (a rendezvous).
// Runners own the timing: they call `Finish(id)` exactly once, from a simulator event, and add
// timeline rows through `Record` (the executor records nothing on its own, because only the
// runner knows which unit of which chip did what, and when).
//
// If the event queue drains while ops are unfinished, `Run` fails with a hang report that lists
// the stuck ops: those never started (with the dependencies they still wait for) and those
// started but never finished (with what their runner says they wait for).
//
// Example:
//   Simulator sim;  OpGraph g;  ...build g...
//   Executor exec(sim, g);
//   DelayRunner delays;
//   exec.SetRunner(OpKind::kDelay, &delays);
//   absl::Status s = exec.Run();   // exec.makespan(), exec.timeline(), exec.fingerprint()
#ifndef MESHSIM_CORE_EXECUTOR_H_
#define MESHSIM_CORE_EXECUTOR_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/op_graph.h"
#include "core/simulator.h"
#include "core/timeline.h"

namespace meshsim::core {

class Executor;

// Runs ops of one or more kinds. Implementations live in accel/ (compute, HBM) and network/
// (transfers, collectives); core provides DelayRunner.
class OpRunner {
 public:
  virtual ~OpRunner() = default;
  // Starts `op`; must arrange for exec.Finish(id) to be called exactly once, later or now.
  virtual void Start(OpId id, const Op& op, Executor& exec) = 0;
  // For the hang report: what a started, unfinished op is waiting for.
  virtual std::string DescribeWait(OpId id) const { return "running, never finished"; }
};

class Executor {
 public:
  // `graph` must outlive the executor and not change while it runs.
  Executor(Simulator& sim, const OpGraph& graph);

  // Registers the runner for `kind` (not owned).
  void SetRunner(OpKind kind, OpRunner* runner);

  // Runs the whole graph. Errors: FailedPrecondition if an op kind has no runner (before
  // anything runs); Internal with the hang report if ops remain unfinished when the queue drains.
  absl::Status Run();

  // Called by runners when op `id` is complete. Fatal if called twice or before it started.
  void Finish(OpId id);

  // Appends a timeline row, or hands it to the sink if one is set; MakeRow pre-fills op, chip,
  // kind, tags and times. With a timeline budget that cannot grow the timeline, the row is
  // dropped and the simulator stopped (see set_timeline_budget).
  void Record(const TimelineRow& row) {
    if (sink_ != nullptr) {
      sink_->Add(row);
    } else if (timeline_.size() < timeline_.capacity() || GrowTimeline()) {
      timeline_.push_back(row);
    }
  }
  // Sends every row recorded from now on to `sink` (not owned) instead of timeline(); null keeps
  // them (the default).
  void set_sink(TimelineSink* sink) { sink_ = sink; }
  // Bounds the kept timeline's memory (not owned; null = unbounded, the default). Once the
  // budget is exhausted, rows are dropped and the simulator is stopped, so Run returns early
  // with a hang report; the caller checks budget->exhausted() first.
  void set_timeline_budget(TimelineBudget* budget) { timeline_budget_ = budget; }
  // Earliest start per op (indexed by op id; empty = none): an op whose dependencies have
  // finished still waits until its release time — the host that issues it has not yet (the
  // software stack's host time per op, sim/machine.h IssueFromHost). Call before Run.
  void set_release_times(std::vector<Time> release) { release_ = std::move(release); }
  // Orders the graph does not state: for each (a, b), op b also waits until op a has finished
  // (a < b: the program order of a stream, sim/machine.h OrderStreams). Edges the graph already
  // has are the caller's to leave out. Call once, before Run.
  void set_order_edges(const std::vector<std::pair<OpId, OpId>>& edges);
  // Orders by when kernels begin: for each edge, op `after` also waits until op `before` has
  // begun on `chip` (Begun; before < after: the one hardware queue of a GPU whose streams share
  // it, sim/machine.h OrderStreams). Call once, before Run.
  struct BeginEdge {
    OpId before, after;
    ChipId chip;
  };
  void set_begin_edges(const std::vector<BeginEdge>& edges);
  // A runner says that op `id`'s kernel has begun on `chip` (its CTAs dispatched there), which
  // releases the ops waiting for that (set_begin_edges); nothing for other ops. An op that was
  // held only by begin edges gets a kQueue row from when the rest of its dependencies (and its
  // release time) allowed it to the moment it is released: on its chip (kChip) or, for a
  // collective, on each member (kNic).
  void Begun(OpId id, ChipId chip);
  TimelineRow MakeRow(OpId id, ChipId chip, Phase phase, UnitKind unit, uint16_t unit_index,
                      Time start, Time end) const;

  Simulator& sim() { return sim_; }
  const OpGraph& graph() const { return graph_; }
  Time start_time(OpId id) const { return start_[id.value()]; }
  Time end_time(OpId id) const { return end_[id.value()]; }
  bool finished(OpId id) const { return state_[id.value()] == State::kFinished; }
  Time makespan() const { return makespan_; }
  size_t finished_count() const { return finished_count_; }
  const TimelineRows& timeline() const { return timeline_; }
  TimelineRows TakeTimeline() { return std::move(timeline_); }
  // Hash of every op's (id, finish time): equal runs, equal fingerprints. Independent of the
  // order in which events at one instant ran, which is not a result of the simulation.
  uint64_t fingerprint() const { return fingerprint_; }
  // An op's term of the fingerprint (the fingerprint is their sum over the ops).
  static uint64_t FingerprintTerm(uint32_t op, Time end) {
    // splitmix64's finalizer of the mixed (id, finish time).
    uint64_t h = static_cast<uint64_t>(end.ps()) * 0x9e3779b97f4a7c15ull ^ op;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
  }

  // The hang report for the current state (empty when every op finished).
  std::string HangReport(size_t max_ops = 20) const;

 private:
  enum class State : uint8_t { kWaiting, kReady, kRunning, kFinished };
  void MakeReady(uint32_t op);
  // One dependency of op `s` is met (`begin`: a begin edge); releases it at the last.
  void Satisfy(uint32_t s, bool begin);
  void Release(uint32_t op);  // MakeReady now, or at its release time if that is later.
  void Dispatch();
  // Makes room for one more row in a full timeline_; false when the budget forbids it.
  bool GrowTimeline();

  Simulator& sim_;
  const OpGraph& graph_;
  std::array<OpRunner*, kNumOpKinds> runners_{};
  std::vector<uint32_t> succ_begin_, succ_;
  std::vector<uint32_t> order_begin_, order_succ_;  // set_order_edges' successors (CSR), or empty.
  // set_begin_edges' (after, chip) by `before` (CSR), or empty.
  std::vector<uint32_t> begin_begin_;
  std::vector<std::pair<uint32_t, ChipId>> begin_succ_;
  // With begin edges, by op: those not yet met, and since when they alone hold it (Max: not yet).
  std::vector<uint32_t> begin_pending_;
  std::vector<Time> queued_since_;
  std::vector<uint32_t> pending_deps_;
  std::vector<State> state_;
  std::vector<Time> start_, end_;
  std::vector<uint32_t> ready_;  // Min-heap of op ids ready to start.
  TimelineRows timeline_;
  TimelineSink* sink_ = nullptr;
  TimelineBudget* timeline_budget_ = nullptr;
  Time makespan_;
  size_t finished_count_ = 0;
  std::vector<Time> release_;  // Per op, or empty.
  uint64_t fingerprint_ = 0;
  bool dispatch_pending_ = false;
};

// Runs kDelay ops: each takes exactly op.duration on unit (kCore, op.unit) of its chip.
class DelayRunner : public OpRunner {
 public:
  void Start(OpId id, const Op& op, Executor& exec) override;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_EXECUTOR_H_
