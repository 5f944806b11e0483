// A model as the stack of layers a pipeline partitions into stages: each layer's shape for one
// microbatch, the skip connections, parameters, activation memory and flops — data, no timing.
//
// Plain models (ModelShape::unet_levels = 0, e.g. gpt-2.6b): `layers` identical transformer
// layers, each feeding the next.
//
// U-shaped models (unet_levels = n > 0, the resharding paper's U-Transformer, MLSys'23 §5.2):
// layer i of L sits at resolution level ℓ(i) = min(i, L−1−i, n−1). Each level down halves both
// spatial dimensions and doubles the channels, as a U-Net does, so at level ℓ a layer sees
//   tokens s/4^ℓ, hidden h·2^ℓ, heads a·2^ℓ (the head size stays h/a), FFN 4·h·2^ℓ,
// and its FC flops 72·b·(s/4^ℓ)·(h·2^ℓ)² are those of the top level: the levels are balanced
// except for the attention term. Skip connections: layer i's output also feeds layer L−1−i for
// every i < L−1−i−1 (the U's long skips; the middle layer's successor is its plain input).
// Requires 4^(n−1) | s. The paper's U-Net layers are convolutions followed by attention; this
// stand-in models each as a transformer layer (workloads/layer.h) on the level's tokens.
//
// Memory per layer and microbatch (no activation recomputation), element bytes e, T = b·s:
//   saved activations = e·(8·T·h + 2·T·f + b·a·s²): the inputs that the backward pass reads —
//   ln1, qkv, attn_out, ln2 and ffn_up inputs (5·T·h), Q and K (2·T·h), V (T·h), the softmax
//   output P (b·a·s²), the GeLU and ffn_down inputs (2·T·f).
//   (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", 2022,
//   count 34·s·b·h + 5·a·s²·b bytes in fp16 including dropout masks; this is 32·s·b·h + 2·a·s²·b
//   for f = 4h without dropout.)
//   parameters = 4·h² + 2·h·f (QKV, output, two FFN matrices; biases and LayerNorms ignored);
//   weights, gradients and Adam states take 16 bytes per parameter in mixed precision (ZeRO,
//   Rajbhandari et al. 2020, §3.1: 2 + 2 + 12).
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(LayerStack stack, StackOf(u_transformer, 8, 2048, 4));
//   stack.layers[3].seq;   // 2048 / 64 = 32 tokens at level 3
//   stack.skips[0];        // {0, 12}
#ifndef MESHSIM_WORKLOADS_STACK_H_
#define MESHSIM_WORKLOADS_STACK_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/layer.h"
#include "workloads/transformer.h"

namespace meshsim::workloads {

// Layer `from`'s output also feeds layer `to` (to > from + 1).
struct Skip {
  int from = 0;
  int to = 0;
};

struct LayerStack {
  std::vector<LayerShape> layers;  // Shapes for one microbatch.
  std::vector<Skip> skips;         // Ascending `from`.
};

// The stack of `model` for microbatches of `batch` sequences of `seq` tokens. InvalidArgument
// (naming --seq) when a U-shaped model's deepest level would not have a whole number of tokens.
absl::StatusOr<LayerStack> StackOf(const ModelShape& model, int64_t batch, int64_t seq,
                                   int element_bytes);

// Bytes of the activation tensor [batch, seq, hidden] that leaves layer `shape`.
int64_t ActivationBytes(const LayerShape& shape);
// Bytes a layer saves for its backward pass, per microbatch (banner).
int64_t SavedActivationBytes(const LayerShape& shape);
// Parameters of one layer: 4h² + 2hf.
int64_t LayerParameters(const LayerShape& shape);
// Bytes of weights, gradients and optimizer states per parameter (mixed-precision Adam).
inline constexpr int64_t kTrainingBytesPerParameter = 16;

}  // namespace meshsim::workloads

#endif  // MESHSIM_WORKLOADS_STACK_H_
