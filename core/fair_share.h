// Max-min fair bandwidth sharing: the one contention mechanism of meshsim.
//
// Every bandwidth resource (a link direction, a chip's HBM, a DMA engine) has a capacity c_r in
// bytes/s. A flow f moves b_f bytes over a set of resources R_f, optionally capped at a rate
// u_f. Rates x_f are the max-min fair allocation, computed by progressive filling:
//
//   feasibility   Σ_{f ∋ r} x_f ≤ c_r  for every resource r,      0 < x_f ≤ u_f
//   max-min       no x_f can grow without shrinking some x_g ≤ x_f
//
//   repeat until every flow is frozen:
//     share_r = (c_r − Σ frozen x_f on r) / #unfrozen flows on r        for every resource r
//     s* = min(min_r share_r, min over unfrozen f of u_f)
//     freeze each unfrozen flow on a resource with share_r = s* (or whose cap u_f = s*) at x_f = s*
//
// Rates change only when a flow starts or finishes. Such changes mark the flow's resources dirty
// and schedule one solve at the current timestamp, so all starts/finishes at one timestamp are
// batched. A solve re-fills only the binding parts that hold a dirty resource or a flow over
// one, without walking the rest of their components (notes at the end: "Solving by parts"), and
// for each flow whose rate changed credits the bytes it moved at its old rate
// (b_f ← b_f − x_f·Δt) and reschedules its completion at now + ⌈b_f / x_f⌉, in the order the
// flows started; the completions a solve schedules for one instant are one event (notes:
// "Batched completions").
//
// Why the shortcuts a solve takes (non-binding and decoupled resources, recorded fills,
// single-resource components) give the same allocation: the notes at the end of this file.
//
// Example:
//   FairShare fs(sim);
//   ResourceInfo info;  info.name = "link";  info.capacity_bytes_per_s = 50e9;
//   ResourceId link = fs.AddResource(info);
//   fs.StartFlow(1e6, {link}, [] { /* done */ });
//   fs.StartFlow(1e6, {link}, [] { /* done */ });   // each gets 25 GB/s
//   sim.Run();                                       // both finish at 40 us
#ifndef MESHSIM_CORE_FAIR_SHARE_H_
#define MESHSIM_CORE_FAIR_SHARE_H_

#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/ids.h"
#include "core/simulator.h"
#include "core/timeline.h"

namespace meshsim::core {

class FairShare {
 public:
  using Callback = std::function<void()>;
  static constexpr double kNoCap = std::numeric_limits<double>::infinity();

  explicit FairShare(Simulator& sim);
  FairShare(const FairShare&) = delete;
  FairShare& operator=(const FairShare&) = delete;

  // Adds a resource. Precondition (fatal): capacity_bytes_per_s > 0 and finite.
  ResourceId AddResource(ResourceInfo info);

  // Starts moving `bytes` over `resources` (distinct ids); `on_done` runs in the event at which
  // the last byte arrives. A zero-byte flow completes in an event at Now(). A flow over no
  // resource needs a finite `max_rate`. Cost: O(|resources|) plus a solve at this timestamp.
  FlowId StartFlow(double bytes, std::span<const ResourceId> resources, Callback on_done,
                   double max_rate = kNoCap);
  FlowId StartFlow(double bytes, std::initializer_list<ResourceId> resources, Callback on_done,
                   double max_rate = kNoCap) {
    return StartFlow(bytes, std::span<const ResourceId>(resources.begin(), resources.size()),
                     std::move(on_done), max_rate);
  }

  // Starts m = route_ends.size() flows of `bytes` each, all capped at `max_rate`: flow k over
  // resources[route_ends[k−1], route_ends[k]) with on_done[k] (moved from). The result is that of
  // StartFlow called for k = 0, 1, … in order, bit for bit; when the flows form an isolated
  // symmetric group (see "Flow groups" at the end of this file) they are one entity in the solver
  // with one completion event until a flow that could limit them joins one of their resources.
  // An on_done callback may start flows over any of their resources (the group has left them
  // when its completion event begins).
  void StartGroup(double bytes, std::span<const ResourceId> resources,
                  std::span<const uint32_t> route_ends, std::span<Callback> on_done,
                  double max_rate = kNoCap);
  // Flow groups on (the default, set_default_flow_groups) or off: StartGroup then starts the
  // flows one by one. Results are the same either way; tests compare them.
  void set_flow_groups(bool on) { flow_groups_ = on; }
  bool flow_groups() const { return flow_groups_; }
  // The default of set_flow_groups for FairShares constructed from now on (process-wide; for
  // tests that run whole simulations both ways).
  static void set_default_flow_groups(bool on);
  // Groups formed (one solver entity each), and those split into their flows before the end.
  uint64_t groups_formed() const { return groups_formed_; }
  uint64_t groups_split() const { return groups_split_; }

  // Current rate of an active flow in bytes/s (0 until the pending solve has run).
  double Rate(FlowId flow) const { return flows_[flow.value()].rate; }
  bool IsActive(FlowId flow) const { return flows_[flow.value()].active; }

  // Re-fills reuse recorded fills (on by default; off fills every changed part from scratch,
  // with bit-identical rates: for tests that check exactly that).
  void set_reuse_fills(bool on) { reuse_fills_ = on; }

  // Records a CounterSample whenever a resource's total rate changes (off by default).
  void set_record_counters(bool on) { record_counters_ = on; }
  // Bounds the recorded samples' memory, shared with the executor's timeline (not owned; null =
  // unbounded). Once exhausted, samples are dropped and the simulator is stopped.
  void set_timeline_budget(TimelineBudget* budget) { timeline_budget_ = budget; }
  const CounterSamples& counters() const { return counters_; }
  CounterSamples TakeCounters() { return std::move(counters_); }

