// The MeshSlice LLM autotuner (ISCA'25 §3.2): picks, for one transformer block's FC layers,
// the dataflow of each layer, the mesh shape, and each layer's slice count S.
//
// Phase 1 (§3.2.1): per FC layer, the stationary matrix by the largest-matrix rule
// (AutoStationary, dataflow.h); its three training GeMMs follow from MeshSlice Table 1. A forced
// `dataflow` (os|ls|rs) replaces the rule for every layer.
//
// Phase 2 (§3.2.2): for each candidate mesh shape, each layer independently takes the S that
// minimises the cost model's time (cost_model.h) of the layer's GeMMs of `pass` (train = forward
// + backward-data + backward-weight); the mesh with the smallest sum over layers wins. Ties keep
// the smaller S and the earlier mesh.
//
// Near-ties (meshsim's rule, not the paper's). A cost model that charges two concurrent
// collectives their mean (the default, simulation-fitted) cannot tell apart meshes whose totals
// differ by less than the error of that rule: on meshsim's machine a step with two concurrent
// collectives lasts as long as the longer one, 3–30% above the mean (docs/calibration.md). Among
// the meshes within kNearTie (1%) of the best total, the tuner keeps the one with the smallest
// *strict* total — the same per-layer S costed with the max of concurrent collectives
// (MeshChoice::strict_estimate_s); ties keep the earlier mesh. A model that already takes the
// max has nothing to break: its best total wins as before.
//
// Candidates (reference "Autotuner rules"):
//   meshes  (4, N/4), (8, N/8), …: rows double and columns halve while columns ≥ 4.
//   S       1 (the Collective fallback, always) and the divisors of D / lcm(R, C) / 8 in
//           {3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40}, D = I (os), O (ls), T (rs) — the length
//           every GeMM of the layer slices in blocks of 8 over both mesh axes. Each (mesh, S)
//           must also pass the meshslice plugin's Check for all of the layer's GeMMs; a mesh on
//           which some layer cannot even be sharded (S = 1 rejected) is skipped with its reason.
//
// Example:
//   TuneProblem tp{.model = gpt3, .batch = 128, .seq = 2048, .chips = 256};
//   MESHSIM_ASSIGN_OR_RETURN(TuneResult r, Autotune(tp, CostModel::SimulationFitted()));
//   // r.mesh = 32x8 (say), r.layers[i].slices, r.estimate_s.
#ifndef MESHSIM_ALGORITHMS_AUTOTUNE_AUTOTUNER_H_
#define MESHSIM_ALGORITHMS_AUTOTUNE_AUTOTUNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "algorithms/autotune/cost_model.h"
#include "algorithms/dataflow.h"
#include "algorithms/mesh.h"
#include "workloads/transformer.h"

namespace meshsim::algorithms {

struct TuneProblem {
  workloads::ModelShape model;
  int64_t batch = 1;
  int64_t seq = 2048;
  int chips = 256;
  std::string pass = "train";     // fwd, bwd, train: the GeMMs each layer's estimate sums.
  std::string dataflow = "auto";  // auto = phase 1; os|ls|rs forces every layer.
  std::vector<Mesh> meshes;       // Candidate meshes; empty = MeshCandidates(chips).
  int element_bytes = 2;
};

// The tuned configuration of one FC layer on one mesh.
struct LayerChoice {
  std::string name;  // "qkv", …
  int index = 0;     // FcLayer::index.
  Stationary stationary = Stationary::kY;
  int slices = 1;
  double estimate_s = 0;  // The layer's GeMMs of `pass` at `slices`.
};

// One candidate mesh: valid (every layer shardable) with its tuned layers and total, or not,
// with the reason.
struct MeshChoice {
  Mesh mesh;
  bool valid = false;
  std::string reason;     // Why not valid (the plugin's message).
  double estimate_s = 0;  // Σ layers' estimates.
  // The same layers and S under the cost model's constants with the max of concurrent
  // collectives (= estimate_s for a model that takes the max). Breaks near-ties (banner).
  double strict_estimate_s = 0;
  std::vector<LayerChoice> layers;
};

// One evaluated (mesh, layer, S) point.
struct TuneCandidate {
  Mesh mesh;
  int layer = 0;  // FcLayer::index.
  std::string layer_name;
  int slices = 1;
  double estimate_s = 0;
};

// Meshes whose totals are within this fraction of the best are near-ties (banner).
inline constexpr double kNearTie = 0.01;

struct TuneResult {
  std::string cost_model;           // CostConstants::name.
  Mesh mesh;                        // The chosen mesh.
  double estimate_s = 0;            // Its total: one block's FC layers for `pass`.
  bool near_tie = false;            // The chosen mesh is not the one with the best total (banner).
  std::vector<LayerChoice> layers;  // The chosen mesh's layers, in model order.
  std::vector<MeshChoice> meshes;   // Every candidate mesh, in candidate order.
  std::vector<TuneCandidate> candidates;  // Every valid (mesh, layer, S), in evaluation order.

  // The per-layer S of the chosen mesh, indexed by FcLayer::index (BlockPlan::layer_slices).
  std::vector<int> LayerSlices() const;
  // The MeshChoice of `mesh`, or nullptr if it was not a candidate.
  const MeshChoice* Find(const Mesh& mesh) const;
};

// The reference's mesh shapes for `chips`: (4, chips/4), then rows ×2, columns ÷2 while the
// columns stay ≥ 4 (and even before halving). Empty when chips is not a multiple of 4 or < 16.
// 256 → 4x64, 8x32, 16x16, 32x8, 64x4.
std::vector<Mesh> MeshCandidates(int chips);

// The slice-count list the divisors are drawn from.
const std::vector<int>& SliceCountList();

// The blocked dimension D of `layer` under `s`: I (kY), O (kX), T (kW).
int64_t SlicedDimension(const FcLayer& layer, Stationary s);

// The reference rule alone: {1} ∪ {S in SliceCountList() dividing D / lcm(R, C) / 8}, ascending
// (only 1 when 8·lcm(R, C) does not divide D). The autotuner further keeps those the meshslice
// plugin accepts for each of the layer's GeMMs.
std::vector<int> SliceCandidates(const FcLayer& layer, Stationary s, const Mesh& mesh);

// Phases 1 and 2 (banner). InvalidArgument when there is no candidate mesh (naming --chips) or
// no candidate mesh can shard every layer (naming the first reason), or for a bad pass/dataflow.
// Cost: O(meshes · layers · |SliceCountList()|) closed-form estimates.
absl::StatusOr<TuneResult> Autotune(const TuneProblem& problem, const CostModel& cost_model);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_AUTOTUNE_AUTOTUNER_H_
