// The assembled machine (chips + network on one fair-share solver), driven through the CLI:
// calibration of the tpuv4 and tpuv4-slice presets, per-axis link bandwidths, and contention
// between the NIC and the cores.
#include "sim/machine.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "algorithms/autotune/cost_model.h"
#include "algorithms/registry.h"
#include "cli/cli.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "sim/system.h"

namespace meshsim::sim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Runs `meshsim run ... --format json` and returns makespan_s.
double Makespan(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  args.push_back("--format");
  args.push_back("json");
  std::ostringstream out, err;
  EXPECT_EQ(cli::Main(args, out, err), 0) << err.str();
  const std::string json = out.str();
  const size_t at = json.find("\"makespan_s\": ");
  EXPECT_NE(at, std::string::npos);
  return std::stod(json.substr(at + 14));
}

TEST(MachineTest, CliAllGatherMatchesRingFormulaForBothDirections) {
  // tpuv4: link 30 GB/s per direction, latency 1 us, t_sync 5 us, t_launch 100 us.
  // t_launch + (P−1)·(t_sync + latency + s/(d·bw)) for each row ring of an R×P torus.
  for (int d : {1, 2}) {
    for (int p : {4, 16, 32}) {
      for (double s : {1 * kMiB, 256 * kMiB}) {
        const double got = Makespan(
            {"--workload", "collective", "--collective", "allgather", "--group", "row", "--bytes",
             std::to_string(static_cast<int64_t>(s)), "--chips", std::to_string(2 * p), "--mesh",
             "2x" + std::to_string(p), "--set", "comm.ring_directions=" + std::to_string(d)});
        const double expected = 100e-6 + (p - 1) * (5e-6 + 1e-6 + s / (d * 30e9));
        EXPECT_NEAR(got, expected, 0.01 * expected) << "d=" << d << " P=" << p << " s=" << s;
      }
    }
  }
}

// comm.ring_directions = 1 halves the bandwidth of every ring collective and of the bidirectional
// SendRecv steps Wang, tp1d and fsdp decompose them into, so an algorithm that moves data on
// rings must get slower; SUMMA (pipelined broadcasts) and Cannon (one-way shifts) use no ring
// and must not change. A registered algorithm missing from both lists fails the test.
TEST(MachineTest, EveryAlgorithmHonoursRingDirections) {
  const std::set<std::string> rings = {"meshslice", "collective", "wang", "tp1d",
                                       "fsdp",      "example",    "atp",  "megatron"};
  const std::set<std::string> no_rings = {"summa", "cannon", "tp2d"};
  for (const algorithms::AlgorithmInfo& a : algorithms::Algorithms()) {
    ASSERT_TRUE(rings.count(a.name) + no_rings.count(a.name) == 1) << a.name << ": classify it";
    double t[3] = {0, 0, 0};
    for (int d : {1, 2}) {
      std::vector<std::string> args = {"--workload",  "gemm",
                                       "--gemm",      "4096,4096,4096",
                                       "--chips",     "16",
                                       "--algorithm", a.name,
                                       "--set",       "comm.ring_directions=" + std::to_string(d)};
      if (a.is_layer()) {  // A whole layer of ATP's M1 instead of the GeMM.
        args = {"--workload",  "layer",
                "--model",     "atp-m1",
                "--chips",     "16",
                "--algorithm", a.name,
                "--mesh",      a.name == "megatron" ? "16x1" : "4x4",
                "--set",       "comm.ring_directions=" + std::to_string(d)};
      } else if (!a.one_dimensional) {
        args.insert(args.end(), {"--mesh", "4x4"});
      }
      t[d] = Makespan(args);
    }
    if (rings.count(a.name)) {
      EXPECT_GT(t[1], 1.1 * t[2]) << a.name << " ignores comm.ring_directions=1";
    } else {
      EXPECT_EQ(t[1], t[2]) << a.name;
    }
  }
}

TEST(MachineTest, CliSendRecvIsOneLaunchOneSyncOneLinkTransfer) {
  // One shift of b bytes over one link: t_launch + t_sync + latency + b/bw.
  const double b = 64 * kMiB;
  const double got = Makespan({"--workload", "collective", "--collective", "sendrecv", "--bytes",
                               "64MiB", "--chips", "16", "--mesh", "4x4"});
  const double expected = 100e-6 + 5e-6 + 1e-6 + b / 30e9;
  EXPECT_NEAR(got, expected, 0.01 * expected);
}

