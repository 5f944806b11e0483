// Internal to network/: dimension-order routing on row-major grids (tori, meshes, the ring).
//
// A chip's coordinates over extents e_0..e_{D−1} are c_d = (chip / s_d) mod e_d with strides
// s_{D−1} = 1, s_d = s_{d+1}·e_{d+1}. A route corrects coordinate 0 first, then 1, … (on a
// torus2d {R, C}: first the row index, moving along the column; then the column index, moving
// along the row). In dimension d, from a = c_d(src) to b = c_d(dst):
//   wraparound: f = (b − a) mod e_d; go + for f hops if f ≤ e_d − f, else − for e_d − f hops
//               (so ties, f = e_d/2, go +); on an extent-2 dimension, − when the route is
//               `backward` (a ring's send to its predecessor), else + (joined once, the pair's
//               one link is both the + and the − neighbour; joined twice, the + and − ports
//               are different links);
//   mesh:       go sign(b − a) for |b − a| hops.
// Hops(src, dst) = Σ_d min(f_d, e_d − f_d) on tori, Σ_d |b_d − a_d| on meshes.
#ifndef MESHSIM_NETWORK_ROUTING_DIMENSION_ORDER_H_
#define MESHSIM_NETWORK_ROUTING_DIMENSION_ORDER_H_

#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "network/topology/types.h"

namespace meshsim::network::internal {

class DimensionOrderRouter {
 public:
  // Indexes `links` of the grid with `extents` (node = chip = row-major index). Every link must
  // join two nodes that differ by ±1 (mod e_d with wraparound) in exactly one coordinate. On a
  // wrapping extent-2 dimension, where both neighbours are one chip, an even link id (the
  // forward entry of a duplex, families.h) is its sender's + port and an odd one its − port;
  // a sender with one link there uses it both ways. Cost: O(links · D).
  DimensionOrderRouter(std::vector<int> extents, bool wraps, const std::vector<Link>& links);

  // Number of links on the route. Cost: O(D).
  int Hops(int src, int dst) const;

  // Appends the route's links to `path`; `backward` picks the − port on extent-2 dimensions.
  // Cost: O(D + hops); allocates only if `path` grows.
  void Route(int src, int dst, bool backward, std::vector<core::LinkId>& path) const;

 private:
  // Hops and direction (+1 / −1) to go from coordinate a to b in dimension d.
  struct Leg {
    int hops;
    int dir;
  };
  Leg LegOf(int d, int a, int b, bool backward) const;
  int Coord(int node, int d) const { return (node / stride_[d]) % extent_[d]; }

  std::vector<int> extent_;
  std::vector<int> stride_;
  bool wraps_;
  // plus_[node·D + d] / minus_[node·D + d]: the link from `node` to its +1 / −1 neighbour in
  // dimension d, or kNone.
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> plus_;
  std::vector<uint32_t> minus_;
};

}  // namespace meshsim::network::internal

#endif  // MESHSIM_NETWORK_ROUTING_DIMENSION_ORDER_H_
