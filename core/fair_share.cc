#include "core/fair_share.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/slot_pool.h"

namespace meshsim::core {

namespace {
bool default_flow_groups = true;
}  // namespace

FairShare::FairShare(Simulator& sim) : sim_(sim), flow_groups_(default_flow_groups) {}

void FairShare::set_default_flow_groups(bool on) { default_flow_groups = on; }

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
  if (!groups_.empty() && bytes > 0) {  // (A zero-byte flow takes no resource.)
    // A flow may join resources of flow groups where it cannot make them limit a member
    // (KeepsGroups); elsewhere it splits them first.
    double min_capacity = kNoCap, second_capacity = kNoCap;
    for (ResourceId r : resources) {
      if (!r.valid() || r.value() >= resources_.size()) continue;
      const double c = resources_[r.value()].capacity;
      second_capacity = c < min_capacity ? min_capacity : std::min(second_capacity, c);
      min_capacity = std::min(min_capacity, c);
    }
    bool min_seen = false;
    for (ResourceId r : resources) {
      if (!r.valid() || r.value() >= resources_.size()) continue;
      const Resource& res = resources_[r.value()];
      const bool is_min = !min_seen && res.capacity == min_capacity;
      min_seen = min_seen || is_min;
      if (res.groups.empty()) continue;
      const bool local = resources.size() == 1;
      double bound = std::min(max_rate, is_min ? second_capacity : min_capacity);
      if (local && bound >= res.capacity) bound = kNoCap;  // As AddBound counts it.
      if (KeepsGroups(r.value(), bound, local, !local, local ? 0.0 : bound)) {
        CountGroupsOn(r.value());
        continue;
      }
      SplitGroupsOn(r.value());
    }
  }
  const uint32_t idx = NewFlow();
  Flow& f = flows_[idx];
  f.remaining = bytes;
  f.rate = 0;
  f.max_rate = max_rate;
  f.settled = sim_.Now();
  f.fill = 0;
  f.trace = kNoTrace;
  on_done_[idx] = std::move(on_done);
  f.resources.clear();
  f.active = true;
  ++active_;
  serial_[idx] = flows_started_++;
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
  f.local = resources.size() == 1;
  auto& positions = positions_[idx];
  positions.resize(resources.size());
  const bool crossing = resources.size() > 1;
  for (uint32_t k = 0; k < resources.size(); ++k) {
    const ResourceId r = resources[k];
    MESHSIM_CHECK(r.valid() && r.value() < resources_.size()) << "unknown resource " << r;
    Resource& res = resources_[r.value()];
    positions[k] = static_cast<uint32_t>(res.flows.size());
    res.flows.push_back({idx, k});
    res.crossing += crossing;
  }
  AddBounds(f, +1);
  MarkDirty(f);
  RequestSolve();
  return FlowId(idx);
}

void FairShare::StartGroup(double bytes, std::span<const ResourceId> resources,
                           std::span<const uint32_t> route_ends, std::span<Callback> on_done,
                           double max_rate) {
  const size_t m = route_ends.size();
  MESHSIM_CHECK(on_done.size() == m) << "a group needs one callback per flow";
  const auto one_by_one = [&] {
    uint32_t begin = 0;
    for (size_t k = 0; k < m; ++k) {
      StartFlow(bytes, resources.subspan(begin, route_ends[k] - begin), std::move(on_done[k]),
                max_rate);
      begin = route_ends[k];
    }
  };
  if (!flow_groups_ || m < 2 || !(bytes > 0) || !std::isfinite(bytes) || !(max_rate > 0)) {
    one_by_one();
    return;
  }
  const uint32_t g = TakeSlot(free_groups_, groups_);
  if (!GroupEligible(g, bytes, resources, route_ends, max_rate)) {
    FreeGroup(g);
    one_by_one();
    return;
  }
  ++groups_formed_;
  Group& grp = groups_[g];
  // What StartFlow does for each flow in order, but the resources' lists and bounds (built by
  // SplitGroup if ever needed).
  uint32_t begin = 0;
  for (size_t k = 0; k < m; ++k) {
    const uint32_t idx = NewFlow();
    grp.members.push_back(idx);
    Flow& f = flows_[idx];
    f.remaining = bytes;
    f.rate = 0;
    f.max_rate = max_rate;
    f.settled = sim_.Now();
    f.fill = 0;
    f.trace = kNoTrace;
    f.completion = EventId();
    on_done_[idx] = std::move(on_done[k]);
    f.resources.assign(resources.begin() + begin, resources.begin() + route_ends[k]);
    f.local = f.resources.size() == 1;
    begin = route_ends[k];
    f.active = true;
    ++active_;
    serial_[idx] = flows_started_++;
  }
  ++unsolved_groups_;
  // MarkDirty of each flow in start order pushes the group's resources in first-touch order:
  // the order of grp.resources. The members' bounds (what StartFlow adds, summed per resource
  // by GroupRate) are counted on the resources that carry something else; their lists stay
  // unbuilt. (One pass: at thousands of chips each pass over the resources misses the cache.)
  for (uint32_t r : grp.resources) {
    Resource& res = resources_[r];
    if (res.dirty_mark != epoch_ + 1) {
      res.dirty_mark = epoch_ + 1;
      dirty_.push_back(r);
    }
    if (!grp.independent && (!res.flows.empty() || res.groups.size() > 1)) CountGroupsOn(r);
  }
  RequestSolve();
}

