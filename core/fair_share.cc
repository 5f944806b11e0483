#include "core/fair_share.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace meshsim::core {

ResourceId FairShare::AddResource(ResourceInfo info) {
  MESHSIM_CHECK(info.capacity_bytes_per_s > 0 && std::isfinite(info.capacity_bytes_per_s))
      << "resource '" << info.name << "' needs a positive finite capacity";
  Resource r;
  r.capacity = info.capacity_bytes_per_s;
  r.load_since = sim_.Now();
  r.bytes = info.bytes;
  r.busy = info.busy;
  resources_.push_back(std::move(r));
  infos_.push_back(std::move(info));
  return ResourceId(static_cast<uint32_t>(resources_.size() - 1));
}

FlowId FairShare::StartFlow(double bytes, std::span<const ResourceId> resources, Callback on_done,
                            double max_rate) {
  MESHSIM_CHECK(bytes >= 0 && std::isfinite(bytes)) << "flow of " << bytes << " bytes";
  MESHSIM_CHECK(max_rate > 0) << "flow with max_rate " << max_rate;
  uint32_t idx;
  if (!free_flows_.empty()) {
    idx = free_flows_.back();
    free_flows_.pop_back();
  } else {
    idx = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    on_done_.emplace_back();
  }
  Flow& f = flows_[idx];
  f.remaining = bytes;
  f.rate = 0;
  f.max_rate = max_rate;
  f.settled = sim_.Now();
  on_done_[idx] = std::move(on_done);
  f.resources.clear();
  f.active = true;
  ++active_;
  ++flows_started_;
  if (bytes == 0) {
    f.completion = sim_.ScheduleAt(sim_.Now(), [this, idx] { Complete(idx); });
    return FlowId(idx);
  }
  if (resources.empty()) {
    MESHSIM_CHECK(std::isfinite(max_rate)) << "flow over no resource needs a rate cap";
    f.rate = max_rate;
    ScheduleCompletion(idx);
    return FlowId(idx);
  }
  f.resources.assign(resources.begin(), resources.end());
  f.positions.resize(resources.size());
  const bool crossing = resources.size() > 1;
  for (uint32_t k = 0; k < resources.size(); ++k) {
    const ResourceId r = resources[k];
    MESHSIM_CHECK(r.valid() && r.value() < resources_.size()) << "unknown resource " << r;
    Resource& res = resources_[r.value()];
    f.positions[k] = static_cast<uint32_t>(res.flows.size());
    res.flows.push_back({idx, k});
    res.crossing += crossing;
  }
  AddBounds(f, +1);
  MarkDirty(f);
  RequestSolve();
  return FlowId(idx);
}

void FairShare::MarkDirty(const Flow& flow) {
  for (ResourceId r : flow.resources) {
    Resource& res = resources_[r.value()];
    if (!res.dirty) {
      res.dirty = true;
      dirty_.push_back(r.value());
    }
  }
}

void FairShare::RequestSolve() {
  if (solve_pending_) return;
  solve_pending_ = true;
  sim_.ScheduleAt(sim_.Now(), [this] { Solve(); });
}

void FairShare::Complete(uint32_t idx) {
  Flow& f = flows_[idx];
  MESHSIM_CHECK(f.active) << "flow completed twice";
  // O(1) unlink: the resource's last flow moves into the hole (the order a search-and-swap
  // would leave, which the solver's tie-breaking sees).
  const bool crossing = f.resources.size() > 1;
  for (uint32_t k = 0; k < f.resources.size(); ++k) {
    const uint32_t r = f.resources[k].value();
    Resource& res = resources_[r];
    res.crossing -= crossing;
    const uint32_t pos = f.positions[k];
    MESHSIM_CHECK(pos < res.flows.size() && res.flows[pos].flow == idx)
        << "flow missing from its resource";
    const Member moved = res.flows.back();
    res.flows[pos] = moved;
    flows_[moved.flow].positions[moved.slot] = pos;
    res.flows.pop_back();
  }
  AddBounds(f, -1);
  if (!f.resources.empty()) {
    MarkDirty(f);
    RequestSolve();
  }
  f.active = false;
  f.rate = 0;
  f.completion = EventId();
  --active_;
  Callback done = std::move(on_done_[idx]);
  on_done_[idx] = nullptr;
  free_flows_.push_back(idx);
  if (done) done();
}