// The TPUv4-measured cost model's AllGather on the 4-chip rings of a 4×4 v4-32 slice
// (reference/meshslice-calibration.md; algorithms/autotune/cost_model.h):
//   t_launch + (n−1)·(s/bw_axis + t_step) = 13 us + 3·(s/bw_axis + 5 us),
//   bw 27.472 GB/s on axis 0 (a column: across hosts), 79.751 GB/s on axis 1 (a row).
// tpuv4-slice reproduces it on both axes: its one-way ring step moves s over one link of the
// axis at link.bandwidth_axisk, after t_sync 4 us + 1 us hop latency.
TEST(MachineTest, TpuV4SliceAllGatherTakesTheMeasuredCostModelTimeOnEachAxis) {
  const algorithms::CostModel& measured = algorithms::CostModel::Tpuv4Measured();
  for (double s : {1 * kMiB, 16 * kMiB, 256 * kMiB}) {
    for (auto [group, axis, bw] :
         {std::tuple{"col", algorithms::MeshAxis::kInterRow, 27.472e9},
          std::tuple{"row", algorithms::MeshAxis::kInterColumn, 79.751e9}}) {
      const double got =
          Makespan({"--system", "tpuv4-slice", "--workload", "collective", "--collective",
                    "allgather", "--group", group, "--bytes",
                    std::to_string(static_cast<int64_t>(s)), "--chips", "16", "--mesh", "4x4"});
      const double expected = 13e-6 + 3 * (s / bw + 5e-6);
      EXPECT_NEAR(measured.AllGather(axis, 4, s), expected, 1e-12);
      EXPECT_NEAR(got, expected, 1e-6 * expected) << group << " s=" << s;
    }
  }
}

// What tpuv4-slice does not fit (docs/calibration.md): one launch, sync and link rate serve every
// op. A ReduceScatter is the AllGather's ring plus a reduction per step (3 bytes of HBM traffic
// per byte received at 1.2 TB/s): 13 us + 3·(5 us + s/bw_axis + 3s/1.2 TB/s), not the measured
// 26 us + 3·(5 us + s/bw_RdS). A SendRecv shift is 13 us + 4 us + 1 us + b/bw_axis, not the
// measured 13 us + 50 us + b/bw_SendRecv.
TEST(MachineTest, TpuV4SliceReduceScatterAndSendRecvUseTheAllGatherConstants) {
  const double s = 16 * kMiB;
  for (auto [group, bw] : {std::pair{"col", 27.472e9}, std::pair{"row", 79.751e9}}) {
    const auto run = [&](const char* collective) {
      return Makespan({"--system", "tpuv4-slice", "--workload", "collective", "--collective",
                       collective, "--group", group, "--bytes", "16MiB", "--chips", "16", "--mesh",
                       "4x4"});
    };
    const double reduce_scatter = 13e-6 + 3 * (5e-6 + s / bw + 3 * s / 1.2e12);
    EXPECT_NEAR(run("reducescatter"), reduce_scatter, 1e-6 * reduce_scatter) << group;
    const double shift = 13e-6 + 4e-6 + 1e-6 + s / bw;
    EXPECT_NEAR(run("sendrecv"), shift, 1e-6 * shift) << group;
  }
}

// link.bandwidth_axis0/1 override link.bandwidth on their axis only: on tpuv4 (30 GB/s, two
// directions) a row AllGather with axis 1 at 90 GB/s takes t_launch + (P−1)·(t_sync + latency +
// s/(2·90 GB/s)) while the column one keeps 30 GB/s; 0 restores link.bandwidth.
TEST(MachineTest, AxisBandwidthOverridesOnlyItsAxis) {
  const double s = 64 * kMiB;
  const auto run = [&](const char* group, const std::string& set) {
    return Makespan({"--workload", "collective", "--collective", "allgather", "--group", group,
                     "--bytes", "64MiB", "--chips", "16", "--mesh", "4x4", "--set", set});
  };
  const auto ring = [&](double bw) { return 100e-6 + 3 * (5e-6 + 1e-6 + s / (2 * bw)); };
  EXPECT_NEAR(run("row", "link.bandwidth_axis1=90GB/s"), ring(90e9), 1e-6 * ring(90e9));
  EXPECT_NEAR(run("col", "link.bandwidth_axis1=90GB/s"), ring(30e9), 1e-6 * ring(30e9));
  EXPECT_NEAR(run("col", "link.bandwidth_axis0=10GB/s"), ring(10e9), 1e-6 * ring(10e9));
  EXPECT_EQ(run("row", "link.bandwidth_axis1=0"), run("row", "link.bandwidth_axis0=0"));
  // torus2d has no axis 2: the parameter is read by torus3d only, so setting it is refused
  // (setting it to what it is, 0, changes nothing and is accepted).
  std::ostringstream out, err;
  EXPECT_EQ(
      cli::Main({"run", "--workload", "collective", "--collective", "allgather", "--bytes", "64MiB",
                 "--chips", "16", "--mesh", "4x4", "--set", "link.bandwidth_axis2=1GB/s"},
                out, err),
      2);
  EXPECT_EQ(err.str(),
            "meshsim: --set: 'link.bandwidth_axis2=1GB/s' does not apply to --topology torus2d; "
            "it is read by --topology torus3d\n");
  EXPECT_EQ(run("row", "link.bandwidth_axis2=0"), run("row", "link.bandwidth_axis1=0"));
}

