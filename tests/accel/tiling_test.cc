// PlanGemm and SystolicTime: tiles fit the scratchpad, are aligned to the arrays, keep padding
// small and give every core work; the systolic equation holds in closed form.
#include "accel/tiling.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace meshsim::accel {
namespace {

ChipConfig Preset(const std::string& name) {
  auto c = ChipPreset(name);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

TEST(PlanGemmTest, Tpuv4LargeSquare) {
  const ChipConfig chip = Preset("tpuv4");
  const GemmTiling t = PlanGemm(chip, 8192, 8192, 8192);
  // Square cap: largest multiple of 128 with 12·T² ≤ 64 MiB is 2304; ⌈8192/2304⌉ = 4 tiles of
  // round_up(2048, 128) = 2048. 16 tiles → 8 per core; the budget allows tk ≤ 3072 (3 k-tiles),
  // 32 steps per core need 4 k-tiles → tk = 2048.
  EXPECT_EQ(t.tm, 2048);
  EXPECT_EQ(t.tn, 2048);
  EXPECT_EQ(t.tk, 2048);
  EXPECT_EQ(t.tiles_m, 4);
  EXPECT_EQ(t.tiles_n, 4);
  EXPECT_EQ(t.tiles_k, 4);
  // 2·(2048² + 2048²)·2 + 4·2048² = 48 MiB.
  EXPECT_EQ(t.scratchpad_bytes_used, int64_t{48} << 20);
}

TEST(PlanGemmTest, SmallGemmIsSplitOverBothCores) {
  const ChipConfig chip = Preset("tpuv4");
  // 2048³ fits one 2048×2048 tile; n is split so both cores work and each still streams 2048
  // rows per weight block.
  const GemmTiling t = PlanGemm(chip, 2048, 2048, 2048);
  EXPECT_EQ(t.tm, 2048);
  EXPECT_EQ(t.tn, 1024);
  EXPECT_EQ(t.output_tiles(), 2);
  // One tile per core: 32 steps would need 32 k-tiles, the floor tk ≥ 4·128 allows 4.
  EXPECT_EQ(t.tk, 512);
  EXPECT_EQ(t.tiles_k, 4);
}

TEST(PlanGemmTest, TinyGemmIsOneWholeTile) {
  const ChipConfig chip = Preset("tpuv4");
  const GemmTiling t = PlanGemm(chip, 5, 7, 3);
  EXPECT_EQ(t.tm, 5);
  EXPECT_EQ(t.tn, 7);
  EXPECT_EQ(t.tk, 3);
  EXPECT_EQ(t.tiles_m * t.tiles_n * t.tiles_k, 1);
}

TEST(PlanGemmTest, SkinnyGemmKeepsTheSmallDimensionWhole) {
  const ChipConfig chip = Preset("tpuv4");
  const GemmTiling t = PlanGemm(chip, 8192, 8, 8192);
  EXPECT_EQ(t.tn, 8);
  EXPECT_EQ(t.tiles_n, 1);
  EXPECT_EQ(t.tm, 2048);
  // 2 tiles per core; 16 k-tiles of 512 give each core 32 pipeline steps.
  EXPECT_EQ(t.tk, 512);
  EXPECT_EQ(t.tiles_k, 16);
}

// Invariants over many shapes and all presets.
TEST(PlanGemmTest, TilesFitAreAlignedAndCoverTheMatrix) {
  const std::vector<int64_t> dims = {1,    3,    8,    100,  127,  128,   129,   200,   1000,
                                     1536, 2304, 3000, 4096, 8192, 12288, 49152, 100000};
  for (const std::string name : {"tpuv4", "a100", "v100"}) {
    const ChipConfig chip = Preset(name);
    const int64_t d = chip.mxu_dim;
    for (int64_t m : dims) {
      for (int64_t n : dims) {
        for (int64_t k : dims) {
          SCOPED_TRACE(name + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                       std::to_string(k));
          const GemmTiling t = PlanGemm(chip, m, n, k);
          // 2·(tm·tk + tk·tn)·e + 4·tm·tn ≤ scratchpad.
          const int64_t used =
              2 * (t.tm * t.tk + t.tk * t.tn) * chip.element_bytes + 4 * t.tm * t.tn;
          ASSERT_EQ(t.scratchpad_bytes_used, used);
          ASSERT_LE(used, chip.scratchpad_bytes);
          // Counts cover the matrix exactly: (tiles−1)·t < x ≤ tiles·t.
          for (auto [x, tile, count] :
               {std::tuple{m, t.tm, t.tiles_m}, std::tuple{n, t.tn, t.tiles_n},
                std::tuple{k, t.tk, t.tiles_k}}) {
            ASSERT_GE(tile, 1);
            ASSERT_EQ(count, CeilDiv(x, tile));
            // Multiples of the array size when the dimension is at least that large.
            if (x >= d) {
              ASSERT_EQ(tile % d, 0) << "tile " << tile;
            }
            // Balanced: padding of the last tile is less than one tile and, when there are
            // several tiles, less than d per tile plus one tile's rounding.
            ASSERT_LT(count * tile - x, tile);
            if (count > 1) {
              ASSERT_LT(count * tile - x, count * d);
            }
          }
          // Every core gets an output tile when the aligned tiles allow it.
          if (t.output_tiles() < chip.cores) {
            ASSERT_TRUE(t.tm <= d && t.tn <= d) << t.tm << " " << t.tn;
          }
        }
      }
    }
  }
}

TEST(PlanGemmTest, TinyScratchpadFallsBackToUnalignedTiles) {
  ChipConfig chip = Preset("tpuv4");
  chip.scratchpad_bytes = 4096;  // Not even a 128×128 tile fits: 12·18² ≤ 4096 < 12·19².
  const GemmTiling t = PlanGemm(chip, 1000, 1000, 1000);
  EXPECT_LE(t.scratchpad_bytes_used, 4096);
  EXPECT_EQ(t.tm, 18);
  EXPECT_EQ(t.tn, 18);
}

TEST(SystolicTest, ClosedForm) {
  const ChipConfig chip = Preset("tpuv4");
  // cycles = ⌈⌈tk/d⌉·⌈tn/d⌉ / mxus⌉ · (max(tm, d) + d):
  // 2048³: ⌈16·16/4⌉ = 64 passes of 2048 + 128 cycles.
  EXPECT_EQ(SystolicCycles(chip, 2048, 2048, 2048), 64 * (2048 + 128));
  EXPECT_EQ(SystolicTime(chip, 2048, 2048, 2048), core::ComputeTime(64.0 * 2176, 1.0376e9));
  // Ragged tk = tn = 129 pads to 2·2 = 4 blocks, one per array: 1 pass.
  EXPECT_EQ(SystolicCycles(chip, 1000, 129, 129), 1000 + 128);
  // 5 blocks on 4 arrays: the busiest does 2 passes.
  EXPECT_EQ(SystolicCycles(chip, 1000, 640, 128), 2 * (1000 + 128));
  // tm < d: the double-buffered weight shift-in (d cycles) is exposed: max(8, 128) + 128.
  EXPECT_EQ(SystolicCycles(chip, 8, 128, 128), 256);
}

TEST(SystolicTest, PaddingAndFillDrainLowerArrayUtilization) {
  const ChipConfig chip = Preset("tpuv4");
  // Utilization = useful MACs / (arrays · d² · cycles).
  const auto util = [&](int64_t tm, int64_t tn, int64_t tk) {
    return double(tm) * tn * tk /
           (double(chip.mxus) * chip.mxu_dim * chip.mxu_dim * SystolicCycles(chip, tm, tn, tk));
  };
  // 2048/(2048+128) = 0.941 for a full tile.
  EXPECT_NEAR(util(2048, 2048, 2048), 2048.0 / 2176.0, 1e-12);
  EXPECT_LT(util(512, 2048, 2048), util(2048, 2048, 2048));  // Shorter streams.
  EXPECT_LT(util(2048, 200, 2048), util(2048, 256, 2048));   // Padding of tn.
  EXPECT_LT(util(2048, 128, 128), util(2048, 256, 256));     // 1 block on 4 arrays.
}

}  // namespace
}  // namespace meshsim::accel
