// The chip model: calibration of the tpuv4 preset (MeshSlice's 249 TFLOPS for large GeMMs),
// the HBM roofline for memory-bound GeMMs, contention with NIC-like flows, queueing, timeline
// rows, and determinism.
#include "accel/chip_model.h"

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/executor.h"
#include "core/fair_share.h"
#include "core/op_graph.h"
#include "core/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/accel/chip_rig.h"

namespace meshsim::accel {
namespace {

using core::ChipId;
using core::Op;
using core::OpId;
using core::OpKind;
using core::Phase;
using core::Time;
using core::TimelineRow;
using core::UnitKind;

ChipConfig Preset(const std::string& name) {
  auto c = ChipPreset(name);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

struct GemmResult {
  Time time;
  double flops = 0;   // Σ row flops.
  int64_t bytes = 0;  // Σ row bytes (HBM traffic).
  size_t rows = 0;
  uint64_t events = 0;  // Simulator events of the whole run.
};

GemmResult RunGemm(const ChipConfig& config, int64_t m, int64_t n, int64_t k) {
  Rig rig(config);
  const OpId g = rig.Add(Op::Gemm(ChipId(0), m, n, k));
  rig.Run();
  GemmResult r;
  r.time = rig.Duration(g);
  r.events = rig.sim.events_executed();
  for (const TimelineRow& row : rig.RowsOf(g)) {
    r.flops += row.flops;
    r.bytes += row.bytes;
    ++r.rows;
  }
  return r;
}

double Tflops(int64_t m, int64_t n, int64_t k, Time t) {
  return 2.0 * double(m) * double(n) * double(k) / t.seconds() / 1e12;
}

TEST(ChipModelTest, CreatesOneHbmResourcePerChip) {
  core::Simulator sim;
  core::FairShare fs(sim);
  ChipModel model(fs, Preset("tpuv4"), 3);
  ASSERT_EQ(fs.num_resources(), 3u);
  for (int c = 0; c < 3; ++c) {
    const core::ResourceInfo& info = fs.resource(model.hbm(ChipId(c)));
    EXPECT_EQ(info.name, "chip" + std::to_string(c) + ".hbm");
    EXPECT_EQ(info.kind, core::ResourceKind::kHbm);
    EXPECT_EQ(info.chip, ChipId(c));
    EXPECT_EQ(info.capacity_bytes_per_s, 1.2e12);
  }
}

TEST(ChipModelTest, Tpuv4PresetKeepsThePaperPeak) {
  // 2 cores · 4 MXUs · 128² MACs · 2 flop · 1.0376 GHz = 272 TFLOPS.
  EXPECT_NEAR(Preset("tpuv4").PeakFlops(), 272e12, 0.1e12);
}

TEST(ChipModelTest, Tpuv4LargeSquareGemmRunsAt249Tflops) {
  const ChipConfig chip = Preset("tpuv4");
  const GemmResult r = RunGemm(chip, 8192, 8192, 8192);
  // MeshSlice's simulation-fitted compute rate: 2·8192³ / time = 249e12 ± 3%.
  const double tflops = Tflops(8192, 8192, 8192, r.time);
  EXPECT_GE(tflops, 241.5);
  EXPECT_LE(tflops, 256.5);
  // Where it comes from: per core 8 tiles × 4 k-steps of SystolicTime(2048³) = 134.2 us at 94%
  // array utilization (fill/drain), the first 16 MiB prefetch per core (both cores: 32 MiB at
  // 1.2 TB/s = 28 us) and, with double-buffered output tiles (core.output_buffers = 2), only the
  // last write-back of 8 MiB per core exposed (both cores: 14 us); the other 7 overlap the next
  // tile's k-loop:
  //   28 + 32·134.2 + 14 ≈ 4337 us → 253.5 TFLOPS.
  const double expect_s = 2 * 16.0 * (1 << 20) / 1.2e12 +
                          32 * SystolicTime(chip, 2048, 2048, 2048).seconds() +
                          2 * 8.0 * (1 << 20) / 1.2e12;
  EXPECT_NEAR(r.time.seconds(), expect_s, 1e-3 * expect_s);
  EXPECT_EQ(r.rows, 2u);
  EXPECT_EQ(r.flops, 2.0 * 8192 * 8192 * 8192);
}

// With one output buffer every write-back is exposed: the same plan (4×4 tiles of 2048, tk =
// 2048: the larger square cap 2304 still gives 2048-tiles) takes the 8 write-backs per core of
// the formula above instead of 1: 28 + 32·134.2 + 8·14 ≈ 4436 us (247.9 TFLOPS).
TEST(ChipModelTest, SingleOutputBufferExposesEveryWriteBack) {
  ChipConfig chip = Preset("tpuv4");
  chip.output_buffers = 1;
  const GemmResult r = RunGemm(chip, 8192, 8192, 8192);
  const double expect_s = 2 * 16.0 * (1 << 20) / 1.2e12 +
                          32 * SystolicTime(chip, 2048, 2048, 2048).seconds() +
                          8 * 2 * 8.0 * (1 << 20) / 1.2e12;
  EXPECT_NEAR(r.time.seconds(), expect_s, 1e-3 * expect_s);
}

TEST(ChipModelTest, MemoryBoundGemmRunsAtTheHbmRoofline) {
  const ChipConfig chip = Preset("tpuv4");
  const GemmResult r = RunGemm(chip, 8192, 8, 8192);
  // Compulsory traffic: A (128 MiB) + B + C once; B is re-read once per m-tile (4 of them).
  const int64_t a = 8192 * 8192 * 2, b = 8192 * 8 * 2, c = 8192 * 8 * 2;
  EXPECT_EQ(r.bytes, a + 4 * b + c);
  // Roofline: time ≈ bytes / hbm.bandwidth; the exposed last k-step compute (2.1 us) is ~2%.
  const double roofline_s = double(r.bytes) / chip.hbm_bandwidth_bytes_per_s;
  EXPECT_GE(r.time.seconds(), roofline_s);
  EXPECT_LE(r.time.seconds(), 1.03 * roofline_s);
  // Far from MXU peak: 2·8192·8·8192 flop / 114 us ≈ 9.4 TFLOPS.
  EXPECT_LT(Tflops(8192, 8, 8192, r.time), 0.05 * chip.PeakFlops() / 1e12);
}

TEST(ChipModelTest, HbmBandwidthScalesAMemoryBoundGemm) {
  ChipConfig chip = Preset("tpuv4");
  const Time full = RunGemm(chip, 8192, 8, 8192).time;
  chip.hbm_bandwidth_bytes_per_s /= 2;
  const Time half = RunGemm(chip, 8192, 8, 8192).time;
  // HBM-bound: time ∝ 1 / bandwidth (minus the fixed compute tail): ratio ≈ 2.
  const double ratio = half.seconds() / full.seconds();
  EXPECT_GT(ratio, 1.95);
  EXPECT_LT(ratio, 2.0);
}

TEST(ChipModelTest, NicFlowOnTheSameHbmSlowsAMemoryBoundGemm) {
  const ChipConfig chip = Preset("tpuv4");
  const Time alone = RunGemm(chip, 8192, 8, 8192).time;
  Rig rig(chip, 2);
  const OpId g = rig.Add(Op::Gemm(ChipId(0), 8192, 8, 8192));
  const OpId other = rig.Add(Op::Gemm(ChipId(1), 8192, 8, 8192));
  // A NIC-like flow outlasting the GeMM on chip 0's HBM (say, a link at 50 GB/s would be capped;
  // here it is uncapped, so it takes a max-min share).
  bool nic_done = false;
  rig.fs.StartFlow(1e9, {rig.model.hbm(ChipId(0))}, [&] { nic_done = true; });
  rig.Run();
  EXPECT_TRUE(nic_done);
  // Max-min over 3 flows (2 cores + NIC): the cores get 2/3 of 1.2 TB/s → ≈ 1.5× slower.
  const double ratio = rig.Duration(g).seconds() / alone.seconds();
  EXPECT_GT(ratio, 1.45);
  EXPECT_LT(ratio, 1.52);
  // Chip 1's HBM is untouched.
  EXPECT_EQ(rig.Duration(other), alone);
}

TEST(ChipModelTest, SmallerAndSkinnierGemmsAreLessEfficient) {
  const ChipConfig chip = Preset("tpuv4");
  const double big = Tflops(8192, 8192, 8192, RunGemm(chip, 8192, 8192, 8192).time);
  struct Shape {
    int64_t m, n, k;
  };
  double previous = big;
  // Decreasing size of square GeMMs: decreasing efficiency.
  for (Shape s : {Shape{4096, 4096, 4096}, Shape{2048, 2048, 2048}, Shape{512, 512, 512},
                  Shape{128, 128, 128}}) {
    const double tf = Tflops(s.m, s.n, s.k, RunGemm(chip, s.m, s.n, s.k).time);
    SCOPED_TRACE(std::to_string(s.m));
    EXPECT_LT(tf, previous);
    previous = tf;
  }
  for (Shape s : {Shape{1024, 1024, 8192}, Shape{8192, 8192, 128}, Shape{8192, 100, 8192},
                  Shape{64, 8192, 8192}, Shape{8192, 8, 8192}}) {
    const double tf = Tflops(s.m, s.n, s.k, RunGemm(chip, s.m, s.n, s.k).time);
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
    EXPECT_LT(tf, big);
  }
}

TEST(ChipModelTest, FlopsConservedAndBytesAtLeastCompulsory) {
  struct Case {
    std::string preset;
    int64_t m, n, k;
  };
  const std::vector<Case> cases = {
      {"tpuv4", 1, 1, 1},         {"tpuv4", 3, 5, 7},           {"tpuv4", 129, 255, 1000},
      {"tpuv4", 8192, 8, 8192},   {"tpuv4", 8, 8192, 8192},     {"tpuv4", 8192, 8192, 8},
      {"tpuv4", 5000, 3000, 700}, {"tpuv4", 16384, 2304, 1536}, {"a100", 1000, 1000, 1000},
      {"a100", 4096, 512, 300},   {"v100", 700, 900, 500},      {"v100", 8, 4096, 64},
      {"h100", 1, 1, 1},          {"h100", 3000, 5000, 700},    {"a100", 8192, 8, 8192}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.preset + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                 std::to_string(c.k));
    const ChipConfig chip = Preset(c.preset);
    const GemmResult r = RunGemm(chip, c.m, c.n, c.k);
    // Σ over core rows = 2·m·n·k exactly.
    EXPECT_EQ(r.flops, 2.0 * c.m * c.n * c.k);
    const int64_t e = chip.element_bytes;
    if (chip.HasL2()) {
      // Two levels: one row per core of a full wave; HBM traffic is the plan's
      // Σ_w (rows_w + cols_w)·k·e + m·n·e.
      const L2GemmPlan p = PlanL2Gemm(chip, c.m, c.n, c.k);
      EXPECT_EQ(r.rows, size_t(p.wave_tiles));
      EXPECT_EQ(r.bytes, p.hbm_bytes);
    } else {
      const GemmTiling t = PlanGemm(chip, c.m, c.n, c.k);
      // One row per participating core: min(cores, output tiles).
      EXPECT_EQ(r.rows, size_t(std::min<int64_t>(chip.cores, t.output_tiles())));
      // Traffic: A read tiles_n times, B tiles_m times, C written once.
      EXPECT_EQ(r.bytes, (c.m * c.k * t.tiles_n + c.k * c.n * t.tiles_m + c.m * c.n) * e);
    }
    EXPECT_GE(r.bytes, (c.m * c.k + c.k * c.n + c.m * c.n) * e);
    // No faster than the MXU peak or the HBM roofline.
    EXPECT_GE(r.time.seconds(), 2.0 * c.m * c.n * c.k / chip.PeakFlops());
    EXPECT_GE(r.time.seconds(), double(r.bytes) / chip.hbm_bandwidth_bytes_per_s);
  }
}

TEST(ChipModelTest, TinyGemmExactTime) {
  const ChipConfig chip = Preset("tpuv4");
  Rig rig(chip);
  const OpId g = rig.Add(Op::Gemm(ChipId(0), 128, 128, 128));
  rig.Run();
  // One tile on core 0, one k-step: prefetch A_t + B_t (2·128²·2 = 64 KiB at 1.2 TB/s), then
  // (128 + 128) cycles on one array, then write back C_t (32 KiB).
  const Time expect = core::TransferTime(65536, 1.2e12) + core::ComputeTime(256, 1.0376e9) +
                      core::TransferTime(32768, 1.2e12);
  EXPECT_EQ(rig.exec->end_time(g), expect);
  const std::vector<TimelineRow> rows = rig.RowsOf(g);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].phase, Phase::kOp);
  EXPECT_EQ(rows[0].unit_kind, UnitKind::kCore);
  EXPECT_EQ(rows[0].unit_index, 0);
  EXPECT_EQ(rows[0].start, Time::Zero());
  EXPECT_EQ(rows[0].end, expect);
  EXPECT_EQ(rows[0].bytes, 65536 + 32768);
  EXPECT_EQ(rows[0].flops, 2.0 * 128 * 128 * 128);
}

