#include "workloads/layer.h"

#include <cstddef>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace meshsim::workloads {

LayerShape ShapeOf(const ModelShape& model, int64_t batch, int64_t seq, int element_bytes) {
  return {batch, seq, model.hidden, model.heads, model.ffn_dim(), element_bytes};
}

std::string LayerOp::label() const {
  const char* pass_name = "fwd";
  if (pass == core::Pass::kBwdData) pass_name = kind == LayerOpKind::kVector ? "bwd" : "bwd_data";
  if (pass == core::Pass::kBwdWeight) pass_name = "bwd_weight";
  return absl::StrCat(name, ".", pass_name);
}

std::vector<LayerOp> LayerOps(const LayerShape& sh) {
  const int64_t t = sh.tokens(), h = sh.hidden, f = sh.ffn_dim(), s = sh.seq, d = sh.head_dim();
  const int64_t e = sh.element_bytes;
  const int64_t heads_total = sh.batch * sh.heads;
  using core::Pass;
  const auto fc = [&](const char* name, int index, int64_t in, int64_t out, Pass pass) {
    LayerOp op{name, pass, LayerOpKind::kFc, index, in, out};
    if (pass == Pass::kFwd) op.m = t, op.n = out, op.k = in;
    if (pass == Pass::kBwdData) op.m = t, op.n = in, op.k = out;
    if (pass == Pass::kBwdWeight) op.m = in, op.n = out, op.k = t;
    return op;
  };
  const auto attention = [&](const char* name, Pass pass, int64_t m, int64_t n, int64_t k) {
    LayerOp op{name, pass, LayerOpKind::kAttention};
    op.count = heads_total, op.m = m, op.n = n, op.k = k;
    return op;
  };
  // Element-wise: `tenths` of the tensor's bytes in tenths (10 = the tensor, 15 = 1.5×).
  const auto vec = [&](const char* name, Pass pass, LayerTensor tensor, int64_t tenths) {
    LayerOp op{name, pass, LayerOpKind::kVector};
    op.tensor = tensor;
    const std::string n = name;
    op.reduction = n == "softmax" || n == "ln1" || n == "ln2";
    int64_t elems = 0;
    switch (tensor) {
      case LayerTensor::kHidden:
        elems = t * h;
        break;
      case LayerTensor::kFfn:
        elems = t * f;
        break;
      case LayerTensor::kScores:
        elems = heads_total * s * s;
        break;
      case LayerTensor::kNone:
        break;
    }
    op.bytes = elems * e * tenths / 10;
    return op;
  };
  const Pass fw = Pass::kFwd, bd = Pass::kBwdData, bw = Pass::kBwdWeight;
  const LayerTensor hid = LayerTensor::kHidden, ffn = LayerTensor::kFfn, sc = LayerTensor::kScores;
  // A dropout kernel reads one tensor and writes one, plus a 1-byte mask per element (forward
  // writes it, backward reads it): (2e + 1)/2 of the tensor's elements as kVector bytes.
  const auto dropout = [&](const char* name, Pass pass, LayerTensor tensor) {
    LayerOp op = vec(name, pass, tensor, 10);
    op.bytes = op.bytes / e * (2 * e + 1) / 2;
    return op;
  };
  std::vector<LayerOp> ops = {
      // Forward.
      vec("ln1", fw, hid, 10), fc("qkv", 0, h, 3 * h, fw), attention("attn_score", fw, s, s, d),
      vec("softmax", fw, sc, 10), attention("attn_context", fw, s, d, s),
      fc("attn_out", 1, h, h, fw), vec("residual1", fw, hid, 15), vec("ln2", fw, hid, 10),
      fc("ffn_up", 2, h, f, fw), vec("gelu", fw, ffn, 10), fc("ffn_down", 3, f, h, fw),
      vec("residual2", fw, hid, 15),
      // Backward.
      fc("ffn_down", 3, f, h, bd), fc("ffn_down", 3, f, h, bw), vec("gelu", bd, ffn, 15),
      fc("ffn_up", 2, h, f, bd), fc("ffn_up", 2, h, f, bw), vec("ln2", bd, hid, 15),
      vec("residual2", bd, hid, 15),  // dX1 = dY + ln2's input gradient
      fc("attn_out", 1, h, h, bd), fc("attn_out", 1, h, h, bw),
      attention("attn_context", bd, s, s, d),                            // dP = dO·Vᵀ
      attention("attn_context", bw, s, d, s),                            // dV = Pᵀ·dO
      vec("softmax", bd, sc, 15), attention("attn_score", bd, s, d, s),  // dQ = dS·K
      attention("attn_score", bw, s, d, s),                              // dK = dSᵀ·Q
      fc("qkv", 0, h, 3 * h, bd), fc("qkv", 0, h, 3 * h, bw), vec("ln1", bd, hid, 15),
      vec("residual1", bd, hid, 15),  // dX0 = dX1 + ln1's input gradient
  };
  // Each kernel goes right after (forward) or before (backward) the op whose output it works on.
  const auto insert_after = [&](const std::string& label, LayerOp op) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].label() == label) {
        ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(op));
        return;
      }
    }
  };
  const auto insert_before = [&](const std::string& label, LayerOp op) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].label() == label) {
        ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i), std::move(op));
        return;
      }
    }
  };
  if (sh.unfused_softmax) {
    // Forward: scores → scaled → masked → softmax; backward: softmax's gradient → masked → scaled.
    insert_before("softmax.fwd", vec("attn_scale", fw, sc, 10));
    insert_before("softmax.fwd", vec("attn_mask", fw, sc, 10));
    insert_after("softmax.bwd", vec("attn_mask", bd, sc, 10));
    insert_after("attn_mask.bwd", vec("attn_scale", bd, sc, 10));
  }
  if (sh.dropout) {
    insert_after("softmax.fwd", dropout("dropout_attn", fw, sc));
    insert_after("attn_out.fwd", dropout("dropout1", fw, hid));
    insert_after("ffn_down.fwd", dropout("dropout2", fw, hid));
    insert_before("ffn_down.bwd_data", dropout("dropout2", bd, hid));
    insert_before("attn_out.bwd_data", dropout("dropout1", bd, hid));
    insert_before("softmax.bwd", dropout("dropout_attn", bd, sc));
  }
  return ops;
}

double LayerFlops(int64_t batch, int64_t seq, int64_t hidden) {
  const double b = double(batch), s = double(seq), h = double(hidden);
  return 72.0 * b * s * h * h * (1.0 + s / (6.0 * h));
}

}  // namespace meshsim::workloads
