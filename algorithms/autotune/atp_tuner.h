// ATP's mesh search (Adaptive Tensor Parallelism, §3.3–3.5, §5.3–5.4): the hierarchical
// communication matrix of a topology, the all-reduce bandwidths of every DeviceMesh(d1, d2) it
// implies, and the mesh with the least tensor-parallel communication time.
//
// Hierarchical communication matrix (§3.4, Figure 7). Chips 0..N−1 are split into nested blocks
// of consecutive chips; layer 1 splits all N chips into R_1 ranks, layer j splits each rank of
// layer j−1 (its "parent") into R_j ranks, the last layer's ranks are single chips, ∏ R_j = N.
// A block is split by the first rule that applies:
//   1. hosts:   the block spans several hosts (Topology::HostOf) of k > 1 consecutive chips each
//               → ranks = hosts;
//   2. grid:    torus2d/torus3d/mesh2d over every chip, dims {D_0, …, D_m} row-major; the block
//               is a sub-box D_j × … × D_m with j < m → ranks = its D_j slices (on torus2d
//               {R, C}: layer 1 = the R rings (mesh rows), layer 2 = the C devices of a ring);
//   3. cluster: the chips joined by the block's fastest P2P bandwidth (bottleneck of Route)
//               form equal runs of k consecutive chips, 1 < k < block → ranks = those runs
//               (dual-GPU NVLink pairs over PCIe);
//   otherwise the block's ranks are its chips (the last layer).
// Each layer holds, per parent, two quantities derived from routes alone (bytes/s, one
// direction — meshsim's link bandwidths are per direction; the paper's NVLink figures are
// both directions added, twice ours):
//   P2P(a, b)  aggregate bandwidth from rank a to rank b: chip i of a sends to chip i of b, all
//              at once, each flow along a Route(·, ·, hash); the max-min fair rates of those
//              flows over the directed links' bandwidths, summed. Where routing has equal-cost
//              paths (ECMP), a flow is one subflow per distinct route of 32 hashes, so the sum is
//              what the paths carry together, not what a hash collision leaves. For single chips
//              on one path this is the bottleneck link bandwidth of Route(a, b).
//   Group(a)   aggregate bandwidth from rank a to the rest of its parent: chip i of a sends to
//              chip i of every other rank of the parent, all at once; the max-min rates summed
//              (a host: its NIC; a GPU on an NVLink mesh: the sum of its NVLinks).
//
// Bandwidths of DeviceMesh(d1, d2) (§3.5, Eq. 3). Device (i, j) is chip i·d2 + j: dimension 2's
// groups (mesh rows) are runs of d2 consecutive chips, dimension 1's groups (mesh columns) are
// strided by d2. A group spans layer j inside a parent when it touches ≥ 2 of that parent's
// ranks. For a touched rank a, with T the other ranks the group touches there:
//   usable(a) = min(Group(a), Σ_{b∈T} P2P(a, b))           (P2P correction of the group bandwidth)
//   share(a)  = groups of the same dimension spanning layer j that have a member in a
//   B'_dim    = min over groups, spanned layers, touched ranks of usable(a) / share(a).
// share(a) is the paper's "d2 groups share the bandwidth": it equals d2 for dimension 1 when a
// layer's ranks hold ≥ d2 chips (every example of §3.5), and 1 for single-chip ranks, where each
// group has its own links (which is what makes B'1 = B'2 = GroupBW on IC5/IC6, §5.4).
//
// Algorithm bandwidth (Eq. 4, Rabenseifner's all-reduce, latency ignored), dimension of size d:
//   B = d / (2(d − 1)) · B'            (d = 1: no communication, the term vanishes)
// Communication time of tensor parallelism (Eq. 2), L layers, input [b, s, h], e bytes/element:
//   T_comm = 2·L·b·s·e · (7h / (d1·B2) + 2h / (d2·B1))
// On one layer with GroupBW = P2P = G for every rank (IC5; IC6 for meshes aligned with rings),
// Eq. 2–4 give Figure 12's closed form T_comm = Δ·(14·d2 + 4·d1 − 18)/(d1·d2), Δ = 2Lbshe/G.
// The search evaluates every DeviceMesh(d1, N/d1), d1 descending, and keeps the least T_comm
// (ties → the larger d1, closer to Megatron's DeviceMesh(N, 1)). Calibrated B1/B2 (§5.3: IC1)
// replace the matrix's values for their meshes; the candidates are then only those meshes,
// since measured and derived bandwidths are not comparable. On §5.3's interconnects these
// equations pick 4x2 on IC2 and IC3 and 4x4 on IC4 where the paper states 8x1, 8x1 and 8x2
// (docs/atp.md and tests/algorithms/atp_tuner_test.cc work through why).
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(CommMatrix m, BuildCommMatrix(topology, 16));
//   AtpProblem p{.layers = 24, .batch = 4, .seq = 2048, .hidden = 4096};
//   MESHSIM_ASSIGN_OR_RETURN(AtpResult r, AtpSearch(m, p));
//   // r.mesh = 8x2 or 4x4 …, r.meshes[i].t_comm_s
#ifndef MESHSIM_ALGORITHMS_AUTOTUNE_ATP_TUNER_H_
#define MESHSIM_ALGORITHMS_AUTOTUNE_ATP_TUNER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/mesh.h"
#include "network/topology.h"

