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
// batched. A solve re-runs progressive filling on the connected components (resources linked by
// shared flows) that contain a dirty resource, first crediting each flow with the bytes it moved
// at its old rate (b_f ← b_f − x_f·Δt), then reschedules the completion event of each flow whose
// rate changed at now + ⌈b_f / x_f⌉. Cost of a solve: O((R_c + P_c)·log R_c) for a component
// with R_c resources and P_c (flow, resource) incidences.
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

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/ids.h"
#include "core/simulator.h"
#include "core/timeline.h"

namespace meshsim::core {

class FairShare {
 public:
  using Callback = std::function<void()>;
  static constexpr double kNoCap = std::numeric_limits<double>::infinity();

  explicit FairShare(Simulator& sim) : sim_(sim) {}
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

  // Current rate of an active flow in bytes/s (0 until the pending solve has run).
  double Rate(FlowId flow) const { return flows_[flow.value()].rate; }
  bool IsActive(FlowId flow) const { return flows_[flow.value()].active; }

  // Records a CounterSample whenever a resource's total rate changes (off by default).
  void set_record_counters(bool on) { record_counters_ = on; }
  const std::vector<CounterSample>& counters() const { return counters_; }

  size_t num_resources() const { return resources_.size(); }
  const ResourceInfo& resource(ResourceId id) const { return resources_[id.value()].info; }
  // Resource descriptions with `bytes` and `busy` accumulated up to Now().
  std::vector<ResourceInfo> ResourceReport() const;
  // Current total rate through a resource in bytes/s.
  double Load(ResourceId id) const { return resources_[id.value()].load; }

  size_t active_flows() const { return active_; }
  uint64_t solves() const { return solves_; }
  uint64_t flows_started() const { return flows_started_; }

 private:
  struct Flow {
    double remaining = 0;  // Bytes still to move as of `settled`.
    double rate = 0;
    double max_rate = kNoCap;
    Time settled;
    EventId completion;
    Callback on_done;
    absl::InlinedVector<ResourceId, 6> resources;
    double new_rate = 0;  // Scratch for one solve.
    uint32_t mark = 0;    // Epoch of the last component walk that reached it.
    bool frozen = false;  // Scratch for one solve.
    bool active = false;
  };
  struct Resource {
    ResourceInfo info;
    std::vector<uint32_t> flows;  // Active flows over this resource.
    double load = 0;              // Σ x_f, current.
    Time load_since;              // When `load` last changed (for bytes/busy accounting).
    // Scratch for one solve.
    double remaining = 0;
    double new_load = 0;
    uint32_t unfrozen = 0;
    uint32_t version = 0;
    uint32_t mark = 0;
    bool dirty = false;
  };

  void MarkDirty(const Flow& flow);
  void RequestSolve();
  void Solve();
  // Collects the component containing resource `seed` into comp_resources_/comp_flows_.
  void CollectComponent(uint32_t seed);
  void FillComponent();
  void Complete(uint32_t flow_index);
  void SetLoad(uint32_t resource_index, double load);
  void Freeze(uint32_t flow_index, double rate);
  void ScheduleCompletion(uint32_t flow_index);

  Simulator& sim_;
  std::vector<Resource> resources_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_flows_;
  std::vector<uint32_t> dirty_;
  std::vector<uint32_t> comp_resources_, comp_flows_, stack_;
  struct HeapEntry {
    double share;
    uint32_t resource;
    uint32_t version;
  };
  std::vector<HeapEntry> heap_;
  std::vector<std::pair<double, uint32_t>> caps_;
  size_t unfrozen_ = 0;
  std::vector<CounterSample> counters_;
  uint32_t epoch_ = 0;
  size_t active_ = 0;
  uint64_t solves_ = 0;
  uint64_t flows_started_ = 0;
  bool solve_pending_ = false;
  bool record_counters_ = false;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_FAIR_SHARE_H_
