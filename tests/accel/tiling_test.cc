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
  // Square cap with two fp32 output buffers (core.output_buffers = 2): the largest multiple of
  // 128 with (2·2·2 + 2·4)·T² = 16·T² ≤ 64 MiB is 2048; ⌈8192/2048⌉ = 4 tiles of 2048. 16 tiles
  // → 8 per core; the budget allows tk ≤ (64 MiB − 32 MiB) / (2·2·4096) = 2048, and 32 steps per
  // core need 4 k-tiles → tk = 2048.
  EXPECT_EQ(t.tm, 2048);
  EXPECT_EQ(t.tn, 2048);
  EXPECT_EQ(t.tk, 2048);
  EXPECT_EQ(t.tiles_m, 4);
  EXPECT_EQ(t.tiles_n, 4);
  EXPECT_EQ(t.tiles_k, 4);
  // 2·(2048² + 2048²)·2 + 2·4·2048² = 64 MiB.
  EXPECT_EQ(t.scratchpad_bytes_used, int64_t{64} << 20);
}

// Step 3b: 1536×6144 first splits into 1 × 3 tiles of 1536×2048, two on one core and one on
// the other. Per-core runs ⌈tiles/2⌉·OrientedSystolicTime(tm, tn, 8192) in cycles (64 k-blocks,
// 4 MXUs): 1×3 → 2·256·1664 = 851968; 1×4 (1536×1536) → 2·192·1664 = 638976; 2×3 (768×2048,
// held with the 2048 columns streamed) → 3·96·2176 = 626688, the minimum.
TEST(PlanGemmTest, OddTileCountIsRebalancedOverTheCores) {
  const ChipConfig chip = Preset("tpuv4");
  const GemmTiling t = PlanGemm(chip, 1536, 6144, 8192);
  EXPECT_EQ(t.tiles_m, 2);
  EXPECT_EQ(t.tiles_n, 3);
  EXPECT_EQ(t.tm, 768);
  EXPECT_EQ(t.tn, 2048);
  EXPECT_EQ(t.output_tiles() % chip.cores, 0);
}