bool FairShare::GroupEligible(uint32_t g, double bytes, std::span<const ResourceId> resources,
                              std::span<const uint32_t> route_ends, double max_rate) {
  // The conditions of "Flow groups" in the header. (1) depends on the resources' state; the
  // rest only on the routes, the cap and the (fixed) capacities: kept per shape.
  Group& grp = groups_[g];
  if (const GroupShape* shape = FindShape(resources, route_ends, max_rate)) {
    // (1) on the shape's distinct resources (its routes passed the rest of (1) when kept).
    if (!shape->rate.has_value()) return false;
    grp.shape = static_cast<int>(shape - shapes_.data());
    grp.shape_generation = shape->generation;
    grp.independent = shape->independent;
    grp.resources = shape->resources;
    grp.adj_begin = shape->adj_begin;
    grp.adj = shape->adj;
    grp.host_sum.clear();  // Read from the shape while it is kept (HostSum, HostMax).
    grp.host_max.clear();
    // Joins its resources and checks GroupFits on the way (one pass).
    bool fits = true;
    for (size_t j = 0; j < grp.resources.size(); ++j) {
      const uint32_t r = grp.resources[j];
      Resource& res = resources_[r];
      res.groups.push_back({g, static_cast<uint32_t>(j)});
      if (fits && !(res.flows.empty() && res.groups.size() == 1)) fits = Fits(g, j);
    }
    grp.rate = *shape->rate;
    grp.scratch.clear();
    return bytes > 0 && fits && !(grp.independent && AnyDirty(g));
  }
  if (!GroupRoutesFree(g, resources, route_ends)) return false;
  grp.independent = route_ends[0] == 1;
  BuildGroupAdjacency(g, resources, route_ends);
  std::optional<double> rate = GroupRate(g, resources, route_ends, max_rate);
  if (grp.independent) rate = IndependentRate(g, max_rate);
  grp.shape = static_cast<int>(KeepShape(g, resources, route_ends, max_rate, rate));
  grp.shape_generation = shapes_[grp.shape].generation;
  if (!rate.has_value()) return false;
  grp.rate = *rate;
  grp.scratch.clear();
  // (5) An independent group's resources are solved alone in dirty-list order, which StartGroup's
  // marks give only when none is dirty yet.
  return bytes > 0 && GroupFits(g) && !(grp.independent && AnyDirty(g));
}

bool FairShare::KeepsGroups(uint32_t r, double sum, uint32_t locals, uint32_t crossing,
                            double max) const {
  const Resource& res = resources_[r];
  const bool unbounded = std::isinf(sum);
  if (unbounded && crossing > 0) return false;
  double bounds = res.bound_sum + (unbounded ? 0.0 : sum);
  double transit = std::max(res.transit_max, max);
  uint32_t members = res.hosted;
  for (const GroupRef& ref : res.groups) {
    const Group& grp = groups_[ref.group];
    if (grp.independent) return false;  // Its rate is the resource's share.
    if (ref.counted) continue;
    bounds += HostSum(grp, ref.slot);
    transit = std::max(transit, HostMax(grp, ref.slot));
    members += grp.adj_begin[ref.slot + 1] - grp.adj_begin[ref.slot];
  }
  // CanBind() and Decoupled() with the joining flows and the groups' members.
  const double limit = (1 - kBindMargin) * res.capacity;
  if (res.unbounded == 0 && !unbounded && bounds <= limit) return true;
  const uint32_t local = static_cast<uint32_t>(res.flows.size()) - res.crossing + locals;
  return res.crossing + members + crossing > 0 && local > 0 && bounds + local * transit <= limit;
}

bool FairShare::GroupFits(uint32_t g) const {
  const Group& grp = groups_[g];
  for (size_t j = 0; j < grp.resources.size(); ++j) {
    const Resource& res = resources_[grp.resources[j]];
    if (res.flows.empty() && res.groups.size() == 1) continue;  // Only this group's.
    if (!Fits(g, j)) return false;
  }
  return true;
}

bool FairShare::Fits(uint32_t g, size_t j) const {
  const Group& grp = groups_[g];
  if (grp.independent || !std::isfinite(HostSum(grp, j))) return false;
  // g is over the resource already (uncounted): its members are among KeepsGroups' groups.
  return KeepsGroups(grp.resources[j], 0.0, 0, 0, 0.0);
}

double FairShare::Reserved(uint32_t r) const {
  double sum = 0;
  for (const GroupRef& ref : resources_[r].groups) {
    const Group& grp = groups_[ref.group];
    if (!grp.solved) continue;
    for (uint32_t a = grp.adj_begin[ref.slot]; a < grp.adj_begin[ref.slot + 1]; ++a) {
      sum += grp.rate;
    }
  }
  return sum;
}

void FairShare::SplitGroupsOn(uint32_t r) {
  while (!resources_[r].groups.empty()) SplitGroup(resources_[r].groups.front().group);
}

void FairShare::CountGroupBounds(uint32_t g, uint32_t j, int sign) {
  const Group& grp = groups_[g];
  Resource& res = resources_[grp.resources[j]];
  const double sum = HostSum(grp, j);
  MESHSIM_CHECK(std::isfinite(sum)) << "a crossing flow with an infinite bound";
  const uint32_t members = grp.adj_begin[j + 1] - grp.adj_begin[j];
  if (sign > 0) {
    res.hosted += members;
    res.bound_sum += sum;
    res.transit_max = std::max(res.transit_max, HostMax(grp, j));
  } else {
    res.hosted -= members;
    res.bound_sum -= sum;
    // Exact again whenever the resource empties, as AddBound keeps it.
    if (res.flows.empty() && res.hosted == 0) res.bound_sum = 0;
    if (res.crossing + res.hosted == 0) res.transit_max = 0;
  }
}

void FairShare::CountGroupsOn(uint32_t r) {
  for (GroupRef& ref : resources_[r].groups) {
    if (ref.counted || groups_[ref.group].independent) continue;
    ref.counted = true;
    CountGroupBounds(ref.group, ref.slot, +1);
  }
}

bool FairShare::AnyDirty(uint32_t g) const {
  for (uint32_t r : groups_[g].resources) {
    if (resources_[r].dirty_mark == epoch_ + 1) return true;
  }
  return false;
}

const FairShare::GroupShape* FairShare::FindShape(std::span<const ResourceId> resources,
                                                  std::span<const uint32_t> route_ends,
                                                  double max_rate) const {
  // FNV-1a over the cap, the sizes and at most 32 routes' resources, spread over the routes (a
  // hit is checked in full; a collision only costs a miss).
  uint64_t h = 0xcbf29ce484222325ull;
  const auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  mix(std::bit_cast<uint64_t>(max_rate));
  mix(route_ends.size());
  mix(resources.size());
  const size_t stride = std::max<size_t>(1, resources.size() / 32);
  for (size_t i = 0; i < resources.size(); i += stride) mix(resources[i].value());
  shape_hash_ = h;
  const auto it = shape_index_.find(h);
  if (it == shape_index_.end()) return nullptr;
  const GroupShape& shape = shapes_[it->second];
  if (shape.max_rate == max_rate && shape.routes.size() == resources.size() &&
      shape.route_ends.size() == route_ends.size() &&
      std::equal(route_ends.begin(), route_ends.end(), shape.route_ends.begin()) &&
      std::equal(resources.begin(), resources.end(), shape.routes.begin())) {
    return &shape;
  }
  return nullptr;
}

