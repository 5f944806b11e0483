// The chip model: calibration of the tpuv4 preset (MeshSlice's 249 TFLOPS for large GeMMs),
// the HBM roofline for memory-bound GeMMs, contention with NIC-like flows, queueing, timeline
// rows, and determinism.
#include "accel/chip_model.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/executor.h"
#include "core/fair_share.h"
#include "core/op_graph.h"
#include "core/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

// A simulator, a fair-share solver and a ChipModel for `chips` chips; ops are added to `graph`
// and run by Run().
struct Rig {
  explicit Rig(const ChipConfig& c, int chips = 1) : config(c), fs(sim), model(fs, config, chips) {}

  OpId Add(const Op& op, std::initializer_list<OpId> deps = {}) { return graph.Add(op, deps); }
  void Run() {
    exec = std::make_unique<core::Executor>(sim, graph);
    for (OpKind kind : {OpKind::kGemm, OpKind::kCopy, OpKind::kVector}) {
      exec->SetRunner(kind, &model);
    }
    const absl::Status s = exec->Run();
    ASSERT_TRUE(s.ok()) << s;
  }
  std::vector<TimelineRow> RowsOf(OpId id) const {
    std::vector<TimelineRow> rows;
    for (const TimelineRow& r : exec->timeline()) {
      if (r.op == id) rows.push_back(r);
    }
    return rows;
  }
  Time Duration(OpId id) const { return exec->end_time(id) - exec->start_time(id); }

  ChipConfig config;
  core::Simulator sim;
  core::FairShare fs;
  ChipModel model;
  core::OpGraph graph;
  std::unique_ptr<core::Executor> exec;
};

struct GemmResult {
  Time time;
  double flops = 0;   // Σ row flops.
  int64_t bytes = 0;  // Σ row bytes (HBM traffic).
  size_t rows = 0;
};

GemmResult RunGemm(const ChipConfig& config, int64_t m, int64_t n, int64_t k) {
  Rig rig(config);
  const OpId g = rig.Add(Op::Gemm(ChipId(0), m, n, k));
  rig.Run();
  GemmResult r;
  r.time = rig.Duration(g);
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
  // 1.2 TB/s = 28 us) and 8 exposed write-backs of 8 MiB per core (14 us each):
  //   28 + 32·134.2 + 8·14 ≈ 4436 us → 247.9 TFLOPS.
  const double expect_s = 2 * 16.0 * (1 << 20) / 1.2e12 +
                          32 * SystolicTime(chip, 2048, 2048, 2048).seconds() +
                          8 * 2 * 8.0 * (1 << 20) / 1.2e12;
  EXPECT_NEAR(r.time.seconds(), expect_s, 1e-3 * expect_s);
  EXPECT_EQ(r.rows, 2u);
  EXPECT_EQ(r.flops, 2.0 * 8192 * 8192 * 8192);
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
      {"a100", 4096, 512, 300},   {"v100", 700, 900, 500},      {"v100", 8, 4096, 64}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.preset + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                 std::to_string(c.k));
    const ChipConfig chip = Preset(c.preset);
    const GemmTiling t = PlanGemm(chip, c.m, c.n, c.k);
    const GemmResult r = RunGemm(chip, c.m, c.n, c.k);
    // Σ over core rows = 2·m·n·k exactly.
    EXPECT_EQ(r.flops, 2.0 * c.m * c.n * c.k);
    // One row per participating core: min(cores, output tiles).
    EXPECT_EQ(r.rows, size_t(std::min<int64_t>(chip.cores, t.output_tiles())));
    // Traffic: A read tiles_n times, B tiles_m times, C written once (≥ A + B + C).
    const int64_t e = chip.element_bytes;
    EXPECT_EQ(r.bytes, (c.m * c.k * t.tiles_n + c.k * c.n * t.tiles_m + c.m * c.n) * e);
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

}  // namespace
}  // namespace meshsim::accel
