// Transformer models by shape and the FC layers of one block — data, no timing.
//
// A block has four FC layers, Y[T×O] = X[T×I]·W[I×O] with T = batch·seq tokens:
//   qkv       I = H, O = 3H      (column-parallel in Megatron)
//   attn_out  I = H, O = H       (row-parallel)
//   ffn_up    I = H, O = F       (column-parallel; F = 4H unless given)
//   ffn_down  I = F, O = H       (row-parallel)
// Training runs each forward, then its backward-data and backward-weight GeMMs (MeshSlice
// Table 1; shapes in reference/meshslice-calibration.md), 72·T·H² flops per block for F = 4H.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(ModelShape gpt3, FindModel("gpt3"));
//   std::vector<FcLayerShape> layers = BlockFcLayers(gpt3, /*batch=*/128, /*seq=*/2048);
#ifndef MESHSIM_WORKLOADS_TRANSFORMER_H_
#define MESHSIM_WORKLOADS_TRANSFORMER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace meshsim::workloads {

struct ModelShape {
  std::string name;
  std::string description;
  int64_t hidden = 0;  // H
  int64_t heads = 0;
  int64_t ffn = 0;     // F (0 = 4H)
  int64_t layers = 0;  // Transformer blocks.
  // 0: a plain stack of identical layers. n > 0: a U-shaped stack over n resolution levels
  // (workloads/stack.h), the resharding paper's U-Transformer.
  int unet_levels = 0;

  int64_t ffn_dim() const { return ffn > 0 ? ffn : 4 * hidden; }
};

struct FcLayerShape {
  std::string name;
  int index = 0;
  int64_t tokens = 0, in = 0, out = 0;
  bool column_parallel = true;
};

// Built-in models, in display order: gpt3, megatron-nlg, atp-m1 … atp-m4, gpt-2.6b,
// u-transformer.
const std::vector<ModelShape>& Models();

// NotFound naming the known models.
absl::StatusOr<ModelShape> FindModel(const std::string& name);

// A model from config keys (hidden, heads, ffn, layers); InvalidArgument naming the key when a
// value is not positive or hidden is not divisible by heads.
absl::StatusOr<ModelShape> CustomModel(int64_t hidden, int64_t heads, int64_t ffn, int64_t layers);

// The four FC layers of one block for batch × seq tokens, in model order.
std::vector<FcLayerShape> BlockFcLayers(const ModelShape& model, int64_t batch, int64_t seq);

}  // namespace meshsim::workloads

#endif  // MESHSIM_WORKLOADS_TRANSFORMER_H_