size_t FairShare::KeepShape(uint32_t g, std::span<const ResourceId> resources,
                            std::span<const uint32_t> route_ends, double max_rate,
                            std::optional<double> rate) {
  // One per route set up to kShapes (every ring of a torus repeats its sends and its
  // reductions each step), then round robin. FindShape just hashed these routes.
  size_t slot;
  if (shapes_.size() < kShapes) {
    slot = shapes_.size();
    shapes_.emplace_back();
  } else {
    slot = next_shape_;
    next_shape_ = (next_shape_ + 1) % kShapes;
    // Live groups that read their members' bounds from this shape keep a copy (rare: only
    // beyond kShapes route sets).
    for (Group& live : groups_) {
      if (live.members.empty() || live.shape != static_cast<int>(slot) ||
          live.shape_generation != shapes_[slot].generation || !live.host_sum.empty()) {
        continue;
      }
      live.host_sum = shapes_[slot].host_sum;
      live.host_max = shapes_[slot].host_max;
    }
    const auto old = shape_index_.find(shapes_[slot].hash);
    if (old != shape_index_.end() && old->second == slot) shape_index_.erase(old);
  }
  shape_index_[shape_hash_] = static_cast<uint32_t>(slot);
  GroupShape& shape = shapes_[slot];
  shape.hash = shape_hash_;
  const Group& grp = groups_[g];
  shape.routes.assign(resources.begin(), resources.end());
  shape.route_ends.assign(route_ends.begin(), route_ends.end());
  shape.max_rate = max_rate;
  shape.rate = rate;
  shape.independent = grp.independent;
  shape.resources = grp.resources;
  shape.adj_begin = grp.adj_begin;
  shape.adj = grp.adj;
  shape.host_sum = grp.host_sum;
  shape.host_max = grp.host_max;
  shape.generation = ++shape_generations_;
  return slot;
}

bool FairShare::GroupRoutesFree(uint32_t g, std::span<const ResourceId> resources,
                                std::span<const uint32_t> route_ends) const {
  // (1) Routes of at least two resources each (crossing flows: solved by parts, never alone), or of
  // one resource each (an independent group, solved alone each), over resources that no independent
  // group holds (the rest of (1): GroupFits).
  const bool independent = !route_ends.empty() && route_ends[0] == 1;
  uint32_t begin = 0;
  for (size_t k = 0; k < route_ends.size(); ++k) {
    if (route_ends[k] > resources.size()) return false;
    const uint32_t length = route_ends[k] - begin;
    if (independent ? length != 1 : length < 2) return false;
    begin = route_ends[k];
  }
  if (begin != resources.size()) return false;
  for (ResourceId r : resources) {
    MESHSIM_CHECK(r.valid() && r.value() < resources_.size()) << "unknown resource " << r;
    const Resource& res = resources_[r.value()];
    // An independent group's resources carry nothing else (its rate is their share); other
    // groups share resources where GroupFits allows it.
    if (independent && (!res.flows.empty() || !res.groups.empty())) return false;
    for (const GroupRef& ref : res.groups) {
      if (groups_[ref.group].independent) return false;
    }
  }
  return true;
}

void FairShare::BuildGroupAdjacency(uint32_t g, std::span<const ResourceId> resources,
                                    std::span<const uint32_t> route_ends) {
  Group& grp = groups_[g];
  // The group's resources in first-touch order and its adjacency (members per resource, in
  // start order). While building, `group` marks them; FreeGroup unmarks them on failure.
  for (ResourceId r : resources) {
    Resource& res = resources_[r.value()];
    if (!res.groups.empty() && res.groups.back().group == g) continue;  // Pushed last if at all.
    res.groups.push_back({g, static_cast<uint32_t>(grp.resources.size())});
    grp.resources.push_back(r.value());
  }
  const size_t n = grp.resources.size();
  grp.adj_begin.assign(n + 1, 0);
  for (ResourceId r : resources) ++grp.adj_begin[SlotOf(r.value(), g) + 1];
  for (size_t j = 0; j < n; ++j) grp.adj_begin[j + 1] += grp.adj_begin[j];
  grp.adj.assign(grp.adj_begin[n], 0);
}

std::optional<double> FairShare::GroupRate(uint32_t g, std::span<const ResourceId> resources,
                                           std::span<const uint32_t> route_ends, double max_rate) {
  Group& grp = groups_[g];
  const size_t m = route_ends.size();
  const size_t n = grp.resources.size();
  // (2) The bounds StartFlow's AddBounds would add, in start order, per resource; fills the
  // adjacency entries.
  std::vector<uint32_t>& fill_at = grp.scratch;  // Scratch here: next free adjacency entry.
  fill_at.assign(grp.adj_begin.begin(), grp.adj_begin.end() - 1);
  std::vector<double> bound_sum(n, 0.0);
  std::vector<uint32_t> unbounded(n, 0);
  grp.host_max.assign(n, 0.0);
  uint32_t begin = 0;
  for (size_t k = 0; k < m; ++k) {
    double min_capacity = kNoCap, second_capacity = kNoCap;
    uint32_t min_resource = 0;
    for (uint32_t i = begin; i < route_ends[k]; ++i) {
      const double c = resources_[resources[i].value()].capacity;
      if (c < min_capacity) {
        second_capacity = min_capacity;
        min_capacity = c;
        min_resource = resources[i].value();
      } else if (c < second_capacity) {
        second_capacity = c;
      }
    }
    for (uint32_t i = begin; i < route_ends[k]; ++i) {
      const uint32_t r = resources[i].value();
      const uint32_t slot = SlotOf(r, g);
      grp.adj[fill_at[slot]++] = static_cast<uint32_t>(k);
      const double bound = std::min(max_rate, r == min_resource ? second_capacity : min_capacity);
      if (std::isinf(bound)) {
        ++unbounded[slot];
      } else {
        bound_sum[slot] += bound;
      }
      grp.host_max[slot] = std::max(grp.host_max[slot], bound);
    }
    begin = route_ends[k];
  }
  // (2) Binding resources are private; (3) every flow gets the same finite rate.
  std::vector<double> smallest(m, kNoCap);  // c_f: smallest binding private capacity.
  grp.host_sum.assign(n, kNoCap);
  for (size_t j = 0; j < n; ++j) {
    const Resource& res = resources_[grp.resources[j]];
    if (unbounded[j] == 0) grp.host_sum[j] = bound_sum[j];
    const bool can_bind = unbounded[j] > 0 || bound_sum[j] > (1 - kBindMargin) * res.capacity;
    if (!can_bind) continue;
    if (grp.adj_begin[j + 1] - grp.adj_begin[j] != 1) return std::nullopt;
    const uint32_t k = grp.adj[grp.adj_begin[j]];
    smallest[k] = std::min(smallest[k], res.capacity);
  }
  double rate = 0;
  for (size_t k = 0; k < m; ++k) {
    const double x = max_rate < smallest[k] ? max_rate : smallest[k];
    if (!std::isfinite(x) || (k > 0 && x != rate)) return std::nullopt;
    rate = x;
  }
  return rate;
}

