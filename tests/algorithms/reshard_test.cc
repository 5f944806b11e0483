// Cross-mesh resharding (MLSys'23 §2.2–§3): specs, unit tasks of the paper's Table 2, the
// schedulers against a brute-force optimum, the lowering of each strategy, and the CLI.
#include "algorithms/reshard/reshard.h"

#include <random>
#include <sstream>

#include "algorithms/reshard/scheduler.h"
#include "algorithms/reshard/spec.h"
#include "cli/cli.h"
#include "core/op_graph.h"
#include "gtest/gtest.h"
#include "tests/test_temp_dir.h"

namespace meshsim::algorithms::reshard {
namespace {

constexpr int64_t kD0 = 1024, kD1 = 1024, kD2 = 512;   // §5.1.2's tensor.
constexpr int64_t kTensorBytes = kD0 * kD1 * kD2 * 2;  // fp16: 1 GiB.

Mesh Placed(int r, int c, std::vector<int> chips) {
  std::vector<core::ChipId> ids;
  for (int x : chips) ids.push_back(core::ChipId(x));
  return *Mesh::Placed(r, c, ids);
}

std::vector<int> Range(int lo, int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(lo + i);
  return v;
}

ReshardProblem Problem(const Mesh& src, const std::string& src_spec, const Mesh& dst,
                       const std::string& dst_spec) {
  ReshardProblem p;
  p.shape = {kD0, kD1, kD2};
  p.element_bytes = 2;
  p.src = {src, *ParseSpec(src_spec, 3)};
  p.dst = {dst, *ParseSpec(dst_spec, 3)};
  EXPECT_TRUE(CheckProblem(p).ok());
  return p;
}

// Table 2 case k (1-based) on p3.8xlarge-like hosts of 4 chips: the sender mesh on chips 0.., the
// receiver mesh on whole hosts after it (case 8: 3 chips of each of 2 hosts → 2 chips of each
// of 3 hosts).
ReshardProblem Table2(int k) {
  const Mesh a = Placed(2, 4, Range(0, 8));
  const Mesh b = Placed(2, 4, Range(8, 8));
  switch (k) {
    case 1:
      return Problem(a, "S0RR", b, "S0RR");
    case 2:
      return Problem(a, "RRR", b, "S0RR");
    case 3:
      return Problem(a, "RS0R", b, "S0RR");
    case 4:
      return Problem(a, "RS01R", b, "S01RR");
    case 5:
      return Problem(a, "S1RR", b, "S0RR");
    case 6:
      return Problem(a, "S0RR", Placed(3, 4, Range(8, 12)), "S0RR");
    case 7:
      return Problem(Placed(1, 4, Range(0, 4)), "S1RR", Placed(2, 4, Range(4, 8)), "RRR");
    case 8:
      return Problem(Placed(2, 3, {0, 1, 2, 4, 5, 6}), "RRR", Placed(3, 2, {8, 9, 12, 13, 16, 17}),
                     "RRR");
    default:
      return Problem(a, "RS0R", b, "RRS0");
  }
}

HostModel Hosts4() {
  HostModel h;
  for (int c = 0; c < 24; ++c) h.host_of_chip.push_back(c / 4);
  h.inter_host_bytes_per_s = 1.25e9;
  h.intra_host_bytes_per_s = 50e9;
  return h;
}

TEST(ReshardSpec, ParsesTheTableNotation) {
  EXPECT_EQ(ParseSpec("S01RR", 3)->ToString(), "S01RR");
  EXPECT_EQ(ParseSpec("S1S0R", 3)->dims[1], DimSharding::kRows);
  EXPECT_EQ(ParseSpec("RS01R", 3)->dims[1], DimSharding::kBoth);
}

TEST(ReshardSpec, RejectsBadSpecsWithOneLine) {
  for (const auto& [text, what] : std::vector<std::pair<std::string, std::string>>{
           {"S0R", "has 2 dimensions but the tensor has rank 3"},
           {"S0S0R", "mesh axis 0 shards two tensor dimensions"},
           {"S01S1R", "mesh axis 1 shards two tensor dimensions"},
           {"S2RR", "unknown token at 'S2RR'"},
           {"rRR", "unknown token"}}) {
    absl::StatusOr<ShardingSpec> s = ParseSpec(text, 3);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find(what), std::string::npos) << s.status().message();
    EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
  }
}

TEST(ReshardSpec, PaddedShards) {
  // ⌈1024/3⌉ = 342: [0,342), [342,684), [684,1024).
  EXPECT_EQ(ShardInterval(1024, 3, 0).hi, 342);
  EXPECT_EQ(ShardInterval(1024, 3, 2).lo, 684);
  EXPECT_EQ(ShardInterval(1024, 3, 2).size(), 340);
  EXPECT_EQ(ShardInterval(2, 3, 2).size(), 0);  // Pure padding.
}

TEST(ReshardSpec, OverlappingMeshesAreRejected) {
  ReshardProblem p = Table2(1);
  p.dst.mesh = Placed(2, 4, Range(4, 8));
  absl::Status s = CheckProblem(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("chip 4 is in both meshes"), std::string::npos) << s.message();
}

// Table 2: (count, senders per task, receivers per task, bytes per task) in closed form.
struct Expect {
  int tasks, senders, receivers;
  int64_t bytes;
};

TEST(ReshardUnitTasks, Table2InClosedForm) {
  const int64_t t = kTensorBytes;
  const Expect expect[9] = {
      {2, 4, 4, t / 2},    // 1: S0RR→S0RR: the 2 row slices, each held and needed by a host.
      {2, 8, 4, t / 2},    // 2: RRR→S0RR: every sender holds both halves.
      {4, 4, 4, t / 4},    // 3: RS0R→S0RR: 2 dim-1 halves × 2 dim-0 halves.
      {64, 1, 1, t / 64},  // 4: RS01R→S01RR: 8 × 8 tiles, one holder, one receiver.
      {4, 2, 4, t / 4},    // 5: S1RR→S0RR: 4 column slices ∩ 2 row slices.
      {0, 4, 4, 0},        // 6: uneven, checked below.
      {4, 1, 8, t / 4},    // 7: S1RR (1,4) → RRR: each quarter to all 8.
      {1, 6, 6, t},        // 8: RRR → RRR: one task.
      {4, 4, 4, t / 4},    // 9: RS0R→RRS0.
  };
  for (int k = 1; k <= 9; ++k) {
    const std::vector<UnitTask> tasks = UnitTasks(Table2(k));
    int64_t total = 0;
    for (const UnitTask& u : tasks) total += u.bytes;
    EXPECT_EQ(total, kTensorBytes) << "case " << k;  // §2.2: Σ = |D|, the lower bound.
    if (k == 6) continue;
    const Expect& e = expect[k - 1];
    ASSERT_EQ(static_cast<int>(tasks.size()), e.tasks) << "case " << k;
    for (const UnitTask& u : tasks) {
      EXPECT_EQ(static_cast<int>(u.senders.size()), e.senders) << "case " << k;
      EXPECT_EQ(static_cast<int>(u.receivers.size()), e.receivers) << "case " << k;
      EXPECT_EQ(u.bytes, e.bytes) << "case " << k;
    }
  }
}

TEST(ReshardUnitTasks, Case6UnevenIsPadded) {
  // Source rows [0,512), [512,1024); receiver rows (3 shards of ⌈1024/3⌉ = 342):
  // [0,342), [342,684), [684,1024) → intersections 342, 170, 172, 340 rows.
  const std::vector<UnitTask> tasks = UnitTasks(Table2(6));
  ASSERT_EQ(tasks.size(), 4u);
  const int64_t row = kD1 * kD2 * 2;
  EXPECT_EQ(tasks[0].bytes, 342 * row);
  EXPECT_EQ(tasks[1].bytes, 170 * row);
  EXPECT_EQ(tasks[2].bytes, 172 * row);
  EXPECT_EQ(tasks[3].bytes, 340 * row);
  EXPECT_EQ(tasks[1].senders.front(), core::ChipId(0));
  EXPECT_EQ(tasks[1].receivers.front(), core::ChipId(12));  // Receiver mesh row 1 = host 3.
}

std::vector<HostTask> RandomTasks(std::mt19937& rng, int n, int hosts) {
  std::vector<HostTask> tasks(n);
  std::uniform_int_distribution<int> host(0, hosts - 1), dur(1, 4), count(1, 2);
  for (HostTask& t : tasks) {
    for (int i = count(rng); i > 0; --i) t.sender_hosts.push_back(host(rng));
    for (int i = count(rng); i > 0; --i) t.receiver_hosts.push_back(hosts + host(rng));
    for (auto* v : {&t.sender_hosts, &t.receiver_hosts}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    const double d = dur(rng);
    t.duration_s.assign(t.sender_hosts.size(), d);
  }
  return tasks;
}

TEST(ReshardScheduler, DfsFindsTheBruteForceOptimum) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    const std::vector<HostTask> tasks = RandomTasks(rng, 3 + trial % 3, 2);
    const double opt = BruteForceOptimum(tasks).makespan_s;
    const Schedule dfs = ScheduleTasks(tasks, SchedulerKind::kDfs);
    EXPECT_TRUE(dfs.dfs_exhausted);
    EXPECT_DOUBLE_EQ(dfs.makespan_s, opt) << "trial " << trial;
    for (SchedulerKind k : {SchedulerKind::kNaive, SchedulerKind::kLoadBalance,
                            SchedulerKind::kGreedy, SchedulerKind::kEnsemble}) {
      EXPECT_GE(ScheduleTasks(tasks, k).makespan_s, opt - 1e-12) << ToString(k);
    }
    EXPECT_LE(ScheduleTasks(tasks, SchedulerKind::kEnsemble).makespan_s,
              ScheduleTasks(tasks, SchedulerKind::kGreedy).makespan_s);
  }
}

