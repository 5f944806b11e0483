#include "sim/machine.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace meshsim::sim {

void Machine::Attach(core::Executor& exec) {
  exec.SetRunner(core::OpKind::kDelay, &delays);
  exec.SetRunner(core::OpKind::kGemm, chips.get());
  exec.SetRunner(core::OpKind::kCopy, chips.get());
  exec.SetRunner(core::OpKind::kVector, chips.get());
  exec.SetRunner(core::OpKind::kTransfer, network.get());
  exec.SetRunner(core::OpKind::kCollective, network.get());
}

absl::StatusOr<network::Topology> BuildTopology(const RunOptions& o, const algorithms::Mesh* mesh) {
  network::TopologyParams params;
  params.name = o.topology;
  if (o.topology.rfind("graphviz:", 0) == 0) {
    params.name = "graphviz";
    params.graphviz_path = o.topology.substr(9);
  }
  params.chips = o.chips;
  if (!o.dims.empty()) {
    params.dims = o.dims;
  } else if ((o.topology == "torus2d" || o.topology == "mesh2d") && mesh != nullptr &&
             !mesh->placed() && mesh->chips() == o.chips) {
    params.dims = {mesh->rows, mesh->cols};
  }
  const network::NetworkConfig& net = o.system.net;
  params.link_bandwidth_bytes_per_s = net.link_bandwidth_bytes_per_s;
  params.axis_bandwidth_bytes_per_s.assign(net.axis_bandwidth_bytes_per_s.begin(),
                                           net.axis_bandwidth_bytes_per_s.end());
  params.link_latency_s = net.link_latency_s;
  params.length2_links = net.torus_length2_links;
  params.fattree_k = net.fattree_k;
  params.oversubscription = net.oversubscription;
  params.hierarchical = net.hierarchical;
  return network::Topology::Build(params);
}

absl::StatusOr<std::unique_ptr<Machine>> BuildMachine(const RunOptions& o,
                                                      const algorithms::Mesh& mesh,
                                                      core::FairShare& fair_share) {
  MESHSIM_ASSIGN_OR_RETURN(network::Topology topology, BuildTopology(o, &mesh));

  auto machine = std::unique_ptr<Machine>(
      new Machine{std::move(topology), nullptr, nullptr, nullptr, nullptr, {}});
  const accel::ChipConfig& chip = o.system.chip;
  machine->chips = std::make_unique<accel::ChipModel>(fair_share, chip, o.chips);
  std::vector<core::ResourceId> hbm;
  for (int c = 0; c < o.chips; ++c) hbm.push_back(machine->chips->hbm(core::ChipId(c)));
  // A reduction reads two operands and writes one per element (3 element-sized HBM accesses),
  // one add per element on the chip's vector units.
  const double reduce_bytes_per_s = 3.0 * chip.element_bytes * chip.cores * chip.vector_flops_per_s;
  // A collective or transfer is a kernel (stack.kernel.launch on top of the network's
  // comm.t_launch); the latencies of the protocol it runs the network model adds per call.
  const stack::StackConfig& st = o.system.stack;
  network::NetworkConfig net = o.system.net;
  net.t_launch_s += st.kernel_launch_s;
  machine->network = std::make_unique<network::NetworkModel>(fair_share, machine->topology, net,
                                                             std::move(hbm), reduce_bytes_per_s);
  if (st.comm_ctas > 0) {
    machine->ledger = std::make_unique<core::CoreLedger>(o.chips, o.system.chip.cores);
  }
  machine->chips->set_stack(st, machine->ledger.get());
  machine->network->set_stack(st, machine->ledger.get());
  if (o.system.net.collective_overlap == 0 || o.system.net.sendrecv_overlap == 0) {
    machine->arbiter = std::make_unique<core::ModeArbiter>(
        o.chips, /*exclusive_collectives=*/o.system.net.collective_overlap == 0 &&
                     o.system.net.concurrent_collectives == 0);
    machine->chips->set_arbiter(machine->arbiter.get());
    machine->network->set_arbiter(machine->arbiter.get());
  }
  return machine;
}