TEST(ChipModelTest, GemmsOnOneChipRunBackToBack) {
  const ChipConfig chip = Preset("tpuv4");
  Rig rig(chip);
  const OpId a = rig.Add(Op::Gemm(ChipId(0), 2048, 2048, 2048));
  const OpId b = rig.Add(Op::Gemm(ChipId(0), 2048, 2048, 2048));
  rig.Run();
  // Both are handed to the chip at 0; b's cores start when a ends, and it takes as long.
  const Time ta = rig.exec->end_time(a);
  for (const TimelineRow& row : rig.RowsOf(b)) EXPECT_EQ(row.start, ta);
  EXPECT_EQ(rig.exec->end_time(b) - ta, ta);
}

TEST(ChipModelTest, DescribeWaitForTheHangReport) {
  const ChipConfig chip = Preset("tpuv4");
  core::Simulator sim;
  core::FairShare fs(sim);
  ChipModel model(fs, chip, 1);
  core::OpGraph graph;
  const OpId a = graph.Add(Op::Gemm(ChipId(0), 2048, 2048, 2048));
  const OpId b = graph.Add(Op::Gemm(ChipId(0), 2048, 2048, 2048));
  const OpId c = graph.Add(Op::Copy(ChipId(0), int64_t{1} << 34));
  core::Executor exec(sim, graph);
  for (OpKind kind : {OpKind::kGemm, OpKind::kCopy}) exec.SetRunner(kind, &model);
  std::string wait_a, wait_b, wait_c;
  // Stop mid-way through a (it takes ~79 us): a runs, b is queued, c is a DMA flow.
  sim.ScheduleAt(Time::Microseconds(20), [&] {
    wait_a = model.DescribeWait(a);
    wait_b = model.DescribeWait(b);
    wait_c = model.DescribeWait(c);
    sim.Stop();
  });
  EXPECT_FALSE(exec.Run().ok());
  EXPECT_THAT(wait_a, ::testing::HasSubstr("GeMM 2048x2048x2048 on chip 0: core 0 step"));
  EXPECT_THAT(wait_a, ::testing::HasSubstr("computing"));
  EXPECT_THAT(wait_b, ::testing::HasSubstr("queued on chip 0 behind op 0 (0 ahead"));
  EXPECT_THAT(wait_c, ::testing::HasSubstr("HBM copy of 17179869184 bytes"));
}

