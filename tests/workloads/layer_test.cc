#include "workloads/layer.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace meshsim::workloads {
namespace {

TEST(LayerTest, LayerFlopsIsAtpTable2) {
  // ATP Table 2 "TFLOPs per layer" = 72·b·s·h²·(1 + s/(6h)) / 2^40 for b = 4, s = 2048.
  const double tera = std::ldexp(1.0, 40);
  EXPECT_DOUBLE_EQ(LayerFlops(4, 2048, 2048) / tera, 2.625);   // M1
  EXPECT_DOUBLE_EQ(LayerFlops(4, 2048, 4096) / tera, 9.75);    // M2
  EXPECT_DOUBLE_EQ(LayerFlops(4, 2048, 8192) / tera, 37.5);    // M3
  EXPECT_DOUBLE_EQ(LayerFlops(4, 2048, 12288) / tera, 83.25);  // M4
}

TEST(LayerTest, GemmFlopsSumToMegatronsFormula) {
  for (const LayerShape& s : {LayerShape{4, 2048, 2048, 16, 0, 2}, LayerShape{2, 64, 256, 8, 0, 2},
                              LayerShape{3, 100, 96, 4, 0, 4}}) {
    double fc = 0, attention = 0;
    for (const LayerOp& op : LayerOps(s)) {
      if (op.kind == LayerOpKind::kFc) fc += op.flops();
      if (op.kind == LayerOpKind::kAttention) attention += op.flops();
    }
    const double t = double(s.tokens()), h = double(s.hidden);
    // FC: 3 passes × 2·T·(3h² + h² + 4h² + 4h²) = 72·T·h²; attention: 3 × 2 × 2·b·s²·h.
    EXPECT_DOUBLE_EQ(fc, 72 * t * h * h);
    EXPECT_DOUBLE_EQ(attention, 12 * t * double(s.seq) * h);
    EXPECT_DOUBLE_EQ(fc + attention, LayerFlops(s.batch, s.seq, s.hidden));
  }
}

TEST(LayerTest, OpsInForwardThenBackwardOrderWithTheirShapes) {
  const LayerShape s{2, 64, 256, 8, 0, 2};  // T = 128, d = 32, f = 1024
  const std::vector<LayerOp> ops = LayerOps(s);
  std::vector<std::string> labels;
  for (const LayerOp& op : ops) labels.push_back(op.label());
  const std::vector<std::string> expected = {
      "ln1.fwd",
      "qkv.fwd",
      "attn_score.fwd",
      "softmax.fwd",
      "attn_context.fwd",
      "attn_out.fwd",
      "residual1.fwd",
      "ln2.fwd",
      "ffn_up.fwd",
      "gelu.fwd",
      "ffn_down.fwd",
      "residual2.fwd",
      "ffn_down.bwd_data",
      "ffn_down.bwd_weight",
      "gelu.bwd",
      "ffn_up.bwd_data",
      "ffn_up.bwd_weight",
      "ln2.bwd",
      "residual2.bwd",
      "attn_out.bwd_data",
      "attn_out.bwd_weight",
      "attn_context.bwd_data",
      "attn_context.bwd_weight",
      "softmax.bwd",
      "attn_score.bwd_data",
      "attn_score.bwd_weight",
      "qkv.bwd_data",
      "qkv.bwd_weight",
      "ln1.bwd",
      "residual1.bwd",
  };
  EXPECT_EQ(labels, expected);
  // ffn_up: forward T×f×h, dX T×h×f, dW h×f×T.
  EXPECT_EQ(ops[8].m, 128);
  EXPECT_EQ(ops[8].n, 1024);
  EXPECT_EQ(ops[8].k, 256);
  EXPECT_EQ(ops[15].m, 128);
  EXPECT_EQ(ops[15].n, 256);
  EXPECT_EQ(ops[15].k, 1024);
  EXPECT_EQ(ops[16].m, 256);
  EXPECT_EQ(ops[16].n, 1024);
  EXPECT_EQ(ops[16].k, 128);
  // QKᵀ: b·a = 16 GeMMs of s×s×d.
  EXPECT_EQ(ops[2].count, 16);
  EXPECT_EQ(ops[2].m, 64);
  EXPECT_EQ(ops[2].n, 64);
  EXPECT_EQ(ops[2].k, 32);
  // Element-wise bytes: softmax b·a·s²·e, GeLU T·f·e, residual add 1.5·T·h·e.
  EXPECT_EQ(ops[3].bytes, 16 * 64 * 64 * 2);
  EXPECT_EQ(ops[9].bytes, 128 * 1024 * 2);
  EXPECT_EQ(ops[6].bytes, 128 * 256 * 3);
}

TEST(LayerTest, UnfusedSoftmaxScalesAndMasksTheScoresInKernelsOfTheirOwn) {
  LayerShape s{2, 64, 256, 8, 0, 2};  // b·a = 16, s = 64: scores 16·64² = 65536 elements
  const std::vector<LayerOp> plain = LayerOps(s);
  s.unfused_softmax = true;
  s.dropout = true;  // Both: the attention dropout stays right after the softmax.
  const std::vector<LayerOp> ops = LayerOps(s);
  s.unfused_softmax = false;
  ASSERT_EQ(ops.size(), LayerOps(s).size() + 4);
  std::vector<std::string> labels;
  for (const LayerOp& op : ops) labels.push_back(op.label());
  const auto at = [&](const std::string& label) {
    return std::find(labels.begin(), labels.end(), label) - labels.begin();
  };
  // Forward: scores, scaled, masked, softmax; backward: softmax's gradient, masked, scaled, then
  // the score GeMM's gradients.
  EXPECT_EQ(at("attn_scale.fwd"), at("attn_score.fwd") + 1);
  EXPECT_EQ(at("attn_mask.fwd"), at("attn_score.fwd") + 2);
  EXPECT_EQ(at("softmax.fwd"), at("attn_score.fwd") + 3);
  EXPECT_EQ(at("dropout_attn.fwd"), at("softmax.fwd") + 1);
  EXPECT_EQ(at("attn_mask.bwd"), at("softmax.bwd") + 1);
  EXPECT_EQ(at("attn_scale.bwd"), at("softmax.bwd") + 2);
  EXPECT_EQ(at("attn_score.bwd_data"), at("softmax.bwd") + 3);
  // Each reads and writes the fp16 scores once: b·a·s²·e = 65536·2 kVector bytes, element-wise.
  int seen = 0;
  for (const LayerOp& op : ops) {
    if (op.name != "attn_scale" && op.name != "attn_mask") continue;
    ++seen;
    EXPECT_EQ(op.bytes, 65536 * 2) << op.label();
    EXPECT_EQ(op.kind, LayerOpKind::kVector);
    EXPECT_FALSE(op.reduction);
    EXPECT_EQ(op.tensor, LayerTensor::kScores);
  }
  EXPECT_EQ(seen, 4);
  EXPECT_EQ(plain.size(), 30u);  // 12 forward, 18 backward
}

TEST(LayerTest, DropoutAddsMegatronsThreeMaskedKernelsEachWay) {
  LayerShape s{2, 64, 256, 8, 0, 2};  // T = 128, b·a = 16, s = 64
  const std::vector<LayerOp> plain = LayerOps(s);
  s.dropout = true;
  const std::vector<LayerOp> ops = LayerOps(s);
  ASSERT_EQ(ops.size(), plain.size() + 6);
  std::vector<std::string> labels;
  double flops = 0, plain_flops = 0;
  for (const LayerOp& op : ops) labels.push_back(op.label()), flops += op.flops();
  for (const LayerOp& op : plain) plain_flops += op.flops();
  EXPECT_EQ(flops, plain_flops);  // Dropout computes no GeMM flops.
  // Each kernel right after the op whose output it masks (forward), right before the op that
  // consumes its gradient (backward).
  const auto next = [&](const std::string& a, const std::string& b) {
    for (size_t i = 0; i + 1 < labels.size(); ++i) {
      if (labels[i] == a) return labels[i + 1] == b;
    }
    return false;
  };
  EXPECT_TRUE(next("softmax.fwd", "dropout_attn.fwd"));
  EXPECT_TRUE(next("dropout_attn.fwd", "attn_context.fwd"));
  EXPECT_TRUE(next("attn_out.fwd", "dropout1.fwd"));
  EXPECT_TRUE(next("dropout1.fwd", "residual1.fwd"));
  EXPECT_TRUE(next("ffn_down.fwd", "dropout2.fwd"));
  EXPECT_TRUE(next("dropout2.fwd", "residual2.fwd"));
  EXPECT_EQ(labels[12 + 3], "dropout2.bwd");  // After 12 + 3 forward ops: the backward's first.
  EXPECT_TRUE(next("dropout2.bwd", "ffn_down.bwd_data"));
  EXPECT_TRUE(next("dropout1.bwd", "attn_out.bwd_data"));
  EXPECT_TRUE(next("dropout_attn.bwd", "softmax.bwd"));
  // Bytes: x (e) and y (e) plus a 1-byte mask per element, as kVector bytes (streamed twice):
  // (2e + 1)/2 · elements. Scores: b·a·s² = 16·64² = 65536 → 163840; hidden: T·h = 32768 → 81920.
  for (const LayerOp& op : ops) {
    if (op.name == "dropout_attn") {
      EXPECT_EQ(op.bytes, 163840) << op.label();
    }
    if (op.name == "dropout1" || op.name == "dropout2") {
      EXPECT_EQ(op.bytes, 81920) << op.label();
    }
    if (op.name.rfind("dropout", 0) == 0) {
      EXPECT_EQ(op.kind, LayerOpKind::kVector);
      EXPECT_FALSE(op.reduction);  // Element-wise: stack.kernel.pointwise_efficiency.
      EXPECT_EQ(op.tensor, op.name == "dropout_attn" ? LayerTensor::kScores : LayerTensor::kHidden);
    }
  }
}

}  // namespace
}  // namespace meshsim::workloads
