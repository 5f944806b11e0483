#include "workloads/transformer.h"

#include "gtest/gtest.h"

namespace meshsim::workloads {
namespace {

TEST(TransformerTest, BuiltInModelsHaveTheirPublishedShapes) {
  const ModelShape gpt3 = *FindModel("gpt3");
  EXPECT_EQ(gpt3.hidden, 12288);
  EXPECT_EQ(gpt3.heads, 96);
  EXPECT_EQ(gpt3.layers, 96);
  EXPECT_EQ(FindModel("megatron-nlg")->hidden, 20480);
  EXPECT_EQ(FindModel("megatron-nlg")->layers, 105);
  for (auto [name, h, heads] : {std::tuple{"atp-m1", 2048, 16}, std::tuple{"atp-m2", 4096, 32},
                                std::tuple{"atp-m3", 8192, 64}, std::tuple{"atp-m4", 12288, 96}}) {
    EXPECT_EQ(FindModel(name)->hidden, h) << name;
    EXPECT_EQ(FindModel(name)->heads, heads) << name;
  }
  EXPECT_EQ(FindModel("gpt5").status().code(), absl::StatusCode::kNotFound);
}

TEST(TransformerTest, BlockFcLayersCarry72TH2Flops) {
  // Training does 3 GeMMs of 2·T·I·O flops per layer: Σ = 6·T·(H·3H + H·H + H·4H + 4H·H)
  // = 6·T·12H² = 72·T·H² (reference/meshslice-calibration.md).
  const ModelShape gpt3 = *FindModel("gpt3");
  const auto layers = BlockFcLayers(gpt3, 128, 2048);
  ASSERT_EQ(layers.size(), 4u);
  double flops = 0;
  for (const FcLayerShape& l : layers) flops += 3 * 2.0 * l.tokens * l.in * l.out;
  const double t = 128.0 * 2048, h = 12288;
  EXPECT_DOUBLE_EQ(flops, 72 * t * h * h);
  EXPECT_EQ(layers[0].name, "qkv");
  EXPECT_EQ(layers[0].out, 3 * 12288);
  EXPECT_TRUE(layers[0].column_parallel);
  EXPECT_FALSE(layers[3].column_parallel);
  EXPECT_EQ(layers[3].in, 4 * 12288);
}

TEST(TransformerTest, CustomModelsAreValidated) {
  EXPECT_TRUE(CustomModel(4096, 32, 0, 4).ok());
  EXPECT_EQ(CustomModel(4096, 0, 0, 4).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CustomModel(4001, 32, 0, 4).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace meshsim::workloads