std::optional<double> FairShare::IndependentRate(uint32_t g, double max_rate) const {
  // What SolveAlone's FillLocal gives each of k flows of cap u on a resource of capacity c: the
  // share c/k when no cap is below it, u when k = 1 and u < c. (k > 1 with u < c/k would freeze
  // the caps one by one at shares recomputed in floating point: not taken.)
  const Group& grp = groups_[g];
  double rate = 0;
  for (size_t j = 0; j < grp.resources.size(); ++j) {
    const uint32_t k = grp.adj_begin[j + 1] - grp.adj_begin[j];
    const double share = resources_[grp.resources[j]].capacity / k;
    double x = share;
    if (max_rate < share) {
      if (k > 1) return std::nullopt;
      x = max_rate;
    }
    if (!std::isfinite(x) || !(x > 0) || (j > 0 && x != rate)) return std::nullopt;
    rate = x;
  }
  return rate;
}

void FairShare::FreeGroup(uint32_t g) {
  Group& grp = groups_[g];
  // A completed group has left its resources already (CompleteGroup), a split one too.
  for (uint32_t r : grp.completing ? std::span<const uint32_t>() : grp.resources) {
    auto& on = resources_[r].groups;
    for (size_t i = 0; i < on.size(); ++i) {
      if (on[i].group == g) {
        if (on[i].counted) CountGroupBounds(g, on[i].slot, -1);
        on.erase(static_cast<uint32_t>(i));
        break;
      }
    }
  }
  grp.members.clear();
  grp.resources.clear();
  grp.host_sum.clear();
  grp.host_max.clear();
  grp.scratch.clear();
  grp.completion = EventId();
  grp.solved = false;
  grp.completing = false;
  grp.independent = false;
  grp.shape = -1;
  free_groups_.push_back(g);
}

void FairShare::SolveGroup(uint32_t g) {
  Group& grp = groups_[g];
  MESHSIM_CHECK(!grp.solved) << "flow group solved twice";
  const Time now = sim_.Now();
  // What SolveByParts does for the group's flows: one fill (every flow at grp.rate; an
  // independent group's resources are solved alone, with no fill id), completions in start
  // order.
  const size_t m = grp.members.size();
  flows_solved_ += m;
  flows_refilled_ += m;
  const uint32_t fill = grp.independent ? 0 : NextFill();
  for (uint32_t idx : grp.members) {
    Flow& f = flows_[idx];
    Settle(f, now);
    f.frozen = true;
    f.new_rate = grp.rate;
    f.rate = grp.rate;
    f.fill = fill;
    f.trace = kNoTrace;
  }
  // The completions: one event with the first of the members' m consecutive numbers.
  grp.completion_time = now + TransferTime(flows_[CompletionOrder(grp, 0)].remaining, grp.rate);
  grp.completion = sim_.ScheduleAt(grp.completion_time, [this, g] { CompleteGroup(g); });
  grp.first_seq = sim_.ReserveSequence(m - 1) - 1;  // The event took the first.
  grp.solved = true;
  --unsolved_groups_;
  // Loads, in first-touch order, of the resources that carry only this group's members. The
  // others are left to the solve's main loop (they are dirty: SolveAlone or SolveByParts, with
  // Reserved()).
  for (size_t j = 0; j < grp.resources.size(); ++j) {
    const uint32_t r = grp.resources[j];
    Resource& res = resources_[r];
    if (!res.flows.empty() || res.groups.size() > 1) continue;
    res.mark = epoch_;
    double load = 0;
    for (uint32_t a = grp.adj_begin[j]; a < grp.adj_begin[j + 1]; ++a) load += grp.rate;
    SetLoad(r, load);
  }
}

void FairShare::CompleteGroup(uint32_t g) {
  groups_[g].completing = true;
  groups_[g].completion = EventId();
  // The group leaves its resources before any callback runs (its members' bounds, where
  // counted, with it), so that a callback may start flows over them, as over what Complete()
  // leaves; the one that ends a step starts the next one's there. A flow that a callback starts
  // over a resource of a member yet to complete at this instant does not see that member, which
  // the per-flow solver would until the member's own event; nothing solves in between (the
  // solve comes after the members' consecutive events), so no rate or time differs.
  {
    const Group& grp = groups_[g];
    for (size_t j = 0; j < grp.resources.size(); ++j) {
      auto& on = resources_[grp.resources[j]].groups;
      for (uint32_t q = 0; q < on.size(); ++q) {
        if (on[q].group != g) continue;
        const bool counted = on[q].counted;
        if (q + 1 == on.size()) {
          on.pop_back();
        } else {
          on.erase(q);
        }
        if (counted) CountGroupBounds(g, static_cast<uint32_t>(j), -1);
        break;
      }
    }
  }
  // Complete() of each member in start order; the lists were never built. Callbacks may add
  // groups (groups_ may move): the group is looked up again after each.
  for (size_t j = 0; j < groups_[g].members.size(); ++j) {
    const uint32_t idx = CompletionOrder(groups_[g], j);
    Flow& f = flows_[idx];
    MESHSIM_CHECK(f.active) << "flow completed twice";
    MarkDirty(f);
    RequestSolve();
    Retire(idx);
  }
  FreeGroup(g);
}

