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
#include "core/core_ledger.h"
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
  // SMs held by communication kernels (stack.comm.ctas > 0), read by the chip model.
  std::unique_ptr<core::CoreLedger> ledger;
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

// With stack.kernel.in_order, the streams of a GPU program as order edges of `exec`
// (Executor::set_order_edges), in program order (op index order): each compute op (GeMM,
// element-wise, copy) of a chip waits for the chip's previous compute op, and each collective
// for the last compute op before it on each member. With stack.kernel.single_queue too, begin
// edges (Executor::set_begin_edges): an op issued on a chip after a collective waits until that
// collective has begun there. Nothing without in_order. Call before Run.
// Cost: O(ops + Σ group sizes).
void OrderStreams(const stack::StackConfig& stack, const core::OpGraph& graph,
                  core::Executor& exec);

// The host side of the software stack (stack.host.*_overhead > 0): each chip's host issues the
// ops that run on its chip in program order (op id order), each taking host.op_overhead (a GeMM
// host.gemm_overhead, a collective or transfer host.comm_overhead), without waiting for the GPU
// — a per-chip op, a collective on every member's host, a transfer on its sender's and its
// receiver's (send and recv are both calls). An op cannot start before every
// host that issues it has (Executor::set_release_times), so host time is exposed only where the
// GPU runs ahead of the host (short kernels, many ops). Records one kHost row per op and issuing
// chip on (kHost, 0). Nothing when the overhead is 0. Call after the executor's sink and
// timeline budget are set, before Run. Cost: O(ops + Σ group sizes).
void IssueFromHost(const stack::StackConfig& stack, const core::OpGraph& graph,
                   core::Executor& exec);

// What cross-mesh resharding's scheduler knows of the machine (algorithms/reshard/reshard.h):
// each chip's host, the NIC bandwidth between hosts and the NVLink bandwidth within one (the
// system's hierarchical parameters).
algorithms::reshard::HostModel MakeHostModel(const network::Topology& topology,
                                             const RunOptions& options);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_MACHINE_H_