  size_t num_resources() const { return resources_.size(); }
  // The description given to AddResource (its `bytes` and `busy` are in ResourceReport()).
  const ResourceInfo& resource(ResourceId id) const { return infos_[id.value()]; }
  // Resource descriptions with `bytes` and `busy` accumulated up to Now().
  std::vector<ResourceInfo> ResourceReport() const;
  // Current total rate through a resource in bytes/s.
  double Load(ResourceId id) const { return resources_[id.value()].load; }

  size_t active_flows() const { return active_; }
  uint64_t solves() const { return solves_; }
  uint64_t flows_started() const { return flows_started_; }
  // Flow visits of the solves so far: re-solved (a part re-filled, replayed or not, a group, a
  // resource solved alone) and re-filled (the flows of fills that were not replayed).
  uint64_t flows_solved() const { return flows_solved_; }
  uint64_t flows_refilled() const { return flows_refilled_; }

 private:
  // Layout: the walks of thousands of chips miss the cache on every flow and resource they
  // touch, so each record is two aligned cache lines with what a solve reads in the first, and
  // what only starts and completions need (callbacks, names, counters) lives in other arrays.
  struct alignas(64) Flow {
    double rate = 0;
    double new_rate = 0;   // Scratch for one solve.
    double remaining = 0;  // Bytes still to move as of `settled`.
    Time settled;
    // Its completion's own event, valid exactly while pending (a flow without resources, a
    // zero-byte flow, a split group's member); completions a solve schedules are in batches.
    EventId completion;
    double max_rate = kNoCap;
    uint32_t sub_mark = 0;  // Epoch of the last binding-part walk that reached it.
    uint32_t fill = 0;      // Id of the last fill that set its rate (0: none yet).
    bool frozen = false;    // Scratch for one solve.
    bool active = false;
    bool extra = false;        // Scratch for one Refill: joins the fill unfrozen.
    uint8_t trace = kNoTrace;  // traces_ slot of that fill, if it was recorded.
    // Exactly one resource: what the fills of a resource's local flows ask of every flow on it,
    // here rather than from `resources` (the second cache line).
    bool local = false;
    bool batched = false;  // Its completion is in a batch, or pending in this solve's list.
    // Second cache line. Eight inline: a fat-tree route (two HBMs, six links) needs no heap.
    absl::InlinedVector<ResourceId, 8> resources;
  };
  // A flow over a resource, and the index of this resource in that flow's `resources`.
  struct Member {
    uint32_t flow;
    uint32_t slot;
  };
  // A flow group over a resource: the group, the resource's slot in its `resources`, and
  // whether its members' bounds are counted in the resource's sums.
  struct GroupRef {
    uint32_t group;
    uint32_t slot;
    bool counted = false;
  };
  // The groups over a resource, in join order: two inline (a torus HBM carries a row ring and a
  // column ring), more on the heap. Cheaper than a general small vector on the ring's hot path.
  class GroupRefs {
   public:
    template <typename Refs, typename Ref>
    struct Iter {
      Refs* refs;
      uint32_t i;
      Ref& operator*() const { return (*refs)[i]; }
      Iter& operator++() {
        ++i;
        return *this;
      }
      bool operator!=(const Iter& o) const { return i != o.i; }
    };
    uint32_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    GroupRef& operator[](uint32_t i) { return i < 2 ? inline_[i] : spill_[i - 2]; }
    const GroupRef& operator[](uint32_t i) const { return i < 2 ? inline_[i] : spill_[i - 2]; }
    GroupRef& front() { return inline_[0]; }
    GroupRef& back() { return (*this)[size_ - 1]; }
    const GroupRef& back() const { return (*this)[size_ - 1]; }
    void push_back(GroupRef ref) {
      if (size_ < 2) {
        inline_[size_] = ref;
      } else {
        spill_.push_back(ref);
      }
      ++size_;
    }
    void pop_back() {
      if (size_ > 2) spill_.pop_back();
      --size_;
    }
    void erase(uint32_t i) {  // Keeps the order of the others.
      for (; i + 1 < size_; ++i) (*this)[i] = (*this)[i + 1];
      pop_back();
    }
    Iter<GroupRefs, GroupRef> begin() { return {this, 0}; }
    Iter<GroupRefs, GroupRef> end() { return {this, size_}; }
    Iter<const GroupRefs, const GroupRef> begin() const { return {this, 0}; }
    Iter<const GroupRefs, const GroupRef> end() const { return {this, size_}; }

