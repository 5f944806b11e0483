// The software stack as a run sees it: presets, --stack and stack.* keys, `list stacks`, and the
// host that issues ops (IssueFromHost).
#include <algorithm>
#include <cmath>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "accel/chip_model.h"
#include "cli/cli.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/params.h"
#include "core/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/machine.h"
#include "sim/options.h"
#include "stack/stack_config.h"

namespace meshsim::sim {
namespace {

using ::testing::HasSubstr;

// An element-wise op of `bytes` on chip 0.
core::Op VectorOp(int64_t bytes) {
  core::Op v;
  v.kind = core::OpKind::kVector;
  v.chip = core::ChipId(0);
  v.bytes = bytes;
  return v;
}

// `meshsim run ARGS --format json`: the output, which must have exited 0.
std::string RunJson(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--format", "json"});
  std::ostringstream out, err;
  EXPECT_EQ(cli::Main(args, out, err), 0) << err.str();
  return out.str();
}

// The makespan_s of a run's JSON output (NaN without one).
double MakespanOf(const std::string& json) {
  const size_t at = json.find("\"makespan_s\": ");
  return at == std::string::npos ? std::nan("") : std::stod(json.substr(at + 14));
}

TEST(StackPresetTest, IdealAddsNothingAndEveryPresetValidates) {
  EXPECT_TRUE(stack::StackPreset("ideal")->IsIdeal());
  for (const stack::StackInfo& info : stack::Stacks()) {
    SCOPED_TRACE(info.name);
    absl::StatusOr<stack::StackConfig> s = stack::StackPreset(info.name);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(s->Validate().ok());
    EXPECT_EQ(s->IsIdeal(), info.name == "ideal");
  }
  // Each cost alone makes a stack not ideal.
  for (const auto& set :
       std::vector<std::pair<std::string, std::string>>{{"stack.kernel.in_order", "1"},
                                                        {"stack.comm.protocols", "ll,simple"},
                                                        {"stack.comm.simple.hop_net", "1us"},
                                                        {"stack.comm.ll128.efficiency", "0.9"}}) {
    stack::StackConfig s;
    ASSERT_TRUE(core::SetParam(s.Params(), set.first, set.second).ok()) << set.first;
    EXPECT_FALSE(s.IsIdeal()) << set.first;
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

TEST(StackPresetTest, AnUnfusedSoftmaxScalesAndMasksTheScoresInKernelsOfTheirOwn) {
  // ATP's M2 layer on one A100 (b = 4, a = 32, s = 2048: scores of b·a·s²·e = 1 GiB in fp16).
  // stack.kernel.fused_softmax = 0 adds four element-wise kernels over the scores (scale and
  // mask, forward and backward), each streaming them in and out at pointwise_efficiency of the
  // HBM after one launch: 4·(2·2^30 B / (2.039e12 B/s · 0.63) + 0.85 us) = 6.6904 ms more.
  const std::vector<std::string> run = {"--workload", "layer", "--system",    "a100",
                                        "--chips",    "1",     "--algorithm", "atp",
                                        "--mesh",     "1x1",   "--model",     "atp-m2"};
  std::vector<std::string> unfused = run;
  unfused.insert(unfused.end(), {"--set", "stack.kernel.fused_softmax=0"});
  const double added = MakespanOf(RunJson(unfused)) - MakespanOf(RunJson(run));
  EXPECT_NEAR(added, 4 * (2.0 * (1 << 30) / (2.039e12 * 0.63) + 0.85e-6), 1e-9);
  // Eager PyTorch runs them; the compiled and kernel-level stacks fold them into the softmax.
  EXPECT_EQ(stack::StackPreset("pytorch-nccl")->kernel_fused_softmax, 0);
  for (const char* name : {"ideal", "nccl", "alpa"}) {
    EXPECT_EQ(stack::StackPreset(name)->kernel_fused_softmax, 1) << name;
  }
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

TEST(ProtocolTest, NcclPicksLlThenLl128ThenSimpleOnAnA100NvswitchRing) {
  // NCCL's Ring model for an 8-GPU AllReduce of S bytes at 235 GB/s (tuning.cc):
  //   LL     3.6 + 14·0.47 = 10.18 us + 1.75·S / (0.25 · 235 GB/s)
  //   LL128 10.0 + 14·1.9  = 36.6 us  + 1.75·S / (0.92 · 235 GB/s)
  //   Simple 8.4 + 14·3.4  = 56.0 us  + 1.75·S / 235 GB/s
  // LL = LL128 at S = 26.42 us / (1.75/58.75e9 − 1.75/216.2e9) = 1.22 MB;
  // LL128 = Simple at S = 19.4 us / (1.75/216.2e9 − 1.75/235e9) = 30.1 MB.
  const stack::StackConfig nccl = *stack::StackPreset("nccl");
  stack::CallShape shape;
  shape.steps = 14;
  shape.bus_bandwidth = 235e9;
  shape.hops[stack::kHopNvlink] = 8;
  shape.ll128_allowed = true;
  const auto pick = [&](double bytes) {
    shape.bus_bytes = 1.75 * bytes;
    return stack::ChooseProtocol(nccl, shape);
  };
  const double ll_ll128 = 26.42e-6 / (1.75 / 58.75e9 - 1.75 / 216.2e9);
  const double ll128_simple = 19.4e-6 / (1.75 / 216.2e9 - 1.75 / 235e9);
  EXPECT_NEAR(ll_ll128, 1.22e6, 0.01e6);
  EXPECT_NEAR(ll128_simple, 30.1e6, 0.2e6);
  EXPECT_EQ(pick(8 << 10), stack::kLl);
  EXPECT_EQ(pick(0.98 * ll_ll128), stack::kLl);
  EXPECT_EQ(pick(1.02 * ll_ll128), stack::kLl128);
  EXPECT_EQ(pick(0.98 * ll128_simple), stack::kLl128);
  EXPECT_EQ(pick(1.02 * ll128_simple), stack::kSimple);
  // Over PCIe (no LL128): LL until 3.6 + 14·1.0 = 17.6 us meets 8.4 + 14·5.7 = 88.2 us,
  // S = 70.6 us / (1.75/58.75e9 − 1.75/235e9) = 3.16 MB.
  shape.hops[stack::kHopNvlink] = 0;
  shape.hops[stack::kHopPci] = 8;
  shape.ll128_allowed = false;
  const double ll_simple = 70.6e-6 / (1.75 / 58.75e9 - 1.75 / 235e9);
  EXPECT_EQ(pick(0.98 * ll_simple), stack::kLl);
  EXPECT_EQ(pick(1.02 * ll_simple), stack::kSimple);
  // NCCL_PROTO-like lists: only what is enabled runs; Simple when nothing enabled applies.
  stack::StackConfig only = nccl;
  only.comm_protocols = "ll128";
  EXPECT_EQ(stack::ChooseProtocol(only, shape), stack::kSimple);
  only.comm_protocols = "ll,ll128";
  EXPECT_EQ(stack::ChooseProtocol(only, shape), stack::kLl);
  EXPECT_TRUE(only.Enabled(stack::kLl128));
  EXPECT_FALSE(only.Enabled(stack::kSimple));
  // A bad list is refused with the key and the allowed values.
  const absl::Status bad = core::SetParam(only.Params(), "stack.comm.protocols", "simple,ll");
  EXPECT_THAT(std::string(bad.message()), HasSubstr("stack.comm.protocols"));
  EXPECT_THAT(std::string(bad.message()), HasSubstr("ll,ll128,simple"));
}

TEST(ProtocolTest, SmallAllReducesRunLlAndReportTheirCalls) {
  // 8 GPUs of a DGX A100, one AllReduce: 8 KiB runs LL (latency ~10 us, not Simple's 56 us),
  // 1 GiB runs Simple; the JSON counts the calls by protocol.
  for (const auto& [bytes, protocol] :
       std::vector<std::pair<std::string, std::string>>{{"8KiB", "ll"}, {"1GiB", "simple"}}) {
    const std::string out =
        RunJson({"--system", "dgx-a100", "--chips", "8", "--workload", "collective", "--collective",
                 "allreduce", "--group", "all", "--bytes", bytes});
    EXPECT_THAT(out, HasSubstr(absl::StrCat("\"", protocol, "\": 1"))) << out;
    if (protocol == "ll") {
      // makespan < Simple's fixed costs alone (8.4 + 14·3.4 us).
      EXPECT_LT(MakespanOf(out), 56e-6) << out;
    }
  }
}

TEST(ProtocolTest, TwoHostAllReduceIsNearPublishedNcclTests) {
  // Two HGX A100 hosts with four 200 Gb/s HDR NICs each: nccl-tests all_reduce_perf at 1 GiB
  // and up measures 91 GB/s bus bandwidth (github.com/NVIDIA/nccl-tests/issues/100, a comment of
  // 2022-01-17) and 86 GB/s (github.com/NVIDIA/nccl/issues/1048), against 100 GB/s of NICs. The
  // dgx-a100 preset with nic.count = 4, under its nccl stack: every GPU leaves by its own rail,
  // the collective runs intra-host / across hosts on every rail / intra-host, and its kernel runs
  // the CTAs the NVSwitch level needs — a kernel sized to the NIC alone (3 CTAs, 29 GB/s) ran the
  // intra-host phases at a tenth of their bandwidth (25 GB/s bus bandwidth). Within ±20% of 88.5.
  const std::string out =
      RunJson({"--system", "dgx-a100", "--chips", "16", "--set", "nic.count=4", "--workload",
               "collective", "--collective", "allreduce", "--group", "all", "--bytes", "1GiB"});
  const double busbw = std::ldexp(1.0, 30) * 2 * 15 / 16 / MakespanOf(out);
  EXPECT_NEAR(busbw, 88.5e9, 0.2 * 88.5e9) << out;
}

// Runs every op for op.bytes microseconds, whatever else runs.
class FixedTimeRunner : public core::OpRunner {
 public:
  void Start(core::OpId id, const core::Op& op, core::Executor& exec) override {
    exec.sim().ScheduleAt(exec.sim().Now() + core::Time::Microseconds(op.bytes),
                          [&exec, id] { exec.Finish(id); });
  }
};

// A GeMM on `chip` that FixedTimeRunner runs for `us` microseconds.
core::OpId AddTimedGemm(core::OpGraph& graph, int chip, int64_t us,
                        std::initializer_list<core::OpId> deps = {}) {
  core::Op g = core::Op::Gemm(core::ChipId(chip), 1, 1, 1);
  g.bytes = us;
  return graph.Add(g, deps);
}

// An op's start in whole microseconds.
int64_t StartUs(const core::Executor& exec, core::OpId id) {
  return exec.start_time(id).ps() / 1000000;
}

TEST(OrderStreamsTest, ComputeRunsInProgramOrderAndCollectivesWaitForTheComputeBeforeThem) {
  // Program order (op index): G0 chip 0 (10 us); C, a collective of chips 0 and 1 (5 us);
  // G1 chip 0 after C (1 us); G2 chip 0, independent (1 us); G3 chip 1, independent (1 us).
  //   free:     G0 [0,10], C [0,5], G1 [5,6], G2 [0,1], G3 [0,1]
  //   in order: C waits for G0 (the compute before it on chip 0): [10,15]; G1 after C [15,16];
  //             G2 behind G1 in chip 0's stream [16,17]; G3 is chip 1's first kernel [0,1].
  for (int in_order : {0, 1}) {
    core::Simulator sim;
    core::OpGraph graph;
    const core::OpId g0 = AddTimedGemm(graph, 0, 10, {});
    core::Op c = core::Op::Collective(core::CollectiveKind::kAllReduce,
                                      graph.AddGroup({core::ChipId(0), core::ChipId(1)}), 5);
    const core::OpId cid = graph.Add(c);
    const core::OpId g1 = AddTimedGemm(graph, 0, 1, {cid});
    const core::OpId g2 = AddTimedGemm(graph, 0, 1, {});
    const core::OpId g3 = AddTimedGemm(graph, 1, 1, {});
    core::Executor exec(sim, graph);
    FixedTimeRunner fixed;
    exec.SetRunner(core::OpKind::kGemm, &fixed);
    exec.SetRunner(core::OpKind::kCollective, &fixed);
    stack::StackConfig s;
    s.kernel_in_order = in_order;
    OrderStreams(s, graph, exec);
    ASSERT_TRUE(exec.Run().ok());
    SCOPED_TRACE(in_order);
    EXPECT_EQ(StartUs(exec, g0), 0);
    EXPECT_EQ(StartUs(exec, cid), in_order ? 10 : 0);
    EXPECT_EQ(StartUs(exec, g1), in_order ? 15 : 5);
    EXPECT_EQ(StartUs(exec, g2), in_order ? 16 : 0);
    EXPECT_EQ(StartUs(exec, g3), 0);
  }
  // The GPU stacks run streams; the TPU's does not.
  EXPECT_EQ(stack::StackPreset("ideal")->kernel_in_order, 0);
  for (const char* name : {"nccl", "pytorch-nccl", "alpa"}) {
    EXPECT_EQ(stack::StackPreset(name)->kernel_in_order, 1) << name;
  }
}

// Collectives of one communicator one at a time (each op.bytes microseconds), as NCCL runs a
// communicator's calls in order: a collective begins when the previous one ends, on its first
// member then, on the others 1 us later.
class SerialCommRunner : public core::OpRunner {
 public:
  void Start(core::OpId id, const core::Op& op, core::Executor& exec) override {
    const core::Time begin = std::max(exec.sim().Now(), busy_until_);
    busy_until_ = begin + core::Time::Microseconds(op.bytes);
    const std::span<const core::ChipId> g = exec.graph().group(op.group);
    const std::vector<core::ChipId> members(g.begin(), g.end());
    exec.sim().ScheduleAt(begin, [&exec, id, members] {
      exec.Begun(id, members[0]);
      exec.sim().ScheduleAfter(core::Time::Microseconds(1), [&exec, id, members] {
        for (size_t i = 1; i < members.size(); ++i) exec.Begun(id, members[i]);
      });
    });
    exec.sim().ScheduleAt(busy_until_, [&exec, id] { exec.Finish(id); });
  }

 private:
  core::Time busy_until_;
};

TEST(OrderStreamsTest, OneQueueHoldsLaterKernelsUntilTheCollectiveBeforeThemBegins) {
  // Program order: A0, a collective of chips 0 and 1 (20 us); G0 chip 0 (2 us); A1 on the same
  // chips after G0 (5 us); G1 chip 0 (3 us) and G2 chip 1 (1 us), independent of A1 — the next
  // chunk's kernels. The communicator runs A1 after A0: it begins at 20 us on chip 0, 21 on 1.
  //   streams:   G0 [0,2], G1 [2,5] (behind G0), G2 [0,1] (chip 1's first kernel).
  //   one queue: G0 [0,2] (A0 began at 0); G1 waits for A1 to begin on chip 0: [20,23]; G2 for
  //              A1 on chip 1: [21,22].
  for (int single_queue : {0, 1}) {
    core::Simulator sim;
    core::OpGraph graph;
    const core::GroupId pair = graph.AddGroup({core::ChipId(0), core::ChipId(1)});
    const auto collective = [&](int64_t us, std::initializer_list<core::OpId> deps) {
      return graph.Add(core::Op::Collective(core::CollectiveKind::kAllReduce, pair, us), deps);
    };
    const core::OpId a0 = collective(20, {});
    const core::OpId g0 = AddTimedGemm(graph, 0, 2, {});
    const core::OpId a1 = collective(5, {g0});
    const core::OpId g1 = AddTimedGemm(graph, 0, 3, {});
    const core::OpId g2 = AddTimedGemm(graph, 1, 1, {});
    core::Executor exec(sim, graph);
    FixedTimeRunner fixed;
    SerialCommRunner comm;
    exec.SetRunner(core::OpKind::kGemm, &fixed);
    exec.SetRunner(core::OpKind::kCollective, &comm);
    stack::StackConfig s;
    s.kernel_in_order = 1;
    s.kernel_single_queue = single_queue;
    ASSERT_TRUE(s.Validate().ok());
    OrderStreams(s, graph, exec);
    ASSERT_TRUE(exec.Run().ok());
    SCOPED_TRACE(single_queue);
    EXPECT_EQ(StartUs(exec, a0), 0);
    EXPECT_EQ(StartUs(exec, g0), 0);
    EXPECT_EQ(exec.end_time(a1), core::Time::Microseconds(25));
    EXPECT_EQ(StartUs(exec, g1), single_queue ? 20 : 2);
    EXPECT_EQ(StartUs(exec, g2), single_queue ? 21 : 0);
    // The waits in the queue are `queue` rows on the chips' tracks: G1 from G0's end, G2 from
    // the start.
    std::vector<std::tuple<uint32_t, uint32_t, int64_t, int64_t>> queued;
    for (const core::TimelineRow& r : exec.timeline()) {
      if (r.phase != core::Phase::kQueue) continue;
      EXPECT_EQ(r.unit_kind, core::UnitKind::kChip);
      queued.emplace_back(r.op.value(), r.chip.value(), r.start.ps() / 1000000,
                          r.end.ps() / 1000000);
    }
    using Q = std::vector<std::tuple<uint32_t, uint32_t, int64_t, int64_t>>;
    const Q expected = single_queue ? Q{{g1.value(), 0, 2, 20}, {g2.value(), 1, 0, 21}} : Q{};
    EXPECT_EQ(queued, expected);
  }
  // One queue needs the streams' program order.
  stack::StackConfig s;
  s.kernel_single_queue = 1;
  EXPECT_THAT(std::string(s.Validate().message()), HasSubstr("stack.kernel.single_queue"));
  // ATP and Megatron-LM run one queue (CUDA_DEVICE_MAX_CONNECTIONS=1); the others do not.
  EXPECT_EQ(stack::StackPreset("pytorch-nccl")->kernel_single_queue, 1);
  for (const char* name : {"ideal", "nccl", "alpa"}) {
    EXPECT_EQ(stack::StackPreset(name)->kernel_single_queue, 0) << name;
  }
}

TEST(IssueFromHostTest, CollectivesTakeTheHostTheirOwnTime) {
  // Chip 0's host issues a collective (with chip 1), then an independent element-wise op: the
  // collective is issued after comm_overhead (on both hosts), the op op_overhead later. Kernels
  // of 1 us, so each starts when issued.
  core::Simulator sim;
  core::OpGraph graph;
  core::Op c = core::Op::Collective(core::CollectiveKind::kAllReduce,
                                    graph.AddGroup({core::ChipId(0), core::ChipId(1)}), 1);
  const core::OpId cid = graph.Add(c);
  const core::OpId vid = graph.Add(VectorOp(1));
  core::Executor exec(sim, graph);
  FixedTimeRunner fixed;
  exec.SetRunner(core::OpKind::kCollective, &fixed);
  exec.SetRunner(core::OpKind::kVector, &fixed);
  stack::StackConfig s;
  s.host_op_overhead_s = 10e-6;
  s.host_comm_overhead_s = 24e-6;
  IssueFromHost(s, graph, exec);
  ASSERT_TRUE(exec.Run().ok());
  EXPECT_EQ(exec.start_time(cid), core::Time::Microseconds(24));
  EXPECT_EQ(exec.start_time(vid), core::Time::Microseconds(34));
  // The pytorch-nccl preset: a collective costs the host 2.33 element-wise ops (measured).
  const stack::StackConfig pt = *stack::StackPreset("pytorch-nccl");
  EXPECT_NEAR(pt.host_comm_overhead_s / pt.host_op_overhead_s, 18.399 / 7.907, 1e-9);
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
    prev = i == 0 ? graph.Add(VectorOp(bytes)) : graph.Add(VectorOp(bytes), {prev});
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
  const core::OpId w = graph.Add(VectorOp(1024), {g});
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