// comm.torus_algorithm=dimension-order through the CLI: `--group all` on tpuv4's 4x4 torus (30
// GB/s per direction, both ways, t_launch 100 us, t_sync 5 us, 1 us a hop, HBM 1.2 TB/s) runs
// an AllReduce of b as ReduceScatter along dimension 0, then 1, then AllGather back — 2·(3 + 3)
// steps instead of the flat ring's 2·15 — with pieces b/4 along 0 and b/16 along 1:
//   100 us + Σ_{N in 4, 16} [6·(5 us + 1 us + (b/N)/(2·30 GB/s)) + 3·3·(b/N)/1.2 TB/s].
// The flat ring sends and reduces the same bytes in 30 steps: (30 − 12)·6 us slower.
TEST(MachineTest, DimensionOrderAllReduceOverTheWholeTorus) {
  const double b = 64 * kMiB;
  const auto run = [&](const std::string& algorithm) {
    return Makespan({"--workload", "collective", "--collective", "allreduce", "--group", "all",
                     "--bytes", "64MiB", "--chips", "16", "--mesh", "4x4", "--set",
                     "comm.torus_algorithm=" + algorithm});
  };
  double expected = 100e-6;
  for (double n : {4.0, 16.0}) expected += 6 * (6e-6 + b / n / 60e9) + 9 * (b / n) / 1.2e12;
  const double dimension_order = run("dimension-order"), flat = run("flat");
  EXPECT_NEAR(dimension_order, expected, 1e-6 * expected);
  EXPECT_NEAR(flat - dimension_order, 18 * 6e-6, 1e-3 * 18 * 6e-6);
  // The default is flat.
  EXPECT_EQ(Makespan({"--workload", "collective", "--collective", "allreduce", "--group", "all",
                      "--bytes", "64MiB", "--chips", "16", "--mesh", "4x4"}),
            flat);
}

// torus.length2_links through the CLI: an AllReduce of b over a column of tpuv4's 2x4 torus (the
// length-2 dimension; 30 GB/s per direction, rings both ways, t_launch 100 us, t_sync 5 us, 1 us
// a hop, HBM 1.2 TB/s). Two ring steps of b/2, half to each neighbour — the same chip — then
// one reduction of 3·(b/2) bytes on HBM; the step's b/2 crosses L links each way at once:
//   100 us + 2·(6 us + (b/2)/(L·30 GB/s)) + 3·(b/2)/1.2 TB/s,
// L = links each way between the pair: 2 by default (both ports of each chip), 1 when set so.
TEST(MachineTest, LengthTwoTorusDimensionHasTwoLinksUnlessSetToOne) {
  const double b = 64 * kMiB;
  const auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"--workload", "collective", "--collective", "allreduce",
                                     "--group",    "col",        "--bytes",      "64MiB",
                                     "--chips",    "8",          "--mesh",       "2x4"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Makespan(args);
  };
  for (int links : {1, 2}) {
    const double expected = 100e-6 + 2 * (6e-6 + (b / 2) / (links * 30e9)) + 3 * (b / 2) / 1.2e12;
    EXPECT_NEAR(run({"--set", "torus.length2_links=" + std::to_string(links)}), expected,
                1e-6 * expected)
        << "links=" << links;
  }
  EXPECT_EQ(run({}), run({"--set", "torus.length2_links=2"}));  // The default.
}