void OrderStreams(const stack::StackConfig& stack, const core::OpGraph& graph,
                  core::Executor& exec) {
  if (stack.kernel_in_order == 0) return;
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> last;  // Per chip: its latest compute op so far, or kNone.
  // Per chip, with stack.kernel.single_queue: its latest collective if no op was issued on the
  // chip after it, else kNone.
  std::vector<uint32_t> queued;
  std::vector<std::pair<core::OpId, core::OpId>> edges;
  std::vector<core::Executor::BeginEdge> begin_edges;
  const auto order = [&](uint32_t chip, uint32_t op) {
    if (chip >= last.size()) {
      last.resize(chip + 1, kNone);
      queued.resize(chip + 1, kNone);
    }
    // One queue: the op begins after the collective issued just before it on the chip has
    // (the ops before that one began earlier still, in the same order).
    if (stack.kernel_single_queue == 1 && queued[chip] != kNone) {
      begin_edges.push_back({core::OpId(queued[chip]), core::OpId(op), core::ChipId(chip)});
    }
    queued[chip] = kNone;
    const uint32_t before = last[chip];
    if (before == kNone) return;
    for (core::OpId d : graph.deps(core::OpId(op))) {
      if (d.value() == before) return;  // The graph says so already.
    }
    edges.emplace_back(core::OpId(before), core::OpId(op));
  };
  for (uint32_t i = 0; i < graph.size(); ++i) {
    const core::Op& op = graph.op(core::OpId(i));
    switch (op.kind) {
      case core::OpKind::kGemm:
      case core::OpKind::kVector:
      case core::OpKind::kCopy:
        order(op.chip.value(), i);
        last[op.chip.value()] = i;
        break;
      case core::OpKind::kCollective:
        // Members are distinct chips, so their last compute ops are distinct too.
        for (core::ChipId c : graph.group(op.group)) {
          order(c.value(), i);
          queued[c.value()] = i;
        }
        break;
      default:
        break;  // Transfers follow their runtime's semantics (stack.p2p.mode); delays none.
    }
  }
  exec.set_order_edges(edges);
  if (!begin_edges.empty()) exec.set_begin_edges(begin_edges);
}

void IssueFromHost(const stack::StackConfig& stack, const core::OpGraph& graph,
                   core::Executor& exec) {
  if (stack.host_op_overhead_s <= 0 && stack.host_gemm_overhead_s <= 0 &&
      stack.host_comm_overhead_s <= 0) {
    return;
  }
  const core::Time op_overhead = core::Time::Seconds(stack.host_op_overhead_s);
  const core::Time gemm_overhead = core::Time::Seconds(stack.host_gemm_overhead_s);
  const core::Time comm_overhead = core::Time::Seconds(stack.host_comm_overhead_s);
  std::vector<core::Time> host;  // Per chip: when its host is free to issue the next op.
  std::vector<core::Time> release(graph.size());
  std::vector<core::ChipId> issuers;
  for (uint32_t i = 0; i < graph.size(); ++i) {
    const core::OpId id(i);
    const core::Op& op = graph.op(id);
    issuers.clear();
    switch (op.kind) {
      case core::OpKind::kDelay:
        continue;
      case core::OpKind::kCollective:
        for (core::ChipId c : graph.group(op.group)) issuers.push_back(c);
        break;
      case core::OpKind::kTransfer:
        issuers = {op.chip, op.peer};
        break;
      default:
        issuers = {op.chip};
    }
    const bool comm = op.kind == core::OpKind::kCollective || op.kind == core::OpKind::kTransfer;
    const core::Time overhead = op.kind == core::OpKind::kGemm ? gemm_overhead
                                : comm                         ? comm_overhead
                                                               : op_overhead;
    for (core::ChipId c : issuers) {
      if (c.value() >= host.size()) host.resize(c.value() + 1, core::Time::Zero());
      const core::Time start = host[c.value()];
      host[c.value()] = start + overhead;
      release[i] = std::max(release[i], host[c.value()]);
      exec.Record(exec.MakeRow(id, c, core::Phase::kHost, core::UnitKind::kHost, 0, start,
                               host[c.value()]));
    }
  }
  exec.set_release_times(std::move(release));
}

algorithms::reshard::HostModel MakeHostModel(const network::Topology& topology,
                                             const RunOptions& options) {
  algorithms::reshard::HostModel hosts;
  for (int c = 0; c < topology.num_chips(); ++c) {
    hosts.host_of_chip.push_back(topology.HostOf(core::ChipId(c)));
  }
  const network::HierarchicalParams& h = options.system.net.hierarchical;
  hosts.inter_host_bytes_per_s = h.nic_bandwidth_bytes_per_s;
  hosts.intra_host_bytes_per_s = h.nvlink_bandwidth_bytes_per_s;
  return hosts;
}

}  // namespace meshsim::sim
