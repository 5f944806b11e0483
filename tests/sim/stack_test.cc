// The software stack as a run sees it: presets, --stack and stack.* keys, `list stacks`, and the
// host that issues ops (IssueFromHost).
#include <sstream>
#include <string>
#include <vector>

#include "accel/chip_model.h"
#include "cli/cli.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/machine.h"
#include "sim/options.h"
#include "stack/stack_config.h"

namespace meshsim::sim {
namespace {

using ::testing::HasSubstr;

TEST(StackPresetTest, IdealAddsNothingAndEveryPresetValidates) {
  EXPECT_TRUE(stack::StackPreset("ideal")->IsIdeal());
  for (const stack::StackInfo& info : stack::Stacks()) {
    SCOPED_TRACE(info.name);
    absl::StatusOr<stack::StackConfig> s = stack::StackPreset(info.name);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(s->Validate().ok());
    EXPECT_EQ(s->IsIdeal(), info.name == "ideal");
  }
  const absl::Status unknown = stack::StackPreset("ncc").status();
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("did you mean nccl"));
}

TEST(StackPresetTest, SystemsRunTheirDefaultStackAndStackOverridesIt) {
  RawOptions raw;
  raw.values = {{"system", "tpuv4"}};
  absl::StatusOr<RunOptions> tpu = ResolveRunOptions(raw);
  ASSERT_TRUE(tpu.ok()) << tpu.status();
  EXPECT_EQ(tpu->system.stack_name, "ideal");
  raw.values = {{"system", "dgx-a100"}};
  absl::StatusOr<RunOptions> gpu = ResolveRunOptions(raw);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ(gpu->system.stack_name, "nccl");
  EXPECT_GT(gpu->system.stack.comm_ctas, 0);
  raw.values = {{"system", "dgx-a100"}, {"stack", "pytorch-nccl"}};
  raw.sets = {"stack.host.op_overhead=3us"};
  absl::StatusOr<RunOptions> set = ResolveRunOptions(raw);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->system.stack_name, "pytorch-nccl");
  EXPECT_DOUBLE_EQ(set->system.stack.host_op_overhead_s, 3e-6);
  bool listed = false;
  for (const auto& [key, value] : set->Resolved())
    listed |= key == "stack" && value == "pytorch-nccl";
  EXPECT_TRUE(listed);
  raw.values = {{"stack", "pytorch"}};
  raw.sets = {};
  const absl::Status bad = ResolveRunOptions(raw).status();
  EXPECT_THAT(std::string(bad.message()), HasSubstr("--stack"));
  EXPECT_THAT(std::string(bad.message()), HasSubstr("pytorch-nccl"));
}

TEST(StackPresetTest, OverlapIsRefusedWhereTransfersArePaired) {
  // Under paired send/recv a receive is where the receiver's program posts it: --overlap is read
  // by nothing, so it is refused with the reason (and accepted under async).
  std::ostringstream out, err;
  EXPECT_EQ(cli::Main({"run", "--workload", "pipeline", "--system", "p3.8xlarge", "--stack", "alpa",
                       "--chips", "8", "--overlap", "0"},
                      out, err),
            2);
  EXPECT_THAT(err.str(), HasSubstr("--overlap: '0' does not apply with stack.p2p.mode paired"));
  RawOptions raw;
  raw.values = {
      {"workload", "pipeline"}, {"system", "p3.8xlarge"}, {"chips", "8"}, {"overlap", "0"}};
  EXPECT_TRUE(ResolveRunOptions(raw).ok());
}

TEST(StackPresetTest, ListStacksPrintsEveryPresetWithItsValues) {
  std::ostringstream out, err;
  ASSERT_EQ(cli::Main({"list", "stacks"}, out, err), 0) << err.str();
  for (const stack::StackInfo& info : stack::Stacks()) {
    EXPECT_THAT(out.str(), HasSubstr(info.name + " "));
  }
  EXPECT_THAT(out.str(), HasSubstr("stack.comm.ctas"));
  EXPECT_THAT(out.str(), HasSubstr("stack.host.op_overhead"));
}

// One a100 chip running `ops` vector passes of `bytes` in a chain, issued by a host that takes
// `overhead` per op.
core::Time ChainOnAHost(int ops, int64_t bytes, double overhead) {
  core::Simulator sim;
  core::FairShare fs(sim);
  accel::ChipModel chips(fs, *accel::ChipPreset("a100"), 1);
  core::OpGraph graph;
  core::OpId prev;
  for (int i = 0; i < ops; ++i) {
    core::Op v;
    v.kind = core::OpKind::kVector;
    v.chip = core::ChipId(0);
    v.bytes = bytes;
    prev = i == 0 ? graph.Add(v) : graph.Add(v, {prev});
  }
  core::Executor exec(sim, graph);
  exec.SetRunner(core::OpKind::kVector, &chips);
  stack::StackConfig s;
  s.host_op_overhead_s = overhead;
  IssueFromHost(s, graph, exec);
  EXPECT_TRUE(exec.Run().ok());
  int host_rows = 0;
  for (const core::TimelineRow& r : exec.timeline()) host_rows += r.phase == core::Phase::kHost;
  EXPECT_EQ(host_rows, overhead > 0 ? ops : 0);
  return exec.makespan();
}

TEST(IssueFromHostTest, HostTimeIsExposedOnlyWhereKernelsAreShorter) {
  const double h = 10e-6;
  // Short kernels (1 KiB: ~1 ns each): the GPU waits for the host, op i starts at (i+1)·h, so
  // the chain ends one kernel after 100·h.
  const core::Time one_short = ChainOnAHost(1, 1024, 0);
  EXPECT_EQ(ChainOnAHost(100, 1024, h), core::Time::Seconds(100 * h) + one_short);
  // Long kernels (1 GiB: ~1 ms each): the host runs ahead; only the first op's issue shows.
  const core::Time one_long = ChainOnAHost(1, int64_t{1} << 30, 0);
  EXPECT_EQ(ChainOnAHost(5, int64_t{1} << 30, h),
            core::Time::Seconds(h) + core::Time::Picoseconds(5 * one_long.ps()));
}

TEST(IssueFromHostTest, GemmsTakeTheHostTheirOwnTime) {
  // A tiny GeMM then a tiny vector op on one chip: the GeMM is issued after gemm_overhead, the
  // vector op op_overhead later; both kernels are far shorter, so each starts when issued.
  core::Simulator sim;
  core::FairShare fs(sim);
  accel::ChipModel chips(fs, *accel::ChipPreset("a100"), 1);
  core::OpGraph graph;
  const core::OpId g = graph.Add(core::Op::Gemm(core::ChipId(0), 16, 16, 16));
  core::Op v;
  v.kind = core::OpKind::kVector;
  v.chip = core::ChipId(0);
  v.bytes = 1024;
  const core::OpId w = graph.Add(v, {g});
  core::Executor exec(sim, graph);
  exec.SetRunner(core::OpKind::kGemm, &chips);
  exec.SetRunner(core::OpKind::kVector, &chips);
  stack::StackConfig s;
  s.host_op_overhead_s = 10e-6;
  s.host_gemm_overhead_s = 20e-6;
  IssueFromHost(s, graph, exec);
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_EQ(exec.start_time(g), core::Time::Microseconds(20));
  EXPECT_EQ(exec.start_time(w), core::Time::Microseconds(30));
}

}  // namespace
}  // namespace meshsim::sim