void FairShare::RouteCapacities(const Flow& f, uint32_t* min_resource, double* min_capacity,
                                double* second_capacity) const {
  *min_capacity = *second_capacity = kNoCap;
  *min_resource = 0;
  for (ResourceId r : f.resources) {
    const double c = resources_[r.value()].capacity;
    if (c < *min_capacity) {
      *second_capacity = *min_capacity;
      *min_capacity = c;
      *min_resource = r.value();
    } else if (c < *second_capacity) {
      *second_capacity = c;
    }
  }
}

void FairShare::AddBounds(const Flow& f, int sign) {
  // The two smallest capacities on the route bound what any one resource can leave the flow.
  uint32_t min_resource;
  double min_capacity, second_capacity;
  RouteCapacities(f, &min_resource, &min_capacity, &second_capacity);
  for (ResourceId r : f.resources) {
    const double other = r.value() == min_resource ? second_capacity : min_capacity;
    AddBound(r.value(), std::min(f.max_rate, other), f.resources.size() > 1, sign);
  }
}

void FairShare::AddBound(uint32_t r, double bound, bool crossing, int sign) {
  Resource& res = resources_[r];
  if (std::isinf(bound)) {
    res.unbounded += sign;
  } else {
    res.bound_sum += sign * bound;
  }
  if (crossing && sign > 0) res.transit_max = std::max(res.transit_max, bound);
  // Exact again whenever the resource empties, so the running sum cannot drift.
  if (res.flows.empty()) res.bound_sum = 0;
  if (res.crossing == 0) res.transit_max = 0;
}

void FairShare::Solve() {
  solve_pending_ = false;
  ++solves_;
  ++epoch_;
  for (uint32_t r : dirty_) {
    resources_[r].dirty = false;
    resources_[r].dirty_mark = epoch_;
  }
  // Walk the dirty list by index: it is not modified during the solve.
  for (uint32_t r : dirty_) {
    if (resources_[r].mark == epoch_) continue;  // Already solved with an earlier component.
    if (resources_[r].crossing == 0) {
      SolveAlone(r);
      continue;
    }
    CollectComponent(r);
    SolveComponent();
  }
  dirty_.clear();
}

void FairShare::SolveAlone(uint32_t r) {
  Resource& res = resources_[r];
  res.mark = epoch_;
  const Time now = sim_.Now();
  const uint32_t n = static_cast<uint32_t>(res.flows.size());
  flows_walked_ += n;
  flows_refilled_ += n;
  for (const Member& m : res.flows) {
    Flow& f = flows_[m.flow];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.settled).seconds());
    f.settled = now;
  }
  SetLoad(r, FillLocal(r, res.capacity, 0.0));
  for (const Member& m : res.flows) {
    Flow& f = flows_[m.flow];
    if (f.new_rate == f.rate && f.completion.valid()) continue;
    f.rate = f.new_rate;
    ScheduleCompletion(m.flow);
  }
}