TEST(ChipModelTest, GemmsOnDifferentChipsRunConcurrently) {
  const ChipConfig chip = Preset("tpuv4");
  Rig rig(chip, 2);
  const OpId a = rig.Add(Op::Gemm(ChipId(0), 2048, 2048, 2048));
  const OpId b = rig.Add(Op::Gemm(ChipId(1), 2048, 2048, 2048));
  rig.Run();
  EXPECT_EQ(rig.exec->end_time(a), rig.exec->end_time(b));
  EXPECT_EQ(rig.exec->end_time(a), RunGemm(chip, 2048, 2048, 2048).time);
}

TEST(ChipModelTest, CopyIsAnHbmFlowOfReadPlusWrite) {
  const ChipConfig chip = Preset("tpuv4");
  Rig rig(chip);
  const OpId c = rig.Add(Op::Copy(ChipId(0), 1 << 30));
  rig.Run();
  // 2·2^30 bytes at 1.2 TB/s.
  EXPECT_EQ(rig.Duration(c), core::TransferTime(2.0 * (1 << 30), 1.2e12));
  const std::vector<TimelineRow> rows = rig.RowsOf(c);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].unit_kind, UnitKind::kHbm);
  EXPECT_EQ(rows[0].bytes, int64_t{2} << 30);
}

