#include "network/network_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "core/check.h"
#include "core/slot_pool.h"

namespace meshsim::network {

using core::ChipId;
using core::CollectiveKind;
using core::OpKind;
using core::Phase;
using core::Time;
using core::UnitKind;

namespace {

bool IsPowerOfTwo(int x) { return x > 0 && (x & (x - 1)) == 0; }

int Log2(int x) {
  int l = 0;
  while ((1 << l) < x) ++l;
  return l;
}

// splitmix64: a well-mixed hash of the op and the endpoints picks among equal-cost paths.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

NetworkModel::NetworkModel(core::FairShare& fs, const Topology& topology,
                           const NetworkConfig& config, std::vector<core::ResourceId> hbm,
                           double reduce_bytes_per_s)
    : fs_(fs),
      topology_(topology),
      config_(config),
      hbm_(std::move(hbm)),
      reduce_bytes_per_s_(reduce_bytes_per_s),
      switched_(topology.name() == "switch" || topology.name() == "fattree"),
      dimension_order_(config.torus_algorithm == "dimension-order" &&
                       (topology.name() == "torus2d" || topology.name() == "torus3d")) {
  MESHSIM_CHECK_EQ(static_cast<int>(hbm_.size()), topology.num_chips());
  if (config.hierarchical.socket_stream_bytes_per_s > 0) {
    socket_stream_cap_ = config.hierarchical.socket_stream_bytes_per_s;
  }
  for (const Link& l : topology.links()) {
    core::ResourceInfo info;
    info.name =
        absl::StrFormat("link %s->%s", topology.node_name(l.src), topology.node_name(l.dst));
    info.kind = core::ResourceKind::kLink;
    if (l.src < topology.num_chips()) info.chip = ChipId(l.src);
    if (l.dst < topology.num_chips()) info.peer = ChipId(l.dst);
    info.capacity_bytes_per_s = l.bandwidth_bytes_per_s;
    links_.push_back(fs.AddResource(std::move(info)));
    link_latency_s_.push_back(l.latency_s);
  }
}

void NetworkModel::set_stack(const stack::StackConfig& stack, core::CoreLedger* ledger) {
  MESHSIM_CHECK(stack.comm_ctas == 0 || ledger != nullptr)
      << "stack.comm.ctas > 0 needs a CoreLedger";
  ledger_ = stack.comm_ctas > 0 ? ledger : nullptr;
  serial_ = stack.comm_serial != 0;
  comm_ctas_ = stack.comm_ctas;
  cta_bytes_per_s_ = stack.comm_ctas > 0 ? stack.comm_cta_bandwidth_bytes_per_s : 0;
  stack_ = stack;
  protocol_costs_ = !stack.FreeProtocols();
  p2p_call_overhead_s_ = stack.p2p_call_overhead_s;
}

double NetworkModel::FlowCap(const Run& r, int flows) const {
  if (cta_bytes_per_s_ <= 0) return core::FairShare::kNoCap;
  return r.ctas * cta_bytes_per_s_ * r.wire_per_payload / std::max(flows, 1);
}

double NetworkModel::StreamCap(const Run& r, core::LinkId link) const {
  if (socket_stream_cap_ == core::FairShare::kNoCap) return socket_stream_cap_;
  const bool socket = topology_.links()[link.value()].cls == LinkClass::kSocket;
  return socket ? socket_stream_cap_ * r.wire_per_payload : core::FairShare::kNoCap;
}

void NetworkModel::SizeKernel(Run& r) {
  r.ctas = comm_ctas_;
  r.wire_per_payload = 1;
  r.call_s = 0;
  r.step_s = 0;
  if (comm_ctas_ == 0 && !protocol_costs_) return;
  double slowest = std::numeric_limits<double>::infinity();
  // A two-level run's intra-host and inter-host rings are sized apart (its kernel runs the CTAs
  // the faster level needs: NCCL's channels on a multi-NIC host span every rail).
  double slowest_intra = std::numeric_limits<double>::infinity(), slowest_inter = slowest_intra;
  stack::CallShape shape;
  shape.ll128_allowed = true;  // No PCIe, socket, NIC or fabric link on the way.
  double route_s[stack::kHopClasses] = {0, 0, 0};  // Σ links' latency per class of hop.
  const auto route = [&](ChipId a, ChipId b) {
    if (a == b) return;
    stack::HopClass hop = stack::kHopNvlink;
    double latency_s = 0;
    double& level = topology_.HostOf(a) == topology_.HostOf(b) ? slowest_intra : slowest_inter;
    for (core::LinkId l : topology_.Route(a, b, 0)) {
      const Link& link = topology_.links()[l.value()];
      slowest = std::min(slowest, link.bandwidth_bytes_per_s);
      level = std::min(level, link.bandwidth_bytes_per_s);
      latency_s += link_latency_s_[l.value()];
      if (link.cls == LinkClass::kNic || link.cls == LinkClass::kFabric) {
        hop = stack::kHopNet;
      } else if ((link.cls == LinkClass::kPcie || link.cls == LinkClass::kSocket) &&
                 hop != stack::kHopNet) {
        hop = stack::kHopPci;
      }
    }
    ++shape.hops[hop];
    route_s[hop] += latency_s;
    shape.ll128_allowed = shape.ll128_allowed && hop == stack::kHopNvlink;
  };
  const core::Op& op = *r.op;
  const size_t p = r.members.size();
  if (op.kind == OpKind::kTransfer) {
    route(r.members[0], r.members[1]);
  } else {
    for (size_t i = 0; i < p; ++i) route(r.members[i], r.members[(i + 1) % p]);
  }
  for (int c = 0; c < stack::kHopClasses; ++c) {
    if (shape.hops[c] > 0) shape.route_s[c] = route_s[c] / shape.hops[c];
  }
  if (comm_ctas_ > 0 && cta_bytes_per_s_ > 0 && std::isfinite(slowest)) {
    const auto needed = [&](double bandwidth) {
      return std::isfinite(bandwidth) ? std::ceil(bandwidth / cta_bytes_per_s_ - 1e-9) : 0.0;
    };
    const double n =
        r.hosts.empty() ? needed(slowest) : std::max(needed(slowest_intra), needed(slowest_inter));
    r.ctas = static_cast<int>(std::clamp(n, 1.0, double(comm_ctas_)));
  }
  // The call as NCCL's model prices a flat ring of the members (whatever algorithm meshsim then
  // runs): its steps and the payload each member sends; point-to-point calls run Simple.
  stack::Protocol protocol = stack::kSimple;
  if (op.kind == OpKind::kCollective && p > 1) {
    const double bytes = static_cast<double>(std::max<int64_t>(op.bytes, 0)), n = double(p);
    bool ring = true;
    switch (op.collective) {
      case CollectiveKind::kAllReduce:
        shape.steps = 2 * static_cast<int>(p - 1);
        shape.bus_bytes = 2 * (n - 1) / n * bytes;
        break;
      case CollectiveKind::kAllGather:
      case CollectiveKind::kReduceScatter:
        shape.steps = static_cast<int>(p - 1);
        shape.bus_bytes = (n - 1) * bytes;  // bytes is each member's shard.
        break;
      case CollectiveKind::kBroadcast:
      case CollectiveKind::kReduce:
        shape.steps = static_cast<int>(p - 1);
        shape.bus_bytes = bytes;
        break;
      default:
        ring = false;  // SendRecv, AllToAll: point-to-point.
        break;
    }
    if (ring) {
      shape.bus_bandwidth = slowest;
      if (cta_bytes_per_s_ > 0) shape.bus_bandwidth = std::min(slowest, r.ctas * cta_bytes_per_s_);
      protocol = stack::ChooseProtocol(stack_, shape);
      // Then, as NCCL's enqueue, fewer channels for a small call: ⌊call bytes / cta_bytes⌋
      // (a ring's LL threshold scales with its members), at least one.
      const bool per_shard = op.collective == CollectiveKind::kAllGather ||
                             op.collective == CollectiveKind::kReduceScatter;
      const double call_bytes = per_shard ? n * bytes : bytes;
      const double per_cta =
          stack_.protocol[protocol].cta_bytes * (protocol == stack::kLl ? n : 1.0);
      if (r.ctas > 1 && per_cta > 0) {
        r.ctas = static_cast<int>(
            std::clamp(std::floor(call_bytes / per_cta), 1.0, static_cast<double>(r.ctas)));
      }
    }
  }
  ++calls_[protocol];
  const stack::ProtocolCosts& costs = stack_.protocol[protocol];
  r.wire_per_payload = 1.0 / costs.efficiency;
  r.call_s = costs.latency_s;
  r.step_s = stack::StepOverhead(stack_, protocol, shape);
}

int NetworkModel::Directions(const core::Op& op) const {
  // A plugin may ask for bidirectional halves (Wang, tp1d, fsdp); hardware whose rings run one
  // way (comm.ring_directions = 1) cannot give them, so the system's count caps the request.
  if (op.directions != 0) return std::min<int>(op.directions, config_.ring_directions);
  return op.collective == CollectiveKind::kSendRecv ? 1 : config_.ring_directions;
}

bool NetworkModel::HalvingDoubling(const core::Op& op, int members) const {
  return op.collective == CollectiveKind::kAllReduce && switched_ && IsPowerOfTwo(members) &&
         members > 1;
}

int NetworkModel::Steps(const core::Op& op, int p) const {
  if (op.kind == OpKind::kTransfer) return 1;
  if (p <= 1) return 0;
  switch (op.collective) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return p - 1;
    case CollectiveKind::kAllReduce:
      return HalvingDoubling(op, p) ? 2 * Log2(p) : 2 * (p - 1);
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      // No barrier steps: the chain's packet slots, (P−1) of fill and D−1 more (network_model.h).
      return p - 1 + config_.packets - 1;
    case CollectiveKind::kSendRecv:
    case CollectiveKind::kAllToAll:
      return 1;
    case CollectiveKind::kNone:
      break;
  }
  MESHSIM_CHECK(false) << "collective op without a collective kind";
  return 0;
}

int64_t NetworkModel::MaxStepFlows(CollectiveKind kind, int members) {
  const int64_t p = members;
  if (p <= 1) return 0;
  return kind == CollectiveKind::kAllToAll ? p * (p - 1) : 2 * p;
}

NetworkModel::HostSplit NetworkModel::SplitByHost(const core::Op& op,
                                                  const std::vector<ChipId>& members) const {
  if (config_.two_level == 0 || op.kind != OpKind::kCollective) return {};
  if (op.collective != CollectiveKind::kAllGather &&
      op.collective != CollectiveKind::kReduceScatter &&
      op.collective != CollectiveKind::kAllReduce) {
    return {};
  }
  HostSplit hosts;
  std::vector<int> host_ids;
  for (int i = 0; i < static_cast<int>(members.size()); ++i) {
    const int host = topology_.HostOf(members[i]);
    const auto it = std::find(host_ids.begin(), host_ids.end(), host);
    if (it == host_ids.end()) {
      host_ids.push_back(host);
      hosts.push_back({i});
    } else {
      hosts[it - host_ids.begin()].push_back(i);
    }
  }
  if (hosts.size() < 2 || hosts[0].size() < 2) return {};
  for (std::vector<int>& h : hosts) {
    if (h.size() != hosts[0].size()) return {};
    // Ranks by chip order inside the host, so the inter-host ring of rank k joins the k-th GPU
    // of every host — the same rail (NIC) on each, whatever order the group lists them in.
    std::sort(h.begin(), h.end(), [&](int a, int b) { return members[a] < members[b]; });
  }
  return hosts;
}

std::vector<NetworkModel::RingPhase> NetworkModel::TorusPhases(
    const core::Op& op, const std::vector<ChipId>& members) const {
  if (!dimension_order_ || op.kind != OpKind::kCollective) return {};
  if (op.collective != CollectiveKind::kAllGather &&
      op.collective != CollectiveKind::kReduceScatter &&
      op.collective != CollectiveKind::kAllReduce) {
    return {};
  }
  const std::vector<int>& dims = topology_.dims();
  const int rank = static_cast<int>(dims.size());
  const int p = static_cast<int>(members.size());
  std::vector<int> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
  // Per dimension: the coordinates the members take, and how many distinct ones.
  std::vector<std::vector<char>> taken(rank);
  std::vector<int> distinct(rank, 0);
  for (int d = 0; d < rank; ++d) taken[d].assign(dims[d], 0);
  for (ChipId c : members) {
    for (int d = 0; d < rank; ++d) {
      const int x = (static_cast<int>(c.value()) / stride[d]) % dims[d];
      if (!taken[d][x]) {
        taken[d][x] = 1;
        ++distinct[d];
      }
    }
  }
  std::vector<int> axes;  // The dimensions taken whole, in topology order.
  int64_t points = 1;
  for (int d = 0; d < rank; ++d) {
    if (distinct[d] == dims[d] && dims[d] > 1) {
      axes.push_back(d);
      points *= dims[d];
    } else if (distinct[d] != 1) {
      return {};  // Part of a line: not a grid of the torus.
    }
  }
  if (axes.size() < 2 || points != p) return {};
  // Member index by position in the grid (row-major over `axes`); a repeated point is no grid.
  const int k = static_cast<int>(axes.size());
  std::vector<int> local_stride(k, 1);
  for (int j = k - 2; j >= 0; --j) local_stride[j] = local_stride[j + 1] * dims[axes[j + 1]];
  std::vector<int> at(p, -1);
  for (int i = 0; i < p; ++i) {
    int local = 0;
    for (int j = 0; j < k; ++j) {
      local += (static_cast<int>(members[i].value()) / stride[axes[j]]) % dims[axes[j]] *
               local_stride[j];
    }
    if (at[local] >= 0) return {};
    at[local] = i;
  }
  // The phase along axes[j]: every line of the grid along it, in coordinate order.
  const auto phase = [&](int j, int64_t bytes, bool reduce) {
    RingPhase ph;
    const int n = dims[axes[j]], s = local_stride[j];
    for (int base = 0; base < p; ++base) {
      if ((base / s) % n != 0) continue;
      std::vector<int>& ring = ph.rings.emplace_back();
      for (int x = 0; x < n; ++x) ring.push_back(at[base + x * s]);
    }
    ph.steps = n - 1;
    ph.bytes = bytes;
    ph.reduce = reduce;
    return ph;
  };
  std::vector<int64_t> prefix(k);  // N_j = n_0·…·n_j over the taken dimensions.
  for (int j = 0; j < k; ++j) prefix[j] = (j == 0 ? 1 : prefix[j - 1]) * dims[axes[j]];
  std::vector<RingPhase> phases;
  switch (op.collective) {
    case CollectiveKind::kReduceScatter:
      for (int j = 0; j < k; ++j) phases.push_back(phase(j, op.bytes * p / prefix[j], true));
      break;
    case CollectiveKind::kAllGather:
      for (int j = k - 1; j >= 0; --j) phases.push_back(phase(j, op.bytes * p / prefix[j], false));
      break;
    case CollectiveKind::kAllReduce:
      for (int j = 0; j < k; ++j) phases.push_back(phase(j, op.bytes / prefix[j], true));
      for (int j = k - 1; j >= 0; --j) phases.push_back(phase(j, op.bytes / prefix[j], false));
      break;
    default:
      break;
  }
  return phases;
}

void NetworkModel::PlanPhasedStep(const Run& r, int step, std::vector<Send>& out) const {
  out.clear();
  const int d = Directions(*r.op);
  for (const RingPhase& ph : r.phases) {
    if (step >= ph.steps) {
      step -= ph.steps;
      continue;
    }
    for (const std::vector<int>& ring : ph.rings) {
      const int n = static_cast<int>(ring.size());
      for (int i = 0; i < n; ++i) {
        out.push_back({ring[i], ring[(i + 1) % n], ph.bytes / d, ph.reduce});
        if (d == 2)
          out.push_back({ring[i], ring[(i + n - 1) % n], ph.bytes - ph.bytes / 2, ph.reduce, true});
      }
    }
    return;
  }
  MESHSIM_CHECK(false) << "phased collective has no step " << step;
}

int NetworkModel::GroupSteps(const core::Op& op, const std::vector<ChipId>& members) const {
  if (const HostSplit hosts = SplitByHost(op, members); !hosts.empty()) {
    return TwoLevelSteps(op, hosts);
  }
  if (const std::vector<RingPhase> phases = TorusPhases(op, members); !phases.empty()) {
    int steps = 0;
    for (const RingPhase& ph : phases) steps += ph.steps;
    return steps;
  }
  return Steps(op, static_cast<int>(members.size()));
}

int NetworkModel::TwoLevelSteps(const core::Op& op, const HostSplit& hosts) const {
  const int n = static_cast<int>(hosts.size()), l = static_cast<int>(hosts[0].size());
  if (op.collective == CollectiveKind::kAllReduce) return 2 * (l - 1) + 2 * (n - 1);
  return (l - 1) + (n - 1);
}

void NetworkModel::PlanTwoLevelStep(const Run& r, int step, std::vector<Send>& out) const {
  out.clear();
  const core::Op& op = *r.op;
  const int d = Directions(op);
  const int n = static_cast<int>(r.hosts.size()), l = static_cast<int>(r.hosts[0].size());
  // One ring step over members ring[0..k−1] moving `bytes` per member (bytes/d each way).
  const auto ring = [&](const auto& at, int k, int64_t bytes, bool reduce) {
    for (int i = 0; i < k; ++i) {
      out.push_back({at(i), at((i + 1) % k), bytes / d, reduce});
      if (d == 2) out.push_back({at(i), at((i + k - 1) % k), bytes - bytes / 2, reduce, true});
    }
  };
  // A step of every intra-host ring, or of every inter-host ring (one per local rank).
  const auto intra = [&](int64_t bytes, bool reduce) {
    for (const std::vector<int>& h : r.hosts) {
      ring([&](int i) { return h[i]; }, l, bytes, reduce);
    }
  };
  const auto inter = [&](int64_t bytes, bool reduce) {
    for (int rank = 0; rank < l; ++rank) {
      ring([&](int i) { return r.hosts[i][rank]; }, n, bytes, reduce);
    }
  };
  switch (op.collective) {
    case CollectiveKind::kAllReduce: {
      const int64_t piece = op.bytes / l;
      if (step < l - 1) {
        intra(piece, true);
      } else if (step < l - 1 + 2 * (n - 1)) {
        inter(piece / n, step < l - 1 + n - 1);
      } else {
        intra(piece, false);
      }
      break;
    }
    case CollectiveKind::kAllGather:
      if (step < n - 1) {
        inter(op.bytes, false);
      } else {
        intra(op.bytes * n, false);
      }
      break;
    case CollectiveKind::kReduceScatter:
      if (step < l - 1) {
        intra(op.bytes * n, true);
      } else {
        inter(op.bytes, true);
      }
      break;
    default:
      MESHSIM_CHECK(false) << "two-level " << ToString(op.collective);
  }
}

void NetworkModel::PlanStep(const Run& r, int step, std::vector<Send>& out) const {
  if (!r.hosts.empty()) {
    PlanTwoLevelStep(r, step, out);
    return;
  }
  if (!r.phases.empty()) {
    PlanPhasedStep(r, step, out);
    return;
  }
  out.clear();
  const core::Op& op = *r.op;
  const int p = static_cast<int>(r.members.size());
  if (op.kind == OpKind::kTransfer) {
    out.push_back({0, 1, op.bytes, false});
    return;
  }
  const int d = Directions(op);
  // A ring step: every member sends `bytes` to its successor, and to its predecessor if d = 2.
  const auto ring = [&](int64_t bytes, bool reduce) {
    const int64_t forward = bytes / d, backward = bytes - bytes / 2;
    out.resize(static_cast<size_t>(d) * p);
    for (int i = 0; i < p; ++i) {
      out[d * i] = {i, i + 1 == p ? 0 : i + 1, forward, reduce};
      if (d == 2) out[2 * i + 1] = {i, i == 0 ? p - 1 : i - 1, backward, reduce, true};
    }
  };
  switch (op.collective) {
    case CollectiveKind::kAllGather:
      ring(op.bytes, false);
      break;
    case CollectiveKind::kReduceScatter:
      ring(op.bytes, true);
      break;
    case CollectiveKind::kAllReduce:
      if (HalvingDoubling(op, p)) {
        const int l = Log2(p);
        if (step < l) {  // Reduce-scatter by recursive halving.
          const int distance = p >> (step + 1);
          for (int i = 0; i < p; ++i)
            out.push_back({i, i ^ distance, op.bytes >> (step + 1), true});
        } else {  // All-gather by recursive doubling.
          const int j = step - l;
          for (int i = 0; i < p; ++i) out.push_back({i, i ^ (1 << j), (op.bytes / p) << j, false});
        }
      } else {
        ring(op.bytes / p, step < p - 1);
      }
      break;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      MESHSIM_CHECK(false) << "a Broadcast/Reduce runs as a pipelined chain, not in steps";
      break;
    case CollectiveKind::kSendRecv:
      if (d == 2) {
        for (int i = 0; i < p; ++i) {
          out.push_back({i, (i + 1) % p, op.bytes / 2, false});
          out.push_back({i, (i + p - 1) % p, op.bytes - op.bytes / 2, false, true});
        }
      } else {
        const int shift = op.root == 0 ? 1 : op.root;
        for (int i = 0; i < p; ++i) {
          const int j = (((i + shift) % p) + p) % p;
          if (j != i) out.push_back({i, j, op.bytes, false});
        }
      }
      break;
    case CollectiveKind::kAllToAll:
      for (int i = 0; i < p; ++i) {
        for (int j = 0; j < p; ++j) {
          if (i != j) out.push_back({i, j, op.bytes / p, false});
        }
      }
      break;
    case CollectiveKind::kNone:
      break;
  }
}

void NetworkModel::Start(core::OpId id, const core::Op& op, core::Executor& exec) {
  if (serial_ && op.kind == OpKind::kCollective) {
    GroupQueue& q = groups_[op.group.value()];
    if (q.busy) {
      q.waiting.emplace_back(id, &exec);
      return;
    }
    q.busy = true;
  }
  Begin(id, op, exec);
}

void NetworkModel::Begin(core::OpId id, const core::Op& op, core::Executor& exec) {
  const uint32_t slot = core::TakeSlot(free_runs_, runs_);
  Run& r = runs_[slot];
  r.id = id;
  r.op = &op;
  r.exec = &exec;
  r.members.clear();
  if (op.kind == OpKind::kTransfer) {
    r.members = {op.chip, op.peer};
  } else {
    MESHSIM_CHECK(op.kind == OpKind::kCollective)
        << "NetworkModel cannot run " << ToString(op.kind);
    const auto group = exec.graph().group(op.group);
    r.members.assign(group.begin(), group.end());
  }
  for (ChipId c : r.members) {
    MESHSIM_CHECK(static_cast<int>(c.value()) < topology_.num_chips())
        << "chip " << c << " is not in the " << topology_.num_chips() << "-chip topology";
  }
  const int p = static_cast<int>(r.members.size());
  r.step = 0;
  r.image_of.clear();
  if (op.kind == OpKind::kCollective && exec.graph().has_images(op.group)) {
    // A folded ring: plain ring steps, on a machine without SM or mode bookkeeping (what
    // sim/fold.h folds).
    MESHSIM_CHECK(ledger_ == nullptr && arbiter_ == nullptr && !serial_ && !IsChain(op, p) &&
                  !HalvingDoubling(op, p))
        << "a folded ring on a machine or collective that folding excludes";
    r.image_of.resize(p);
    for (int k = 0; k < p; ++k) {
      r.image_of[k] = k;
      for (int j = 0; j < k; ++j) {
        if (r.members[j] == r.members[k]) {
          r.image_of[k] = j;
          break;
        }
      }
    }
  }
  r.hosts = r.image_of.empty() ? SplitByHost(op, r.members) : HostSplit();
  r.phases =
      r.hosts.empty() && r.image_of.empty() ? TorusPhases(op, r.members) : std::vector<RingPhase>();
  if (!r.hosts.empty()) {
    r.steps = TwoLevelSteps(op, r.hosts);
  } else if (!r.phases.empty()) {
    r.steps = 0;
    for (const RingPhase& ph : r.phases) r.steps += ph.steps;
  } else {
    r.steps = Steps(op, p);
  }
  r.pending = 0;
  r.chain.clear();
  r.hops.clear();
  if (IsChain(op, p)) {
    const int root = ((op.root % p) + p) % p;
    // Broadcast: root, root+1, …, root+P−1. Reduce: the reverse, towards the root.
    for (int i = 0; i < p; ++i) {
      r.chain.push_back(op.collective == CollectiveKind::kBroadcast ? (root + i) % p
                                                                    : (root + p - 1 - i) % p);
    }
    const int64_t packets = std::max(config_.packets, 1);
    r.packet = std::max<int64_t>((op.bytes + packets - 1) / packets, 1);
    r.chain_packets = static_cast<int>(std::max<int64_t>(op.bytes, 0) / r.packet +
                                       (std::max<int64_t>(op.bytes, 0) % r.packet != 0));
    r.hops.assign(p - 1, Hop());
    r.chain_left = int64_t{r.chain_packets} * (p - 1);
  }
  r.arrived.assign(p, Time());
  r.sent.assign(p, 0);
  r.active = true;
  r.blocking = arbiter_ != nullptr && op.kind == OpKind::kCollective &&
               (op.collective == CollectiveKind::kSendRecv ? config_.sendrecv_overlap == 0
                                                           : config_.collective_overlap == 0);
  if (r.blocking) {
    arbiter_->Acquire(r.members, core::ModeArbiter::kCollective, [this, slot] { Launch(slot); });
  } else {
    Launch(slot);
  }
}

void NetworkModel::Launch(uint32_t slot) {
  Run& r = runs_[slot];
  SizeKernel(r);
  if (ledger_ == nullptr) {
    for (ChipId c : r.members) r.exec->Begun(r.id, c);
    Begin(slot);
    return;
  }
  // The kernel's CTAs need free SMs, which a GeMM may keep (CoreLedger::WhenFree holds them on
  // each member as they fit: the kernel has begun there, Executor::Begun). The wait, if any, is
  // an interference row on each member's NIC.
  const Time asked = r.exec->sim().Now();
  r.awaiting_cores = true;
  ledger_->WhenFree(
      r.members, r.ctas,
      [this, slot, asked] {
        Run& r = runs_[slot];
        r.awaiting_cores = false;
        core::Executor& exec = *r.exec;
        if (exec.sim().Now() > asked) {
          for (ChipId c : r.members) {
            exec.Record(exec.MakeRow(r.id, c, Phase::kInterference, UnitKind::kNic, 0, asked,
                                     exec.sim().Now()));
          }
        }
        Begin(slot);
      },
      [this, slot](size_t i) {
        Run& r = runs_[slot];
        r.exec->Begun(r.id, r.members[i]);
      });
}

void NetworkModel::Begin(uint32_t slot) {
  Run& r = runs_[slot];
  r.path_cache.clear();  // Another run's routes (the slot is reused).
  r.path_cache_resources.clear();
  r.path_cache_live = 0;
  core::Executor& exec = *r.exec;
  r.start = exec.sim().Now();
  const double overhead_s = config_.t_launch_s + r.call_s +
                            (r.op->kind == OpKind::kTransfer ? p2p_call_overhead_s_ : 0.0);
  const Time launched = r.start + Time::Seconds(overhead_s);
  // Transfers record their launch on the sender only; collectives on every member.
  const int launch_rows = r.op->kind == OpKind::kTransfer ? 1 : static_cast<int>(r.members.size());
  for (int i = 0; i < launch_rows; ++i) {
    if (!r.Simulated(i)) continue;
    exec.Record(
        exec.MakeRow(r.id, r.members[i], Phase::kLaunch, UnitKind::kNic, 0, r.start, launched));
  }
  if (!r.hops.empty()) {
    exec.sim().ScheduleAt(launched, [this, slot] { ChainBegin(slot); });
  } else {
    exec.sim().ScheduleAt(launched, [this, slot] { BeginStep(slot); });
  }
}

bool NetworkModel::IsChain(const core::Op& op, int members) const {
  return op.kind == OpKind::kCollective && members > 1 &&
         (op.collective == CollectiveKind::kBroadcast || op.collective == CollectiveKind::kReduce);
}

int64_t NetworkModel::ChainPacketBytes(const Run& r, int packet) const {
  return std::min(r.packet, r.op->bytes - packet * r.packet);
}

void NetworkModel::ChainBegin(uint32_t slot) {
  Run& r = runs_[slot];
  if (r.chain_left == 0) {  // An empty buffer: nothing to move.
    EndStep(slot);
    return;
  }
  for (uint32_t h = 0; h < r.hops.size(); ++h) {
    Hop& hop = r.hops[h];
    const ChipId src = r.members[r.chain[h]], dst = r.members[r.chain[h + 1]];
    hop.hash = Mix((uint64_t{r.id.value()} << 32) ^ (uint64_t{src.value()} << 16) ^ dst.value());
    double latency_s = 0;
    for (core::LinkId l : topology_.Route(src, dst, hop.hash))
      latency_s += link_latency_s_[l.value()];
    hop.latency = Time::Seconds(latency_s);
  }
  r.hops[0].ready = r.chain_packets;  // The first sender holds the whole buffer.
  ChainTrySend(slot, 0);
}

void NetworkModel::ChainTrySend(uint32_t slot, uint32_t h) {
  Run& r = runs_[slot];
  Hop& hop = r.hops[h];
  if (hop.busy || hop.next >= hop.ready) return;
  hop.busy = true;
  const int src = r.chain[h], dst = r.chain[h + 1];
  // Before its first packet the hop's two ends synchronise once (comm.t_sync: the step cost of
  // the cost model's pipelined broadcast, t_launch + bytes/bw + (n−1)·t_step); later packets
  // follow without a handshake.
  const double sync_s = config_.t_sync_s + r.step_s;
  if (!hop.synced && sync_s > 0) {
    hop.synced = true;
    const Time now = r.exec->sim().Now(), synced = now + Time::Seconds(sync_s);
    r.exec->Record(
        r.exec->MakeRow(r.id, r.members[src], Phase::kSync, UnitKind::kNic, 0, now, synced));
    r.exec->sim().ScheduleAt(synced, [this, slot, h] {
      runs_[slot].hops[h].busy = false;
      ChainTrySend(slot, h);
    });
    return;
  }
  if (hop.next == 0) hop.first = r.exec->sim().Now();
  const int64_t bytes = ChainPacketBytes(r, hop.next);
  r.sent[src] += bytes;
  path_.clear();
  path_.push_back(hbm_[r.members[src].value()]);
  double cap = FlowCap(r, 1);
  for (core::LinkId l : topology_.Route(r.members[src], r.members[dst], hop.hash)) {
    path_.push_back(links_[l.value()]);
    cap = std::min(cap, StreamCap(r, l));
  }
  path_.push_back(hbm_[r.members[dst].value()]);
  fs_.StartFlow(
      WireBytes(r, bytes), path_, [this, slot, h] { ChainFlowDone(slot, h); }, cap);
}

void NetworkModel::ChainFlowDone(uint32_t slot, uint32_t h) {
  // The packet's last byte left the route: it lands one route latency later, and the hop is free
  // for the next packet now.
  Run& r = runs_[slot];
  Hop& hop = r.hops[h];
  hop.busy = false;
  ++hop.next;
  r.exec->sim().ScheduleAt(r.exec->sim().Now() + hop.latency,
                           [this, slot, h] { ChainArrive(slot, h); });
  ChainTrySend(slot, h);
}

void NetworkModel::ChainArrive(uint32_t slot, uint32_t h) {
  Run& r = runs_[slot];
  ++r.hops[h].arrived;  // One route per hop: packets arrive in order.
  if (r.op->collective == CollectiveKind::kReduce) {
    ChainTryReduce(slot, h);
  } else {
    ChainLanded(slot, h);
  }
}

void NetworkModel::ChainTryReduce(uint32_t slot, uint32_t h) {
  // Add the next arrived packet into the receiver's partial, as a ring step's reduction does;
  // one packet at a time, in order.
  Run& r = runs_[slot];
  Hop& hop = r.hops[h];
  if (hop.reducing || hop.landed == hop.arrived) return;
  hop.reducing = true;
  const ChipId chip = r.members[r.chain[h + 1]];
  fs_.StartFlow(
      3.0 * static_cast<double>(ChainPacketBytes(r, hop.landed)), {hbm_[chip.value()]},
      [this, slot, h] {
        runs_[slot].hops[h].reducing = false;
        ChainLanded(slot, h);  // May end the op; then no packet is left to reduce.
      },
      reduce_bytes_per_s_);
}

void NetworkModel::ChainLanded(uint32_t slot, uint32_t h) {
  Run& r = runs_[slot];
  Hop& hop = r.hops[h];
  ++hop.landed;
  if (hop.landed == r.chain_packets) {  // The receiver's incoming transfer is complete.
    r.exec->Record(r.exec->MakeRow(r.id, r.members[r.chain[h + 1]], Phase::kTransfer,
                                   UnitKind::kNic, 0, hop.first, r.exec->sim().Now()));
  }
  MESHSIM_CHECK(r.chain_left > 0) << "pipelined chain landed a packet twice";
  if (--r.chain_left == 0) {
    EndStep(slot);
    return;
  }
  if (r.op->collective == CollectiveKind::kReduce) ChainTryReduce(slot, h);
  if (h + 1 < r.hops.size()) {
    ++r.hops[h + 1].ready;
    ChainTrySend(slot, h + 1);
  }
}

void NetworkModel::BeginStep(uint32_t slot) {
  Run& r = runs_[slot];
  core::Simulator& sim = r.exec->sim();
  if (r.step == r.steps) {
    EndStep(slot);
    return;
  }
  r.step_start = sim.Now();
  if (r.op->kind == OpKind::kTransfer) {
    StartFlows(slot);
    return;
  }
  const Time synced = sim.Now() + Time::Seconds(config_.t_sync_s + r.step_s);
  for (int i = 0; i < static_cast<int>(r.members.size()); ++i) {
    if (!r.Simulated(i)) continue;
    r.exec->Record(
        r.exec->MakeRow(r.id, r.members[i], Phase::kSync, UnitKind::kNic, 0, r.step_start, synced));
  }
  sim.ScheduleAt(synced, [this, slot] { StartFlows(slot); });
}

core::Time NetworkModel::StartFlow(uint32_t slot, uint32_t send) {
  Run& r = runs_[slot];
  double cap;
  std::span<const core::ResourceId> path;
  const Time latency = Path(slot, send, &cap, &path);
  // The callbacks of this file capture at most 16 bytes, which std::function stores inline.
  fs_.StartFlow(
      WireBytes(r, r.sends[send].bytes), path, [this, slot, send] { FlowDone(slot, send); }, cap);
  return latency;
}

core::Time NetworkModel::Path(uint32_t slot, uint32_t send, double* flow_cap,
                              std::span<const core::ResourceId>* path) {
  Run& r = runs_[slot];
  const Send& s = r.sends[send];
  const int flows = r.flows_from[s.src];
  const bool keep = topology_.RoutesIgnoreHash();
  if (keep && send < r.path_cache.size()) {
    const Run::CachedPath& c = r.path_cache[send];
    if (c.src == s.src && c.dst == s.dst && c.backward == s.backward && c.flows == flows) {
      *path = std::span<const core::ResourceId>(r.path_cache_resources)
                  .subspan(c.begin, c.end - c.begin);
      *flow_cap = c.cap;
      return c.latency;
    }
  }
  const Time latency = Route(r, s, flow_cap);
  *path = path_;
  if (keep) {
    // Routes replaced as sends change leave dead entries behind: once they are most of the
    // store, start over rather than grow it.
    if (r.path_cache_resources.size() > 2 * r.path_cache_live + 64) {
      r.path_cache.clear();
      r.path_cache_resources.clear();
      r.path_cache_live = 0;
    }
    if (send >= r.path_cache.size()) r.path_cache.resize(send + 1);
    r.path_cache_live += path_.size() - (r.path_cache[send].end - r.path_cache[send].begin);
    const auto begin = static_cast<uint32_t>(r.path_cache_resources.size());
    r.path_cache_resources.insert(r.path_cache_resources.end(), path_.begin(), path_.end());
    r.path_cache[send] = {s.src,   s.dst,
                          flows,   s.backward,
                          begin,   static_cast<uint32_t>(r.path_cache_resources.size()),
                          latency, *flow_cap};
  }
  return latency;
}

core::Time NetworkModel::Route(const Run& r, const Send& s, double* flow_cap) {
  const ChipId src = r.members[s.src], dst = r.members[s.dst];
  const uint64_t hash = Mix((uint64_t{r.id.value()} << 32) ^ (uint64_t{src.value()} << 16) ^
                            dst.value() ^ (uint64_t(r.step) << 48));
  double latency_s = 0;
  path_.clear();
  path_.push_back(hbm_[src.value()]);
  double cap = FlowCap(r, r.flows_from[s.src]);
  for (core::LinkId l :
       topology_.Route(src, dst, hash, s.backward ? RingDir::kBackward : RingDir::kForward)) {
    path_.push_back(links_[l.value()]);
    latency_s += link_latency_s_[l.value()];
    cap = std::min(cap, StreamCap(r, l));
  }
  path_.push_back(hbm_[dst.value()]);
  *flow_cap = cap;
  return Time::Seconds(latency_s);
}

void NetworkModel::StartFlows(uint32_t slot) {
  Run& r = runs_[slot];
  r.transfer_start = r.exec->sim().Now();
  r.last_arrival = r.transfer_start;
  std::fill(r.arrived.begin(), r.arrived.end(), r.transfer_start);
  PlanStep(r, r.step, r.sends);
  if (!r.image_of.empty()) {
    // A folded ring: the sends of the members simulated, each to its receiver's representative
    // (over the representative of the link between them: the route keeps its direction).
    size_t kept = 0;
    for (const Send& s : r.sends) {
      if (!r.Simulated(s.src)) continue;
      r.sends[kept] = s;
      r.sends[kept].dst = r.image_of[s.dst];
      ++kept;
    }
    r.sends.resize(kept);
  }
  r.pending = static_cast<int>(r.sends.size());
  if (r.pending == 0) {
    r.exec->sim().ScheduleAt(r.transfer_start, [this, slot] { EndStep(slot); });
    return;
  }
  r.latency.resize(r.sends.size());
  r.batches.clear();
  r.flows_from.assign(r.members.size(), 0);
  if (cta_bytes_per_s_ > 0) {
    for (const Send& s : r.sends) ++r.flows_from[s.src];
  }
  if (!fs_.flow_groups() || r.sends.size() < 2) {
    for (uint32_t i = 0; i < r.sends.size(); ++i) {
      runs_[slot].sent[r.sends[i].src] += r.sends[i].bytes;
      r.latency[i] = StartFlow(slot, i);
    }
    PipelineRingLatency(r);
    return;
  }
  // The same flows in the same order, handed to the solver together: when they have one size
  // and one cap, StartGroup may run them as one flow group (core/fair_share.h), with the same
  // results as one StartFlow each.
  group_path_.clear();
  group_ends_.clear();
  group_done_.clear();
  group_caps_.clear();
  double bytes = 0, cap = 0;
  bool uniform = true;
  for (uint32_t i = 0; i < r.sends.size(); ++i) {
    const Send& s = r.sends[i];
    r.sent[s.src] += s.bytes;
    double flow_cap;
    std::span<const core::ResourceId> path;
    r.latency[i] = Path(slot, i, &flow_cap, &path);
    group_caps_.push_back(flow_cap);
    group_path_.insert(group_path_.end(), path.begin(), path.end());
    group_ends_.push_back(static_cast<uint32_t>(group_path_.size()));
    group_done_.emplace_back([this, slot, i] { FlowDone(slot, i); });
    const double wire = WireBytes(r, s.bytes);
    if (i == 0) {
      bytes = wire;
      cap = flow_cap;
    }
    uniform = uniform && wire == bytes && flow_cap == cap;
  }
  PipelineRingLatency(r);
  if (uniform) {
    fs_.StartGroup(bytes, group_path_, group_ends_,
                   std::span<core::FairShare::Callback>(group_done_), cap);
    return;
  }
  uint32_t begin = 0;
  for (uint32_t i = 0; i < r.sends.size(); ++i) {
    fs_.StartFlow(
        WireBytes(r, r.sends[i].bytes),
        std::span<const core::ResourceId>(group_path_).subspan(begin, group_ends_[i] - begin),
        std::move(group_done_[i]), group_caps_[i]);
    begin = group_ends_[i];
  }
}

void NetworkModel::PipelineRingLatency(Run& r) const {
  // Only the steps of rings: a transfer, a SendRecv or AllToAll step, a halving-doubling
  // exchange has each flow's own route on its critical path.
  const core::Op& op = *r.op;
  if (op.kind != OpKind::kCollective || r.latency.size() < 2) return;
  if (op.collective != CollectiveKind::kAllGather &&
      op.collective != CollectiveKind::kReduceScatter &&
      op.collective != CollectiveKind::kAllReduce) {
    return;
  }
  if (r.hosts.empty() && r.phases.empty() &&
      HalvingDoubling(op, static_cast<int>(r.members.size()))) {
    return;
  }
  int64_t sum = 0;
  for (const Time t : r.latency) sum += t.ps();
  const Time mean = Time::Picoseconds(sum / static_cast<int64_t>(r.latency.size()));
  std::fill(r.latency.begin(), r.latency.end(), mean);
}

void NetworkModel::FlowDone(uint32_t slot, uint32_t send) {
  Run& r = runs_[slot];
  const Send& s = r.sends[send];
  const Time arrival = r.exec->sim().Now() + r.latency[send];
  if (s.reduce && s.bytes > 0) {
    ScheduleArrival(slot, send, arrival);
  } else if (PartDone(slot, s.dst, arrival)) {
    // In place of the last arrival's event: the step ends once its latest flow has landed.
    r.exec->sim().ScheduleAt(r.last_arrival, [this, slot] { StepArrived(slot); });
  }
}

void NetworkModel::ScheduleArrival(uint32_t slot, uint32_t send, Time arrival) {
  Run& r = runs_[slot];
  core::Simulator& sim = r.exec->sim();
  if (!fs_.flow_groups()) {  // The per-flow reference: one event per arrival.
    sim.ScheduleAt(arrival, [this, slot, send] { Arrive(slot, send); });
    return;
  }
  // Nothing was scheduled since the last batch's event (or its reserved numbers): this arrival's
  // event would run right after it, so it joins the batch and takes the next number.
  if (!r.batches.empty() && r.batch_at == arrival && sim.ReserveSequence(0) == r.batch_seq_end) {
    r.batches.back().push_back(send);
    r.batch_seq_end = sim.ReserveSequence(1) + 1;
    return;
  }
  const uint32_t b = static_cast<uint32_t>(r.batches.size());
  r.batches.push_back({send});
  r.batch_at = arrival;
  sim.ScheduleAt(arrival, [this, slot, b] { ArriveBatch(slot, b); });
  r.batch_seq_end = sim.ReserveSequence(0);
}

void NetworkModel::ArriveBatch(uint32_t slot, uint32_t batch) {
  // Arrive may end the step, and the next step's StartFlows clears the batches: move them out.
  std::vector<uint32_t> sends = std::move(runs_[slot].batches[batch]);
  const Run& r = runs_[slot];
  const bool uniform =
      sends.size() > 1 && std::all_of(sends.begin(), sends.end(), [&](uint32_t send) {
        return r.sends[send].bytes == r.sends[sends[0]].bytes;
      });
  if (!uniform) {
    for (uint32_t send : sends) Arrive(slot, send);
    return;
  }
  // The same reductions in the same order, handed to the solver together: on HBMs that carry
  // nothing else they are one independent flow group (core/fair_share.h).
  group_path_.clear();
  group_ends_.clear();
  group_done_.clear();
  for (uint32_t send : sends) {
    const int member = r.sends[send].dst;
    group_path_.push_back(hbm_[r.members[member].value()]);
    group_ends_.push_back(static_cast<uint32_t>(group_path_.size()));
    group_done_.push_back(ReductionDone(slot, member));
  }
  fs_.StartGroup(3.0 * static_cast<double>(r.sends[sends[0]].bytes), group_path_, group_ends_,
                 std::span<core::FairShare::Callback>(group_done_), reduce_bytes_per_s_);
}

void NetworkModel::Arrive(uint32_t slot, uint32_t send) {
  // Add the received data into the local partial: read both, write the sum (3× the bytes) on
  // this chip's HBM, no faster than its vector units.
  Run& r = runs_[slot];
  const int member = r.sends[send].dst;
  const ChipId chip = r.members[member];
  fs_.StartFlow(3.0 * static_cast<double>(r.sends[send].bytes), {hbm_[chip.value()]},
                ReductionDone(slot, member), reduce_bytes_per_s_);
}

core::FairShare::Callback NetworkModel::ReductionDone(uint32_t slot, int member) {
  return [this, slot, member] {
    Run& run = runs_[slot];
    core::Simulator& sim = run.exec->sim();
    if (!PartDone(slot, member, sim.Now())) return;
    if (run.last_arrival > sim.Now()) {  // A non-reducing send of the step lands later.
      sim.ScheduleAt(run.last_arrival, [this, slot] { StepArrived(slot); });
    } else {
      StepArrived(slot);
    }
  };
}

bool NetworkModel::PartDone(uint32_t slot, int member, Time when) {
  Run& r = runs_[slot];
  r.arrived[member] = std::max(r.arrived[member], when);
  r.last_arrival = std::max(r.last_arrival, when);
  MESHSIM_CHECK(r.pending > 0) << "collective step finished twice";
  return --r.pending == 0;
}

void NetworkModel::StepArrived(uint32_t slot) {
  Run& r = runs_[slot];
  const Time now = r.exec->sim().Now();
  // Every flow of the step has arrived: record each member's transfer phase, next step.
  const int rows = r.op->kind == OpKind::kTransfer ? 1 : static_cast<int>(r.members.size());
  for (int i = 0; i < rows; ++i) {
    if (!r.Simulated(i)) continue;
    const Time end = r.op->kind == OpKind::kTransfer ? now : r.arrived[i];
    if (end == r.transfer_start) continue;  // Nothing arrived at this member in this step.
    r.exec->Record(r.exec->MakeRow(r.id, r.members[i], Phase::kTransfer, UnitKind::kNic, 0,
                                   r.transfer_start, end));
  }
  ++r.step;
  BeginStep(slot);
}

void NetworkModel::EndStep(uint32_t slot) {
  Run& r = runs_[slot];
  core::Executor& exec = *r.exec;
  const Time now = exec.sim().Now();
  const int rows = r.op->kind == OpKind::kTransfer ? 1 : static_cast<int>(r.members.size());
  for (int i = 0; i < rows; ++i) {
    if (!r.Simulated(i)) continue;
    core::TimelineRow row =
        exec.MakeRow(r.id, r.members[i], Phase::kOp, UnitKind::kNic, 0, r.start, now);
    row.bytes = r.sent[i];
    exec.Record(row);
  }
  r.active = false;
  if (ledger_ != nullptr) {
    for (ChipId c : r.members) ledger_->Release(c, r.ctas);
  }
  if (r.blocking) arbiter_->Release(r.members, core::ModeArbiter::kCollective);
  const core::OpId id = r.id;
  const core::Op& op = *r.op;
  free_runs_.push_back(slot);
  exec.Finish(id);
  if (serial_ && op.kind == OpKind::kCollective) {  // The communicator's next collective.
    GroupQueue& q = groups_[op.group.value()];
    if (q.waiting.empty()) {
      q.busy = false;
    } else {
      const auto [next, next_exec] = q.waiting.front();
      q.waiting.pop_front();
      Begin(next, next_exec->graph().op(next), *next_exec);
    }
  }
}

std::string NetworkModel::DescribeWait(core::OpId id) const {
  for (const auto& [group, q] : groups_) {
    for (const auto& [waiting, exec] : q.waiting) {
      if (waiting == id) {
        return absl::StrFormat(
            "queued behind another collective of its group %d (stack.comm.serial)", group);
      }
    }
  }
  for (const Run& r : runs_) {
    if (r.active && r.id == id && r.awaiting_cores) {
      return absl::StrFormat(
          "waiting for %d free SMs on each of its %d chips, kept by a persistent GeMM", r.ctas,
          static_cast<int>(r.members.size()));
    }
    if (r.active && r.id == id && !r.hops.empty()) {
      return absl::StrFormat("in a pipelined chain of %d hops with %d packet landings outstanding",
                             static_cast<int>(r.hops.size()), static_cast<int>(r.chain_left));
    }
    if (r.active && r.id == id) {
      return absl::StrFormat("in step %d of %d with %d flows/reductions outstanding", r.step + 1,
                             r.steps, r.pending);
    }
  }
  return "never started by the network model";
}

}  // namespace meshsim::network
