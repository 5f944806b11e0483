#include "core/fair_share.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace meshsim::core {

namespace {
// Heap order for progressive filling: smallest share first, ties by resource id (determinism).
bool ShareGreater(double a_share, uint32_t a_res, double b_share, uint32_t b_res) {
  return a_share != b_share ? a_share > b_share : a_res > b_res;
}
}  // namespace

ResourceId FairShare::AddResource(ResourceInfo info) {
  MESHSIM_CHECK(info.capacity_bytes_per_s > 0 && std::isfinite(info.capacity_bytes_per_s))
      << "resource '" << info.name << "' needs a positive finite capacity";
  Resource r;
  r.info = std::move(info);
  r.load_since = sim_.Now();
  resources_.push_back(std::move(r));
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
  }
  Flow& f = flows_[idx];
  f.remaining = bytes;
  f.rate = 0;
  f.max_rate = max_rate;
  f.settled = sim_.Now();
  f.on_done = std::move(on_done);
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
  for (ResourceId r : resources) {
    MESHSIM_CHECK(r.valid() && r.value() < resources_.size()) << "unknown resource " << r;
    resources_[r.value()].flows.push_back(idx);
  }
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
  for (ResourceId r : f.resources) {
    auto& list = resources_[r.value()].flows;
    auto it = std::find(list.begin(), list.end(), idx);
    MESHSIM_CHECK(it != list.end()) << "flow missing from its resource";
    *it = list.back();
    list.pop_back();
  }
  if (!f.resources.empty()) {
    MarkDirty(f);
    RequestSolve();
  }
  f.active = false;
  f.rate = 0;
  f.completion = EventId();
  --active_;
  Callback done = std::move(f.on_done);
  f.on_done = nullptr;
  free_flows_.push_back(idx);
  if (done) done();
}

void FairShare::Solve() {
  solve_pending_ = false;
  ++solves_;
  ++epoch_;
  for (uint32_t r : dirty_) resources_[r].dirty = false;
  // Walk the dirty list by index: it is not modified during the solve.
  for (uint32_t r : dirty_) {
    if (resources_[r].mark == epoch_) continue;  // Already solved with an earlier component.
    CollectComponent(r);
    FillComponent();
  }
  dirty_.clear();
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
    for (uint32_t f : resources_[r].flows) {
      Flow& flow = flows_[f];
      if (flow.mark == epoch_) continue;
      flow.mark = epoch_;
      comp_flows_.push_back(f);
      for (ResourceId r2 : flow.resources) {
        Resource& res = resources_[r2.value()];
        if (res.mark == epoch_) continue;
        res.mark = epoch_;
        stack_.push_back(r2.value());
      }
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
    res.remaining -= rate;
    res.new_load += rate;
    --res.unfrozen;
    ++res.version;
    if (res.unfrozen > 0) {
      heap_.push_back({std::max(res.remaining, 0.0) / res.unfrozen, r.value(), res.version});
      std::push_heap(heap_.begin(), heap_.end(), [](const HeapEntry& a, const HeapEntry& b) {
        return ShareGreater(a.share, a.resource, b.share, b.resource);
      });
    }
  }
}

void FairShare::FillComponent() {
  const Time now = sim_.Now();
  const auto heap_less = [](const HeapEntry& a, const HeapEntry& b) {
    return ShareGreater(a.share, a.resource, b.share, b.resource);
  };
  // Credit every flow with the bytes it moved at its old rate since it was last settled.
  caps_.clear();
  for (uint32_t i : comp_flows_) {
    Flow& f = flows_[i];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.settled).seconds());
    f.settled = now;
    f.frozen = false;
    f.new_rate = 0;
    if (std::isfinite(f.max_rate)) caps_.push_back({f.max_rate, i});
  }
  std::sort(caps_.begin(), caps_.end());
  unfrozen_ = comp_flows_.size();

  heap_.clear();
  for (uint32_t r : comp_resources_) {
    Resource& res = resources_[r];
    res.remaining = res.info.capacity_bytes_per_s;
    res.new_load = 0;
    res.unfrozen = static_cast<uint32_t>(res.flows.size());
    ++res.version;
    if (res.unfrozen > 0) heap_.push_back({res.remaining / res.unfrozen, r, res.version});
  }
  std::make_heap(heap_.begin(), heap_.end(), heap_less);

  size_t next_cap = 0;
  while (unfrozen_ > 0) {
    while (!heap_.empty() && heap_.front().version != resources_[heap_.front().resource].version) {
      std::pop_heap(heap_.begin(), heap_.end(), heap_less);
      heap_.pop_back();
    }
    while (next_cap < caps_.size() && flows_[caps_[next_cap].second].frozen) ++next_cap;
    const double resource_share = heap_.empty() ? kNoCap : heap_.front().share;
    if (next_cap < caps_.size() && caps_[next_cap].first < resource_share) {
      Freeze(caps_[next_cap].second, caps_[next_cap].first);
      continue;
    }
    MESHSIM_CHECK(!heap_.empty()) << "unfrozen flows but no bottleneck";
    const HeapEntry top = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), heap_less);
    heap_.pop_back();
    Resource& res = resources_[top.resource];
    // Rounding can leave a bottleneck with a hair below zero; a flow never stalls completely.
    const double share = std::max(top.share, res.info.capacity_bytes_per_s * 1e-12);
    for (size_t j = 0; j < res.flows.size(); ++j) {
      const uint32_t f = res.flows[j];
      if (!flows_[f].frozen) Freeze(f, share);
    }
  }

  for (uint32_t r : comp_resources_) SetLoad(r, resources_[r].new_load);
  for (uint32_t i : comp_flows_) {
    Flow& f = flows_[i];
    if (f.new_rate == f.rate && sim_.IsPending(f.completion)) continue;
    f.rate = f.new_rate;
    ScheduleCompletion(i);
  }
}

void FairShare::ScheduleCompletion(uint32_t idx) {
  Flow& f = flows_[idx];
  sim_.Cancel(f.completion);
  f.completion = sim_.ScheduleAt(sim_.Now() + TransferTime(f.remaining, f.rate),
                                 [this, idx] { Complete(idx); });
}

void FairShare::SetLoad(uint32_t r, double load) {
  Resource& res = resources_[r];
  const Time now = sim_.Now();
  const Time dt = now - res.load_since;
  res.info.bytes += res.load * dt.seconds();
  if (res.load > 0) res.info.busy += dt;
  res.load_since = now;
  if (load != res.load && record_counters_) {
    counters_.push_back({now, ResourceId(r), load});
  }
  res.load = load;
}

std::vector<ResourceInfo> FairShare::ResourceReport() const {
  std::vector<ResourceInfo> out;
  out.reserve(resources_.size());
  const Time now = sim_.Now();
  for (const Resource& res : resources_) {
    ResourceInfo info = res.info;
    const Time dt = now - res.load_since;
    info.bytes += res.load * dt.seconds();
    if (res.load > 0) info.busy += dt;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace meshsim::core
