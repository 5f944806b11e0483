#include "sim/metrics.h"

#include <cmath>
#include <sstream>

#include "cli/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meshsim::sim {
namespace {

using core::OpKind;
using core::Phase;
using core::Time;

core::TimelineRow Row(int chip, OpKind kind, Phase phase, int64_t start_us, int64_t end_us,
                      double flops = 0, int64_t bytes = 0) {
  core::TimelineRow r;
  r.chip = core::ChipId(chip);
  r.kind = kind;
  r.phase = phase;
  r.start = Time::Microseconds(start_us);
  r.end = Time::Microseconds(end_us);
  r.flops = flops;
  r.bytes = bytes;
  return r;
}

TEST(MetricsTest, UtilizationCommSplitAndExposure) {
  // Chip 0: GeMM [0,10) us with 1e9 flops; collective [5,20) us (launch 5–6, sync 6–8,
  // transfer 8–20) sending 1000 B. Chip 1: collective [5,20), no compute.
  std::vector<core::TimelineRow> t = {
      Row(0, OpKind::kGemm, Phase::kOp, 0, 10, 1e9),
      Row(0, OpKind::kGemm, Phase::kCompute, 0, 10, 1e9),  // Phase rows are not re-counted.
      Row(0, OpKind::kCollective, Phase::kOp, 5, 20, 0, 1000),
      Row(0, OpKind::kCollective, Phase::kLaunch, 5, 6),
      Row(0, OpKind::kCollective, Phase::kSync, 6, 8),
      Row(0, OpKind::kCollective, Phase::kTransfer, 8, 20),
      Row(1, OpKind::kCollective, Phase::kOp, 5, 20, 0, 1000),
      Row(1, OpKind::kCollective, Phase::kLaunch, 5, 6),
      Row(1, OpKind::kCollective, Phase::kSync, 6, 8),
      Row(1, OpKind::kCollective, Phase::kTransfer, 8, 20),
  };
  const RunMetrics m = ComputeMetrics(t, 2, 1e14, Time::Microseconds(20));
  EXPECT_DOUBLE_EQ(m.flops, 1e9);
  // 1e9 / (2 chips × 1e14 flop/s × 20e-6 s) = 0.25.
  EXPECT_DOUBLE_EQ(m.flop_utilization, 0.25);
  // Per chip: launch (1+1)/2 = 1 us, sync (2+2)/2 = 2 us, transfer (12+12)/2 = 12 us.
  EXPECT_NEAR(m.comm_launch_s, 1e-6, 1e-15);
  EXPECT_NEAR(m.comm_sync_s, 2e-6, 1e-15);
  EXPECT_NEAR(m.comm_transfer_s, 12e-6, 1e-15);
  // Exposed: chip 0 [10,20) = 10 us, chip 1 [5,20) = 15 us → 12.5 us per chip.
  EXPECT_NEAR(m.comm_exposed_s, 12.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(m.bytes_sent_per_chip, 1000);
  // Compute: chip 0 [0,10) us, chip 1 none → 5 us per chip.
  EXPECT_NEAR(m.compute_s, 5e-6, 1e-15);
}

TEST(MetricsTest, OverlappingIntervalsAreMergedBeforeExposure) {
  // Comm [0,10) and [5,15) merge to [0,15); compute [2,4) and [12,20) hide 2 + 3 us → 10 us.
  std::vector<core::TimelineRow> t = {
      Row(0, OpKind::kTransfer, Phase::kOp, 0, 10),
      Row(0, OpKind::kTransfer, Phase::kOp, 5, 15),
      Row(0, OpKind::kGemm, Phase::kOp, 2, 4),
      Row(0, OpKind::kGemm, Phase::kOp, 12, 20),
  };
  const RunMetrics m = ComputeMetrics(t, 1, 1e14, Time::Microseconds(20));
  EXPECT_NEAR(m.comm_exposed_s, 10e-6, 1e-15);
}

// GeMM spans bound all of a GeMM's ops; shares split the run at the GeMMs' ends.
TEST(MetricsTest, GemmSpansAndTheirShares) {
  const std::vector<std::string> names = {"a.fwd.gemm", "b.fwd.ag_b", "b.fwd.gemm", "c.fwd.gemm",
                                          "join"};
  const auto op = [&](uint32_t name, OpKind kind, int64_t start_us, int64_t end_us, double flops) {
    core::TimelineRow r = Row(0, kind, Phase::kOp, start_us, end_us, flops);
    r.name = core::NameId(name);
    r.pass = core::Pass::kFwd;
    return r;
  };
  // a computes [0, 50) us; b's AllGather is prefetched during a, [10, 40), and b computes
  // [50, 90); c computes [60, 90) beside b and ends with it; the join computes nothing.
  const std::vector<core::TimelineRow> t = {
      op(0, OpKind::kGemm, 0, 50, 1e9),      op(1, OpKind::kCollective, 10, 40, 0),
      op(2, OpKind::kGemm, 50, 90, 2e9),     op(3, OpKind::kGemm, 60, 90, 3e9),
      op(4, OpKind::kCollective, 90, 95, 0),
  };
  const std::vector<formats::GemmSpan> spans = GemmSpans(t, names);
  ASSERT_EQ(spans.size(), 3u);  // "join" has no flops.
  EXPECT_EQ(spans[0].label, "a.fwd");
  EXPECT_EQ(spans[1].label, "b.fwd");
  EXPECT_EQ(spans[2].label, "c.fwd");
  // b's span runs from its prefetch (10 us) to its GeMM's end (90 us).
  EXPECT_EQ(spans[1].start, Time::Microseconds(10));
  EXPECT_EQ(spans[1].end, Time::Microseconds(90));
  EXPECT_EQ(spans[1].flops, 2e9);
  // Shares in order of ends: a 50 − 0, b 90 − 50, c (ends with b, after it in order) 0.
  EXPECT_EQ(spans[0].share, Time::Microseconds(50));
  EXPECT_EQ(spans[1].share, Time::Microseconds(40));
  EXPECT_EQ(spans[2].share, Time::Zero());
}

}  // namespace
}  // namespace meshsim::sim

namespace meshsim::sim {
namespace {

// Archives are read back: the printers must print any metric value, not only times a run of
// this build could produce (Time::Seconds aborts outside ±10^7 s and on NaN).
TEST(ReportTest, TablePrintsHugeAndNanTimes) {
  for (const double makespan : std::vector<double>{2e7, 1e300, std::nan(""), -5.0, HUGE_VAL}) {
    formats::RunRecord r;
    r.chips = 1;
    r.metrics = {{"makespan_s", makespan}, {"comm.exposed_s", makespan}, {"wall_s", 1}};
    for (const char* format : {"table", "json", "csv"}) {
      std::ostringstream os;
      cli::PrintRuns({&r, &r}, format, os);
      EXPECT_THAT(os.str(), testing::Not(testing::IsEmpty())) << format;
    }
  }
}

}  // namespace
}  // namespace meshsim::sim