// Plugins reach the algorithm through the network model: a pipeline whose 16 data-parallel
// replicas fill the 4x4 torus (--stages 1 --dp 16 --mesh 1x1) reduces its gradients with one
// AllReduce over every chip, which dimension-order decomposes (the flat ring in replica order,
// row-major, has two-hop steps at row ends that share links); fsdp lowers its gradient
// ReduceScatter as SendRecv ring steps, which stay as they are.
TEST(MachineTest, DimensionOrderReachesWholeTorusReductionsOfPlugins) {
  const auto run = [](std::vector<std::string> args, const std::string& algorithm) {
    args.insert(args.end(), {"--chips", "16", "--set", "comm.torus_algorithm=" + algorithm});
    return Makespan(args);
  };
  const std::vector<std::string> dp = {
      "--workload", "pipeline", "--hidden", "1024", "--heads", "16",  "--layers",       "2",
      "--stages",   "1",        "--dp",     "16",   "--mesh",  "1x1", "--microbatches", "2",
      "--batch",    "32",       "--seq",    "512"};
  EXPECT_LT(run(dp, "dimension-order"), run(dp, "flat"));
  const std::vector<std::string> fsdp = {"--model", "gpt3",        "--batch", "8",          "--seq",
                                         "512",     "--algorithm", "fsdp",    "--dataflow", "rs"};
  EXPECT_EQ(run(fsdp, "dimension-order"), run(fsdp, "flat"));
}

// The presets that existed before the per-axis parameters leave them at 0, so every grid link
// runs at link.bandwidth as before (the golden fingerprints hold the tpuv4 results).
TEST(MachineTest, OtherPresetsKeepOneLinkBandwidth) {
  for (const SystemInfo& info : Systems()) {
    if (info.name == "tpuv4-slice") continue;
    RawOptions raw;
    raw.values = {{"system", info.name}, {"chips", "16"}, {"topology", "torus2d"}};
    absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
    ASSERT_TRUE(o.ok()) << info.name << ": " << o.status();
    for (double bw : o->system.net.axis_bandwidth_bytes_per_s) EXPECT_EQ(bw, 0) << info.name;
    absl::StatusOr<network::Topology> t = BuildTopology(*o);
    ASSERT_TRUE(t.ok()) << info.name << ": " << t.status();
    for (const network::Link& link : t->links()) {
      EXPECT_EQ(link.bandwidth_bytes_per_s, o->system.net.link_bandwidth_bytes_per_s) << info.name;
    }
  }
}

// Bad axis bandwidths: exit 2 and one line naming the key, the value and what is allowed.
TEST(MachineTest, AxisBandwidthParametersValidate) {
  for (auto [set, words] :
       {std::pair{"link.bandwidth_axis0=-1",
                  std::vector<std::string>{"link.bandwidth_axis0", "'-1'", "allowed 0 to 1e+15"}},
        std::pair{"link.bandwidth_axis1=500",
                  std::vector<std::string>{"link.bandwidth_axis1", "500",
                                           "0 (= link.bandwidth) or 1000 to 1e+15 B/s"}},
        std::pair{"link.bandwidth_axis2=fast",
                  std::vector<std::string>{"link.bandwidth_axis2", "'fast'", "GB/s"}}}) {
    std::ostringstream out, err;
    EXPECT_EQ(cli::Main({"run", "--workload", "chain", "--chips", "4", "--set", set}, out, err), 2)
        << set;
    const std::string message = err.str();
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
    for (const std::string& w : words) EXPECT_THAT(message, testing::HasSubstr(w)) << set;
  }
}

TEST(MachineTest, LocalGemmRunsNearTheFittedRate) {
  // 2·8192³ flops at 249 TFLOPS ± 3% (MeshSlice simulation-fitted compute rate).
  const double t = Makespan({"--workload", "gemm", "--gemm", "8192,8192,8192", "--chips", "1"});
  const double tflops = 2.0 * 8192 * 8192 * 8192 / t / 1e12;
  EXPECT_NEAR(tflops, 249, 0.03 * 249);
}

// A memory-bound GeMM on chip 0, optionally beside a NIC transfer from chip 0 to chip 1 that
// reads chip 0's HBM: the transfer takes HBM bandwidth from the GeMM.
core::Time GemmTime(bool with_transfer, double hbm_bytes_per_s) {
  RawOptions raw;
  raw.values = {{"chips", "2"}, {"mesh", "1x2"}, {"workload", "chain"}};
  raw.sets = {"hbm.bandwidth=" + std::to_string(hbm_bytes_per_s)};
  RunOptions o = *ResolveRunOptions(raw);
  core::Simulator sim;
  core::FairShare fs(sim);
  auto machine = BuildMachine(o, algorithms::Mesh{1, 2}, fs);
  EXPECT_TRUE(machine.ok()) << machine.status();
  core::OpGraph graph;
  const core::OpId gemm = graph.Add(core::Op::Gemm(core::ChipId(0), 8192, 8, 8192));
  if (with_transfer) graph.Add(core::Op::Transfer(core::ChipId(0), core::ChipId(1), 1 << 30));
  core::Executor exec(sim, graph);
  (*machine)->Attach(exec);
  EXPECT_TRUE(exec.Run().ok());
  return exec.end_time(gemm) - exec.start_time(gemm);
}

