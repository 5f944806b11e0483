// A whole transformer layer (layer_algorithm.h) by a 2D GeMM plugin (algorithm.h): MeshSlice,
// Collective, Wang, SUMMA or Cannon run the FC GeMMs, and the rest of the layer is local, as in
// MeshSlice's end-to-end numbers (§6.1: "the performance of the non-FC layers").
//
// Sharding (MeshSlice §4.1): activations [b·s × h] are split by sequences over mesh rows and by
// hidden (heads) over mesh columns, so on an R×C mesh
//   • each FC GeMM (forward, dX, dW) is one GemmProblem in MeshSlice Table 1's dataflow for the
//     layer's stationary matrix (AutoStationary, or the one --dataflow forces), lowered by the
//     plugin with the layer's S,
//   • the attention core is local: each chip holds b/R sequences of a/C heads, so it runs
//     (b/R)·(a/C) of the per-head GeMMs (one kGemm of (b·a/(R·C))·m × n × k),
//   • element-wise ops stream 1/(R·C) of their tensor (workloads/layer.h bytes / (R·C)),
// and the activations between layers are "S0RS1" (reshard/spec.h) for pipelines.
//
// Example:
//   auto layer = MakeGemmLayer(MakeMeshSlice(), "meshslice", {6, 3, 8, 8}, 0);
//   MESHSIM_RETURN_IF_ERROR(LowerLayer(problem, *layer, Mesh{32, 8}, graph));
#ifndef MESHSIM_ALGORITHMS_GEMM_LAYER_H_
#define MESHSIM_ALGORITHMS_GEMM_LAYER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/dataflow.h"
#include "algorithms/layer_algorithm.h"

namespace meshsim::algorithms {

// `gemm` runs the FC GeMMs; `name` prefixes errors. `layer_slices` (indexed by FC layer:
// qkv, attn_out, ffn_up, ffn_down; empty = `slices` for all) gives each FC layer's S, 0 = the
// plugin's default. `stationary` forces every FC layer's stationary matrix (--dataflow os|ls|rs);
// empty = Table 1's choice per layer (AutoStationary).
std::unique_ptr<LayerAlgorithm> MakeGemmLayer(std::unique_ptr<Algorithm> gemm, std::string name,
                                              std::vector<int> layer_slices, int slices,
                                              std::optional<Stationary> stationary = {});

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_GEMM_LAYER_H_
