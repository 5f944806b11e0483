// ring, torus2d, torus3d and mesh2d: row-major grids of chips, with or without wraparound.
//
// Link rule per dimension d of extent e, for the chip at coordinate c (forward = towards +):
//   c + 1 < e                      → a link to c + 1 (every grid);
//   c = e − 1, wraparound, e ≥ 3   → a link to 0 (tori and the ring);
//   c = 1, wraparound, e = 2, length2_links = 2 → a second link to 0.
// So a wrapping dimension of extent e ≥ 3 has e full-duplex links per line; extent 2 has
// length2_links: 1 joins the pair once, 2 twice (chip 0's + port to chip 1's −, then chip 1's +
// port to chip 0's −: each link's forward entry leaves its sender's + port, its reverse the
// other chip's − port, which is how DimensionOrderRouter tells the two apart); extent 1 none; a
// mesh dimension has e − 1.
// A link along dimension d of torus2d, torus3d or mesh2d runs at axis_bandwidth[d] when that is
// given and > 0 (e.g. a TPU slice whose in-host axis is faster than its cross-host one), else at
// link_bandwidth; the ring's links all run at link_bandwidth.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "network/topology/families.h"

namespace meshsim::network::internal {

std::string FormatDims(const std::vector<int>& dims) { return absl::StrJoin(dims, "x"); }

std::vector<int> MostSquareDims(int chips, int rank) {
  if (rank == 2) {
    int rows = 1;
    for (int r = 1; static_cast<int64_t>(r) * r <= chips; ++r) {
      if (chips % r == 0) rows = r;
    }
    return {rows, chips / rows};
  }
  // rank 3: minimise the largest extent z, then the middle one y (x ≤ y ≤ z).
  std::vector<int> best = {1, 1, chips};
  for (int x = 1; static_cast<int64_t>(x) * x * x <= chips; ++x) {
    if (chips % x != 0) continue;
    const int rest = chips / x;
    for (int y = x; static_cast<int64_t>(y) * y <= rest; ++y) {
      if (rest % y != 0) continue;
      const int z = rest / y;
      if (z < best[2] || (z == best[2] && y < best[1])) best = {x, y, z};
    }
  }
  return best;
}

namespace {

// Appends the links of a row-major grid with `dims` (product = number of nodes); the links along
// dimension d run at bandwidth[d]; a wrapping extent-2 dimension gets `length2_links` per pair.
void AddGridLinks(const std::vector<int>& dims, bool wraps, const std::vector<double>& bandwidth,
                  double latency, int length2_links, FamilyGraph& g) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * dims[d + 1];
  for (int node = 0; node < g.num_nodes; ++node) {
    for (int d = 0; d < rank; ++d) {
      const int e = dims[d];
      const int c = (node / stride[d]) % e;
      if (c + 1 < e) {
        g.AddDuplex(node, node + stride[d], bandwidth[d], latency);
      } else if (wraps && (e >= 3 || (e == 2 && length2_links == 2))) {
        // c == e − 1: close the ring of this line (e = 2: the pair's second link).
        g.AddDuplex(node, node - (e - 1) * stride[d], bandwidth[d], latency);
      }
    }
  }
}

}  // namespace

absl::StatusOr<FamilyGraph> BuildRing(const TopologyParams& p) {
  FamilyGraph g;
  g.num_nodes = p.chips;
  g.grid_dims = {p.chips};
  g.grid_wraps = true;
  AddGridLinks(g.grid_dims, /*wraps=*/true, {p.link_bandwidth_bytes_per_s}, p.link_latency_s,
               p.length2_links, g);
  return g;
}

absl::StatusOr<FamilyGraph> BuildGrid(const TopologyParams& p, int rank, bool wraps) {
  std::vector<int> dims = p.dims;
  if (dims.empty()) {
    dims = MostSquareDims(p.chips, rank);
  } else {
    const std::string example = rank == 2 ? "4x4" : "4x4x4";
    if (static_cast<int>(dims.size()) != rank) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dims: %s has %d extents; %s needs %d (e.g. %s), or none for the most-square shape",
          FormatDims(dims), dims.size(), p.name, rank, example));
    }
    int64_t product = 1;
    for (int e : dims) {
      if (e < 1) {
        return absl::InvalidArgumentError(
            absl::StrFormat("dims: %s is not allowed; every extent must be ≥ 1", FormatDims(dims)));
      }
      product = std::min<int64_t>(product * e, int64_t{1} << 31);  // Saturate: no overflow.
    }
    if (product != p.chips) {
      return absl::InvalidArgumentError(
          absl::StrFormat("dims: %s does not match %d chips", FormatDims(dims), p.chips));
    }
  }
  FamilyGraph g;
  g.num_nodes = p.chips;
  g.dims = dims;
  g.grid_dims = dims;
  g.grid_wraps = wraps;
  std::vector<double> bandwidth(rank, p.link_bandwidth_bytes_per_s);
  for (int d = 0; d < rank && d < static_cast<int>(p.axis_bandwidth_bytes_per_s.size()); ++d) {
    if (p.axis_bandwidth_bytes_per_s[d] > 0) bandwidth[d] = p.axis_bandwidth_bytes_per_s[d];
  }
  AddGridLinks(dims, wraps, bandwidth, p.link_latency_s, p.length2_links, g);
  return g;
}

}  // namespace meshsim::network::internal
