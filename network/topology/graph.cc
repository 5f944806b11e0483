#include "network/topology/graph.h"

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/check.h"

namespace meshsim::network::internal {

absl::StatusOr<Graph> MakeGraph(int num_nodes, const std::vector<Link>& links) {
  // Boost reports allocation failure by throwing; project code returns a Status instead.
  try {
    Graph g(num_nodes);
    for (size_t l = 0; l < links.size(); ++l) {
      MESHSIM_CHECK(links[l].src >= 0 && links[l].src < num_nodes && links[l].dst >= 0 &&
                    links[l].dst < num_nodes)
          << "link " << l << " " << links[l].src << "->" << links[l].dst << " outside " << num_nodes
          << " nodes";
      boost::add_edge(links[l].src, links[l].dst, LinkEdge{static_cast<uint32_t>(l)}, g);
    }
    return g;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("topology graph: ", e.what()));
  }
}

}  // namespace meshsim::network::internal
