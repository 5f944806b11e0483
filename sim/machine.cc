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

absl::StatusOr<std::unique_ptr<Machine>> BuildMachine(const RunOptions& o,
                                                      const algorithms::Mesh& mesh,
                                                      core::FairShare& fair_share) {
  if (o.topology == "hierarchical" || o.topology.rfind("graphviz:", 0) == 0) {
    return absl::UnimplementedError(
        absl::StrCat("--topology ", o.topology, ": not available in this build yet"));
  }
  network::TopologyParams params;
  params.name = o.topology;
  params.chips = o.chips;
  if (o.topology == "torus2d" || o.topology == "mesh2d") params.dims = {mesh.rows, mesh.cols};
  params.link_bandwidth_bytes_per_s = o.system.net.link_bandwidth_bytes_per_s;
  params.link_latency_s = o.system.net.link_latency_s;
  params.fattree_k = o.system.net.fattree_k;
  params.oversubscription = o.system.net.oversubscription;
  MESHSIM_ASSIGN_OR_RETURN(network::Topology topology, network::Topology::Build(params));

  auto machine =
      std::unique_ptr<Machine>(new Machine{std::move(topology), nullptr, nullptr, nullptr, {}});
  const accel::ChipConfig& chip = o.system.chip;
  machine->chips = std::make_unique<accel::ChipModel>(fair_share, chip, o.chips);
  std::vector<core::ResourceId> hbm;
  for (int c = 0; c < o.chips; ++c) hbm.push_back(machine->chips->hbm(core::ChipId(c)));
  // A reduction reads two operands and writes one per element (3 element-sized HBM accesses),
  // one add per element on the chip's vector units.
  const double reduce_bytes_per_s = 3.0 * chip.element_bytes * chip.cores * chip.vector_flops_per_s;
  machine->network = std::make_unique<network::NetworkModel>(
      fair_share, machine->topology, o.system.net, std::move(hbm), reduce_bytes_per_s);
  if (o.system.net.collective_overlap == 0) {
    machine->arbiter = std::make_unique<core::ModeArbiter>(o.chips);
    machine->chips->set_arbiter(machine->arbiter.get());
    machine->network->set_arbiter(machine->arbiter.get());
  }
  return machine;
}

}  // namespace meshsim::sim
