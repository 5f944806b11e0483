// Internal to network/: shortest-path routing with per-hop ECMP (fat-tree, switch, and any
// family without a grid).
//
// Distances. For a destination chip t, D(v) = hops from v to t, found by one breadth-first search
// from t over the reversed graph (Boost.Graph BFS). When t is a leaf — exactly one in-link p→t
// and one out-link t→p, as every fat-tree or switch chip — D is searched from p instead
// (D_t(v) = D_p(v) + 1 for v ≠ t), so all chips behind one edge switch share a table: a
// 4096-chip k = 26 fat-tree needs 316 searches of 4941 nodes, not 4096. Tables are computed on
// first use and cached (8 bytes per node per table).
//
// Weighted mode (hierarchical, graphviz): with a cost per link, D(v) is the least total cost
// from v to t (Dijkstra over the reversed graph, integer costs so ties are exact), the leaf
// shortcut adds the cost of p→t, and the candidates below are the out-links u→v with
// D(v) + cost(u→v) = D(u). Without costs every link costs 1 (hops, by BFS).
//
// Route. From u ≠ t the candidates are u's out-links u→v with D(v) = D(u) − 1, in LinkId order;
// with n > 1 candidates the route takes candidate Mix(src, dst, hash, hop) mod n, where hop is the
// index of the link being chosen — so different hashes spread flows over equal-cost paths while
// the same arguments always give the same path.
//
// Candidates. The candidates of a node towards a destination's table are found once (a scan of
// its out-links reading D of each neighbour: a fat-tree switch has k of them) and kept, per
// table, in the order of the scan; later routes through the node read them from there.
//
// Thread safety: thread-compatible, not thread-safe — const calls fill the mutable caches.
// After Precompute(), Route and Hops write nothing (candidates are then found by a scan each
// time, not kept), so their concurrent use is safe; RouteToNode may still search a node's
// table.
#ifndef MESHSIM_NETWORK_ROUTING_ECMP_H_
#define MESHSIM_NETWORK_ROUTING_ECMP_H_

#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "network/topology/graph.h"

namespace meshsim::network::internal {

class EcmpRouter {
 public:
  // `graph` must outlive the router; nodes 0..num_chips−1 are the chips. `link_cost` (by LinkId,
  // each ≥ 1) switches to least-cost routing; empty = fewest hops. Cost: O(chips).
  EcmpRouter(const Graph* graph, int num_chips, std::vector<int64_t> link_cost = {});

  // Number of links on a least-cost path. Precondition: dst reachable from src.
  // Cost: O(1) unweighted after the destination's table exists (else one BFS); weighted,
  // O(Σ out-degree along the path).
  int Hops(int src, int dst) const;

  // Appends a shortest path's links to `path` (nothing when src == dst).
  // Cost: O(Σ out-degree along the path) after the destination's table exists.
  void Route(int src, int dst, uint64_t hash, std::vector<core::LinkId>& path) const;

  // The same to any node `dst` (a NIC, a switch): its own table, no leaf shortcut.
  void RouteToNode(int src, int dst, uint64_t hash, std::vector<core::LinkId>& path) const;

  // Computes every chip's distance table and stops keeping candidates, so that later Route
  // and Hops calls write nothing. Cost: one BFS per distinct table.
  void Precompute() const;

 private:
  static constexpr int64_t kUnreachable = INT64_MAX;
  static constexpr uint32_t kNoLink = UINT32_MAX;

  // Distances to `root`, computed on first use.
  const std::vector<int64_t>& Distances(int root) const;
  int64_t Cost(uint32_t link) const { return link_cost_.empty() ? 1 : link_cost_[link]; }
  // Appends the links from src to `root` along least-cost candidates, ECMP by (hash_src,
  // hash_dst, hash, hop).
  void Walk(int src, int root, int hash_src, int hash_dst, uint64_t hash,
            std::vector<core::LinkId>& path) const;
  // A least-cost candidate out of a node: the link and the node it leads to.
  struct Candidate {
    uint32_t link;
    int next;
  };
  // Appends node's candidates towards the table `dist` (out-link order) to `out`; returns how
  // many.
  uint32_t AppendCandidates(int node, const std::vector<int64_t>& dist,
                            std::vector<Candidate>& out) const;

  const Graph* graph_;
  std::vector<int64_t> link_cost_;
  std::vector<int> root_;            // Per chip: the node its table is searched from.
  std::vector<uint32_t> last_link_;  // Per chip: root→chip when the chip is a leaf, else kNoLink.
  mutable std::vector<std::vector<int64_t>> dist_;  // Per root node; empty until used.
  // Per root node, per node: where its candidates start in cands_[root] (a header entry whose
  // `link` is their count, then the candidates), kNoLink until found; empty until used.
  mutable std::vector<std::vector<uint32_t>> cand_at_;
  mutable std::vector<std::vector<Candidate>> cands_;
  mutable bool frozen_ = false;  // Precompute() ran: keep nothing more.
};

}  // namespace meshsim::network::internal

#endif  // MESHSIM_NETWORK_ROUTING_ECMP_H_