namespace meshsim::algorithms {

// One parent block of a layer: its ranks' P2P matrix and group bandwidths.
struct CommBlock {
  int first_chip = 0;  // The parent's chips are first_chip … + ranks·rank_chips.
  std::vector<std::vector<double>> p2p;  // [a][b], bytes/s; 0 on the diagonal.
  std::vector<double> group;             // [a], bytes/s.
};

struct CommLayer {
  std::string name;    // "hosts", "rings", "devices in a ring", "NVLink groups", "devices" …
  std::string rule;    // "hosts", "grid", "cluster", "devices": which split rule made it.
  int ranks = 1;       // R_j: ranks per parent.
  int rank_chips = 1;  // Chips per rank (N / (R_1 ⋯ R_j)).
  std::vector<CommBlock> parents;  // One per parent, in chip order (R_1 ⋯ R_{j−1} of them).
};

// How the matrix is read (tune --atp-matrix). kHierarchical: the split rules of the banner and
// Eq. 3 with the P2P correction and the groups' shares. kOneLevel: §5.3's reading of IC3/IC4 ("for
// fully-connected topologies, the hierarchical communication matrix has only one layer"): one
// layer whose ranks are the chips, and every dimension of every mesh gets B' = GroupBW, the
// least Group(a) over the chips (no P2P correction, no sharing), as §5.4 assumes for IC5.
// kMeasured: §5.3's calibration ("for IC1 ... we need to calibrate the bandwidths B1 and B2 using
// measured performance"): every candidate mesh's B1 and B2 are measured by simulating its
// all-reduces on the machine (sim/tuning.h MeasureAtpBandwidths) and replace Eq. 3–4; the matrix
// itself is the hierarchical one (shown, not used).
enum class AtpMatrix { kHierarchical, kOneLevel, kMeasured };
// "hierarchical" / "one-level" / "measured".
const char* ToString(AtpMatrix m);
// InvalidArgument naming --atp-matrix, the value and the allowed names otherwise.
absl::StatusOr<AtpMatrix> ParseAtpMatrix(const std::string& text);

struct CommMatrix {
  int chips = 0;
  AtpMatrix reading = AtpMatrix::kHierarchical;
  std::vector<CommLayer> layers;  // Outermost first.

