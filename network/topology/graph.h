// Internal to network/: a topology as a Boost.Graph graph.
//
// One vertex per node (vertex index = node id), one edge per directed Link carrying its LinkId.
// Out-edges of a vertex are stored in LinkId order (vecS, appended in link order), so iterating
// them is deterministic. bidirectionalS keeps in-edges too, which the router needs to search
// backwards from a destination (boost::reverse_graph).
#ifndef MESHSIM_NETWORK_TOPOLOGY_GRAPH_H_
#define MESHSIM_NETWORK_TOPOLOGY_GRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "boost/graph/adjacency_list.hpp"
#include "network/topology/types.h"

namespace meshsim::network::internal {

struct LinkEdge {
  uint32_t link = 0;  // Index into Topology::links().
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                    boost::no_property, LinkEdge>;

// The graph of `num_nodes` nodes and `links` (whose ends must be < num_nodes). Internal if Boost
// fails to allocate. Cost: O(nodes + links).
absl::StatusOr<Graph> MakeGraph(int num_nodes, const std::vector<Link>& links);

}  // namespace meshsim::network::internal

#endif  // MESHSIM_NETWORK_TOPOLOGY_GRAPH_H_
