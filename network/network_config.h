// The network model's parameters: links, NIC ports and the collective-communication overheads
// (DESIGN.md §4, CLI.md system keys).
//
// Example:
//   NetworkConfig net = *NetworkPreset("tpuv4");
//   net.ring_directions = 1;
//   MESHSIM_RETURN_IF_ERROR(net.Validate());
#ifndef MESHSIM_NETWORK_NETWORK_CONFIG_H_
#define MESHSIM_NETWORK_NETWORK_CONFIG_H_

#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/params.h"
#include "network/topology.h"

namespace meshsim::network {

struct NetworkConfig {
  std::string topology = "torus2d";          // Default topology of the system (CLI --topology).
  double link_bandwidth_bytes_per_s = 30e9;  // Per link, per direction.
  double link_latency_s = 1e-6;              // Per hop.
  double t_sync_s = 5e-6;                    // Per collective step: participants synchronise.
  double t_launch_s = 100e-6;                // Per collective or transfer op.
  int ring_directions = 2;                   // 1 = unidirectional rings, 2 = bidirectional.
  int packets = 8;                           // Pipelined Broadcast/Reduce: packets per buffer.
  int collective_overlap = 1;  // 0: blocking collectives and compute never overlap on a chip.
  // With collective_overlap = 0: 0 = a chip also runs one AllGather/ReduceScatter at a time
  // (synchronous collectives, issued one by one, as on TPUv4 today); 1 = several may run at once.
  int concurrent_collectives = 1;
  // 1 = SendRecv is asynchronous and overlaps compute (TPUv4's asynchronous SendRecv); 0 = it
  // takes turns with compute like a blocking collective (the JAX-compiled Wang of MeshSlice
  // §5.3, whose dependencies kept "most" SendRecvs from overlapping: this is the bound "all").
  int sendrecv_overlap = 1;
  int fattree_k = 0;              // Fat-tree radix; 0 = smallest that fits the chips.
  double oversubscription = 1.0;  // Fat-tree switch links run at bandwidth / this.
  int two_level = 0;  // 1: AllReduce/AllGather/ReduceScatter of groups spanning several hosts
                      // run hierarchically (intra-host, then across hosts, then intra-host).
  // torus2d/torus3d: how an AllGather, ReduceScatter or AllReduce over a group that is a full
  // grid of the torus runs: "flat" (one ring in group order) or "dimension-order" (a ring phase
  // per dimension, network_model.h). Other topologies do not read it.
  std::string torus_algorithm = "flat";
  // ring, torus2d, torus3d: full-duplex links between the two chips of a wrapping dimension of
  // length 2 (TopologyParams::length2_links): 1 = joined once; 2 = both ports of a chip with a +
  // and a − port per dimension wired to its one neighbour. Other topologies do not read it.
  int torus_length2_links = 2;
  // Per direction, the links along dimension k of a torus2d or mesh2d (k < 2) or torus3d (k < 3);
  // 0 = link_bandwidth_bytes_per_s. Other topologies ignore them. On a torus2d shaped like the
  // logical R×C mesh, axis 0 links join neighbouring rows (they carry the column groups: the
  // MeshSlice cost model's axis 0, "inter-row") and axis 1 links join neighbouring columns.
  std::array<double, 3> axis_bandwidth_bytes_per_s = {0, 0, 0};
  HierarchicalParams hierarchical;  // Read by --topology hierarchical.

  std::vector<core::Param> Params();
  // Ranges of Params(), and every axis bandwidth 0 or at least link.bandwidth's minimum.
  absl::Status Validate();
};

// Network presets by name (NetworkPresetNames()). NotFound lists the names.
absl::StatusOr<NetworkConfig> NetworkPreset(const std::string& name);
const std::vector<std::string>& NetworkPresetNames();

}  // namespace meshsim::network

#endif  // MESHSIM_NETWORK_NETWORK_CONFIG_H_
