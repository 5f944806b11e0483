// The simulated machine of a run: the topology, the chips (accel/) and the network (network/),
// wired to one fair-share solver and attached to an executor as the runners of every op kind.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(auto machine, BuildMachine(options, mesh, fair_share));
//   machine->Attach(executor);
#ifndef MESHSIM_SIM_MACHINE_H_
#define MESHSIM_SIM_MACHINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "accel/chip_model.h"
#include "algorithms/mesh.h"
#include "algorithms/reshard/reshard.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/mode_arbiter.h"
#include "network/network_model.h"
#include "network/topology.h"
#include "sim/options.h"

namespace meshsim::sim {

struct Machine {
  network::Topology topology;
  std::unique_ptr<accel::ChipModel> chips;
  std::unique_ptr<network::NetworkModel> network;
  std::unique_ptr<core::ModeArbiter> arbiter;  // Only when comm.collective_overlap = 0.
  core::DelayRunner delays;

  // Registers the runners of every op kind with `exec`.
  void Attach(core::Executor& exec);
};

// The topology of a run: the family of options.topology with the system's link, fat-tree and
// hierarchical parameters. torus2d and mesh2d take the logical mesh as their extents when the
// mesh spans every chip unplaced (`mesh`, may be null: most-square extents). InvalidArgument,
// one line, for parameters or files that do not fit.
absl::StatusOr<network::Topology> BuildTopology(const RunOptions& options,
                                                const algorithms::Mesh* mesh = nullptr);

// Builds the topology of `options` (as BuildTopology) and the chip and network models over
// `fair_share`. InvalidArgument for topology parameters that do not fit.
absl::StatusOr<std::unique_ptr<Machine>> BuildMachine(const RunOptions& options,
                                                      const algorithms::Mesh& mesh,
                                                      core::FairShare& fair_share);

// What cross-mesh resharding's scheduler knows of the machine (algorithms/reshard/reshard.h):
// each chip's host, the NIC bandwidth between hosts and the NVLink bandwidth within one (the
// system's hierarchical parameters).
algorithms::reshard::HostModel MakeHostModel(const network::Topology& topology,
                                             const RunOptions& options);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_MACHINE_H_
