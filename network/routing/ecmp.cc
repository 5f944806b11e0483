#include "network/routing/ecmp.h"

#include <exception>
#include <functional>
#include <queue>
#include <utility>

#include "boost/graph/breadth_first_search.hpp"
#include "boost/graph/reverse_graph.hpp"
#include "core/check.h"

namespace meshsim::network::internal {
namespace {

// splitmix64's finaliser: a fixed, platform-independent 64-bit mix.
uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t HopHash(int src, int dst, uint64_t hash, int hop) {
  uint64_t x = Mix64(hash + 0x9e3779b97f4a7c15ull);
  x = Mix64(
      x ^ ((static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst)));
  return Mix64(x ^ static_cast<uint64_t>(hop));
}

// Records BFS depth: D(target) = D(source) + 1 on every tree edge.
class DistanceRecorder : public boost::default_bfs_visitor {
 public:
  explicit DistanceRecorder(int64_t* dist) : dist_(dist) {}

  template <typename Edge, typename G>
  void tree_edge(Edge e, const G& g) const {
    dist_[boost::target(e, g)] = dist_[boost::source(e, g)] + 1;
  }

 private:
  int64_t* dist_;
};

}  // namespace

EcmpRouter::EcmpRouter(const Graph* graph, int num_chips, std::vector<int64_t> link_cost)
    : graph_(graph),
      link_cost_(std::move(link_cost)),
      root_(num_chips),
      last_link_(num_chips, kNoLink),
      dist_(boost::num_vertices(*graph)),
      cand_at_(boost::num_vertices(*graph)),
      cands_(boost::num_vertices(*graph)) {
  const Graph& g = *graph_;
  for (int t = 0; t < num_chips; ++t) {
    root_[t] = t;
    if (boost::out_degree(t, g) != 1 || boost::in_degree(t, g) != 1) continue;
    const auto in = *boost::in_edges(t, g).first;
    const auto out = *boost::out_edges(t, g).first;
    if (static_cast<int>(boost::source(in, g)) != static_cast<int>(boost::target(out, g))) {
      continue;
    }
    root_[t] = static_cast<int>(boost::source(in, g));
    last_link_[t] = g[in].link;
  }
}

const std::vector<int64_t>& EcmpRouter::Distances(int root) const {
  std::vector<int64_t>& dist = dist_[root];
  if (!dist.empty()) return dist;
  // Search backwards along links (reverse graph) so D is the distance *to* root even if some
  // topology has links of one direction only.
  try {
    dist.assign(boost::num_vertices(*graph_), kUnreachable);
    dist[root] = 0;
    if (link_cost_.empty()) {
      const auto reversed = boost::make_reverse_graph(*graph_);
      boost::breadth_first_search(reversed, boost::vertex(root, reversed),
                                  boost::visitor(DistanceRecorder(dist.data())));
    } else {
      // Dijkstra towards root: pop the closest node, relax its in-links u→v as D(u) candidates.
      using Entry = std::pair<int64_t, int>;
      std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
      heap.push({0, root});
      const Graph& g = *graph_;
      while (!heap.empty()) {
        const auto [d, v] = heap.top();
        heap.pop();
        if (d != dist[v]) continue;
        const auto [begin, end] = boost::in_edges(v, g);
        for (auto it = begin; it != end; ++it) {
          const int u = static_cast<int>(boost::source(*it, g));
          const int64_t du = d + Cost(g[*it].link);
          if (du < dist[u]) {
            dist[u] = du;
            heap.push({du, u});
          }
        }
      }
    }
  } catch (const std::exception& e) {
    // Only allocation can fail here, and Route has no Status to return it in.
    MESHSIM_CHECK(false) << "routing table for node " << root << ": " << e.what();
  }
  return dist;
}

int EcmpRouter::Hops(int src, int dst) const {
  if (src == dst) return 0;
  if (!link_cost_.empty()) {
    std::vector<core::LinkId> path;
    Route(src, dst, 0, path);
    return static_cast<int>(path.size());
  }
  const std::vector<int64_t>& dist = Distances(root_[dst]);
  MESHSIM_CHECK(dist[src] != kUnreachable) << "no path from node " << src << " to " << dst;
  return static_cast<int>(dist[src]) + (last_link_[dst] != kNoLink ? 1 : 0);
}

void EcmpRouter::Route(int src, int dst, uint64_t hash, std::vector<core::LinkId>& path) const {
  if (src == dst) return;
  Walk(src, root_[dst], src, dst, hash, path);
  if (last_link_[dst] != kNoLink) path.push_back(core::LinkId(last_link_[dst]));
}

void EcmpRouter::RouteToNode(int src, int dst, uint64_t hash,
                             std::vector<core::LinkId>& path) const {
  if (src == dst) return;
  Walk(src, dst, src, dst, hash, path);
}

uint32_t EcmpRouter::AppendCandidates(int node, const std::vector<int64_t>& dist,
                                      std::vector<Candidate>& out) const {
  const Graph& g = *graph_;
  const int64_t here = dist[node];
  uint32_t n = 0;
  const auto [begin, end] = boost::out_edges(node, g);
  for (auto it = begin; it != end; ++it) {
    const int next = static_cast<int>(boost::target(*it, g));
    const int64_t there = dist[next];
    const uint32_t link = g[*it].link;
    if (there == kUnreachable || there + Cost(link) != here) continue;
    out.push_back({link, next});
    ++n;
  }
  return n;
}

void EcmpRouter::Walk(int src, int root, int hash_src, int hash_dst, uint64_t hash,
                      std::vector<core::LinkId>& path) const {
  // An unreachable src has no candidate (the check below).
  const std::vector<int64_t>& dist = Distances(root);
  std::vector<uint32_t>* at = nullptr;
  std::vector<Candidate>* kept = nullptr;
  if (!frozen_) {
    at = &cand_at_[root];
    if (at->empty()) at->assign(dist.size(), kNoLink);
    kept = &cands_[root];
  }
  std::vector<Candidate> scanned;  // Without the cache (after Precompute).
  int node = src;
  for (int hop = 0; node != root; ++hop) {
    const Candidate* candidates;
    uint32_t n;
    if (at != nullptr) {
      uint32_t start = (*at)[node];
      if (start == kNoLink) {
        start = static_cast<uint32_t>(kept->size());
        kept->push_back({0, 0});
        (*kept)[start].link = AppendCandidates(node, dist, *kept);
        (*at)[node] = start;
      }
      n = (*kept)[start].link;
      candidates = kept->data() + start + 1;
    } else {
      scanned.clear();
      n = AppendCandidates(node, dist, scanned);
      candidates = scanned.data();
    }
    MESHSIM_CHECK(n > 0) << "no path from node " << node << " to " << hash_dst;
    const uint64_t pick = n > 1 ? HopHash(hash_src, hash_dst, hash, hop) % n : 0;
    path.push_back(core::LinkId(candidates[pick].link));
    node = candidates[pick].next;
  }
}

void EcmpRouter::Precompute() const {
  for (int root : root_) Distances(root);
  frozen_ = true;
}

}  // namespace meshsim::network::internal