// Eight chips of the h100 system (nccl stack) with `sets`, running a graph the caller builds on
// `graph`: Run() attaches the machine and runs it.
struct H100Chain {
  explicit H100Chain(std::vector<std::string> sets) {
    RawOptions raw;
    raw.values = {{"system", "h100"}, {"chips", "8"}, {"workload", "chain"}};
    raw.sets = std::move(sets);
    absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
    EXPECT_TRUE(o.ok()) << o.status();
    auto built = BuildMachine(*o, algorithms::Mesh{1, 8}, fs);
    EXPECT_TRUE(built.ok()) << built.status();
    machine = std::move(*built);
  }
  core::Executor& Run() {
    exec = std::make_unique<core::Executor>(sim, graph);
    machine->Attach(*exec);
    EXPECT_TRUE(exec->Run().ok());
    return *exec;
  }
  // The start of `op`'s launch row on chip 0 (-1 if none).
  double LaunchedOnChip0(core::OpId op) const {
    for (const core::TimelineRow& r : exec->timeline()) {
      if (r.op == op && r.chip == core::ChipId(0) && r.phase == core::Phase::kLaunch) {
        return r.start.seconds();
      }
    }
    return -1;
  }
  core::Simulator sim;
  core::FairShare fs{sim};
  std::unique_ptr<Machine> machine;
  core::OpGraph graph;
  std::unique_ptr<core::Executor> exec;
};

// An AllGather over chips 0 and 1 launched while an 8192³ GeMM runs on each (the h100 system,
// nccl stack). A persistent GeMM (cuBLAS on Hopper) keeps every SM until its last wave, whose
// 2209 − 16·132 = 97 tiles leave 35 SMs; a GeMM of one CTA per tile (gemm.persistent = 0) does
// the same when the communication kernel's CTAs are dispatched after its pending ones
// (stack.comm.high_priority = 0, the presets'), and lets it start at once when they go first
// (high_priority = 1). Returns the collective's start of steps (its launch row's start), the
// GeMM's end and the NIC interference rows' total on chip 0.
struct Launched {
  double collective, gemm_end, waited;
};
Launched CollectiveBesideGemm(bool persistent, bool high_priority) {
  H100Chain rig({std::string("gemm.persistent=") + (persistent ? "1" : "0"),
                 std::string("stack.comm.high_priority=") + (high_priority ? "1" : "0")});
  core::OpGraph& graph = rig.graph;
  const core::OpId g0 = graph.Add(core::Op::Gemm(core::ChipId(0), 8192, 8192, 8192));
  graph.Add(core::Op::Gemm(core::ChipId(1), 8192, 8192, 8192));
  const core::OpId tiny = graph.Add(core::Op::Gemm(core::ChipId(2), 1024, 1024, 1024));
  const core::GroupId pair = graph.AddGroup({core::ChipId(0), core::ChipId(1)});
  const core::OpId ag =
      graph.Add(core::Op::Collective(core::CollectiveKind::kAllGather, pair, 64 << 20), {tiny});
  const core::Executor& exec = rig.Run();
  Launched l{rig.LaunchedOnChip0(ag), exec.end_time(g0).seconds(), 0};
  for (const core::TimelineRow& r : exec.timeline()) {
    if (r.op == ag && r.chip == core::ChipId(0) && r.phase == core::Phase::kInterference) {
      l.waited += (r.end - r.start).seconds();
    }
  }
  EXPECT_EQ(rig.machine->ledger->held(core::ChipId(0)), 0);
  EXPECT_EQ(rig.machine->ledger->waiting(), 0u);
  return l;
}

TEST(MachineTest, ACollectiveWaitsForTheSmsAGemmKeeps) {
  const Launched first = CollectiveBesideGemm(/*persistent=*/false, /*high_priority=*/true);
  // Dispatched first, beside a GeMM of one CTA per tile: it starts after the tiny GeMM (~µs).
  EXPECT_LT(first.collective, 20e-6);
  EXPECT_EQ(first.waited, 0);
  for (bool persistent : {false, true}) {
    for (bool high_priority : {false, true}) {
      if (!persistent && high_priority) continue;
      SCOPED_TRACE(testing::Message()
                   << "persistent " << persistent << ", high priority " << high_priority);
      const Launched l = CollectiveBesideGemm(persistent, high_priority);
      // At the start of the GeMM's 17th (last) wave, within its last 1/16 of the GeMM; the wait
      // is the interference slice.
      EXPECT_GT(l.collective, l.gemm_end * 15.0 / 17);
      EXPECT_LT(l.collective, l.gemm_end);
      EXPECT_NEAR(l.waited, l.collective - first.collective, 2e-6);
    }
  }
}