  // The layer-`layer` (parent, rank) of `chip`.
  std::pair<int, int> Locate(int layer, int chip) const;
  // True when every parent of every layer has the same P2P and group values as parent 0.
  bool Uniform() const;
};

// The matrix of chips 0..chips−1 of `topology` (banner rules; kOneLevel: one layer of the chips,
// rule "one-level"). InvalidArgument when chips is outside 1..num_chips() or a split is not into
// equal consecutive blocks.
// Cost: O(layers · N · (N + flows·links)) route look-ups and max-min fills; N ≤ a few hundred.
absl::StatusOr<CommMatrix> BuildCommMatrix(const network::Topology& topology, int chips,
                                           AtpMatrix reading = AtpMatrix::kHierarchical);

// The max-min fair rates (bytes/s) of flows over directed links: `flows[f]` lists the LinkIds
// flow f crosses; `bandwidth[l]` is link l's capacity. Progressive filling; a flow with no links
// gets rate 0. Cost: O(iterations · Σ|flows[f]|), iterations ≤ distinct bottlenecks.
std::vector<double> MaxMinRates(const std::vector<std::vector<int>>& flows,
                                const std::vector<double>& bandwidth);

// Calibrated algorithm bandwidths of one mesh (bytes/s), replacing Eq. 3–4 (§5.3). A dimension
// of size 1 needs none (its value is ignored).
struct AtpCalibration {
  double b1_bytes_per_s = 0;
  double b2_bytes_per_s = 0;
};

struct AtpProblem {
  int64_t layers = 1;  // L.
  int64_t batch = 1;   // b.
  int64_t seq = 2048;  // s.
  int64_t hidden = 0;  // h.
  int element_bytes = 2;
  // Candidate meshes; empty = every DeviceMesh(d1, N/d1), d1 descending.
  std::vector<Mesh> meshes;
  // Per mesh ("2x4"), calibrated B1/B2. Non-empty: only these meshes are candidates.
  std::map<std::string, AtpCalibration> calibrated;
  // Eq. 4. false = B = B' (the reading of §5.3's IC2 argument, which compares 2h/(d2·B1) with
  // B1 = GroupBW/d2 and no Rabenseifner factor).
  bool rabenseifner = true;
};

// One evaluated DeviceMesh(d1, d2). For a dimension of size 1, b'/b are 0 (no communication).
struct AtpMeshEstimate {
  Mesh mesh;                          // rows = d1, cols = d2.
  double b1_prime = 0, b2_prime = 0;  // Eq. 3, bytes/s (0 when calibrated).
  double b1 = 0, b2 = 0;              // Eq. 4 or calibrated, bytes/s.
  std::vector<int> layers1, layers2;  // 0-based layers each dimension spans.
  bool calibrated = false;
  double t_dim2_s = 0, t_dim1_s = 0;  // Eq. 2's two terms: 2Lbse·7h/(d1·B2), 2Lbse·2h/(d2·B1).
  double t_comm_s = 0;                // Their sum.
};

struct AtpResult {
  Mesh mesh;                            // The chosen mesh.
  double t_comm_s = 0;                  // Its T_comm.
  std::vector<AtpMeshEstimate> meshes;  // Every candidate, in candidate order.
  const AtpMeshEstimate* Find(const Mesh& mesh) const;
};

// Eq. 3 for DeviceMesh(d1, d2) on `matrix`: {B'1, B'2} (0 for a dimension of size 1), and the
// layers each dimension spans. Precondition: d1·d2 = matrix.chips.
struct AtpPrimeBandwidths {
  double b1_prime = 0, b2_prime = 0;
  std::vector<int> layers1, layers2;
};
AtpPrimeBandwidths PrimeBandwidths(const CommMatrix& matrix, int d1, int d2);

// Eq. 4: d/(2(d−1))·b_prime (d ≥ 2); 0 for d = 1.
double RabenseifnerBandwidth(int d, double b_prime);

// Eq. 2 for one mesh with algorithm bandwidths b1, b2 (ignored for a dimension of size 1).
// Fills t_dim1_s, t_dim2_s, t_comm_s of `estimate` (whose mesh, b1, b2 are set).
void CommTime(const AtpProblem& problem, AtpMeshEstimate& estimate);

// Every DeviceMesh(d1, N/d1) (or problem.meshes / the calibrated meshes), Eq. 2–4, the least
// T_comm. InvalidArgument for hidden/layers/batch/seq < 1, a candidate mesh whose chips ≠ N,
// a calibrated mesh not dividing N or with a missing/non-positive bandwidth of a dimension > 1.
// Cost: O(meshes · layers · N²).
absl::StatusOr<AtpResult> AtpSearch(const CommMatrix& matrix, const AtpProblem& problem);

// "2x4:1.20,4.95" (GB/s; B2 may be omitted when d2 = 1: "8x1:0.97"; a size-1 dimension's value
// may be '-': "1x8:-,4.95") → ("2x4", {1.2e9, 4.95e9}). Several entries may be joined by ';'.
// InvalidArgument naming --atp-bandwidth otherwise.
absl::Status ParseAtpCalibration(const std::string& text,
                                 std::map<std::string, AtpCalibration>& out);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_AUTOTUNE_ATP_TUNER_H_