TEST(ChipModelTest, VectorOpIsCappedByTheVectorUnits) {
  ChipConfig chip = Preset("tpuv4");
  chip.vector_flops_per_s = 1e11;  // Cap: 2 cores · 1e11 elem/s · 2 B · 2 = 0.8 TB/s < HBM.
  Rig rig(chip);
  Op v;
  v.kind = OpKind::kVector;
  v.chip = ChipId(0);
  v.bytes = 1 << 30;
  const OpId id = rig.Add(v);
  rig.Run();
  EXPECT_EQ(rig.Duration(id), core::TransferTime(2.0 * (1 << 30), 0.8e12));
  const std::vector<TimelineRow> rows = rig.RowsOf(id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].unit_kind, UnitKind::kVector);
  EXPECT_EQ(rows[0].bytes, int64_t{2} << 30);
}

TEST(ChipModelTest, VectorOpsQueueBehindGemmsButCopiesDoNot) {
  const ChipConfig chip = Preset("tpuv4");
  Rig rig(chip);
  const OpId g = rig.Add(Op::Gemm(ChipId(0), 4096, 4096, 4096));
  Op v;
  v.kind = OpKind::kVector;
  v.chip = ChipId(0);
  v.bytes = 1 << 20;
  const OpId vec = rig.Add(v);
  const OpId copy = rig.Add(Op::Copy(ChipId(0), 1 << 20));
  rig.Run();
  // The vector op starts when the GeMM ends; the copy runs beside the GeMM on the DMA path.
  ASSERT_EQ(rig.RowsOf(vec).size(), 1u);
  EXPECT_EQ(rig.RowsOf(vec)[0].start, rig.exec->end_time(g));
  EXPECT_LT(rig.exec->end_time(copy), rig.exec->end_time(g));
}