   private:
    GroupRef inline_[2];
    uint32_t size_ = 0;
    std::vector<GroupRef> spill_;
  };
  struct alignas(64) Resource {
    std::vector<Member> flows;  // Active flows over this resource.
    // Epoch of the solve that solved it (alone, with a group) or set its load (by parts).
    uint32_t mark = 0;
    uint32_t sub_mark = 0;    // Epoch of the binding part filled with it.
    uint32_t dirty_mark = 0;  // Epoch of the solve that finds it dirty (epoch_ + 1: pending).
    int32_t unbounded = 0;    // Flows with an infinite Bound(f, this).
    double bound_sum = 0;     // Σ finite Bound(f, this) over its flows.
    double capacity = 0;      // ResourceInfo::capacity_bytes_per_s
    // Flows over this resource that cross another resource too. While it is 0 the resource and
    // its flows are a component of their own (SolveAlone).
    uint32_t crossing = 0;
    bool in_refill = false;  // Scratch for one Refill: a dirty resource of its part.
    // Second cache line: the fill and the load accounting.
    uint32_t unfrozen = 0;
    uint32_t heap_index = kNotInHeap;  // Its entry in heap_ during a fill.
    double remaining = 0;
    double new_load = 0;
    double load = 0;   // Σ x_f, current.
    Time load_since;   // When `load` last changed (for bytes/busy accounting).
    double bytes = 0;  // ResourceInfo::bytes and busy up to load_since.
    Time busy;
    // Largest Bound(f, this) of a crossing flow since `crossing` was last 0 (an upper bound).
    double transit_max = 0;
    // Members of (non-independent) flow groups over it whose bounds are in bound_sum and
    // transit_max (not in `flows`): a group's are counted once the resource carries anything
    // else (CountGroupsOn), until then KeepsGroups adds them. `groups`: the groups over it.
    uint32_t hosted = 0;
    GroupRefs groups;

    // False when Σ_f Bound(f, r) ≤ (1 − kBindMargin)·c_r: see the header.
    bool CanBind() const { return unbounded > 0 || bound_sum > (1 - kBindMargin) * capacity; }
    // True when the resource carries local and crossing flows and can never limit a crossing
    // one: Σ finite bounds + (local flows)·transit_max ≤ (1 − kBindMargin)·c_r (see the header).
    bool Decoupled() const {
      const uint32_t local = static_cast<uint32_t>(flows.size()) - crossing;
      return crossing + hosted > 0 && local > 0 &&
             bound_sum + local * transit_max <= (1 - kBindMargin) * capacity;
    }
  };
  static constexpr double kBindMargin = 1e-6;
  static constexpr uint32_t kNotInHeap = UINT32_MAX;
  static constexpr uint8_t kNoTrace = UINT8_MAX;

  // A recorded fill: its steps in order and the flows each froze (see "Re-fills that reuse a
  // recorded fill" in the header). Steps and flows are what FillLoop did, so a prefix of them
  // is a prefix of any fill whose first steps coincide with them.
  struct FillStep {
    double share;       // The popped key's share, or the cap that froze the flow.
    double rate;        // The rate its flows froze at.
    uint32_t resource;  // The popped resource, or kCapStep.
    uint32_t end;       // FillTrace::frozen[previous step's end, end) froze in this step.
  };
  static constexpr uint32_t kCapStep = UINT32_MAX;
  struct FillTrace {
    uint32_t fill = 0;     // Id of the fill recorded here; 0: none (free or invalidated).
    uint32_t removed = 0;  // Its flows completed since.
    std::vector<FillStep> steps;
    std::vector<uint32_t> frozen;
  };
  // A handful: a component has a few big parts at most, and a miss only costs a full fill.
  static constexpr int kTraces = 8;
  // Smaller parts are filled from scratch: recording and checking cost about as much.
  static constexpr size_t kMinTraceFlows = 16;