TEST(ReshardScheduler, MakespanByListScheduling) {
  // Two tasks from host 0 to hosts 2 and 3 (durations 1, 2) serialise on host 0's send side;
  // a third from host 1 to host 2 (3) waits for the first on host 2's receive side.
  const std::vector<HostTask> tasks = {{{0}, {1.0}, {2}}, {{0}, {2.0}, {3}}, {{1}, {3.0}, {2}}};
  EXPECT_DOUBLE_EQ(Makespan(tasks, {0, 1, 2}, {0, 0, 0}), 4.0);  // max(1+2, 1+3).
  EXPECT_DOUBLE_EQ(Makespan(tasks, {2, 0, 1}, {0, 0, 0}), 6.0);  // 3, then 3+1, then 4+2.
  EXPECT_DOUBLE_EQ(BruteForceOptimum(tasks).makespan_s, 4.0);
}

// §5.3.1 / Figure 8 under the model with broadcast durations: on cases 3, 4, 9 the naive order
// keeps one sender host idle; load balance alone does not fix the order; ours reaches the
// bound of |D|/2 per sender host (two sender hosts, t = |D|/bw).
TEST(ReshardScheduler, Table2OrderMattersOnCases349) {
  const HostModel hosts = Hosts4();
  const double t = kTensorBytes / hosts.inter_host_bytes_per_s;
  for (int k : {3, 4, 9}) {
    std::map<SchedulerKind, double> ms;
    for (SchedulerKind s :
         {SchedulerKind::kNaive, SchedulerKind::kLoadBalance, SchedulerKind::kEnsemble}) {
      ms[s] = PlanReshard(Table2(k), {Strategy::kBroadcast, s, {}}, hosts).schedule.makespan_s;
    }
    EXPECT_NEAR(ms[SchedulerKind::kEnsemble], t / 2, 1e-9 * t) << "case " << k;
    // List-scheduled in index order, both sender hosts first feed the same receiver host:
    // case 3/9 = 3t/4 (one of the four quarter tasks always waits), case 4 = 15t/16.
    EXPECT_NEAR(ms[SchedulerKind::kNaive], k == 4 ? 15 * t / 16 : 3 * t / 4, 1e-9 * t)
        << "case " << k;
    EXPECT_LE(ms[SchedulerKind::kEnsemble], ms[SchedulerKind::kLoadBalance]) << "case " << k;
  }
  // Case 2: the naive sender is always host 0; load balance spreads the halves over both.
  const double naive2 =
      PlanReshard(Table2(2), {Strategy::kBroadcast, SchedulerKind::kNaive, {}}, hosts)
          .schedule.makespan_s;
  const double lb2 =
      PlanReshard(Table2(2), {Strategy::kBroadcast, SchedulerKind::kLoadBalance, {}}, hosts)
          .schedule.makespan_s;
  EXPECT_NEAR(naive2, t, 1e-9 * t);
  EXPECT_NEAR(lb2, t / 2, 1e-9 * t);
}

