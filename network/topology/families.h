// Internal to network/: the per-family graph builders behind Topology::Build.
//
// Each builder validates the parameters only its family reads (the common ones — name, chips,
// link bandwidth and latency — were checked by Build) and returns the nodes and directed links.
// Conventions every builder follows, so that link ids are deterministic and documented:
//   - nodes 0..chips−1 are the chips, switches follow;
//   - every full-duplex link is appended as two consecutive entries, 2j (the "forward" direction
//     named by the builder) then 2j+1 (its reverse) with identical bandwidth and latency, so
//     the reverse of link l is l ^ 1.
#ifndef MESHSIM_NETWORK_TOPOLOGY_FAMILIES_H_
#define MESHSIM_NETWORK_TOPOLOGY_FAMILIES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "network/topology/types.h"

namespace meshsim::network::internal {

// A built family: its nodes, links and (for grids) the shape the dimension-order router uses.
struct FamilyGraph {
  int num_nodes = 0;
  std::vector<Link> links;
  std::vector<int> dims;       // What Topology::dims() reports (empty for ring, fat-tree, switch).
  std::vector<int> grid_dims;  // Non-empty: route dimension-order over these extents (the ring
                               // is the 1-D grid {chips}); empty: shortest paths with ECMP.
  bool grid_wraps = false;     // Grid dimensions wrap around (torus, ring) or not (mesh).
  bool weighted = false;       // Non-grid routing by least cost (latency + 1 MiB / bandwidth)
                               // instead of fewest hops (hierarchical, graphviz).
  // Optional per node (empty = chips then kSwitch, names "chipN"/"switchN"): kind and name.
  std::vector<NodeKind> node_kinds;
  std::vector<std::string> node_names;
  std::vector<int> host_of;  // Optional per chip: its host; empty = one host per chip.
  // Optional per chip: the NIC node its traffic to other hosts leaves and enters by (its "rail",
  // as NCCL binds a GPU to its nearest NIC), or −1 for the least-cost NIC; empty = none pinned.
  std::vector<int> chip_nic;

  // Appends the full-duplex link a <-> b as links a→b (2j) and b→a (2j+1).
  void AddDuplex(int a, int b, double bandwidth_bytes_per_s, double latency_s,
                 LinkClass cls = LinkClass::kGeneric);
  // Appends a node of `kind` named `name` and returns its id (fills node_kinds/node_names).
  int AddNode(NodeKind kind, std::string name);
};

// The cost weighted families route by: ps to move 1 MiB over `link` (latency + 2^20 B / bw), ≥ 1.
int64_t RoutingCost(const Link& link);

// "3x5" for {3, 5}: how dims appear in messages and on the command line.
std::string FormatDims(const std::vector<int>& dims);

// The most-square factorisation of `chips` into `rank` (2 or 3) ascending extents: the one with
// the smallest largest extent, then the smallest second-largest (2-D: R ≤ C with R the largest
// divisor ≤ √chips). Cost: O(√chips · divisors).
std::vector<int> MostSquareDims(int chips, int rank);

// ring, torus2d, torus3d, mesh2d (network/topology/torus.cc).
absl::StatusOr<FamilyGraph> BuildRing(const TopologyParams& p);
absl::StatusOr<FamilyGraph> BuildGrid(const TopologyParams& p, int rank, bool wraps);

// fattree (network/topology/fattree.cc).
absl::StatusOr<FamilyGraph> BuildFatTree(const TopologyParams& p);

// switch (network/topology/switch.cc).
absl::StatusOr<FamilyGraph> BuildSwitch(const TopologyParams& p);

// hierarchical (network/topology/hierarchical.cc).
absl::StatusOr<FamilyGraph> BuildHierarchical(const TopologyParams& p);

// graphviz:FILE (network/topology/graphviz.cc): reads p.graphviz_path.
absl::StatusOr<FamilyGraph> BuildGraphviz(const TopologyParams& p);

}  // namespace meshsim::network::internal

#endif  // MESHSIM_NETWORK_TOPOLOGY_FAMILIES_H_