TEST(MachineTest, ACollectiveWaitsForAnElementWiseKernelLaunchedBeforeIt) {
  // An element-wise pass over 4 GiB on chip 0 of the h100 system (a few ms at the stack's
  // share of HBM), and an AllGather of chips 0 and 1 launched 1 us in: its CTAs are dispatched
  // after the pass's blocks, which fill every SM until its end, unless its stream goes first.
  for (int high_priority : {0, 1}) {
    H100Chain rig({absl::StrCat("stack.comm.high_priority=", high_priority)});
    core::OpGraph& graph = rig.graph;
    core::Op pass;
    pass.kind = core::OpKind::kVector;
    pass.chip = core::ChipId(0);
    pass.bytes = int64_t{4} << 30;
    const core::OpId v = graph.Add(pass);
    const core::OpId wait =
        graph.Add(core::Op::Delay(core::ChipId(1), core::Time::Microseconds(1)));
    const core::GroupId pair = graph.AddGroup({core::ChipId(0), core::ChipId(1)});
    const core::OpId ag =
        graph.Add(core::Op::Collective(core::CollectiveKind::kAllGather, pair, 1 << 20), {wait});
    const core::Executor& exec = rig.Run();
    const double launched = rig.LaunchedOnChip0(ag);
    SCOPED_TRACE(high_priority);
    EXPECT_GT(exec.end_time(v).seconds(), 1e-3);
    if (high_priority) {
      EXPECT_LT(launched, 5e-6);
    } else {
      EXPECT_EQ(launched, exec.end_time(v).seconds());
    }
  }
}

TEST(MachineTest, NicTransferSlowsAMemoryBoundGemm) {
  // With HBM at 60 GB/s the 30 GB/s transfer takes a large share of it while they overlap.
  const core::Time alone = GemmTime(false, 60e9);
  const core::Time beside = GemmTime(true, 60e9);
  EXPECT_GT(beside.seconds(), 1.2 * alone.seconds());
  // At the preset's 1.2 TB/s the transfer takes only 30/1200 of the HBM: barely visible.
  const core::Time alone_fast = GemmTime(false, 1.2e12);
  const core::Time beside_fast = GemmTime(true, 1.2e12);
  EXPECT_LT(beside_fast.seconds(), 1.05 * alone_fast.seconds());
  EXPECT_GE(beside_fast, alone_fast);
}