double FairShare::FillLocal(uint32_t r, double remaining, double load) {
  const Resource& res = resources_[r];
  // Collect the caps as FillPart orders them: by (cap, flow index).
  caps_.clear();
  uint32_t n = 0;
  for (const Member& m : res.flows) {
    Flow& f = flows_[m.flow];
    if (f.resources.size() > 1) continue;
    ++n;
    f.frozen = false;
    if (std::isfinite(f.max_rate)) caps_.push_back({f.max_rate, m.flow});
  }
  // FillPart on {r}: a cap below the resource's share freezes first (the share is then
  // recomputed as Freeze recomputes it); then the resource pops and every other flow freezes at
  // its share, in list order. The load sums the rates in freeze order.
  uint32_t unfrozen = n;
  double share = n == 0 ? 0.0 : std::max(remaining, 0.0) / unfrozen;
  if (!caps_.empty()) {
    std::sort(caps_.begin(), caps_.end());
    for (const auto& [cap, i] : caps_) {
      if (!(cap < share)) break;
      Flow& f = flows_[i];
      f.frozen = true;
      f.new_rate = cap;
      remaining -= cap;
      load += cap;
      if (--unfrozen == 0) break;
      share = std::max(remaining, 0.0) / unfrozen;
    }
  }
  if (unfrozen > 0) share = std::max(share, res.capacity * 1e-12);
  for (const Member& m : res.flows) {
    Flow& f = flows_[m.flow];
    if (f.frozen || f.resources.size() > 1) continue;
    f.new_rate = share;
    load += share;
  }
  return load;
}

void FairShare::CollectComponent(uint32_t seed) {
  comp_resources_.clear();
  comp_flows_.clear();
  stack_.clear();
  stack_.push_back(seed);
  resources_[seed].mark = epoch_;
  while (!stack_.empty()) {
    const uint32_t r = stack_.back();
    stack_.pop_back();
    comp_resources_.push_back(r);
    for (const Member& m : resources_[r].flows) {
      Flow& flow = flows_[m.flow];
      if (flow.mark == epoch_) continue;
      flow.mark = epoch_;
      comp_flows_.push_back(m.flow);
      for (ResourceId r2 : flow.resources) {
        Resource& res = resources_[r2.value()];
        if (res.mark == epoch_) continue;
        res.mark = epoch_;
        stack_.push_back(r2.value());
      }
    }
  }
}

void FairShare::CollectBindingPart(uint32_t seed_flow) {
  sub_resources_.clear();
  sub_flows_.clear();
  stack_.clear();
  const auto add_flow = [&](uint32_t f) {
    Flow& flow = flows_[f];
    flow.sub_mark = epoch_;
    sub_flows_.push_back(f);
    for (ResourceId r2 : flow.resources) {
      Resource& res = resources_[r2.value()];
      if (res.sub_mark == epoch_ || !res.CanBind() || res.Decoupled()) continue;
      res.sub_mark = epoch_;
      stack_.push_back(r2.value());
    }
  };
  add_flow(seed_flow);
  while (!stack_.empty()) {
    const uint32_t r = stack_.back();
    stack_.pop_back();
    sub_resources_.push_back(r);
    for (const Member& m : resources_[r].flows) {
      if (flows_[m.flow].sub_mark != epoch_) add_flow(m.flow);
    }
  }
}

void FairShare::Freeze(uint32_t idx, double rate) {
  Flow& f = flows_[idx];
  f.frozen = true;
  f.new_rate = rate;
  --unfrozen_;
  for (ResourceId r : f.resources) {
    Resource& res = resources_[r.value()];
    if (res.sub_mark != epoch_) continue;  // Cannot bind: not part of this fill (see header).
    res.remaining -= rate;
    res.new_load += rate;
    --res.unfrozen;
    if (res.heap_index == kNotInHeap) continue;  // The resource being popped.
    if (res.unfrozen > 0) {
      HeapUpdate(res.heap_index, {std::max(res.remaining, 0.0) / res.unfrozen + 0.0, r.value()});
    } else {
      HeapRemove(res.heap_index);
    }
  }
}