  // A compact flow group (see "Flow groups" at the end of this file).
  struct Group {
    std::vector<uint32_t> members;    // Flow indices, in start order.
    std::vector<uint32_t> resources;  // Distinct resources, in first-touch order.
    // By resource slot: the members over it (positions in `members`, start order), as CSR.
    std::vector<uint32_t> adj_begin, adj;
    std::vector<uint32_t> scratch;  // GroupEligible's, by member position.
    // By resource slot: Σ of the members' bounds (∞ if one is unbounded) and the largest one
    // (what they add to the resource's bounds: KeepsGroups). Empty when the group reads them
    // from its shape (HostSum, HostMax).
    std::vector<double> host_sum, host_max;
    double rate = 0;         // Every member's rate once solved.
    uint64_t first_seq = 0;  // Sequence numbers of the members' completions, in start order.
    Time completion_time;
    EventId completion;
    bool solved = false;
    bool completing = false;
    bool independent = false;  // Routes of one resource each (header, "Flow groups").
    int shape = -1;            // Its entry in shapes_ (valid while the generation matches).
    uint64_t shape_generation = 0;
  };
  // What GroupEligible found for recent routes (conditions 2–4 and the adjacency depend only on
  // the routes, the cap and the fixed capacities): a ring repeats them every step.
  struct GroupShape {
    std::vector<ResourceId> routes;
    std::vector<uint32_t> route_ends;
    double max_rate = 0;
    std::optional<double> rate;  // None: not a group.
    bool independent = false;
    std::vector<uint32_t> resources, adj_begin, adj;
    std::vector<double> host_sum, host_max;
    uint64_t generation = 0;  // Changes whenever the entry is replaced.
    uint64_t hash = 0;        // Of its routes (shape_index_).
  };
  // Whether the flows qualify as a group (sets rate_ of the group to be); scratch in groups_[g].
  bool GroupEligible(uint32_t g, double bytes, std::span<const ResourceId> resources,
                     std::span<const uint32_t> route_ends, double max_rate);
  // GroupEligible's conditions and scratch, in order. (1) Routes of at least two resources (or
  // of one each: independent), over resources that no independent group holds (an independent
  // group's: resources that carry nothing); the rest of (1) is GroupFits'.
  bool GroupRoutesFree(uint32_t g, std::span<const ResourceId> resources,
                       std::span<const uint32_t> route_ends) const;
  // Marks the group's resources (first-touch order) and sizes its adjacency (CSR).
  void BuildGroupAdjacency(uint32_t g, std::span<const ResourceId> resources,
                           std::span<const uint32_t> route_ends);
  // Fills the adjacency; (2) binding resources private and (3) one finite rate for every flow:
  // that rate, or none.
  std::optional<double> GroupRate(uint32_t g, std::span<const ResourceId> resources,
                                  std::span<const uint32_t> route_ends, double max_rate);
  // (3') An independent group's rate: what SolveAlone gives every flow, when it is one.
  std::optional<double> IndependentRate(uint32_t g, double max_rate) const;
  // (5) Whether one of group g's resources is dirty already.
  bool AnyDirty(uint32_t g) const;
  // Whether resource r, with flows of Σ finite bounds `sum` (∞: one is unbounded), `locals` of
  // them local and `crossing` crossing with largest bound `max` joining it, can never limit a
  // crossing flow: it cannot bind, or it is decoupled (see "Shared resources" in the notes).
  bool KeepsGroups(uint32_t r, double sum, uint32_t locals, uint32_t crossing, double max) const;
  // (1') Whether every resource of group g carries nothing, or keeps g beside what it carries.
  bool GroupFits(uint32_t g) const;
  // Whether group g's resource slot j, which carries something beside g, keeps it.
  bool Fits(uint32_t g, size_t j) const;
  // Group g's slot in resource r (r is one of g's resources).
  uint32_t SlotOf(uint32_t r, uint32_t g) const {
    for (const GroupRef& ref : resources_[r].groups) {
      if (ref.group == g) return ref.slot;
    }
    return UINT32_MAX;
  }
  // Σ of the rates of the solved groups' members over r (what r carries beside its flows).
  double Reserved(uint32_t r) const;
  // The shape group grp was formed from, while it is kept; else null.
  const GroupShape* ShapeOf(const Group& grp) const {
    return grp.shape >= 0 && shapes_[grp.shape].generation == grp.shape_generation
               ? &shapes_[grp.shape]
               : nullptr;
  }
  // Σ and largest of the bounds of group grp's members over its resource slot j: the group's
  // own copy (formed anew, or its shape replaced since), else its shape's.
  double HostSum(const Group& grp, uint32_t j) const {
    return grp.host_sum.empty() ? ShapeOf(grp)->host_sum[j] : grp.host_sum[j];
  }
  double HostMax(const Group& grp, uint32_t j) const {
    return grp.host_max.empty() ? ShapeOf(grp)->host_max[j] : grp.host_max[j];
  }
  // Splits every group over r.
  void SplitGroupsOn(uint32_t r);
  // Adds (sign +1) or removes (-1) the bounds of group g's members over its resource slot j to
  // that resource's sums (GroupRef::counted).
  void CountGroupBounds(uint32_t g, uint32_t j, int sign);
  // Counts the bounds of every group over r (it carries something beside them now).
  void CountGroupsOn(uint32_t r);
  // The kept result for these routes and cap, or null; KeepShape keeps group g's.
  const GroupShape* FindShape(std::span<const ResourceId> resources,
                              std::span<const uint32_t> route_ends, double max_rate) const;
  // Keeps group g's shape; returns its slot in shapes_.
  size_t KeepShape(uint32_t g, std::span<const ResourceId> resources,
                   std::span<const uint32_t> route_ends, double max_rate,
                   std::optional<double> rate);
  // The start solve of compact group g: what SolveByParts computes for its flows, without the
  // lists and the fill; the loads of the resources it shares are left to the solve's main loop.
  void SolveGroup(uint32_t g);
  // The j-th member of g to complete: in start order, as SolveByParts schedules them; an
  // independent group's by resource in first-touch order, as SolveAlone of each would.
  uint32_t CompletionOrder(const Group& g, size_t j) const {
    return g.members[g.independent ? g.adj[j] : j];
  }
  // The group's completion event: Complete of every member, in CompletionOrder.
  void CompleteGroup(uint32_t g);
  // Makes g's members ordinary flows, exactly as if each had been started by StartFlow.
  void SplitGroup(uint32_t g);
  void FreeGroup(uint32_t g);
  void MarkDirty(const Flow& flow);
  void RequestSolve();
  void Solve();
  // Solves the component of a resource none of whose flows crosses another resource (the common
  // case: an HBM with only local traffic, perhaps beside group members): what SolveByParts
  // computes for its rates and load, bit for bit, without a part walk or a heap. O(n log n) in its
  // capped flows, O(n) otherwise.
  void SolveAlone(uint32_t r);
  // Progressive filling of r's local flows (no other resource) on what its crossing flows
  // left: `remaining` of its capacity, with `load` already on it. Sets their new_rate and
  // frozen; returns `load` plus their rates, summed in freeze order.
  double FillLocal(uint32_t r, double remaining, double load);
  // The accounts of a resource that joins no fill: a decoupled one's local flows fill what its
  // crossing flows (their rates final) and group members leave (returns nothing: sets the load
  // and the local flows' new_rate); a non-binding one's load is the sum of its flows' rates.
  void FillDecoupled(uint32_t r);
  void SumLoad(uint32_t r);
  // Collects the binding part of flow `seed_flow` (flows joined by resources that can bind)
  // into sub_resources_/sub_flows_.
  void CollectBindingPart(uint32_t seed_flow);
  // Progressive filling of one binding part (new_rate, new_load); its resources and flows carry
  // sub_mark == epoch_.
  void FillPart(std::span<const uint32_t> part_resources, std::span<const uint32_t> part_flows,
                bool record);
  // The progressive-filling loop of FillPart from its current state (heap_, caps_, unfrozen_),
  // appending its steps to recording_ when set.
  void FillLoop();
  // Re-fills the part(s) whose last fill is recorded in traces_[slot]: replays the recorded
  // steps as long as the changed (dirty) resources and joining flows cannot change them, then
  // fills the rest. Returns false, having changed nothing, when the recorded fill does not
  // describe the part any more (see the header). O(P) for the replay plus a fill of the rest.
  bool Refill(uint8_t slot);
  // Solves what the dirty resources from dirty_[from] on (those flows cross) change without
  // walking their components: re-fills the binding parts of their flows, sets the loads and
  // reschedules the flows whose rates changed in start order. See "Solving by parts" in the
  // notes.
  void SolveByParts(size_t from);
  // True when r takes part in binding-part fills: it can bind and is not decoupled.
  bool InPart(const Resource& r) const { return r.CanBind() && !r.Decoupled(); }
  // A new fill id; on wrap-around, forgets every recorded fill.
  uint32_t NextFill();
  // Forgets the recorded fill of flow f, if any (its rate is set by another fill now).
  void DropTrace(const Flow& f) {
    if (f.trace != kNoTrace && traces_[f.trace].fill == f.fill) traces_[f.trace].fill = 0;
  }
  bool HasTrace(const Flow& f) const {
    return f.trace != kNoTrace && f.fill != 0 && traces_[f.trace].fill == f.fill;
  }
  // Resets r's fill accounts for this solve's fill, the first time the fill touches it.
  void StartAccounts(uint32_t r);
  // The smallest capacity on f's route (at resource *min_resource) and the second smallest.
  void RouteCapacities(const Flow& f, uint32_t* min_resource, double* min_capacity,
                       double* second_capacity) const;
  // Adds (sign +1) or removes (-1) f's Bound at each resource of its route:
  // min(u_f, smallest capacity on f's route other than r's): no allocation gives f more at r.
  void AddBounds(const Flow& f, int sign);
  void AddBound(uint32_t r, double bound, bool crossing, int sign);
  void Complete(uint32_t flow_index);
  // A flow slot for a new flow: the last retired one, else a new one (its fields are the
  // caller's to set).
  uint32_t NewFlow();
  // The end of a finished flow (Complete, CompleteGroup): inactive, its slot free for reuse, then
  // its callback.
  void Retire(uint32_t flow_index);
  void SetLoad(uint32_t resource_index, double load);
  void Freeze(uint32_t flow_index, double rate);
  void ScheduleCompletion(uint32_t flow_index);
  // Whether flow f's completion is scheduled (its own event or a batch).
  static bool Pending(const Flow& f) { return f.completion.valid() || f.batched; }
  // The end of a solve for flow idx: when its rate changed (or nothing is scheduled yet), credits
  // it at the old rate, takes new_rate and schedules its completion.
  void TakeNewRate(uint32_t idx, Time now) {
    Flow& f = flows_[idx];
    if (f.new_rate == f.rate && Pending(f)) return;
    Settle(f, now);
    f.rate = f.new_rate;
    ScheduleCompletion(idx);
  }
  // Takes a scheduled completion back (from its event or its batch).
  void Unschedule(uint32_t flow_index);
  // The end of a solve: the completions it scheduled, one batch per instant (see "Batched
  // completions" in the notes).
  void FlushCompletions();
  // A batch's event: Complete of its members in sequence order.
  void RunBatch(uint32_t batch);
  // Credits f with the bytes it moved at its rate since it was last settled. Only when its rate
  // changes: a flow's remaining bytes then depend on its own rate history alone, not on which
  // solves happened to re-fill its part (see "Lazy accounts" in the notes).
  static void Settle(Flow& f, Time now) {
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.settled).seconds());
    f.settled = now;
  }

  Simulator& sim_;
  std::vector<Resource> resources_;
  std::vector<ResourceInfo> infos_;  // Descriptions; bytes and busy live in Resource.
  std::vector<Flow> flows_;
  // By flow index: the index of the flow in each of its resources' `flows` (completions only).
  std::vector<absl::InlinedVector<uint32_t, 8>> positions_;
  std::vector<Callback> on_done_;  // By flow index.
  // By flow index: its start's number (flows_started_ then), the order of its completions
  // among those one solve schedules.
  std::vector<uint64_t> serial_;
  std::vector<uint32_t> free_flows_;
  std::vector<uint32_t> dirty_;
  std::vector<uint32_t> solve_flows_, stack_, resched_;
  std::vector<uint32_t> sub_resources_, sub_flows_;
  std::vector<uint32_t> solve_dirty_;  // The dirty resources a solve by parts starts from.
  std::vector<uint32_t> boundary_;     // Resources of re-filled flows that join no fill.
  std::vector<uint32_t> refill_dirty_, refill_extra_;  // Scratch of Refill.
  std::array<FillTrace, kTraces> traces_;
  FillTrace* recording_ = nullptr;
  uint32_t fills_ = 0;
  // The fill's bottleneck heap: one entry per resource with unfrozen flows, keyed by (share,
  // resource id) and updated in place when a freeze changes the share (a binary heap whose
  // entries know their index through Resource::heap_index).
  struct HeapEntry {
    double share;
    uint32_t resource;
  };
  // (share, resource) as one integer: a share is never negative (nor -0.0: entries are built
  // with + 0.0), so its bits order as the value. One compare, no branch on equal shares.
  static unsigned __int128 Key(const HeapEntry& e) {
    return static_cast<unsigned __int128>(std::bit_cast<uint64_t>(e.share)) << 32 | e.resource;
  }
  static bool Before(const HeapEntry& a, const HeapEntry& b) { return Key(a) < Key(b); }
  void HeapPlace(size_t i, const HeapEntry& e) {
    heap_[i] = e;
    resources_[e.resource].heap_index = static_cast<uint32_t>(i);
  }
  void HeapSiftUp(size_t i, HeapEntry e);
  void HeapSiftDown(size_t i, HeapEntry e);
  // Sets the entry at index i to `e` (same resource), wherever its new key puts it.
  void HeapUpdate(size_t i, HeapEntry e);
  void HeapRemove(size_t i);
  std::vector<HeapEntry> heap_;
  std::vector<HeapEntry> refill_keys_;  // Refill: the heap keys of its dirty resources.
  std::vector<std::pair<double, uint32_t>> caps_;
  size_t unfrozen_ = 0;
  CounterSamples counters_;
  uint32_t epoch_ = 0;
  size_t active_ = 0;
  uint64_t solves_ = 0;
  uint64_t flows_started_ = 0;
  uint64_t flows_solved_ = 0;
  uint64_t flows_refilled_ = 0;
  std::vector<Group> groups_;
  std::vector<uint32_t> free_groups_;
  static constexpr size_t kShapes = 4096;
  std::vector<GroupShape> shapes_;
  absl::flat_hash_map<uint64_t, uint32_t> shape_index_;  // Hash of the routes → slot.
  mutable uint64_t shape_hash_ = 0;                      // FindShape's last hash.
  size_t next_shape_ = 0;
  uint64_t shape_generations_ = 0;
  uint32_t unsolved_groups_ = 0;  // Formed since the last solve.
  uint64_t groups_formed_ = 0;
  uint64_t groups_split_ = 0;
  bool flow_groups_ = true;
  bool solve_pending_ = false;
  bool solving_ = false;  // Inside Solve(): completions go to completions_, then to batches.
  // The completions a solve schedules, in call order, each with the sequence number it took.
  struct PendingCompletion {
    Time when;
    uint64_t seq;
    uint32_t flow;  // kNoFlow: taken back later in the same solve.
  };
  static constexpr uint32_t kNoFlow = UINT32_MAX;
  std::vector<PendingCompletion> completions_;
  // Completions at one instant from one solve: one event at the first member's sequence number.
  struct Batch {
    Time when;
    uint64_t first_seq = 0;
    EventId event;
    std::vector<uint32_t> flows;  // In sequence order; kNoFlow: taken back.
    uint32_t live = 0;
  };
  std::vector<Batch> batches_;
  std::vector<uint32_t> free_batches_;
  absl::flat_hash_map<int64_t, uint32_t> batch_at_;  // Scratch of FlushCompletions: ps -> batch.
  std::vector<uint32_t> new_batches_;                // Scratch of FlushCompletions.
  // By flow index, while batched: its batch (kNoFlow: this solve's completions_) and position.
  std::vector<uint32_t> batch_of_, batch_pos_;
  bool record_counters_ = false;
  bool reuse_fills_ = true;
  TimelineBudget* timeline_budget_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Notes: why the solver's shortcuts give the same allocation as a full progressive filling.