void FairShare::SplitGroup(uint32_t g) {
  Group& grp = groups_[g];
  MESHSIM_CHECK(!grp.completing)
      << "a flow group's completion callback started a flow over the group's resources";
  ++groups_split_;
  if (!grp.solved) --unsolved_groups_;
  // What StartFlow did for each member, in start order. Where the members' bounds were counted
  // they stay (as the listed members'); elsewhere each member's is added.
  for (uint32_t idx : grp.members) {
    Flow& f = flows_[idx];
    auto& positions = positions_[idx];
    positions.resize(f.resources.size());
    const bool crossing = f.resources.size() > 1;
    uint32_t min_resource;
    double min_capacity, second_capacity;
    RouteCapacities(f, &min_resource, &min_capacity, &second_capacity);
    for (uint32_t k = 0; k < f.resources.size(); ++k) {
      const uint32_t r = f.resources[k].value();
      Resource& res = resources_[r];
      positions[k] = static_cast<uint32_t>(res.flows.size());
      res.flows.push_back({idx, k});
      res.crossing += crossing;
      bool counted = false;
      for (const GroupRef& ref : res.groups) {
        if (ref.group == g) counted = ref.counted;
      }
      if (counted) {
        --res.hosted;
      } else {
        const double other = r == min_resource ? second_capacity : min_capacity;
        AddBound(r, std::min(f.max_rate, other), crossing, +1);
      }
    }
  }
  for (uint32_t r : grp.resources) {  // Leave the resources (FreeGroup would uncount them).
    auto& on = resources_[r].groups;
    for (size_t i = 0; i < on.size(); ++i) {
      if (on[i].group != g) continue;
      on.erase(static_cast<uint32_t>(i));
      break;
    }
  }
  if (grp.solved) {
    sim_.Cancel(grp.completion);
    for (size_t j = 0; j < grp.members.size(); ++j) {
      const uint32_t idx = CompletionOrder(grp, j);
      flows_[idx].completion = sim_.ScheduleAtSequence(grp.completion_time, grp.first_seq + j,
                                                       [this, idx] { Complete(idx); });
    }
  }
  FreeGroup(g);
}