void FairShare::SolveComponent() {
  const Time now = sim_.Now();
  flows_walked_ += comp_flows_.size();
  // Credit every flow with the bytes it moved at its old rate since it was last settled.
  for (uint32_t i : comp_flows_) {
    Flow& f = flows_[i];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.settled).seconds());
    f.settled = now;
    f.new_rate = f.rate;
  }
  // Re-fill only the binding parts that changed: those holding a dirty resource that can bind,
  // or a flow over a dirty resource that cannot. The others keep their rates, which a fill
  // would reproduce bit for bit (their flows, resources and order are unchanged).
  // When every non-binding resource of the component is dirty, every part is re-filled (a part
  // either touches one or is the whole component, which holds a dirty resource): then fill the
  // component as one and skip the part walk; non-binding resources keep their accounts in that
  // fill but stay out of its heap (they never pop).
  // A decoupled resource (see the header) rules the whole fill out: its crossing flows are
  // filled in parts without it, its local flows after them (FillLocal).
  bool whole = true;
  for (uint32_t r : comp_resources_) {
    const Resource& res = resources_[r];
    whole = whole && (res.dirty_mark == epoch_ || res.CanBind()) && !res.Decoupled();
  }
  if (whole) {
    for (uint32_t r : comp_resources_) resources_[r].sub_mark = epoch_;
    for (uint32_t f : comp_flows_) flows_[f].sub_mark = epoch_;
    FillPart(comp_resources_, comp_flows_);
  } else {
    for (uint32_t r : comp_resources_) {
      if (resources_[r].dirty_mark != epoch_) continue;
      const bool decoupled = resources_[r].Decoupled();
      for (const Member& m : resources_[r].flows) {
        const Flow& f = flows_[m.flow];
        if (f.sub_mark == epoch_ || (decoupled && f.resources.size() == 1)) continue;
        CollectBindingPart(m.flow);
        FillPart(sub_resources_, sub_flows_);
      }
    }
    // Local flows of decoupled resources take what the crossing ones (now final) leave.
    for (uint32_t r : comp_resources_) {
      Resource& res = resources_[r];
      if (!res.Decoupled()) continue;
      // As the joint fill would account them (in list rather than freeze order): equal rates,
      // the usual case, give the same bits either way.
      double remaining = res.capacity, load = 0;
      for (const Member& m : res.flows) {
        const Flow& f = flows_[m.flow];
        if (f.resources.size() == 1) continue;
        remaining -= f.new_rate;
        load += f.new_rate;
      }
      flows_refilled_ += res.flows.size() - res.crossing;
      res.new_load = FillLocal(r, remaining, load);
      res.sub_mark = epoch_;
    }
  }
  for (uint32_t r : comp_resources_) {
    Resource& res = resources_[r];
    if (res.sub_mark == epoch_) {  // Filled: its flows' rates summed in freeze order.
      SetLoad(r, res.new_load);
    } else if (res.CanBind()) {  // In a part not re-filled: unchanged.
      SetLoad(r, res.load);
    } else {  // Carries the sum of its flows' rates, none of which it limits.
      double load = 0;
      for (const Member& m : res.flows) load += flows_[m.flow].new_rate;
      SetLoad(r, load);
    }
  }
  for (uint32_t i : comp_flows_) {
    Flow& f = flows_[i];
    if (f.new_rate == f.rate && f.completion.valid()) continue;
    f.rate = f.new_rate;
    ScheduleCompletion(i);
  }
}