// §3.2 / §5.3.1 on every Table 2 case (broadcast durations, the scheduler's model): the
// search-based schedulers never lose to the naive one, the ensemble keeps the better of DFS and
// greedy, and the randomized greedy is deterministic for a seed.
TEST(ReshardScheduler, Table2Orderings) {
  const HostModel hosts = Hosts4();
  for (int k = 1; k <= 9; ++k) {
    std::map<SchedulerKind, double> ms;
    for (SchedulerKind s : {SchedulerKind::kNaive, SchedulerKind::kLoadBalance, SchedulerKind::kDfs,
                            SchedulerKind::kGreedy, SchedulerKind::kEnsemble}) {
      ms[s] = PlanReshard(Table2(k), {Strategy::kBroadcast, s, {}}, hosts).schedule.makespan_s;
    }
    EXPECT_LE(ms[SchedulerKind::kDfs], ms[SchedulerKind::kNaive]) << "case " << k;
    EXPECT_LE(ms[SchedulerKind::kGreedy], ms[SchedulerKind::kNaive]) << "case " << k;
    EXPECT_LE(ms[SchedulerKind::kDfs], ms[SchedulerKind::kLoadBalance]) << "case " << k;
    EXPECT_EQ(ms[SchedulerKind::kEnsemble],
              std::min(ms[SchedulerKind::kDfs], ms[SchedulerKind::kGreedy]))
        << "case " << k;
  }
  const ReshardPlan a =
      PlanReshard(Table2(4), {Strategy::kBroadcast, SchedulerKind::kGreedy, {.seed = 5}}, hosts);
  const ReshardPlan b =
      PlanReshard(Table2(4), {Strategy::kBroadcast, SchedulerKind::kGreedy, {.seed = 5}}, hosts);
  EXPECT_EQ(a.schedule.order, b.schedule.order);
  EXPECT_EQ(a.sender, b.sender);
  // A budget too small to reach a leaf still gives a complete schedule (the incumbent).
  const ReshardPlan tiny = PlanReshard(
      Table2(4), {Strategy::kBroadcast, SchedulerKind::kEnsemble, {.dfs_budget = 1}}, hosts);
  EXPECT_EQ(tiny.schedule.order.size(), 64u);
  EXPECT_GT(tiny.schedule.makespan_s, 0);
  // Case 4's 64 tasks: DFS meets the bound |D|/2 / bw and stops (identical tasks pruned).
  const ReshardPlan dfs =
      PlanReshard(Table2(4), {Strategy::kBroadcast, SchedulerKind::kDfs, {}}, hosts);
  EXPECT_TRUE(dfs.schedule.dfs_exhausted);
}