// The faster stationary operand: a 1024×2048 tile streams 1024 rows through 64·16/4 = 256 block
// passes of 1024 + 128 cycles = 294912 cycles; held the other way it streams 2048 columns through
// 64·8/4 = 128 passes of 2048 + 128 cycles = 278528 cycles.
TEST(PlanGemmTest, OrientedSystolicTimeHoldsTheFasterOperand) {
  const ChipConfig chip = Preset("tpuv4");
  EXPECT_EQ(SystolicTime(chip, 1024, 2048, 8192), core::ComputeTime(294912, 1.0376e9));
  EXPECT_EQ(OrientedSystolicTime(chip, 1024, 2048, 8192), core::ComputeTime(278528, 1.0376e9));
  EXPECT_EQ(OrientedSystolicTime(chip, 2048, 1024, 8192), core::ComputeTime(278528, 1.0376e9));
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
  for (const std::string name : {"tpuv4", "a100", "v100", "h100"}) {
    const ChipConfig chip = Preset(name);
    const int64_t d = chip.mxu_dim;
    const int64_t acc = chip.accumulator_bytes;
    for (int64_t m : dims) {
      for (int64_t n : dims) {
        for (int64_t k : dims) {
          SCOPED_TRACE(name + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                       std::to_string(k));
          const GemmTiling t = PlanGemm(chip, m, n, k);
          // 2·(tm·tk + tk·tn)·e + output_buffers·4·tm·tn ≤ scratchpad, or, with the accumulator
          // in registers (GPU presets), 2·(tm·tk + tk·tn)·e ≤ scratchpad and 4·tm·tn ≤ registers.
          const int64_t used = 2 * (t.tm * t.tk + t.tk * t.tn) * chip.element_bytes +
                               (acc == 0 ? chip.output_buffers * 4 * t.tm * t.tn : 0);
          ASSERT_EQ(t.scratchpad_bytes_used, used);
          ASSERT_LE(used, chip.scratchpad_bytes);
          if (acc > 0) {
            ASSERT_LE(4 * t.tm * t.tn, acc);
          }
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
  // Not even a 128×128 tile fits: with two output buffers 16·16² ≤ 4096 < 16·17².
  chip.scratchpad_bytes = 4096;
  const GemmTiling t = PlanGemm(chip, 1000, 1000, 1000);
  EXPECT_LE(t.scratchpad_bytes_used, 4096);
  EXPECT_EQ(t.tm, 16);
  EXPECT_EQ(t.tn, 16);
}

TEST(PlanGemmTest, GpuAccumulatorInRegistersSetsTheTileSide) {
  const ChipConfig chip = Preset("a100");
  const GemmTiling t = PlanGemm(chip, 4096, 4096, 4096);
  // 4·T² ≤ 128 KiB → T = 181 → 176 (multiple of 16); ⌈4096/176⌉ = 24 tiles of
  // round_up(⌈4096/24⌉, 16) = 176. tk: 2·(176 + 176)·tk·2 ≤ 164 KiB → tk ≤ 119 → 112.
  EXPECT_EQ(t.tm, 176);
  EXPECT_EQ(t.tn, 176);
  EXPECT_EQ(t.tiles_m, 24);
  EXPECT_EQ(t.tk, 112);
  EXPECT_EQ(t.scratchpad_bytes_used, 2 * (176 * 112 + 112 * 176) * 2);
}

// Two-level plans: waves cover the tiles once, panels fit L2, traffic adds up.
TEST(PlanL2GemmTest, WavesCoverTheTilesAndPanelsFitL2) {
  const std::vector<int64_t> dims = {1, 8, 100, 129, 1000, 3000, 8192, 12288};
  for (const std::string name : {"a100", "v100", "h100"}) {
    const ChipConfig chip = Preset(name);
    const int64_t e = chip.element_bytes;
    for (int64_t m : dims) {
      for (int64_t n : dims) {
        for (int64_t k : {int64_t{1}, int64_t{100}, int64_t{8192}}) {
          SCOPED_TRACE(name + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                       std::to_string(k));
          const L2GemmPlan p = PlanL2Gemm(chip, m, n, k);
          const GemmTiling& t = p.sm;
          ASSERT_GE(p.wave_tiles, 1);
          ASSERT_LE(p.wave_tiles, chip.cores);
          // Waves: consecutive raster ranges of wave_tiles (the last may be partial).
          ASSERT_EQ(int64_t(p.waves.size()), CeilDiv(t.output_tiles(), p.wave_tiles));
          int64_t next = 0, hbm = m * n * e;
          for (const Wave& w : p.waves) {
            ASSERT_EQ(w.first_tile, next);
            ASSERT_GE(w.tiles, 1);
            ASSERT_LE(w.tiles, p.wave_tiles);
            ASSERT_LE(w.rows, m);
            ASSERT_LE(w.cols, n);
            next += w.tiles;
            hbm += (w.rows + w.cols) * k * e;
          }
          ASSERT_EQ(next, t.output_tiles());
          // hbm_bytes = Σ_w (rows_w + cols_w)·k·e + m·n·e.
          ASSERT_EQ(p.hbm_bytes, hbm);
          // Double-buffered panels fit L2; steps = ⌈tiles_k / kt⌉ ≥ min(16, tiles_k).
          ASSERT_LE(p.l2_bytes_used, chip.l2_bytes);
          ASSERT_EQ(p.steps, CeilDiv(t.tiles_k, p.k_tiles_per_step));
          ASSERT_GE(p.steps, std::min(kMinL2StepsPerWave, t.tiles_k));
          // The raster visits every (i, j) exactly once.
          if (t.output_tiles() <= 4096) {
            std::vector<int> seen(t.output_tiles(), 0);
            for (int64_t r = 0; r < t.output_tiles(); ++r) {
              int64_t i, j;
              p.TileAt(r, &i, &j);
              ASSERT_TRUE(i >= 0 && i < t.tiles_m && j >= 0 && j < t.tiles_n) << i << "," << j;
              ++seen[i * t.tiles_n + j];
            }
            for (int s : seen) ASSERT_EQ(s, 1);
          }
        }
      }
    }
  }
}

TEST(PlanL2GemmTest, SmallL2ShrinksTheWave) {
  ChipConfig chip = Preset("a100");
  chip.l2_bytes = chip.scratchpad_bytes;  // The smallest L2 Validate accepts.
  ASSERT_TRUE(chip.Validate().ok());
  const L2GemmPlan p = PlanL2Gemm(chip, 8192, 8192, 8192);
  // A full wave of 108 tiles would need ~2·(9·176 + 12·128)·tk·e ≫ 164 KiB of L2.
  EXPECT_LT(p.wave_tiles, chip.cores);
  EXPECT_LE(p.l2_bytes_used, chip.l2_bytes);
}

TEST(PlanL2GemmTest, SkinnyGemmAvoidsANearlyEmptySecondWave) {
  const ChipConfig chip = Preset("a100");
  // M = 64: tiles are chosen by the wave estimate, so the whole GeMM is one wave of ≤ 108 tiles
  // (PlanGemm alone would cut 128 tiles: a second wave of 20 cores computing as long as the
  // first while HBM idles).
  const L2GemmPlan p = PlanL2Gemm(chip, 64, 8192, 8192);
  EXPECT_EQ(p.waves.size(), 1u);
  EXPECT_GT(PlanGemm(chip, 64, 8192, 8192).output_tiles(), chip.cores);
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

TEST(SystolicTest, MxuEfficiencyStretchesTheTime) {
  ChipConfig chip = Preset("a100");
  // time = cycles / mxu_efficiency / clock; cycles = ⌈8·8/4⌉·(128 + 16) = 2304.
  EXPECT_EQ(SystolicCycles(chip, 128, 128, 128), 16 * 144);
  EXPECT_EQ(SystolicTime(chip, 128, 128, 128), core::ComputeTime(2304 / 0.92, 1.41e9));
  chip.mxu_efficiency = 1.0;
  EXPECT_EQ(SystolicTime(chip, 128, 128, 128), core::ComputeTime(2304, 1.41e9));
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