void FairShare::MarkDirty(const Flow& flow) {
  for (ResourceId r : flow.resources) {
    Resource& res = resources_[r.value()];
    if (res.dirty_mark != epoch_ + 1) {  // Found dirty by the next solve.
      res.dirty_mark = epoch_ + 1;
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
  if (HasTrace(f)) ++traces_[f.trace].removed;
  const bool crossing = f.resources.size() > 1;
  const auto& positions = positions_[idx];
  for (uint32_t k = 0; k < f.resources.size(); ++k) {
    const uint32_t r = f.resources[k].value();
    Resource& res = resources_[r];
    res.crossing -= crossing;
    const uint32_t pos = positions[k];
    MESHSIM_CHECK(pos < res.flows.size() && res.flows[pos].flow == idx)
        << "flow missing from its resource";
    const Member moved = res.flows.back();
    res.flows[pos] = moved;
    positions_[moved.flow][moved.slot] = pos;
    res.flows.pop_back();
  }
  AddBounds(f, -1);
  if (!f.resources.empty()) {
    MarkDirty(f);
    RequestSolve();
  }
  Retire(idx);
}

uint32_t FairShare::NewFlow() {
  if (!free_flows_.empty()) {
    const uint32_t idx = free_flows_.back();
    free_flows_.pop_back();
    return idx;
  }
  flows_.emplace_back();
  positions_.emplace_back();
  serial_.push_back(0);
  batch_of_.push_back(kNoFlow);
  batch_pos_.push_back(0);
  on_done_.emplace_back();
  return static_cast<uint32_t>(flows_.size() - 1);
}

void FairShare::Retire(uint32_t idx) {
  Flow& f = flows_[idx];
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
  // A local flow capped at or above the capacity is as unbounded as an uncapped one (see
  // "Decoupled resources" in the header).
  if (std::isinf(bound) || (!crossing && bound >= res.capacity)) {
    res.unbounded += sign;
  } else {
    res.bound_sum += sign * bound;
  }
  if (crossing && sign > 0) res.transit_max = std::max(res.transit_max, bound);
  // Exact again whenever the resource empties, so the running sum cannot drift.
  if (res.flows.empty() && res.hosted == 0) res.bound_sum = 0;
  if (res.crossing + res.hosted == 0) res.transit_max = 0;
}

void FairShare::Solve() {
  solve_pending_ = false;
  solving_ = true;
  ++solves_;
  ++epoch_;  // Resources marked dirty since the last solve now have dirty_mark == epoch_.
  // Groups started since the last solve first, each from its first resource in the dirty list:
  // the loads of their resources, shared or not, need their rates (Reserved).
  for (size_t d = 0; d < dirty_.size() && unsolved_groups_ > 0; ++d) {
    const uint32_t r = dirty_[d];
    for (size_t i = 0; i < resources_[r].groups.size(); ++i) {
      const uint32_t g = resources_[r].groups[i].group;
      if (!groups_[g].solved) SolveGroup(g);
    }
  }
  // The dirty list by index (it is not modified during the solve): a resource that no flow
  // crosses is solved alone; the first that one crosses solves every dirty resource left that
  // one crosses, by parts.
  for (size_t d = 0; d < dirty_.size(); ++d) {
    const uint32_t r = dirty_[d];
    if (resources_[r].mark == epoch_) continue;  // Solved already.
    if (resources_[r].crossing == 0) {
      SolveAlone(r);
    } else {
      SolveByParts(d);
    }
  }
  dirty_.clear();
  solving_ = false;
  FlushCompletions();
}

void FairShare::SolveAlone(uint32_t r) {
  Resource& res = resources_[r];
  res.mark = epoch_;
  // Group members over it (no flow of theirs is local) take their rates first.
  const double reserved = res.groups.empty() ? 0.0 : Reserved(r);
  if (res.flows.empty()) {  // What FillLocal gives a resource left empty: no load.
    SetLoad(r, reserved);
    return;
  }
  const Time now = sim_.Now();
  const uint32_t n = static_cast<uint32_t>(res.flows.size());
  flows_solved_ += n;
  flows_refilled_ += n;
  SetLoad(r, FillLocal(r, res.capacity - reserved, reserved));
  for (const Member& m : res.flows) TakeNewRate(m.flow, now);
}

double FairShare::FillLocal(uint32_t r, double remaining, double load) {
  const Resource& res = resources_[r];
  // Collect the caps as FillPart orders them: by (cap, flow index).
  caps_.clear();
  uint32_t n = 0;
  for (const Member& m : res.flows) {
    Flow& f = flows_[m.flow];
    if (!f.local) continue;
    ++n;
    f.frozen = false;
    // Its rate is set outside a fill: a recorded fill holding it does not describe its part.
    DropTrace(f);
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
    if (f.frozen || !f.local) continue;
    f.new_rate = share;
    load += share;
  }
  return load;
}

void FairShare::SolveByParts(size_t from) {
  // The dirty resources left to this solve that flows cross (SolveAlone takes the others).
  solve_dirty_.clear();
  solve_flows_.clear();
  for (size_t d = from; d < dirty_.size(); ++d) {
    Resource& res = resources_[dirty_[d]];
    if (res.mark == epoch_) continue;
    if (res.crossing == 0) {
      // SolveAlone sets its flows' rates after this (FillLocal forgets their recorded fills):
      // a recorded fill that holds one of them is not replayed now either.
      for (const Member& m : res.flows) DropTrace(flows_[m.flow]);
      continue;
    }
    res.mark = epoch_;
    solve_dirty_.push_back(dirty_[d]);
  }
  // The binding parts that change: those of the flows over a dirty resource (a decoupled one's
  // local flows aside), recorded fills first.
  uint32_t tried = 0;  // Bit per traces_ slot.
  for (uint32_t r : solve_dirty_) {
    const bool decoupled = resources_[r].Decoupled();
    for (const Member& m : resources_[r].flows) {
      const Flow& f = flows_[m.flow];
      if (!reuse_fills_ || f.sub_mark == epoch_ || (decoupled && f.local) || !HasTrace(f) ||
          (tried >> f.trace & 1) != 0) {
        continue;
      }
      const uint8_t slot = f.trace;
      tried |= 1u << slot;
      if (Refill(slot)) {
        const std::vector<uint32_t>& frozen = traces_[slot].frozen;
        solve_flows_.insert(solve_flows_.end(), frozen.begin(), frozen.end());
      }
    }
  }
  for (uint32_t r : solve_dirty_) {
    const bool decoupled = resources_[r].Decoupled();
    for (const Member& m : resources_[r].flows) {
      const Flow& f = flows_[m.flow];
      if (f.sub_mark == epoch_ || (decoupled && f.local)) continue;
      CollectBindingPart(m.flow);
      FillPart(sub_resources_, sub_flows_, /*record=*/true);
      solve_flows_.insert(solve_flows_.end(), sub_flows_.begin(), sub_flows_.end());
    }
  }
  flows_solved_ += solve_flows_.size();
  // Loads, each resource's once (solve_dirty_'s are marked already, the others when first met).
  // A filled resource's is its flows' rates summed in freeze order. One that joins no fill
  // (cannot bind, or decoupled) takes its accounts once every part is filled: a non-binding
  // one's load is the sum of its flows' rates; a decoupled one's local flows fill what its
  // crossing flows leave.
  boundary_.clear();
  const auto take_load = [&](uint32_t r) {
    Resource& res = resources_[r];
    if (res.sub_mark == epoch_) {
      SetLoad(r, res.groups.empty() ? res.new_load : res.new_load + Reserved(r));
    } else {
      boundary_.push_back(r);
    }
  };
  for (uint32_t r : solve_dirty_) take_load(r);
  for (uint32_t i : solve_flows_) {
    for (ResourceId id : flows_[i].resources) {
      Resource& res = resources_[id.value()];
      if (res.mark == epoch_) continue;
      res.mark = epoch_;
      take_load(id.value());
    }
  }
  for (uint32_t r : boundary_) {
    Resource& res = resources_[r];
    if (!res.Decoupled()) {
      SumLoad(r);
      continue;
    }
    FillDecoupled(r);
    for (const Member& m : res.flows) {
      if (flows_[m.flow].local) solve_flows_.push_back(m.flow);
    }
  }
  // The flows whose rate changed (or that have no completion yet), in start order: their
  // completions take this solve's sequence numbers in that order (see "Solving by parts").
  const Time now = sim_.Now();
  resched_.clear();
  for (uint32_t i : solve_flows_) {
    const Flow& f = flows_[i];
    if (f.new_rate != f.rate || !Pending(f)) resched_.push_back(i);
  }
  std::sort(resched_.begin(), resched_.end(),
            [this](uint32_t a, uint32_t b) { return serial_[a] < serial_[b]; });
  for (uint32_t i : resched_) TakeNewRate(i, now);
}

void FairShare::FillDecoupled(uint32_t r) {
  Resource& res = resources_[r];
  // Its local flows take what the crossing ones (final now: every part is filled) leave, as the
  // joint fill would account them (in list rather than freeze order): equal rates, the usual
  // case, give the same bits either way.
  double remaining = res.capacity, load = 0;
  for (const Member& m : res.flows) {
    const Flow& f = flows_[m.flow];
    if (f.local) continue;
    remaining -= f.new_rate;
    load += f.new_rate;
  }
  if (!res.groups.empty()) {  // Group members are crossing flows too.
    const double reserved = Reserved(r);
    remaining -= reserved;
    load += reserved;
  }
  flows_refilled_ += res.flows.size() - res.crossing;
  SetLoad(r, FillLocal(r, remaining, load));
}

void FairShare::SumLoad(uint32_t r) {
  const Resource& res = resources_[r];
  double load = 0;
  for (const Member& m : res.flows) load += flows_[m.flow].new_rate;
  if (!res.groups.empty()) load += Reserved(r);
  SetLoad(r, load);
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
  if (recording_ != nullptr) recording_->frozen.push_back(idx);
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

uint32_t FairShare::NextFill() {
  if (++fills_ == 0) {  // Wrapped: an id could name two fills, so forget every recorded one.
    for (Flow& f : flows_) f.fill = 0;
    for (FillTrace& t : traces_) t.fill = 0;
    fills_ = 1;
  }
  return fills_;
}

void FairShare::StartAccounts(uint32_t r) {
  Resource& res = resources_[r];
  res.sub_mark = epoch_;
  res.remaining = res.capacity;
  res.new_load = 0;
  res.unfrozen = static_cast<uint32_t>(res.flows.size());
  res.heap_index = kNotInHeap;
}

void FairShare::FillPart(std::span<const uint32_t> part_resources,
                         std::span<const uint32_t> part_flows, bool record) {
  const uint32_t fill = NextFill();
  uint8_t slot = kNoTrace;
  if (record && part_flows.size() >= kMinTraceFlows) {
    // A free slot, else the one whose fill is oldest.
    slot = 0;
    for (uint8_t i = 1; i < kTraces; ++i) {
      if (traces_[i].fill < traces_[slot].fill) slot = i;
    }
  }
  caps_.clear();
  for (uint32_t i : part_flows) {
    Flow& f = flows_[i];
    f.frozen = false;
    f.new_rate = 0;
    DropTrace(f);
    f.fill = fill;
    f.trace = slot;
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

  if (slot != kNoTrace) {
    recording_ = &traces_[slot];
    recording_->steps.clear();
    recording_->frozen.clear();
    recording_->removed = 0;
  }
  FillLoop();
  if (recording_ != nullptr) {
    recording_->fill = fill;
    recording_ = nullptr;
  }
}

void FairShare::FillLoop() {
  size_t next_cap = 0;
  while (unfrozen_ > 0) {
    while (next_cap < caps_.size() && flows_[caps_[next_cap].second].frozen) ++next_cap;
    const double resource_share = heap_.empty() ? kNoCap : heap_.front().share;
    if (next_cap < caps_.size() && caps_[next_cap].first < resource_share) {
      const double cap = caps_[next_cap].first;
      Freeze(caps_[next_cap].second, cap);
      if (recording_ != nullptr) {
        recording_->steps.push_back(
            {cap, cap, kCapStep, static_cast<uint32_t>(recording_->frozen.size())});
      }
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
    if (recording_ != nullptr) {
      recording_->steps.push_back(
          {top.share, share, top.resource, static_cast<uint32_t>(recording_->frozen.size())});
    }
  }
}

bool FairShare::Refill(uint8_t slot) {
  FillTrace& t = traces_[slot];
  const uint32_t old_fill = t.fill;
  if (old_fill == 0) return false;

  // The dirty resources of the part(s): those of this solve that can take part in a fill
  // and carry a recorded flow, and, transitively, those of the flows new to the part (which
  // must have no clean resource in a fill: that one's flows would not all be in this fill).
  refill_dirty_.clear();
  refill_extra_.clear();
  bool ok = true;
  for (uint32_t r : solve_dirty_) {
    Resource& res = resources_[r];
    if (!InPart(res)) {
      // A recorded flow local to a resource that is decoupled now is in no part any more.
      if (res.Decoupled()) {
        for (const Member& m : res.flows) {
          const Flow& f = flows_[m.flow];
          ok = ok && !(f.local && f.fill == old_fill);
        }
      }
      continue;
    }
    for (const Member& m : res.flows) {
      if (flows_[m.flow].fill != old_fill) continue;
      res.in_refill = true;
      refill_dirty_.push_back(r);
      break;
    }
  }
  for (size_t i = 0; ok && i < refill_dirty_.size(); ++i) {
    for (const Member& m : resources_[refill_dirty_[i]].flows) {
      Flow& f = flows_[m.flow];
      if (f.fill == old_fill || f.extra) continue;
      for (ResourceId r2 : f.resources) {
        Resource& res2 = resources_[r2.value()];
        if (res2.in_refill || !InPart(res2)) continue;
        if (res2.dirty_mark != epoch_) {
          ok = false;
          break;
        }
        res2.in_refill = true;
        refill_dirty_.push_back(r2.value());
      }
      if (!ok) break;
      f.extra = true;
      refill_extra_.push_back(m.flow);
    }
  }
  const uint32_t fill = ok ? NextFill() : 0;
  ok = ok && t.fill == old_fill;  // NextFill forgets every recorded fill when ids wrap.
  const auto clear_scratch = [&] {
    for (uint32_t r : refill_dirty_) resources_[r].in_refill = false;
    for (uint32_t f : refill_extra_) flows_[f].extra = false;
  };
  if (!ok) {
    clear_scratch();
    return false;
  }

  // Replay. The dirty resources' heap keys are kept in refill_keys_ (their heap_index says
  // where) to compare with each recorded step.
  refill_keys_.clear();
  for (uint32_t r : refill_dirty_) {
    StartAccounts(r);
    Resource& res = resources_[r];
    res.heap_index = static_cast<uint32_t>(refill_keys_.size());
    refill_keys_.push_back({res.unfrozen > 0 ? res.remaining / res.unfrozen : kNoCap, r});
  }
  // The smallest (cap, flow) among the joining flows: they are unfrozen throughout the replay.
  double extra_cap = kNoCap;
  uint32_t extra_cap_flow = UINT32_MAX;
  for (uint32_t i : refill_extra_) {
    const double cap = flows_[i].max_rate;
    if (cap < extra_cap || (cap == extra_cap && std::isfinite(cap) && i < extra_cap_flow)) {
      extra_cap = cap;
      extra_cap_flow = i;
    }
  }
  const auto replay_freeze = [&](uint32_t i, double rate) {
    Flow& f = flows_[i];
    f.frozen = true;
    f.new_rate = rate;
    f.fill = fill;
    f.sub_mark = epoch_;
    for (ResourceId r : f.resources) {
      Resource& res = resources_[r.value()];
      if (res.sub_mark != epoch_) {
        // A dirty resource of the fill has its accounts already; any other is not in it.
        if (res.dirty_mark == epoch_ || !InPart(res)) continue;
        StartAccounts(r.value());
      }
      res.remaining -= rate;
      res.new_load += rate;
      --res.unfrozen;
      if (res.in_refill) {
        refill_keys_[res.heap_index].share =
            res.unfrozen > 0 ? std::max(res.remaining, 0.0) / res.unfrozen + 0.0 : kNoCap;
      }
    }
  };
  size_t step = 0;
  uint32_t begin = 0;
  for (; step < t.steps.size(); ++step) {
    const FillStep& s = t.steps[step];
    if (s.resource != kCapStep) {
      // The pop happens again if its resource is unchanged and no changed resource or joining
      // cap comes first.
      if (resources_[s.resource].dirty_mark == epoch_ || extra_cap < s.share) break;
      const HeapEntry popped{s.share, s.resource};
      bool first = true;
      for (const HeapEntry& e : refill_keys_) first = first && !Before(e, popped);
      // Its flows must all still be recorded ones: a resource whose recorded flows have all
      // completed may have changed since in a solve that did not re-fill them.
      for (uint32_t k = begin; first && k < s.end; ++k) {
        const Flow& f = flows_[t.frozen[k]];
        first = f.active && f.fill == old_fill;
      }
      if (!first) break;
    } else {
      // The cap freezes again if its flow is still there, no joining cap comes first and it
      // is below every changed resource's share.
      const uint32_t g = t.frozen[begin];
      if (!flows_[g].active || flows_[g].fill != old_fill) break;
      if (extra_cap < s.share || (extra_cap == s.share && extra_cap_flow < g)) break;
      bool below = true;
      for (const HeapEntry& e : refill_keys_) below = below && s.share < e.share;
      if (!below) break;
    }
    for (uint32_t k = begin; k < s.end; ++k) replay_freeze(t.frozen[k], s.rate);
    begin = s.end;
  }
  for (uint32_t r : refill_dirty_) resources_[r].heap_index = kNotInHeap;

  // The rest is filled afresh from the state the replay reached, as FillPart would go on.
  sub_flows_.clear();
  for (size_t k = begin; k < t.frozen.size(); ++k) {
    const uint32_t i = t.frozen[k];
    if (flows_[i].active && flows_[i].fill == old_fill) sub_flows_.push_back(i);
  }
  for (uint32_t i : refill_extra_) {
    DropTrace(flows_[i]);
    sub_flows_.push_back(i);
  }
  clear_scratch();
  t.steps.resize(step);
  t.frozen.resize(begin);
  t.removed = 0;
  caps_.clear();
  heap_.clear();
  for (uint32_t i : sub_flows_) {
    Flow& f = flows_[i];
    f.frozen = false;
    f.new_rate = 0;
    f.fill = fill;
    f.trace = slot;
    f.sub_mark = epoch_;
    if (std::isfinite(f.max_rate)) caps_.push_back({f.max_rate, i});
    for (ResourceId r : f.resources) {
      Resource& res = resources_[r.value()];
      if (res.sub_mark != epoch_) {
        if (res.dirty_mark == epoch_ || !InPart(res)) continue;
        StartAccounts(r.value());
      }
      if (res.heap_index != kNotInHeap || res.unfrozen == 0) continue;
      heap_.push_back({std::max(res.remaining, 0.0) / res.unfrozen + 0.0, r.value()});
      res.heap_index = static_cast<uint32_t>(heap_.size() - 1);
    }
  }
  std::sort(caps_.begin(), caps_.end());
  unfrozen_ = sub_flows_.size();
  flows_refilled_ += sub_flows_.size();
  for (size_t i = heap_.size() / 2; i-- > 0;) HeapSiftDown(i, heap_[i]);
  recording_ = &t;
  FillLoop();
  recording_ = nullptr;
  t.fill = fill;
  return true;
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
  if (!solving_) {  // A flow without resources, at its start: its own event.
    f.completion = sim_.ScheduleAt(when, [this, idx] { Complete(idx); });
    return;
  }
  // As a cancel and a new schedule: the completion takes the next sequence number now.
  Unschedule(idx);
  f.batched = true;
  batch_of_[idx] = kNoFlow;
  batch_pos_[idx] = static_cast<uint32_t>(completions_.size());
  completions_.push_back({when, sim_.ReserveSequence(1), idx});
}

void FairShare::Unschedule(uint32_t idx) {
  Flow& f = flows_[idx];
  if (f.completion.valid()) {
    sim_.Cancel(f.completion);
    f.completion = EventId();
  }
  if (!f.batched) return;
  f.batched = false;
  const uint32_t b = batch_of_[idx];
  if (b == kNoFlow) {
    completions_[batch_pos_[idx]].flow = kNoFlow;
    return;
  }
  Batch& batch = batches_[b];
  batch.flows[batch_pos_[idx]] = kNoFlow;
  if (--batch.live == 0) {
    sim_.Cancel(batch.event);
    batch.flows.clear();
    free_batches_.push_back(b);
  }
}

void FairShare::FlushCompletions() {
  new_batches_.clear();
  for (const PendingCompletion& c : completions_) {
    if (c.flow == kNoFlow) continue;
    auto [it, added] = batch_at_.try_emplace(c.when.ps(), 0);
    if (added) {
      const uint32_t b = TakeSlot(free_batches_, batches_);
      Batch& batch = batches_[b];
      batch.when = c.when;
      batch.first_seq = c.seq;
      batch.live = 0;
      it->second = b;
      new_batches_.push_back(b);
    }
    Batch& batch = batches_[it->second];
    batch_of_[c.flow] = it->second;
    batch_pos_[c.flow] = static_cast<uint32_t>(batch.flows.size());
    batch.flows.push_back(c.flow);
    ++batch.live;
  }
  for (uint32_t b : new_batches_) {
    batches_[b].event = sim_.ScheduleAtSequence(batches_[b].when, batches_[b].first_seq,
                                                [this, b] { RunBatch(b); });
  }
  completions_.clear();
  batch_at_.clear();
}

void FairShare::RunBatch(uint32_t b) {
  // Members' callbacks start flows and request solves, which run in later events: no batch is
  // made or changed before this loop ends (a taken-back member would read kNoFlow).
  for (size_t k = 0; k < batches_[b].flows.size(); ++k) {
    const uint32_t idx = batches_[b].flows[k];
    if (idx == kNoFlow) continue;
    flows_[idx].batched = false;
    Complete(idx);
  }
  batches_[b].flows.clear();
  free_batches_.push_back(b);
}

void FairShare::SetLoad(uint32_t r, double load) {
  Resource& res = resources_[r];
  if (load == res.load) return;  // Integrated lazily: the same bytes whatever solves pass by.
  const Time now = sim_.Now();
  const Time dt = now - res.load_since;
  res.bytes += res.load * dt.seconds();
  if (res.load > 0) res.busy += dt;
  res.load_since = now;
  if (record_counters_) {
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