TEST(ReshardLowering, BroadcastChainCrossesEachHostOnce) {
  // Case 7: each quarter from one sender (host 0) to 8 receivers on hosts 1 and 2.
  const HostModel hosts = Hosts4();
  const ReshardProblem p = Table2(7);
  const ReshardPlan plan = PlanReshard(p, {Strategy::kBroadcast, SchedulerKind::kNaive, {}}, hosts);
  core::OpGraph g;
  HostTraffic traffic;
  LowerReshard(p, plan, hosts, g, &traffic);
  int broadcasts = 0;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const core::Op& op = g.op(core::OpId(i));
    if (op.kind != core::OpKind::kCollective) continue;
    ++broadcasts;
    EXPECT_EQ(op.collective, core::CollectiveKind::kBroadcast);
    EXPECT_EQ(op.bytes, kTensorBytes / 4);
    EXPECT_EQ(g.group(op.group).size(), 9u);
  }
  EXPECT_EQ(broadcasts, 4);
  // Host 0 sends each quarter once (to host 1), host 1 forwards it once (to host 2).
  EXPECT_EQ(traffic.sent[0], kTensorBytes);
  EXPECT_EQ(traffic.sent[1], kTensorBytes);
  EXPECT_EQ(traffic.received[2], kTensorBytes);
}