TEST(ChipModelTest, Deterministic) {
  const auto run = [] {
    Rig rig(Preset("tpuv4"), 2);
    OpId prev = rig.Add(Op::Gemm(ChipId(0), 3000, 2000, 1000));
    for (int i = 0; i < 4; ++i) {
      const OpId a = rig.Add(Op::Gemm(ChipId(i % 2), 1000 + 37 * i, 4096, 777), {prev});
      const OpId b = rig.Add(Op::Copy(ChipId(i % 2), 12345678), {prev});
      prev = rig.Add(Op::Gemm(ChipId((i + 1) % 2), 512, 8, 9000), {a, b});
    }
    rig.fs.StartFlow(3e8, {rig.model.hbm(ChipId(1))}, [] {});
    rig.Run();
    return std::pair(rig.exec->fingerprint(), rig.exec->makespan());
  };
  EXPECT_EQ(run(), run());
}

// ---------------------------------------------------------------------------------------------
// GPU presets: two-level (L2 over HBM) GeMMs.

constexpr const char* kGpus[] = {"a100", "v100", "h100"};

TEST(ChipConfigTest, GpuPresetsMatchTheirSpecSheets) {
  // Dense bf16/fp16 peaks: SMs · tensor-core MACs/clk · 2 · clock.
  EXPECT_NEAR(Preset("a100").PeakFlops(), 312e12, 0.5e12);    // 108·4·256·2·1.41 GHz.
  EXPECT_NEAR(Preset("v100").PeakFlops(), 125e12, 0.5e12);    // 80·8·64·2·1.53 GHz.
  EXPECT_NEAR(Preset("h100").PeakFlops(), 989.4e12, 0.5e12);  // 132·8·256·2·1.83 GHz.
  EXPECT_EQ(Preset("a100").hbm_bandwidth_bytes_per_s, 2.039e12);
  EXPECT_EQ(Preset("v100").hbm_bandwidth_bytes_per_s, 900e9);
  EXPECT_EQ(Preset("h100").hbm_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_EQ(Preset("a100").l2_bytes, int64_t{40} << 20);
  EXPECT_EQ(Preset("v100").l2_bytes, int64_t{6} << 20);
  EXPECT_EQ(Preset("h100").l2_bytes, int64_t{50} << 20);
  EXPECT_EQ(Preset("h100").cores, 132);
  for (const char* gpu : kGpus) {
    ChipConfig c = Preset(gpu);
    EXPECT_TRUE(c.HasL2()) << gpu;
    EXPECT_TRUE(c.Validate().ok()) << gpu << ": " << c.Validate();
  }
  ChipConfig tpu = Preset("tpuv4");
  EXPECT_FALSE(tpu.HasL2());
  EXPECT_EQ(tpu.mxu_efficiency, 1.0);
  EXPECT_EQ(tpu.accumulator_bytes, 0);
}

TEST(ChipConfigTest, UnknownPresetListsH100) {
  const auto c = ChipPreset("b200");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(c.status().message()),
              ::testing::HasSubstr("'b200' (known: tpuv4, a100, v100, h100)"));
}

