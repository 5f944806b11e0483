#include "network/routing/dimension_order.h"

#include <cstdlib>
#include <utility>

#include "core/check.h"

namespace meshsim::network::internal {

DimensionOrderRouter::DimensionOrderRouter(std::vector<int> extents, bool wraps,
                                           const std::vector<Link>& links)
    : extent_(std::move(extents)), stride_(extent_.size(), 1), wraps_(wraps) {
  const int rank = static_cast<int>(extent_.size());
  int nodes = 1;
  for (int d = rank - 1; d >= 0; --d) {
    stride_[d] = nodes;
    nodes *= extent_[d];
  }
  plus_.assign(static_cast<size_t>(nodes) * rank, kNone);
  minus_.assign(static_cast<size_t>(nodes) * rank, kNone);
  // Classify each link by the one coordinate it changes. With wraparound on an extent-2
  // dimension both neighbours are one chip: an even link (a duplex's forward entry) is the +
  // port, an odd one the − port; a port left without a link of its own takes the other's.
  for (size_t l = 0; l < links.size(); ++l) {
    const int a = links[l].src, b = links[l].dst;
    int dim = -1;
    for (int d = 0; d < rank; ++d) {
      if (Coord(a, d) == Coord(b, d)) continue;
      MESHSIM_CHECK(dim == -1) << "grid link " << a << "->" << b << " changes two coordinates";
      dim = d;
    }
    MESHSIM_CHECK(dim >= 0) << "grid link " << a << "->" << b << " is a self-loop";
    const int e = extent_[dim], ca = Coord(a, dim), cb = Coord(b, dim);
    const bool up = wraps_ ? cb == (ca + 1) % e : cb == ca + 1;
    const bool down = wraps_ ? cb == (ca + e - 1) % e : cb == ca - 1;
    MESHSIM_CHECK(up || down) << "grid link " << a << "->" << b << " is not to a neighbour";
    const size_t slot = static_cast<size_t>(a) * rank + dim;
    if (up && down) {  // Extent 2 with wraparound.
      MESHSIM_CHECK((l % 2 == 0 ? plus_ : minus_)[slot] == kNone)
          << "grid link " << a << "->" << b << ": a third link between one pair";
      (l % 2 == 0 ? plus_ : minus_)[slot] = static_cast<uint32_t>(l);
      continue;
    }
    if (up) plus_[slot] = static_cast<uint32_t>(l);
    if (down) minus_[slot] = static_cast<uint32_t>(l);
  }
  for (int d = 0; d < rank; ++d) {
    if (!wraps_ || extent_[d] != 2) continue;
    for (int node = 0; node < nodes; ++node) {
      const size_t slot = static_cast<size_t>(node) * rank + d;
      if (plus_[slot] == kNone) plus_[slot] = minus_[slot];
      if (minus_[slot] == kNone) minus_[slot] = plus_[slot];
    }
  }
}

DimensionOrderRouter::Leg DimensionOrderRouter::LegOf(int d, int a, int b, bool backward) const {
  if (!wraps_) return b >= a ? Leg{b - a, +1} : Leg{a - b, -1};
  const int e = extent_[d];
  if (e == 2) return a == b ? Leg{0, +1} : Leg{1, backward ? -1 : +1};
  const int f = (b - a + e) % e;
  return f <= e - f ? Leg{f, +1} : Leg{e - f, -1};
}

int DimensionOrderRouter::Hops(int src, int dst) const {
  int hops = 0;
  for (int d = 0; d < static_cast<int>(extent_.size()); ++d) {
    hops += LegOf(d, Coord(src, d), Coord(dst, d), /*backward=*/false).hops;
  }
  return hops;
}

void DimensionOrderRouter::Route(int src, int dst, bool backward,
                                 std::vector<core::LinkId>& path) const {
  const int rank = static_cast<int>(extent_.size());
  int node = src;
  for (int d = 0; d < rank; ++d) {
    int c = Coord(src, d);  // Dimensions before d already match dst; d and later still src's.
    const Leg leg = LegOf(d, c, Coord(dst, d), backward);
    const std::vector<uint32_t>& table = leg.dir > 0 ? plus_ : minus_;
    for (int i = 0; i < leg.hops; ++i) {
      const uint32_t link = table[static_cast<size_t>(node) * rank + d];
      MESHSIM_CHECK(link != kNone) << "no link from node " << node << " in dimension " << d;
      path.push_back(core::LinkId(link));
      int next = c + leg.dir;
      if (next == extent_[d]) next = 0;
      if (next < 0) next = extent_[d] - 1;
      node += (next - c) * stride_[d];
      c = next;
    }
  }
  MESHSIM_CHECK_EQ(node, dst);
}

}  // namespace meshsim::network::internal