TEST(ReshardLowering, StrategiesMoveTheirBytes) {
  const HostModel hosts = Hosts4();
  const ReshardProblem p = Table2(7);  // 4 tasks of |D|/4, 8 receivers on 2 hosts each.
  const auto host_bytes = [&](Strategy s) {
    const ReshardPlan plan = PlanReshard(p, {s, SchedulerKind::kNaive, {}}, hosts);
    core::OpGraph g;
    HostTraffic traffic;
    LowerReshard(p, plan, hosts, g, &traffic);
    return traffic.sent[0];
  };
  EXPECT_EQ(host_bytes(Strategy::kSendRecv), 8 * kTensorBytes);        // A·B copies.
  EXPECT_EQ(host_bytes(Strategy::kLocalAllGather), 2 * kTensorBytes);  // A copies.
  EXPECT_EQ(host_bytes(Strategy::kBroadcast), kTensorBytes);           // One copy.
  // Global all-gather: host 0 scatters one copy; the ring then runs among hosts 1 and 2.
  EXPECT_EQ(host_bytes(Strategy::kGlobalAllGather), kTensorBytes);
  EXPECT_EQ(host_bytes(Strategy::kSignal), 4 * 8);  // 1 byte per receiver.
}

TEST(ReshardLowering, AlpaFallsBackOnUnevenSplit) {
  UnitTask t;
  t.box = {{0, 1024}, {0, 1024}, {0, 512}};
  EXPECT_TRUE(SplitsEvenly(t, 4));
  EXPECT_FALSE(SplitsEvenly(t, 3));
}

int RunCli(const std::vector<std::string>& args, std::string* out_text = nullptr) {
  std::ostringstream out, err;
  std::vector<std::string> a = {"reshard"};
  a.insert(a.end(), args.begin(), args.end());
  const int rc = sim::cli::Main(a, out, err);
  if (out_text != nullptr) *out_text = out.str() + err.str();
  return rc;
}

std::vector<std::string> Fig5Args(const std::string& strategy, const std::string& dst_mesh,
                                  const std::string& dst_placement) {
  // clang-format off
  return {"--system", "p3.8xlarge", "--chips", "8",
          "--src-mesh", "1x1", "--src-placement", "0", "--src-spec", "RRR",
          "--dst-mesh", dst_mesh, "--dst-placement", dst_placement, "--dst-spec", "RRR",
          "--shape", "1024,1024,64", "--strategy", strategy, "--format", "json"};
  // clang-format on
}

TEST(ReshardCli, BadInputIsExitTwoWithOneLine) {
  std::vector<std::string> base = Fig5Args("broadcast", "1x3", "1-3");
  const auto with = [&](const std::string& key, const std::string& value) {
    std::vector<std::string> a = base;
    for (size_t i = 0; i + 1 < a.size(); ++i) {
      if (a[i] == key) a[i + 1] = value;
    }
    return a;
  };
  std::string text;
  EXPECT_EQ(RunCli(with("--dst-placement", "0-2"), &text), 2);
  EXPECT_NE(text.find("must not overlap"), std::string::npos) << text;
  EXPECT_EQ(RunCli(with("--dst-spec", "S0S0R"), &text), 2);
  EXPECT_NE(text.find("--dst-spec"), std::string::npos) << text;
  EXPECT_EQ(RunCli(with("--src-spec", "RR"), &text), 2);
  EXPECT_EQ(RunCli(with("--strategy", "multicast"), &text), 2);
  EXPECT_EQ(RunCli(with("--dst-mesh", "2x3"), &text), 2);
  EXPECT_EQ(RunCli(with("--shape", "1024,x"), &text), 2);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  std::vector<std::string> extra = base;
  extra.insert(extra.end(), {"--workload", "llm"});
  EXPECT_EQ(RunCli(extra, &text), 2);
}