TEST(ChipConfigTest, ValidateRejectsAnL2SmallerThanOneTileSet) {
  ChipConfig c = Preset("a100");
  c.l2_bytes = 64 << 10;  // < core.scratchpad_bytes (164 KiB).
  const absl::Status s = c.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              ::testing::AllOf(::testing::HasSubstr("l2.capacity: 65536 bytes"),
                               ::testing::HasSubstr("at least core.scratchpad_bytes (167936)")));
  // Without an L2 level the capacity is ignored.
  c.l2_bandwidth_bytes_per_s = 0;
  EXPECT_TRUE(c.Validate().ok());
  // Ranges: a negative bandwidth names the key.
  c.l2_bandwidth_bytes_per_s = -1;
  EXPECT_THAT(std::string(c.Validate().message()), ::testing::HasSubstr("l2.bandwidth"));
  c = Preset("a100");
  c.mxu_efficiency = 0;
  EXPECT_THAT(std::string(c.Validate().message()), ::testing::HasSubstr("core.mxu_efficiency"));
}

TEST(ChipConfigTest, ValidateRejectsPersistentKernelsWithoutAnL2AndOversizedClusters) {
  ChipConfig c = Preset("tpuv4");
  c.gemm_persistent = 1;  // The one-level (TPU) pipeline has no waves to displace.
  EXPECT_THAT(std::string(c.Validate().message()),
              ::testing::HasSubstr("gemm.persistent: 1 needs the two-level GeMM pipeline"));
  c = Preset("h100");
  EXPECT_TRUE(c.Validate().ok());
  c.gpcs = 133;  // More GPCs than SMs.
  EXPECT_THAT(std::string(c.Validate().message()),
              ::testing::HasSubstr("allowed: at most chip.cores (132)"));
  c = Preset("h100");
  c.gemm_cluster_ctas = 17;
  EXPECT_THAT(std::string(c.Validate().message()), ::testing::HasSubstr("gemm.cluster_ctas"));
}

TEST(GpuChipModelTest, CreatesAnL2ResourcePerChipAfterTheHbms) {
  core::Simulator sim;
  core::FairShare fs(sim);
  ChipModel model(fs, Preset("a100"), 2);
  ASSERT_EQ(fs.num_resources(), 4u);
  // HBM ids come first, as without an L2 (the network relies only on hbm(c)).
  EXPECT_EQ(fs.resource(model.hbm(ChipId(1))).name, "chip1.hbm");
  const core::ResourceInfo& l2 = fs.resource(model.l2(ChipId(1)));
  EXPECT_EQ(l2.name, "chip1.l2");
  EXPECT_EQ(l2.chip, ChipId(1));
  EXPECT_EQ(l2.capacity_bytes_per_s, 5120 * 1.41e9);
}

TEST(GpuChipModelTest, LargeSquareGemmsRunAt75To85PercentOfPeak) {
  for (const char* gpu : kGpus) {
    const ChipConfig chip = Preset(gpu);
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{8192, 8192, 8192},
                           std::tuple<int64_t, int64_t, int64_t>{16384, 16384, 8192}}) {
      SCOPED_TRACE(std::string(gpu) + " " + std::to_string(m) + "x" + std::to_string(n));
      const GemmResult r = RunGemm(chip, m, n, k);
      // Issue 9's target: 2·m·n·k / time within 75–85% of the datasheet peak. Compute-bound:
      // the HBM carries well under half of its bandwidth.
      const double fraction = 2.0 * m * n * k / r.time.seconds() / chip.PeakFlops();
      EXPECT_GE(fraction, 0.75);
      EXPECT_LE(fraction, 0.85);
      EXPECT_LT(double(r.bytes) / r.time.seconds(), 0.5 * chip.hbm_bandwidth_bytes_per_s);
    }
  }
}

