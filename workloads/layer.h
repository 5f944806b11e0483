// One whole transformer layer (attention block + feed-forward block) as the list of its ops,
// forward then backward — data, no timing. Layer plugins (algorithms/layer_algorithm.h) shard
// these ops over a device mesh; this file only says what the layer computes.
//
// Shapes, for batch b, sequence s, hidden h, heads a (head size d = h/a), FFN f, tokens T = b·s,
// element bytes e (fp16: 2):
//   FC GeMMs Y[T×O] = X[T×I]·W[I×O]:   qkv (I = h, O = 3h), attn_out (h, h), ffn_up (h, f),
//                                       ffn_down (f, h).
//     forward      m = T, n = O, k = I
//     backward dX  dX = dY·Wᵀ:  m = T, n = I, k = O          (Pass::kBwdData)
//     backward dW  dW = Xᵀ·dY:  m = I, n = O, k = T          (Pass::kBwdWeight)
//   Attention core, b·a independent GeMMs per op ("count"), each per head:
//     attn_score   S = Q·Kᵀ:  s×s×d        backward dQ = dS·K: s×d×s (kBwdData),
//                                                    dK = dSᵀ·Q: s×d×s (kBwdWeight)
//     attn_context O = P·V:   s×d×s        backward dP = dO·Vᵀ: s×s×d (kBwdData),
//                                                    dV = Pᵀ·dO: s×d×s (kBwdWeight)
//   Element-wise ops (HBM-bound; `bytes` is the size of the tensor a kVector op streams, see
//   accel/chip_model.h: one read + one write of `bytes`):
//     ln1, ln2        LayerNorm over T×h:        fwd T·h·e,         bwd 1.5·T·h·e (x, dy → dx)
//     softmax         over b·a·s·s scores:       fwd b·a·s²·e,      bwd 1.5·b·a·s²·e (y, dy → dx)
//     gelu            over T×f:                  fwd T·f·e,         bwd 1.5·T·f·e (x, dy → dx)
//     residual1, 2    adds over T×h:             fwd 1.5·T·h·e (two reads, one write); bwd the
//                                                add of the two gradient streams, 1.5·T·h·e
//   With `dropout` (Megatron-LM's GPT layer: attention dropout on the probabilities, hidden
//   dropout on each block's output before its residual add; unfused, as the papers' baselines
//   ran them), three more element-wise ops, each with a 1-byte mask per element:
//     dropout_attn    over b·a·s² probabilities: fwd x → y + mask, bwd dy + mask → dx,
//                     (2e + 1)/2 · b·a·s² bytes each way (a kVector op streams bytes twice)
//     dropout1, 2     over T×h (after attn_out, after ffn_down): (2e + 1)/2 · T·h each
//   The dropout probability does not change what the kernels move, so it is not modelled.
//   With `unfused_softmax` (an eager program without fused kernels: stack.kernel.fused_softmax
//   = 0), the attention's 1/√d scaling and causal mask are two more element-wise kernels over
//   the b·a·s² scores before the softmax, and their gradients two after its gradient:
//     attn_scale, attn_mask   fwd b·a·s²·e each,  bwd b·a·s²·e each
//   Otherwise they are folded into the softmax kernel, as a fused kernel or XLA runs them.
//   Ignored: biases, the LayerNorm statistics' reductions, the LayerNorm weight gradients, and
//   the copies an eager program makes to split and merge the heads.
//
// Order. Forward: ln1, qkv, attn_score, {attn_scale, attn_mask}, softmax, [dropout_attn],
// attn_context, attn_out, [dropout1], residual1, ln2, ffn_up, gelu, ffn_down, [dropout2],
// residual2. Backward, reverse order; each FC layer's dX GeMM comes before its dW GeMM, each
// attention GeMM's kBwdData before its kBwdWeight: [dropout2], ffn_down (dX, dW), gelu, ffn_up
// (dX, dW), ln2, residual2 (dX1 = dY + ln2's input gradient), [dropout1], attn_out (dX, dW),
// attn_context (dP, dV), [dropout_attn], softmax, {attn_mask, attn_scale}, attn_score (dQ, dK),
// qkv (dX, dW), ln1, residual1. ([…]: with dropout; {…}: with unfused_softmax.)
//
// Flops. The GeMMs sum to 3·(24·T·h² + 4·T·s·h) for f = 4h — forward 2·T·(3h² + h² + 4h² + 4h²)
// + 2·(2·b·a·s²·d), backward twice that — which is Megatron-LM's count without activation
// recomputation (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", SC'21, §5.1, without the recomputation term and the logit layer):
//   LayerFlops(b, s, h) = 72·b·s·h²·(1 + s/(6h)).
// The ATP paper (§5) counts flops with this formula; its Table 2 "TFLOPs per layer" is it for
// b = 4, s = 2048 divided by 2^40 (M1: 2.625, M2: 9.75, M3: 37.5, M4: 83.25).
//
// Example:
//   LayerShape shape{.batch = 4, .seq = 2048, .hidden = 4096, .heads = 32, .ffn = 16384};
//   for (const LayerOp& op : LayerOps(shape)) total += op.flops();   // == LayerFlops(4, 2048,
//   4096)
#ifndef MESHSIM_WORKLOADS_LAYER_H_
#define MESHSIM_WORKLOADS_LAYER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/op.h"
#include "workloads/transformer.h"

