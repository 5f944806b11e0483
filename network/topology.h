// Physical topologies: chips, switches and the full-duplex links between them, as a Boost.Graph
// graph, plus deterministic routing.
//
// Nodes 0..chips−1 are the chips (node id = chip id); switches follow. Every full-duplex link is
// two directed `Link`s, one per direction, each with its own bandwidth and latency; a LinkId
// indexes `links()`. The network runner turns every directed link into one fair-share resource.
//
// Chip numbering on tori and meshes is row-major over `dims()`: on a torus2d with dims {R, C},
// chip r·C + c sits at row r, column c, which is also its place in the logical R×C mesh, so a
// row ring of the mesh uses only that row's links.
//
// Link ids: every full-duplex link is the pair 2j (its forward direction: towards + on grids,
// upwards on fat-trees, chip → switch on `switch`) and 2j + 1 (the reverse), so the reverse of
// link l is ReverseLink(l) = l ^ 1. The order is deterministic; each family's file in
// network/topology/ states it.
//
// Routing (DESIGN.md §4):
//  - ring, torus2d, torus3d, mesh2d: dimension-order (network/routing/dimension_order.h).
//    Coordinate 0 is corrected first (on torus2d {R, C}: the row index, moving along a column),
//    then coordinate 1 (the column, moving along the row), then 2. In a wrapping dimension of
//    extent e, going from a to b: f = (b − a) mod e hops towards + if f ≤ e − f, else e − f hops
//    towards − (a tie, f = e/2, goes +). An extent-2 dimension joins the two chips once, or
//    twice with length2_links = 2 (each chip's + and − port); then a route in direction
//    kBackward (a ring's send to its predecessor) leaves by the − port and every other route by
//    the + port. Meshes go |b − a| hops towards b. The ring routes as the 1-D torus {chips}.
//    `hash` is ignored.
//  - fattree, switch: shortest paths; at each hop, among the out-links that stay on a shortest
//    path, a hash of (src, dst, hash, hop index) picks one (ECMP), so flows with different
//    hashes spread over equal-cost paths (network/routing/ecmp.h).
//  - hierarchical, graphviz: the same ECMP over least-cost paths, where a link costs the time
//    to move a 1 MiB reference message over it, latency + 2^20 B / bandwidth (in ps): traffic
//    prefers NVLink/NVSwitch over PCIe and stays inside a host when it can, as NCCL's does.
//
// Thread safety: thread-compatible, not thread-safe. Route and Hops on fat-trees and switches
// fill a lazily computed distance cache (one breadth-first search per destination edge switch),
// so concurrent calls on one Topology race — unless PrecomputeRoutes() ran first, after which
// every const call only reads.
//
// Example:
//   TopologyParams p{.name = "torus2d", .chips = 16, .dims = {4, 4}};
//   MESHSIM_ASSIGN_OR_RETURN(Topology t, Topology::Build(p));
//   std::vector<core::LinkId> path = t.Route(core::ChipId(0), core::ChipId(5));  // 2 hops
#ifndef MESHSIM_NETWORK_TOPOLOGY_H_
#define MESHSIM_NETWORK_TOPOLOGY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ids.h"
#include "network/topology/types.h"

namespace meshsim::network {

class Topology {
 public:
  // InvalidArgument, one line naming the key, the value and what is allowed, for unknown names,
  // chips outside 1..2^20, dims of the wrong rank or product, bandwidth ≤ 0, an axis bandwidth
  // < 0, latency < 0, odd or too small fat-tree radix, oversubscription < 1, and so on. Cost:
  // O(nodes + links); a 4096-chip torus3d or fat-tree builds in a few milliseconds.
  static absl::StatusOr<Topology> Build(const TopologyParams& params);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  const std::string& name() const;
  int num_chips() const;
  int num_nodes() const;                 // Chips + switches.
  const std::vector<int>& dims() const;  // Torus/mesh extents; empty for other families.
  const std::vector<Link>& links() const;

  // What node `node` (< num_nodes()) is, and its name ("chip3", "sw0", "host1.nvswitch", or the
  // DOT file's name).
  NodeKind node_kind(int node) const;
  const std::string& node_name(int node) const;

  // The host (server) `chip` sits in: on `hierarchical`, chip / gpus_per_node; on graphviz, the
  // node's `host` attribute (default: one host per chip); elsewhere every chip is its own host.
  // Two-level collectives group their members by it.
  int HostOf(core::ChipId chip) const;
  int num_hosts() const;

  // The topology as a Graphviz DOT graph: one node per chip/switch (shape by kind), one edge per
  // full-duplex link labelled with its class, bandwidth and latency. graphviz:FILE reads this
  // form back. Cost: O(nodes + links).
  std::string ToDot() const;

  // The directed links from `src` to `dst` (empty when src == dst), as routed above.
  // Preconditions: src, dst < num_chips(). Deterministic: the same arguments give the same path;
  // `hash` picks among equal-cost paths where there are several (fat-tree).
  // Cost: O(hops) on tori/meshes, allocating only the result; elsewhere O(hops · degree) after a
  // one-time BFS per destination edge switch (or destination).
  // `dir` matters only on a torus dimension of extent 2 joined twice (length2_links = 2), where
  // the successor and the predecessor on the ring are the same chip: kBackward leaves by the −
  // port, so a bidirectional ring's two halves take the two links.
  std::vector<core::LinkId> Route(core::ChipId src, core::ChipId dst, uint64_t hash = 0,
                                  RingDir dir = RingDir::kForward) const;

  // Whether Route ignores `hash` (ring, tori, meshes: dimension-order routing), so a route is
  // a function of (src, dst, dir) alone and may be kept.
  bool RoutesIgnoreHash() const;
  // Number of links on Route(src, dst) (the same for every hash). Cost: O(dims) on tori and
  // meshes; elsewhere O(1) after the destination's one-time BFS.
  int Hops(core::ChipId src, core::ChipId dst) const;

  // The directed links leaving `node` (a chip or switch id < num_nodes()), in LinkId order: a
  // chip's NIC ports. Cost: O(degree).
  std::vector<core::LinkId> OutLinks(int node) const;

  // The other direction of the same full-duplex link (l ^ 1).
  static core::LinkId ReverseLink(core::LinkId l) { return core::LinkId(l.value() ^ 1u); }

  // Computes every routing table now instead of on first use, so that later const calls never
  // write (safe to share between threads). Cost: fat-tree/switch: one BFS per edge switch
  // (O(nodes + links) each); tori, meshes and rings: nothing to do.
  void PrecomputeRoutes() const;

 private:
  struct Impl;
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct TopologyInfo {
  std::string name;
  std::string description;  // One line, with the parameters it reads.
  // The system parameters only some families read that this one does: keys, or prefixes ending
  // in '.' ("fattree." is every fattree.* key). Every other parameter is read by all families.
  std::vector<std::string> params;
};

// The topology families, for `meshsim list topologies`.
const std::vector<TopologyInfo>& TopologyFamilies();

// Empty when topology `name` (a family, or graphviz:FILE) reads system parameter `key`, or no
// family is particular about it; else the families that read it: "fattree, hierarchical".
std::string TopologyParamReaders(const std::string& name, const std::string& key);

}  // namespace meshsim::network

#endif  // MESHSIM_NETWORK_TOPOLOGY_H_