TEST(GpuChipModelTest, SkinnyGemmRunsAtTheHbmRoofline) {
  for (const char* gpu : kGpus) {
    SCOPED_TRACE(gpu);
    const ChipConfig chip = Preset(gpu);
    const GemmResult r = RunGemm(chip, 8, 8192, 8192);
    // B (128 MiB) dominates; A (8×8192) is read once per wave and C is tiny:
    //   bytes ≥ (8·8192 + 8192·8192 + 8·8192)·2, and time ≈ bytes / hbm.bandwidth.
    const int64_t compulsory = (8 * 8192 + 8192 * 8192 + 8 * 8192) * 2;
    EXPECT_GE(r.bytes, compulsory);
    EXPECT_LE(r.bytes, compulsory + compulsory / 100);
    const double roofline_s = double(r.bytes) / chip.hbm_bandwidth_bytes_per_s;
    EXPECT_GE(r.time.seconds(), roofline_s);
    EXPECT_LE(r.time.seconds(), 1.04 * roofline_s);
  }
}

TEST(GpuChipModelTest, SkinnyCurveFollowsTheRoofline) {
  // M = 8 … 1024 with N = K = 8192 against the roofline
  //   max(flops / (peak · mxu_efficiency), bytes / hbm.bandwidth):
  // never faster than max(flops / peak, bytes / hbm.bandwidth); memory-bound shapes (M ≤ 64)
  // within 6% of bytes / hbm.bandwidth; all within 25% of the roofline (h100: 65%, its L2 —
  // assumed 9.4 TB/s — binds near the ridge, M = 256…1024); the rate never drops by more than 3%
  // as M grows (wave quantization makes small dips).
  for (const char* gpu : kGpus) {
    const ChipConfig chip = Preset(gpu);
    const double slack = std::string(gpu) == "h100" ? 1.65 : 1.25;
    double previous_tflops = 0;
    for (int64_t m : {8, 16, 32, 64, 128, 256, 512, 1024}) {
      SCOPED_TRACE(std::string(gpu) + " M=" + std::to_string(m));
      const GemmResult r = RunGemm(chip, m, 8192, 8192);
      const double flops = 2.0 * m * 8192 * 8192;
      const double memory_s = double(r.bytes) / chip.hbm_bandwidth_bytes_per_s;
      const double roofline_s =
          std::max(flops / (chip.PeakFlops() * chip.mxu_efficiency), memory_s);
      EXPECT_GE(r.time.seconds(), std::max(flops / chip.PeakFlops(), memory_s));
      EXPECT_LE(r.time.seconds(), slack * roofline_s);
      if (m <= 64) {
        EXPECT_LE(r.time.seconds(), 1.06 * memory_s);
      }
      const double tflops = flops / r.time.seconds() / 1e12;
      EXPECT_GT(tflops, 0.97 * previous_tflops);
      previous_tflops = tflops;
    }
  }
}

TEST(GpuChipModelTest, HbmTrafficFollowsTheTwoLevelFormula) {
  const ChipConfig chip = Preset("a100");
  const int64_t m = 8192, n = 8192, k = 8192, e = 2;
  const L2GemmPlan p = PlanL2Gemm(chip, m, n, k);
  const GemmResult r = RunGemm(chip, m, n, k);
  EXPECT_EQ(r.bytes, p.hbm_bytes);
  // An L2 block is one wave: ⌈P/W⌉ m-tiles × W n-tiles, bm × bn elements. HBM traffic ≈
  //   A·⌈n/bn⌉ + B·⌈m/bm⌉ + C   (A read once per block column, B once per block row).
  const int64_t bm = (p.wave_tiles + p.swizzle - 1) / p.swizzle * p.sm.tm;
  const int64_t bn = p.swizzle * p.sm.tn;
  const int64_t formula = (m * k * ((n + bn - 1) / bn) + k * n * ((m + bm - 1) / bm) + m * n) * e;
  EXPECT_GT(r.bytes, 0.9 * formula);
  EXPECT_LT(r.bytes, 1.15 * formula);
  // The L2 saves most of the one-level traffic (A read tiles_n times, B tiles_m times).
  const int64_t one_level = (m * k * p.sm.tiles_n + k * n * p.sm.tiles_m + m * n) * e;
  EXPECT_LT(r.bytes, one_level / 4);
}

TEST(GpuChipModelTest, StarvedL2BindsTheGemm) {
  ChipConfig chip = Preset("a100");
  chip.l2_bandwidth_bytes_per_s = 1e12;
  const int64_t m = 4096, n = 4096, k = 4096, e = 2;
  const GemmResult r = RunGemm(chip, m, n, k);
  // Every core streams its A_t and B_t from L2: (m·k·tiles_n + k·n·tiles_m)·e bytes, plus C
  // through L2; at 1 TB/s this, not compute, sets the time (within 5%).
  const L2GemmPlan p = PlanL2Gemm(chip, m, n, k);
  const double l2_s = double((m * k * p.sm.tiles_n + k * n * p.sm.tiles_m + m * n) * e) / 1e12;
  EXPECT_GE(r.time.seconds(), l2_s);
  EXPECT_LE(r.time.seconds(), 1.05 * l2_s);
}