namespace meshsim::workloads {

struct LayerShape {
  int64_t batch = 1;   // b, sequences
  int64_t seq = 2048;  // s
  int64_t hidden = 0;  // h
  int64_t heads = 1;   // a
  int64_t ffn = 0;     // f (0 = 4h)
  int element_bytes = 2;
  bool dropout = false;          // Megatron-LM's attention and hidden dropout kernels (banner).
  bool unfused_softmax = false;  // The scaling and the mask as kernels of their own (banner).

  int64_t tokens() const { return batch * seq; }
  int64_t ffn_dim() const { return ffn > 0 ? ffn : 4 * hidden; }
  int64_t head_dim() const { return hidden / heads; }
};

// The layer shape of `model` for batch × seq.
LayerShape ShapeOf(const ModelShape& model, int64_t batch, int64_t seq, int element_bytes);

// What a layer op computes.
enum class LayerOpKind {
  kFc,         // An FC GeMM: one GeMM of m×n×k (fc_index 0..3, fc_in/fc_out the layer's I/O).
  kAttention,  // `count` independent GeMMs of m×n×k each (one per sequence and head).
  kVector,     // An element-wise pass over `bytes`.
};

// The tensor an element-wise op works on, i.e. how a sharding divides its bytes.
enum class LayerTensor {
  kNone,
  kHidden,  // T×h activations (LayerNorms, residual adds).
  kFfn,     // T×f activations (GeLU).
  kScores,  // b·a·s² attention scores (softmax, scaling, mask, attention dropout).
};

struct LayerOp {
  std::string name;  // "qkv", "attn_score", "softmax", …
  core::Pass pass = core::Pass::kFwd;
  LayerOpKind kind = LayerOpKind::kFc;
  int fc_index = -1;              // kFc: 0 qkv, 1 attn_out, 2 ffn_up, 3 ffn_down.
  int64_t fc_in = 0, fc_out = 0;  // kFc: the layer's I and O.
  int64_t count = 1;              // Independent GeMMs (kAttention: b·a).
  int64_t m = 0, n = 0, k = 0;    // One GeMM's shape.
  int64_t bytes = 0;              // kVector.
  LayerTensor tensor = LayerTensor::kNone;
  bool reduction = false;  // kVector: a row reduction (softmax, LayerNorm), not element-wise.

  // "qkv.fwd", "qkv.bwd_data", "qkv.bwd_weight", "softmax.bwd".
  std::string label() const;
  // 2·count·m·n·k for GeMMs, 0 for element-wise ops.
  double flops() const {
    return kind == LayerOpKind::kVector ? 0.0
                                        : 2.0 * double(count) * double(m) * double(n) * double(k);
  }
};

// The layer's ops, forward then backward, in the order of the banner. Preconditions: every
// dimension positive, heads divides hidden. Cost: O(1) (30 ops; 6 more with dropout, 4 more
// with unfused_softmax).
std::vector<LayerOp> LayerOps(const LayerShape& shape);

// Megatron-LM's flops of one layer without activation recomputation (banner):
// 72·b·s·h²·(1 + s/(6h)).
double LayerFlops(int64_t batch, int64_t seq, int64_t hidden);

}  // namespace meshsim::workloads

#endif  // MESHSIM_WORKLOADS_LAYER_H_