// Like `run --workload pipeline` (sim::NotReadBy): a scheduler option the chosen scheduler does
// not read is refused with one line naming the schedulers that do; once accepted and ignored.
TEST(ReshardCli, SchedulerOptionsTheSchedulerDoesNotReadAreRefused) {
  struct Case {
    std::string scheduler, key, value, message;
  };
  for (const Case& c : {
           Case{"naive", "--seed", "3",
                "meshsim: --seed: '3' does not apply to --scheduler naive (deterministic); it is "
                "read by --scheduler greedy, ensemble\n"},
           Case{"load-balance", "--seed", "3", "--scheduler load-balance (deterministic)"},
           Case{"dfs", "--seed", "3", "--scheduler dfs (deterministic)"},
           Case{"naive", "--dfs-budget", "10",
                "meshsim: --dfs-budget: '10' does not apply to --scheduler naive; it is read by "
                "--scheduler dfs, ensemble\n"},
           Case{"load-balance", "--dfs-budget", "10", "--scheduler load-balance;"},
           Case{"greedy", "--dfs-budget", "10", "--scheduler greedy;"},
       }) {
    std::vector<std::string> args = Fig5Args("broadcast", "1x3", "1-3");
    args.insert(args.end(), {"--scheduler", c.scheduler, c.key, c.value});
    std::string text;
    EXPECT_EQ(RunCli(args, &text), 2) << c.scheduler << " " << c.key;
    EXPECT_NE(text.find(c.message), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  }
  // The schedulers that read them.
  for (const auto& [scheduler, key] :
       std::vector<std::pair<std::string, std::string>>{{"greedy", "--seed"},
                                                        {"ensemble", "--seed"},
                                                        {"dfs", "--dfs-budget"},
                                                        {"ensemble", "--dfs-budget"}}) {
    std::vector<std::string> args = Fig5Args("broadcast", "1x3", "1-3");
    args.insert(args.end(), {"--scheduler", scheduler, key, "7"});
    std::string text;
    EXPECT_EQ(RunCli(args, &text), 0) << scheduler << " " << key << ": " << text;
  }
  // Without --scheduler: the default, ensemble, reads both.
  std::vector<std::string> args = Fig5Args("broadcast", "1x3", "1-3");
  args.insert(args.end(), {"--seed", "2", "--dfs-budget", "100"});
  std::string text;
  EXPECT_EQ(RunCli(args, &text), 0) << text;
  // A malformed value is reported as such first.
  args = Fig5Args("broadcast", "1x3", "1-3");
  args.insert(args.end(), {"--scheduler", "naive", "--seed", "x"});
  EXPECT_EQ(RunCli(args, &text), 2);
  EXPECT_NE(text.find("--seed: 'x' is not allowed; expected an integer"), std::string::npos)
      << text;
}

double JsonMakespan(const std::string& json) {
  const size_t at = json.find("\"makespan_s\"");
  EXPECT_NE(at, std::string::npos) << json;
  return std::stod(json.substr(json.find(':', at) + 1));
}

TEST(ReshardCli, BroadcastBeatsSendRecvAcrossHosts) {
  // 1 sender (host 0) → 2 chips of host 1 (4, 5), a 128 MiB tensor.
  std::string sr, bc;
  ASSERT_EQ(RunCli(Fig5Args("send-recv", "1x2", "4-5"), &sr), 0) << sr;
  ASSERT_EQ(RunCli(Fig5Args("broadcast", "1x2", "4-5"), &bc), 0) << bc;
  // Send/recv sends 2 copies over the 1.25 GB/s NIC, broadcast ≈ 1 (+ pipeline fill).
  EXPECT_GT(JsonMakespan(sr), 1.6 * JsonMakespan(bc));
}

TEST(ReshardCli, DeterministicAndArchived) {
  // Case 3 of Table 2 on a 64 MiB tensor, randomized greedy: the same seed, the same run.
  const std::string h5 = meshsim::testing_temp::TestPath("reshard_test.h5");
  const std::vector<std::string> args = {
      "--system",        "p3.8xlarge", "--chips",    "16",   "--src-mesh", "2x4",
      "--src-placement", "0-7",        "--src-spec", "RS0R", "--dst-mesh", "2x4",
      "--dst-placement", "8-15",       "--dst-spec", "S0RR", "--shape",    "256,256,512",
      "--scheduler",     "greedy",     "--seed",     "3",    "--format",   "json"};
  std::string a, b;
  ASSERT_EQ(RunCli(args, &a), 0) << a;
  std::vector<std::string> with_out = args;
  with_out.insert(with_out.end(), {"--out", h5});
  ASSERT_EQ(RunCli(with_out, &b), 0) << b;
  EXPECT_EQ(JsonMakespan(a), JsonMakespan(b));
  EXPECT_NE(a.find("\"unit_tasks\": 4"), std::string::npos) << a;
  // --seed is a run option now (the pipeline reads it too); reshard reports it once.
  EXPECT_NE(a.find("\"seed\": 3"), std::string::npos) << a;  // A number, not "3".
  EXPECT_EQ(a.find("\"seed\"", a.find("\"seed\"") + 1), std::string::npos) << a;
  std::ostringstream out, err;
  EXPECT_EQ(sim::cli::Main({"report", h5}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("reshard"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace meshsim::algorithms::reshard