void FairShare::FillPart(std::span<const uint32_t> part_resources,
                         std::span<const uint32_t> part_flows) {
  caps_.clear();
  for (uint32_t i : part_flows) {
    Flow& f = flows_[i];
    f.frozen = false;
    f.new_rate = 0;
    if (std::isfinite(f.max_rate)) caps_.push_back({f.max_rate, i});
  }
  std::sort(caps_.begin(), caps_.end());
  unfrozen_ = part_flows.size();
  flows_refilled_ += part_flows.size();

  heap_.clear();
  for (uint32_t r : part_resources) {
    Resource& res = resources_[r];
    res.remaining = res.capacity;
    res.new_load = 0;
    res.unfrozen = static_cast<uint32_t>(res.flows.size());
    res.heap_index = kNotInHeap;
    // A resource that cannot bind never pops (see the header): it only keeps its accounts.
    if (res.unfrozen == 0 || !res.CanBind()) continue;
    heap_.push_back({res.remaining / res.unfrozen, r});
    res.heap_index = static_cast<uint32_t>(heap_.size() - 1);
  }
  for (size_t i = heap_.size() / 2; i-- > 0;) HeapSiftDown(i, heap_[i]);

  size_t next_cap = 0;
  while (unfrozen_ > 0) {
    while (next_cap < caps_.size() && flows_[caps_[next_cap].second].frozen) ++next_cap;
    const double resource_share = heap_.empty() ? kNoCap : heap_.front().share;
    if (next_cap < caps_.size() && caps_[next_cap].first < resource_share) {
      Freeze(caps_[next_cap].second, caps_[next_cap].first);
      continue;
    }
    MESHSIM_CHECK(!heap_.empty()) << "unfrozen flows but no bottleneck";
    const HeapEntry top = heap_.front();
    HeapRemove(0);
    Resource& res = resources_[top.resource];
    // Rounding can leave a bottleneck with a hair below zero; a flow never stalls completely.
    const double share = std::max(top.share, res.capacity * 1e-12);
    for (size_t j = 0; j < res.flows.size(); ++j) {
      const uint32_t f = res.flows[j].flow;
      if (!flows_[f].frozen) Freeze(f, share);
    }
  }
}

void FairShare::HeapSiftUp(size_t i, HeapEntry e) {
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!Before(e, heap_[parent])) break;
    HeapPlace(i, heap_[parent]);
    i = parent;
  }
  HeapPlace(i, e);
}

void FairShare::HeapSiftDown(size_t i, HeapEntry e) {
  const size_t n = heap_.size();
  while (true) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
    if (!Before(heap_[child], e)) break;
    HeapPlace(i, heap_[child]);
    i = child;
  }
  HeapPlace(i, e);
}

void FairShare::HeapUpdate(size_t i, HeapEntry e) {
  // A freeze at the current level s* ≤ share raises the share, but rounding may lower it.
  if (Before(e, heap_[i])) {
    HeapSiftUp(i, e);
  } else {
    HeapSiftDown(i, e);
  }
}

void FairShare::HeapRemove(size_t i) {
  resources_[heap_[i].resource].heap_index = kNotInHeap;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  if (i > 0 && Before(last, heap_[(i - 1) / 2])) {
    HeapSiftUp(i, last);
  } else {
    HeapSiftDown(i, last);
  }
}

void FairShare::ScheduleCompletion(uint32_t idx) {
  Flow& f = flows_[idx];
  const Time when = sim_.Now() + TransferTime(f.remaining, f.rate);
  // In place when the completion is pending: ordered exactly as a cancel and a new schedule.
  if (sim_.Reschedule(f.completion, when)) return;
  f.completion = sim_.ScheduleAt(when, [this, idx] { Complete(idx); });
}

void FairShare::SetLoad(uint32_t r, double load) {
  Resource& res = resources_[r];
  const Time now = sim_.Now();
  const Time dt = now - res.load_since;
  res.bytes += res.load * dt.seconds();
  if (res.load > 0) res.busy += dt;
  res.load_since = now;
  if (load != res.load && record_counters_) {
    if (counters_.size() < counters_.capacity() || timeline_budget_ == nullptr ||
        timeline_budget_->Grow(counters_)) {
      counters_.push_back({now, ResourceId(r), load});
    } else {
      sim_.Stop();
    }
  }
  res.load = load;
}

std::vector<ResourceInfo> FairShare::ResourceReport() const {
  std::vector<ResourceInfo> out;
  out.reserve(resources_.size());
  const Time now = sim_.Now();
  for (size_t r = 0; r < resources_.size(); ++r) {
    const Resource& res = resources_[r];
    ResourceInfo info = infos_[r];
    const Time dt = now - res.load_since;
    info.bytes = res.bytes + res.load * dt.seconds();
    info.busy = res.load > 0 ? res.busy + dt : res.busy;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace meshsim::core