TEST(MachineTest, TopologyThatDoesNotFitIsBadInput) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::Main({"run", "--workload", "collective", "--collective", "allgather", "--bytes",
                       "1MiB", "--chips", "200", "--topology", "fattree", "--set", "fattree.k=8"},
                      out, err),
            2);
  EXPECT_NE(err.str().find("fattree"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace meshsim::sim

namespace meshsim::sim {
namespace {

// Intervals of op-level rows on `chip` for which `pick` is true.
std::vector<std::pair<int64_t, int64_t>> Intervals(const formats::RunRecord& r, uint32_t chip,
                                                   bool (*pick)(const core::TimelineRow&)) {
  std::vector<std::pair<int64_t, int64_t>> v;
  for (const core::TimelineRow& row : r.timeline) {
    if (row.phase == core::Phase::kOp && row.chip.valid() && row.chip.value() == chip &&
        pick(row)) {
      v.push_back({row.start.ps(), row.end.ps()});
    }
  }
  return v;
}

bool IsGemm(const core::TimelineRow& r) { return r.kind == core::OpKind::kGemm; }
bool IsBlockingCollective(const core::TimelineRow& r) {
  return r.kind == core::OpKind::kCollective && r.collective != core::CollectiveKind::kSendRecv;
}
bool IsSendRecv(const core::TimelineRow& r) {
  return r.kind == core::OpKind::kCollective && r.collective == core::CollectiveKind::kSendRecv;
}

int64_t OverlapPs(const std::vector<std::pair<int64_t, int64_t>>& a,
                  const std::vector<std::pair<int64_t, int64_t>>& b) {
  int64_t total = 0;
  for (const auto& x : a)
    for (const auto& y : b)
      total += std::max<int64_t>(0, std::min(x.second, y.second) - std::max(x.first, y.first));
  return total;
}

formats::RunRecord RunWithOverlap(const std::string& algorithm, int overlap,
                                  int sendrecv_overlap = 1) {
  RawOptions raw;
  raw.values = {{"chips", "16"}, {"mesh", "4x4"}, {"hidden", "2048"},
                {"batch", "8"},  {"seq", "1024"}, {"algorithm", algorithm}};
  if (algorithm != "collective") raw.values.emplace_back("slices", "4");  // Collective has no S.
  raw.sets = {"comm.collective_overlap=" + std::to_string(overlap),
              "comm.sendrecv_overlap=" + std::to_string(sendrecv_overlap)};
  absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
  EXPECT_TRUE(o.ok()) << o.status();
  absl::StatusOr<formats::RunRecord> r = Simulate(*o);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

// GemmSpan::share: the shares of a block add up to its last GeMM's end; Collective's prefetched
// weight gather (issued during the previous GeMM) leaves a GeMM a share shorter than its span and
// shorter than the same GeMM alone, where nothing runs before it to hide the gather behind.
TEST(MachineTest, GemmSharesSplitTheBlockAndShowCollectivesPrefetch) {
  const formats::RunRecord block = RunWithOverlap("collective", 1);
  ASSERT_EQ(block.gemms.size(), 12u);
  core::Time sum, last;
  int prefetched = 0;
  for (const formats::GemmSpan& g : block.gemms) {
    sum += g.share;
    last = std::max(last, g.end);
    if (g.share < g.end - g.start) ++prefetched;
  }
  EXPECT_EQ(sum, last);
  EXPECT_LE(last.seconds(), block.Metric("makespan_s"));
  EXPECT_GE(prefetched, 8);  // Every GeMM but the first has an early weight (or two in bwd-weight).
  // ffn_down.fwd, LS (T, H, 4H) with T = 8·1024, H = 2048: its weight gather runs during
  // ffn_up.fwd in the block, and alone it cannot be hidden.
  const formats::GemmSpan* in_block = nullptr;
  for (const formats::GemmSpan& g : block.gemms)
    if (g.label == "ffn_down.fwd") in_block = &g;
  ASSERT_NE(in_block, nullptr);
  RawOptions raw;
  raw.values = {{"chips", "16"},      {"mesh", "4x4"},
                {"workload", "gemm"}, {"gemm", "8192,2048,8192"},
                {"dataflow", "ls"},   {"algorithm", "collective"}};
  absl::StatusOr<RunOptions> o = ResolveRunOptions(raw);
  ASSERT_TRUE(o.ok()) << o.status();
  absl::StatusOr<formats::RunRecord> alone = Simulate(*o);
  ASSERT_TRUE(alone.ok()) << alone.status();
  ASSERT_EQ(alone->gemms.size(), 1u);
  EXPECT_DOUBLE_EQ(alone->gemms[0].flops, in_block->flops);
  EXPECT_EQ(alone->gemms[0].share, alone->gemms[0].end - alone->gemms[0].start);
  EXPECT_LT(in_block->share, alone->gemms[0].share);
}

TEST(MachineTest, WithoutCollectiveOverlapGemmsAndCollectivesTakeTurns) {
  const formats::RunRecord overlapped = RunWithOverlap("meshslice", 1);
  const formats::RunRecord serial = RunWithOverlap("meshslice", 0);
  int64_t with = 0, without = 0;
  for (uint32_t c = 0; c < 16; ++c) {
    with +=
        OverlapPs(Intervals(overlapped, c, IsGemm), Intervals(overlapped, c, IsBlockingCollective));
    without += OverlapPs(Intervals(serial, c, IsGemm), Intervals(serial, c, IsBlockingCollective));
  }
  EXPECT_GT(with, 0);     // MeshSlice overlaps its AllGathers with GeMMs…
  EXPECT_EQ(without, 0);  // …unless the hardware cannot.
  EXPECT_GT(serial.Metric("makespan_s"), overlapped.Metric("makespan_s"));
  EXPECT_DOUBLE_EQ(serial.Metric("flops"), overlapped.Metric("flops"));
  // SendRecv stays asynchronous: Wang still overlaps its SendRecv steps with GeMMs.
  const formats::RunRecord wang = RunWithOverlap("wang", 0);
  int64_t sendrecv_overlap = 0;
  for (uint32_t c = 0; c < 16; ++c) {
    sendrecv_overlap += OverlapPs(Intervals(wang, c, IsGemm), Intervals(wang, c, IsSendRecv));
  }
  EXPECT_GT(sendrecv_overlap, 0);
}

// comm.sendrecv_overlap = 0 (MeshSlice §5.3's JAX-compiled Wang, bounded: no SendRecv beside a
// GeMM): Wang's SendRecv steps and GeMMs take turns on every chip, the step gets slower, the work
// is the same. The blocking collectives keep their own setting: with collective_overlap = 1
// MeshSlice (AllGather/ReduceScatter only) is unchanged to the picosecond.
TEST(MachineTest, WithoutSendRecvOverlapWangsStepsTakeTurns) {
  const formats::RunRecord overlapped = RunWithOverlap("wang", 1, 1);
  const formats::RunRecord serial = RunWithOverlap("wang", 1, 0);
  int64_t with = 0, without = 0;
  for (uint32_t c = 0; c < 16; ++c) {
    with += OverlapPs(Intervals(overlapped, c, IsGemm), Intervals(overlapped, c, IsSendRecv));
    without += OverlapPs(Intervals(serial, c, IsGemm), Intervals(serial, c, IsSendRecv));
  }
  EXPECT_GT(with, 0);
  EXPECT_EQ(without, 0);
  EXPECT_GT(serial.Metric("makespan_s"), overlapped.Metric("makespan_s"));
  EXPECT_DOUBLE_EQ(serial.Metric("flops"), overlapped.Metric("flops"));
  EXPECT_EQ(RunWithOverlap("meshslice", 1, 0).Metric("makespan_s"),
            RunWithOverlap("meshslice", 1, 1).Metric("makespan_s"));
}

}  // namespace
}  // namespace meshsim::sim

namespace meshsim::sim {
namespace {

// Holds every op it is given: a chip whose stream is stuck (e.g. on an event that never comes).
class NeverFinishes : public core::OpRunner {
 public:
  void Start(core::OpId, const core::Op&, core::Executor&) override {}
  std::string DescribeWait(core::OpId) const override { return "an event that never comes"; }
};

// A deadlock driven through the real executor and machine: an AllGather over four chips whose
// fourth member never arrives (its stream is stuck), while the other three reach it. The queue
// drains with ops unfinished: the run fails (Internal, i.e. exit 1 from the CLI) with a hang
// report naming the collective, what it waits for, and the stuck op.
TEST(MachineTest, HangReportNamesACollectiveWhoseMemberNeverArrives) {
  RawOptions raw;
  raw.values = {{"chips", "4"}, {"mesh", "2x2"}, {"workload", "chain"}};
  const RunOptions o = *ResolveRunOptions(raw);
  core::Simulator sim;
  core::FairShare fs(sim);
  absl::StatusOr<std::unique_ptr<Machine>> machine = BuildMachine(o, algorithms::Mesh{2, 2}, fs);
  ASSERT_TRUE(machine.ok()) << machine.status();
  core::OpGraph graph;
  std::vector<core::OpId> arrivals;
  for (uint32_t c = 0; c < 3; ++c) {
    arrivals.push_back(graph.Add(core::Op::Gemm(core::ChipId(c), 1024, 1024, 1024)));
  }
  const core::OpId stuck = graph.Add(core::Op::Delay(core::ChipId(3), core::Time::Nanoseconds(1)));
  arrivals.push_back(stuck);
  const core::GroupId all =
      graph.AddGroup({core::ChipId(0), core::ChipId(1), core::ChipId(2), core::ChipId(3)});
  const core::OpId gather =
      graph.Add(core::Op::Collective(core::CollectiveKind::kAllGather, all, 1 << 20), arrivals);
  core::Executor exec(sim, graph);
  (*machine)->Attach(exec);
  NeverFinishes never;
  exec.SetRunner(core::OpKind::kDelay, &never);
  const absl::Status s = exec.Run();
  ASSERT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_THAT(s.message(), testing::HasSubstr("2 of 5 ops unfinished (1 running, 1 waiting)"));
  EXPECT_THAT(s.message(),
              testing::HasSubstr(absl::StrCat("op ", stuck.value(), " 'delay' on chip 3")));
  EXPECT_THAT(s.message(), testing::HasSubstr("an event that never comes"));
  EXPECT_THAT(s.message(), testing::HasSubstr(absl::StrCat("op ", gather.value(),
                                                           " 'allgather' on chips "
                                                           "0,1,2,3: waits for op ",
                                                           stuck.value())));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(exec.finished(arrivals[i])) << i;
}

}  // namespace
}  // namespace meshsim::sim
