// fattree: the k-ary three-level fat-tree of Al-Fares et al. (SIGCOMM 2008, §3.1).
//
// k pods, each with k/2 edge and k/2 aggregation switches forming a complete bipartite graph;
// (k/2)² core switches, core (i, j) joined to aggregation switch i of every pod; k/2 chips per
// edge switch, so k³/4 chips at most. Fewer chips fill the edge switches in order (chip c hangs
// off edge switch c / (k/2), pod c / (k/2)²); the whole switch fabric is built regardless.
//
// Oversubscription o: every switch-to-switch link (edge–aggregation and aggregation–core, both
// directions) runs at link_bandwidth / o, chip links at link_bandwidth. An edge switch then has
// (k/2)·bw down and (k/2)·bw/o up — the o:1 ratio — and the fabric above it is uniformly o times
// thinner (aggregation switches are not oversubscribed again).
//
// Node ids (h = k/2, N = chips): edge (p, i) = N + p·h + i; aggregation (p, i) = N + k·h + p·h + i;
// core (i, j) = N + 2·k·h + i·h + j. Links: chip–edge (chip order), then edge–aggregation
// (pod, edge, aggregation order), then aggregation–core (pod, aggregation, core order); the
// forward direction of each is upwards.
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "network/topology/families.h"

namespace meshsim::network::internal {
namespace {

// Caps the fabric at 128³/4 = 524288 chips and ~2.6M directed links.
constexpr int kMaxK = 128;

int64_t Capacity(int k) { return static_cast<int64_t>(k) * k * k / 4; }

}  // namespace

absl::StatusOr<FamilyGraph> BuildFatTree(const TopologyParams& p) {
  int k = p.fattree_k;
  if (k != 0) {
    if (k < 2 || k % 2 != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "fattree k: %d is not allowed; must be even and ≥ 2 (0 = smallest that holds the chips)",
          k));
    }
    if (k > kMaxK) {
      return absl::InvalidArgumentError(
          absl::StrFormat("fattree k: %d is not allowed; must be ≤ %d", k, kMaxK));
    }
  }
  int need = 2;
  while (Capacity(need) < p.chips) need += 2;
  if (k == 0) {
    if (need > kMaxK) {
      return absl::InvalidArgumentError(
          absl::StrFormat("fattree: %d chips need k ≥ %d; k must be ≤ %d (%d chips)", p.chips, need,
                          kMaxK, Capacity(kMaxK)));
    }
    k = need;
  } else if (Capacity(k) < p.chips) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fattree: %d chips need k ≥ %d (k = %d holds %d)", p.chips, need, k, Capacity(k)));
  }
  const double o = p.oversubscription;
  if (!(o >= 1) || !std::isfinite(o)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fattree oversubscription: %g is not allowed; must be finite and ≥ 1 (edge-switch "
        "down:up bandwidth ratio)",
        o));
  }

  const int h = k / 2;
  const int n = p.chips;
  const auto edge = [&](int pod, int i) { return n + pod * h + i; };
  const auto agg = [&](int pod, int i) { return n + k * h + pod * h + i; };
  const auto core = [&](int i, int j) { return n + 2 * k * h + i * h + j; };
  const double bw = p.link_bandwidth_bytes_per_s;
  const double lat = p.link_latency_s;

  FamilyGraph g;
  g.num_nodes = n + k * k + h * h;
  g.links.reserve(2 * (static_cast<size_t>(n) + 2 * static_cast<size_t>(k) * h * h));
  for (int c = 0; c < n; ++c) g.AddDuplex(c, n + c / h, bw, lat);
  for (int pod = 0; pod < k; ++pod) {
    for (int i = 0; i < h; ++i) {
      for (int j = 0; j < h; ++j)
        g.AddDuplex(edge(pod, i), agg(pod, j), bw / o, lat, LinkClass::kFabric);
    }
  }
  for (int pod = 0; pod < k; ++pod) {
    for (int i = 0; i < h; ++i) {
      for (int j = 0; j < h; ++j)
        g.AddDuplex(agg(pod, i), core(i, j), bw / o, lat, LinkClass::kFabric);
    }
  }
  return g;
}

}  // namespace meshsim::network::internal