TEST(GpuChipModelTest, BigGemmCostsBoundedEvents) {
  const GemmResult r = RunGemm(Preset("a100"), 8192, 8192, 8192);
  // Measured 2802 events: 28 waves × 16 L2 steps × ~6 events; the per-tile model needed
  // 530894. Bound = measured + ~40%.
  EXPECT_LE(r.events, 4000u);
}

TEST(GpuChipModelTest, NicFlowOnTheSameHbmSlowsAMemoryBoundGemm) {
  const ChipConfig chip = Preset("a100");
  const Time alone = RunGemm(chip, 8, 8192, 8192).time;
  Rig rig(chip, 2);
  const OpId g = rig.Add(Op::Gemm(ChipId(0), 8, 8192, 8192));
  const OpId other = rig.Add(Op::Gemm(ChipId(1), 8, 8192, 8192));
  bool nic_done = false;
  // An uncapped NIC-like flow outlasting the GeMM on chip 0's HBM (not on its L2).
  rig.fs.StartFlow(1e9, {rig.model.hbm(ChipId(0))}, [&] { nic_done = true; });
  rig.Run();
  EXPECT_TRUE(nic_done);
  // Max-min over 2 flows (the GeMM's panel flow + the NIC) → the GeMM gets half of the HBM:
  // ≈ 2× slower (a little less: the compute tail is not HBM-bound).
  const double ratio = rig.Duration(g).seconds() / alone.seconds();
  EXPECT_GT(ratio, 1.85);
  EXPECT_LE(ratio, 2.0);
  EXPECT_EQ(rig.Duration(other), alone);
}

TEST(GpuChipModelTest, WithoutL2TheGpuFallsBackToThePerCorePipeline) {
  ChipConfig chip = Preset("a100");
  chip.l2_bandwidth_bytes_per_s = 0;
  const int64_t m = 1024, n = 1024, k = 1024;
  const GemmResult r = RunGemm(chip, m, n, k);
  const GemmTiling t = PlanGemm(chip, m, n, k);
  // One level: A read tiles_n times, B tiles_m times, C once.
  EXPECT_EQ(r.bytes, (m * k * t.tiles_n + k * n * t.tiles_m + m * n) * 2);
}

TEST(GpuChipModelTest, DescribeWaitNamesWaveAndStep) {
  const ChipConfig chip = Preset("a100");
  core::Simulator sim;
  core::FairShare fs(sim);
  ChipModel model(fs, chip, 1);
  core::OpGraph graph;
  const OpId a = graph.Add(Op::Gemm(ChipId(0), 4096, 4096, 4096));
  core::Executor exec(sim, graph);
  exec.SetRunner(OpKind::kGemm, &model);
  std::string wait;
  sim.ScheduleAt(Time::Microseconds(100), [&] {
    wait = model.DescribeWait(a);
    sim.Stop();
  });
  EXPECT_FALSE(exec.Run().ok());
  EXPECT_THAT(wait, ::testing::HasSubstr("GeMM 4096x4096x4096 on chip 0: wave "));
  EXPECT_THAT(wait, ::testing::HasSubstr(" step "));
}

TEST(GpuChipModelTest, Deterministic) {
  const auto run = [] {
    Rig rig(Preset("h100"), 2);
    OpId prev = rig.Add(Op::Gemm(ChipId(0), 3000, 2000, 1000));
    for (int i = 0; i < 4; ++i) {
      const OpId a = rig.Add(Op::Gemm(ChipId(i % 2), 1000 + 37 * i, 4096, 777), {prev});
      const OpId b = rig.Add(Op::Copy(ChipId(i % 2), 12345678), {prev});
      prev = rig.Add(Op::Gemm(ChipId((i + 1) % 2), 512, 8, 9000), {a, b});
    }
    rig.fs.StartFlow(3e8, {rig.model.hbm(ChipId(1))}, [] {});
    rig.Run();
    return std::pair(rig.exec->fingerprint(), rig.exec->makespan());
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace meshsim::accel