//
// Resources that cannot bind. For flow f and resource r ∈ R_f let
//   B(f, r) = min(u_f, min_{r' ∈ R_f, r' ≠ r} c_r')          (no allocation gives f more)
// and call r non-binding when Σ_{f ∋ r} B(f, r) ≤ (1 − δ)·c_r, δ = 1e-6. Such an r never limits
// anyone: at any step of progressive filling an unfrozen g ∋ r has a resource (or cap) whose
// level is ≤ B(g, r), so s* ≤ min_unfrozen B(g, r), while
//   share_r = (c_r − Σ_frozen x_f)/n ≥ (Σ_unfrozen B(f, r) + δ·c_r)/n > min_unfrozen B(g, r)
// (frozen x_f ≤ B(f, r)); δ dwarfs rounding, so r is never popped in floating point either.
// Hence dropping r gives the same allocation, bit for bit: the pops of the other resources and
// every freeze happen in the same order with the same values. A solve therefore works on
// binding parts (flows joined only by resources that can bind — an HBM that carries only NIC
// transit flows at ≤ link rate does not join them) and re-fills only the parts that hold a
// dirty binding resource or a flow over a dirty non-binding one; the others keep their rates,
// which a re-fill would reproduce exactly. A non-binding resource's load is the sum of its
// flows' rates. Cost of a solve: O((R_p + P_p)·log R_p) per re-filled part with R_p resources
// and P_p incidences (O(P_p) for the steps of a recorded fill it replays).
//
// Decoupled resources. A resource r with local flows L (r is their only resource) beside
// crossing flows T is decoupled when Σ_{f ∋ r} B(f, r) (finite bounds: T and capped L) +
// |L|·max_{g ∈ T} B(g, r) ≤ (1 − δ)·c_r: an HBM whose GeMM prefetches (uncapped, so r can bind)
// share it with a few NIC flows at link rate. While some g ∈ T is unfrozen, s* ≤ B(g, r) ≤ the
// max, every frozen flow on r holds at most its bound (a local one at most that max), so
//   share_r ≥ (Σ_{unfrozen T} B + |unfrozen L|·max + δ·c_r)/n > min_{unfrozen T} B(g, r) ≥ s*:
// r pops only after all of T is frozen, and its pop freezes local flows only. So T's rates
// are those of the parts without r (r joins nothing, like a non-binding resource), and L
// fills what T leaves: c_r − Σ_T x_f, caps first, then an equal share (FillLocal, as
// SolveAlone does with nothing used). A decoupled resource joins no part, which keeps the fills
// of big rings joined through busy HBMs small.
// The rates are the same max-min allocation; only the order in which r's remaining capacity
// is summed differs from the joint fill (last-bit differences of the local rates). A local flow
// capped at u ≥ c_r counts as uncapped (in |L|, not in the sum): while T is unfrozen it freezes,
// if at all, at a level ≤ s* ≤ max B, and unfrozen it has u ≥ c_r ≥ s*, which is all the
// argument uses.
// Solving by parts (SolveByParts). A part that holds no dirty resource and no flow over one has
// the flows, order, capacities and statuses of its last fill, which a re-fill would reproduce
// bit for bit. So a solve starts from the dirty resources that flows cross (in dirty-list order),
// re-fills the part of each flow over them (CollectBindingPart walks only resources that can
// take part in a fill), and never walks the rest of their components: a resource that joins no
// fill (it cannot bind, or it is decoupled) passes nothing on between the parts it touches.
// Such a resource, met by a re-filled flow, takes its accounts once every part is filled (each
// flow's rate final): a non-binding one's load is the sum of its flows' rates, a decoupled
// one's local flows fill what its crossing flows leave (FillDecoupled). A filled resource's load
// is its flows' rates summed in freeze order. The flows whose rates changed (or that have no
// completion yet) then reschedule their completions in the order the flows started (the
// number each takes at its start, serial_), so that which parts a solve re-fills, in which
// order, and whether it replays a recorded fill do not change the order of one instant's
// events. (Until 2026-11 a solve walked the whole component of each dirty resource and
// rescheduled in the walk's depth-first order; on a fat-tree, whose core links join nearly every
// flow into one component, the walk was 43% of a run: docs/performance.md.)
// Re-fills that reuse a recorded fill. A fat-tree's shared core links join every flow into one
// binding part, and a start or finish changes a few of its rates; so a fill of a part of at
// least kMinTraceFlows flows is recorded: its steps in order (a pop of resource r at key
// (s, r), or a cap u freezing flow g) and the flows each froze, and each flow keeps the id of
// the fill that set its rate. When the same flows are re-filled, let D be the dirty resources
// in a fill and J the flows joining (in no recorded fill, or another one). The recording is
// usable when every recorded flow still active has the rate that fill gave it (a flow whose rate
// is set outside a fill forgets its recorded fill: FillLocal's flows, and at the start of a
// solve by parts those of the resources SolveAlone is about to solve), each resource in a fill
// that carries a recorded or joining flow and is clean carries only recorded flows, and every
// fill resource of a joining flow is dirty (else the part may hold flows it never saw). Then
// every clean fill resource has the same flows, order, capacity and status as at the recording
// (a change marks a resource dirty, and a solve that sees a dirty one re-fills all its flows,
// giving them a new fill id), and the flows are a union of binding parts (filled together they
// get what separate fills give). By induction over the steps, while the state outside D and
// the frozen flows equal the recording's: recorded step j (pop of r ∉ D at key K) is the new
// fill's next step if the flows it froze are all still active, every heap key of D is above K
// and no cap of J is below s (the other keys and caps are the recording's, and its pop was the
// smallest; a resource carrying only completed recorded flows may have changed in a solve that
// did not re-fill the others, and is in the fill no more); a recorded cap (u, g) is
// if g is still active, (u, g) is below every (cap, flow) of J and u is below every share of
// D. Either step freezes the same flows at the same rates in the same order, so the clean
// resources' accounts stay the recording's and D's are kept alongside. At the first step that
// fails, the state is the new fill's state at that point: the rest is filled as FillPart would
// go on (heap of the fill resources with unfrozen flows, the unfrozen caps), and the recording
// becomes the replayed steps plus the new ones. The replay costs O(incidences) without a heap,
// the rest O((R + P)·log R) on what is left (~1/6 of the pops on a fat-tree). A recording that
// is not usable costs a full fill, which records anew.
// Flow groups. StartGroup's m flows of b bytes and cap u are one entity in the solver when, at
// their start, (1) each of their resources carries nothing, or keeps them beside what it
// carries (see "Shared resources" below; never beside an independent group), and (2)
// with bounds B(f, r) summed over the group's flows in start order as StartFlow would sum them,
// every resource that can bind carries exactly one of the flows (a private resource), and (3)
// x_f = (u < c_f ? u : c_f), c_f the smallest capacity among f's binding private resources (∞
// if none), is finite and the same x for every f. Their component is then exactly the group's
// flows and resources, all dirty (on resources that carry nothing else: see "Shared resources"
// for the others): a solve by parts fills it. In that fill the heap holds
// the private binding resources at share c_r/1 = c_r exactly, the others never pop (notes
// above), and the caps are all u: f's first resource pops at c_f unless u < c_f, when its cap
// freezes first (while one of f's resources is in the heap the top is ≤ c_f, so a cap ≥ c_f
// never wins; while all are above u the cap does). So every flow gets x, a resource carrying k
// of them has load 0 + x + … + x (k terms, any freeze order), and every completion is at
// now + ⌈b/x⌉: SolveGroup sets exactly those values and schedules one event with the first of
// the m consecutive sequence numbers the completions would have taken in start order (the rest
// are reserved). The event completes the members in start order, as their m events would have
// run (consecutive numbers: nothing runs between them), with the
// same dirty marks, free-list order and callbacks; the resources' lists, which end empty, are
// never built. A flow that could make a group resource limit a member (any flow over a private
// binding resource; see "Shared resources" for the others) first splits the group: its flows
// are pushed onto their resources' lists in start order (what StartFlow did, in the same
// order) and their completions are scheduled with the reserved numbers; from then on they are
// ordinary flows. Until then no solve can reach the group (no part fill enters it: its flows
// are on no list), so nothing else about them would have changed.
// Groups of several components: flows that satisfy (1)–(3) but form several components (the
// rings of a dimension-order phase, the host rings of a two-level step, the pairs of a
// halving-doubling step) are one group as well: a solve by parts re-fills all of them at once
// and reschedules them in start order, as it does one component's.
// Independent groups: m flows of one resource each, k on each of their resources (the same k),
// which carry nothing else and are not dirty yet (5). Each resource with its k flows is then a
// component solved alone (SolveAlone: FillLocal gives each flow x = c_r/k when no cap u is
// below that, or u < c_r when k = 1; the load is 0 + x + … + x; completions at now + ⌈b/x⌉ in
// list = start order), and StartGroup marks the resources dirty consecutively in first-touch
// order, so the next solve reaches them in that order with nothing in between: SolveGroup does
// them all at the first, every flow at the same x, and takes the m consecutive numbers in that
// order (resources in first-touch order, each one's flows in start order), as the SolveAlone
// calls would have.
// Completing a group (independent or not) releases its resources before the first member's
// callback runs: each is then what Complete() of its members leaves (their bounds removed), and
// a callback may start flows over it — the reducing sends of a ring step end with the callback
// that starts the next step over the same HBMs. The per-flow solver would still list a member
// whose event comes later at this instant, but no solve runs between the members' consecutive
// events, so no rate differs.
// Shared resources. A (non-independent) group's members are crossing flows whose rate x no
// shared resource limits: at formation, (2) says the members alone cannot bind it. Other flows
// and other groups' members may use such a resource r as long as it still cannot limit any
// crossing flow: r cannot bind (Σ B(f, r) over everything on it ≤ (1 − δ)·c_r) or r is
// decoupled (notes above), each member counted as a crossing flow. KeepsGroups checks that
// with the joining flow's bound before every StartFlow over a group resource (else the groups
// on r split first) and with a new group's members before it forms (GroupFits); completions
// only lower the bounds (and a decoupled resource's crossing bounds alone fit), so it holds
// until the group ends. By the notes above, x then stays every member's max-min rate whatever
// comes and goes on r, and what is listed on r gets what the per-flow solver gives it, with
// r's accounts taking the members' rates (Reserved: Σ x over the solved groups' members on r)
// as crossing flows: a decoupled r's local flows fill c_r − Σ listed crossing rates −
// Reserved, a non-binding r's load adds Reserved. The members' bounds (what StartFlow adds)
// are added to r's bound sums and transit maximum once r carries something beside the group
// (CountGroupsOn: when a flow or another group joins r), KeepsGroups adds them itself before
// that, and they leave r with the group. Solving: groups formed since the last solve are solved
// first, each from its first resource in the dirty list, and set the loads of the resources that
// carry only them; the resources they share stay dirty for the solve's main loop, which reaches
// them as usual (SolveAlone, or by parts) with Reserved. So the rings of a torus stay groups
// while GeMM prefetches and write-backs come and go on their HBMs and the row and column rings
// share them — no ring flow is walked, filled, credited or completed one by one. The results are
// the per-flow solver's (lazy accounts, below), up to the order in which a shared resource's
// remaining capacity is summed (the last bit of its local flows' rates; bit for bit in every
// scenario of the tests), and the events of one instant may run in another order (one group
// event for its members' events, taking its numbers before the main loop's, loads set by the
// main loop rather than in fill order).
// Lazy accounts. A flow is credited (b_f ← b_f − x_f·Δt) only when its rate changes, and a
// resource's bytes and busy time are integrated only when its load changes. Crediting at more
// instants is the same arithmetic split into more roundings, so an eager account would make a
// flow's completion (to the picosecond) depend on which unrelated solves re-filled its part;
// lazily, it depends on the flow's own rate history alone. That is what lets a flow group leave
// its members unvisited while local flows come and go on its HBMs (see "Flow groups"), with the
// same results as the per-flow path.
// Batched completions. Each completion a solve schedules takes the next sequence number at that
// call (as a cancel and a new schedule would), and the engine runs events by (time, sequence
// number). The numbers a solve hands out are consecutive, and only its completions take them
// (its groups' events take theirs before its main loop), so among the events of one instant t,
// the completions this solve scheduled for t have no other event between them: any other event
// for t has a number from before the solve, and runs first, or from after it, and runs later.
// So they run as one event at the first one's number, completing the flows in number order:
// the order, and every callback's view of the state, of their separate events. A flow whose
// completion moves before its batch runs leaves the batch (its number is simply not used); an
// emptied batch's event is cancelled. Chips that run in step (a GeMM's prefetches on every
// HBM, a ring's flows flow by flow) end many flows at one instant: at 1024 chips the engine ran
// 7.2 M events before, 2.8 M now, for the same fingerprint. Completions scheduled outside a
// solve (a flow without resources, a zero-byte flow) and a split group's members keep events
// of their own.
// Completions unlink a flow from its resources in O(|R_f|) (stored positions). A resource whose
// flows cross no other resource (an HBM with only local traffic: most solves) is a component of
// its own: progressive filling on it freezes the caps below the running share c_r' / n', then
// every other flow at that share; it is done without a walk or a heap, with the same
// floating-point operations in the same order as the general fill.

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_FAIR_SHARE_H_
