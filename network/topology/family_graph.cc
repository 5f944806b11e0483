// FamilyGraph and RoutingCost (network/topology/families.h): what every family builder uses.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "network/topology/families.h"

namespace meshsim::network::internal {

int64_t RoutingCost(const Link& link) {
  // Picoseconds to move a 1 MiB reference message: latency + 2^20 B / bandwidth. Integral, so
  // equal-cost paths compare exactly.
  const double s = link.latency_s + 1048576.0 / link.bandwidth_bytes_per_s;
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(s * 1e12)));
}

void FamilyGraph::AddDuplex(int a, int b, double bandwidth_bytes_per_s, double latency_s,
                            LinkClass cls) {
  links.push_back(Link{a, b, bandwidth_bytes_per_s, latency_s, cls});
  links.push_back(Link{b, a, bandwidth_bytes_per_s, latency_s, cls});
}

int FamilyGraph::AddNode(NodeKind kind, std::string name) {
  node_kinds.push_back(kind);
  node_names.push_back(std::move(name));
  return num_nodes++;
}

}  // namespace meshsim::network::internal
