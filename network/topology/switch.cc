// switch: every chip joined to one switch (node id = chips) by a full-duplex link, forward
// direction chip → switch; link 2c is chip c → switch, 2c + 1 switch → chip c. Every route
// between two chips is those two hops.
#include "network/topology/families.h"

namespace meshsim::network::internal {

absl::StatusOr<FamilyGraph> BuildSwitch(const TopologyParams& p) {
  FamilyGraph g;
  g.num_nodes = p.chips + 1;
  g.links.reserve(2 * static_cast<size_t>(p.chips));
  for (int c = 0; c < p.chips; ++c) {
    g.AddDuplex(c, p.chips, p.link_bandwidth_bytes_per_s, p.link_latency_s);
  }
  return g;
}

}  // namespace meshsim::network::internal
