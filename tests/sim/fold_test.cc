// Folding (sim/fold.h): a symmetric run simulated on its period box must be the whole run —
// every op's finish time (the fingerprint sums them over the whole graph), the makespan and
// every metric but the engine's counts — and a graph that is not symmetric must not fold.
#include "sim/fold.h"

#include <string>
#include <vector>

#include "core/op.h"
#include "core/op_graph.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "tests/sim/run_pairs.h"

namespace meshsim::sim {
namespace {

using core::ChipId;
using core::CollectiveKind;
using core::Op;
using core::OpGraph;
using core::OpId;

// A 4×4 torus: a GeMM on every chip, an AllGather over each row (a ring along dimension 1,
// starting at column `first`), then a GeMM after the row's AllGather.
OpGraph RowsGraph(int first = 0, int64_t odd_m = 64) {
  OpGraph g;
  std::vector<OpId> gemm(16);
  for (int c = 0; c < 16; ++c) gemm[c] = g.Add(Op::Gemm(ChipId(c), c == 5 ? odd_m : 64, 64, 64));
  for (int r = 0; r < 4; ++r) {
    std::vector<ChipId> row;
    for (int k = 0; k < 4; ++k) row.push_back(ChipId(r * 4 + (first + k) % 4));
    std::vector<OpId> deps;
    for (int k = 0; k < 4; ++k) deps.push_back(gemm[r * 4 + k]);
    const OpId ag =
        g.Add(Op::Collective(CollectiveKind::kAllGather, g.AddGroup(row), 1 << 20), deps);
    for (int k = 0; k < 4; ++k) g.Add(Op::Gemm(ChipId(r * 4 + k), 64, 64, 64), {ag});
  }
  return g;
}

TEST(FoldTorusGraphTest, KeepsTheBoxAndNamesRingMembersByTheirRepresentatives) {
  const OpGraph g = RowsGraph();
  std::string why;
  const std::vector<int> dims = {4, 4};
  const std::optional<FoldedGraph> f = FoldTorusGraph(g, dims, &why);
  ASSERT_TRUE(f.has_value()) << why;
  EXPECT_EQ(f->periods, (std::vector<int>{2, 2}));
  EXPECT_EQ(f->chips, 4);
  EXPECT_EQ(f->real_chips, 16);
  // The box (rows 0–1, columns 0–1): 4 GeMMs, the AllGathers of rows 0 and 1, 4 GeMMs.
  ASSERT_EQ(f->graph.size(), 10u);
  int collectives = 0;
  for (uint32_t i = 0; i < f->graph.size(); ++i) {
    const Op& op = f->graph.op(OpId(i));
    if (op.kind != core::OpKind::kCollective) {
      EXPECT_LT(op.chip.value(), 4u);
      continue;
    }
    ++collectives;
    // Row r of the torus (chips 4r..4r+3) as box chips 2r', 2r'+1, each named twice.
    const auto members = f->graph.group(op.group);
    ASSERT_EQ(members.size(), 4u);
    EXPECT_TRUE(f->graph.has_images(op.group));
    EXPECT_EQ(members[0], members[2]);
    EXPECT_EQ(members[1], members[3]);
    EXPECT_NE(members[0], members[1]);
    // Each box GeMM after it waits for it.
    EXPECT_EQ(f->graph.deps(OpId(i)).size(), 2u);  // The row's two box GeMMs.
  }
  EXPECT_EQ(collectives, 2);
  // Chip 15 = (3, 3) is represented by box chip (1, 1) = 3: its first GeMM is op 3 of the box.
  ASSERT_EQ(f->representative.size(), g.size());
  EXPECT_EQ(f->representative[15], 3u);
  EXPECT_EQ(f->representative[0], 0u);
}

TEST(FoldTorusGraphTest, ARotatedRingIsTheSameRing) {
  std::string why;
  const std::vector<int> dims = {4, 4};
  EXPECT_TRUE(FoldTorusGraph(RowsGraph(/*first=*/2), dims, &why).has_value()) << why;
}

TEST(FoldTorusGraphTest, RefusesWhatIsNotSymmetric) {
  const std::vector<int> dims = {4, 4};
  std::string why;
  // One chip's GeMM differs.
  EXPECT_FALSE(FoldTorusGraph(RowsGraph(0, /*odd_m=*/128), dims, &why).has_value());
  EXPECT_NE(why.find("no equal"), std::string::npos) << why;

  // A Broadcast has a root: its members differ, so its line does not fold; the rows of a
  // Broadcast on every row still fold across the rows (periods 2 × 4).
  OpGraph b;
  for (int r = 0; r < 4; ++r) {
    std::vector<ChipId> row = {ChipId(4 * r), ChipId(4 * r + 1), ChipId(4 * r + 2),
                               ChipId(4 * r + 3)};
    b.Add(Op::Collective(CollectiveKind::kBroadcast, b.AddGroup(row), 1024));
  }
  std::optional<FoldedGraph> across = FoldTorusGraph(b, dims, &why);
  ASSERT_TRUE(across.has_value()) << why;
  EXPECT_EQ(across->periods, (std::vector<int>{2, 4}));
  EXPECT_EQ(across->graph.size(), 2u);
  OpGraph b0;  // A Broadcast on row 0 alone has no equal on row 2.
  b0.Add(Op::Collective(CollectiveKind::kBroadcast,
                        b0.AddGroup({ChipId(0), ChipId(1), ChipId(2), ChipId(3)}), 1024));
  EXPECT_FALSE(FoldTorusGraph(b0, dims, &why).has_value());

  // A group across a folded dimension that is not a whole line (half of every row) does not
  // fold along the row: its ring would take other links folded (a 2-chip ring's two directions
  // share a real pair of links). The rows still fold across.
  OpGraph h;
  for (int c = 0; c < 16; c += 2) {
    h.Add(Op::Collective(CollectiveKind::kAllGather, h.AddGroup({ChipId(c), ChipId(c + 1)}), 1024));
  }
  std::optional<FoldedGraph> halves = FoldTorusGraph(h, dims, &why);
  ASSERT_TRUE(halves.has_value()) << why;
  EXPECT_EQ(halves->periods, (std::vector<int>{2, 4}));

  // Rings against the dimension's direction (columns 3, 2, 1, 0 of each row): the folded
  // torus routes ring steps forward, so these rows do not fold along themselves.
  OpGraph reversed;
  for (int r = 0; r < 4; ++r) {
    std::vector<ChipId> row;
    for (int k = 3; k >= 0; --k) row.push_back(ChipId(r * 4 + k));
    reversed.Add(Op::Collective(CollectiveKind::kAllGather, reversed.AddGroup(row), 1024));
  }
  std::optional<FoldedGraph> against = FoldTorusGraph(reversed, dims, &why);
  ASSERT_TRUE(against.has_value()) << why;
  EXPECT_EQ(against->periods, (std::vector<int>{2, 4}));

  // Dependencies that differ: chip 0's second GeMM waits for its first, chip 2's does not.
  OpGraph d;
  std::vector<OpId> first(16);
  for (int c = 0; c < 16; ++c) first[c] = d.Add(Op::Gemm(ChipId(c), 64, 64, 64));
  for (int c = 0; c < 16; ++c) {
    if (c == 0) {
      d.Add(Op::Gemm(ChipId(c), 64, 64, 64), {first[c]});
    } else {
      d.Add(Op::Gemm(ChipId(c), 64, 64, 64));
    }
  }
  EXPECT_FALSE(FoldTorusGraph(d, dims, &why).has_value());
  EXPECT_NE(why.find("wait for different ops"), std::string::npos) << why;

  // A transfer runs between two chips.
  OpGraph t;
  t.Add(Op::Transfer(ChipId(0), ChipId(1), 1024));
  EXPECT_FALSE(FoldTorusGraph(t, dims, &why).has_value());

  // Extents that do not fold: odd, or 2.
  const std::vector<int> odd = {3, 2};
  OpGraph one;
  one.Add(Op::Gemm(ChipId(0), 64, 64, 64));
  EXPECT_FALSE(FoldTorusGraph(one, odd, &why).has_value());
  EXPECT_EQ(FoldPeriods(std::vector<int>{3, 2, 8, 6}), (std::vector<int>{3, 2, 2, 2}));
}

// End to end: Simulate with fold on and off.
struct Scenario {
  std::string name;
  std::string args;     // "key=value ..." run options; "set=K=V" for --set.
  int simulated_chips;  // When folded: the box's chips; else the run's chips (not folded).
};

void PrintTo(const Scenario& s, std::ostream* os) { *os << s.name; }

absl::StatusOr<formats::RunRecord> RunWith(const std::string& args, bool fold,
                                           bool keep_timeline = false) {
  absl::StatusOr<RunOptions> o = ResolveRunOptions(ScenarioOptions(args));
  if (!o.ok()) return o.status();
  o->keep_timeline = keep_timeline;
  o->fold = fold;
  return Simulate(*o);
}

// What the engine did, not what the machine did: the metrics a folded run may differ in.
const std::initializer_list<std::string_view> kEngineMetrics = {
    "events", "events_cancelled", "flows", "flow_groups", "fair_share_solves",
    "wall_s", "simulated_chips"};

class Folding : public testing::TestWithParam<Scenario> {};

TEST_P(Folding, SameRunAsEveryChip) {
  const Scenario& s = GetParam();
  absl::StatusOr<formats::RunRecord> whole = RunWith(s.args, false);
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<formats::RunRecord> folded = RunWith(s.args, true);
  ASSERT_TRUE(folded.ok()) << folded.status();

  EXPECT_EQ(whole->Metric("simulated_chips"), whole->chips);
  EXPECT_EQ(folded->Metric("simulated_chips"), s.simulated_chips);
  EXPECT_EQ(Fingerprint(*folded), Fingerprint(*whole));
  EXPECT_EQ(folded->Metric("makespan_s"), whole->Metric("makespan_s"));
  // Per-chip averages are the box's; sums of doubles over more chips may round differently.
  ExpectSameMetrics(*whole, *folded, kEngineMetrics, 1e-12);
  // Resources (what an archive of the run stores): every one of the whole machine's, with its
  // bytes and busy time.
  ExpectSameResources(*whole, *folded);
  ASSERT_EQ(folded->gemms.size(), whole->gemms.size());
  for (size_t i = 0; i < whole->gemms.size(); ++i) {
    EXPECT_EQ(folded->gemms[i].start, whole->gemms[i].start) << i;
    EXPECT_EQ(folded->gemms[i].end, whole->gemms[i].end) << i;
    EXPECT_NEAR(folded->gemms[i].flops, whole->gemms[i].flops, 1e-12 * whole->gemms[i].flops);
  }
  if (s.simulated_chips < whole->chips) {
    EXPECT_LT(folded->Metric("flows"), whole->Metric("flows"));
  }
}

// With --out: the folded run's timeline, expanded to every chip (ExpandRows), its counter samples
// and resources (ExpandTables in sim/run.cc) are the whole run's — every row, sample and
// resource's bytes and busy time, as sorted sets (one instant's rows come in another order).
TEST_P(Folding, SameTimelineAsEveryChip) {
  const Scenario& s = GetParam();
  absl::StatusOr<formats::RunRecord> whole = RunWith(s.args, false, true);
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<formats::RunRecord> folded = RunWith(s.args, true, true);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->Metric("simulated_chips"), s.simulated_chips);
  EXPECT_EQ(Fingerprint(*folded), Fingerprint(*whole));
  // From the same rows: bit for bit.
  ExpectSameMetrics(*whole, *folded, kEngineMetrics);
  ASSERT_EQ(folded->timeline.size(), whole->timeline.size());
  ASSERT_FALSE(whole->timeline.empty());
  EXPECT_TRUE(SortedRows(*folded) == SortedRows(*whole));
  ASSERT_EQ(folded->counters.size(), whole->counters.size());
  EXPECT_TRUE(SortedSamples(*folded) == SortedSamples(*whole));
  ExpectSameResources(*whole, *folded);
  EXPECT_EQ(folded->edges.size(), whole->edges.size());
  ASSERT_EQ(folded->gemms.size(), whole->gemms.size());
  for (size_t i = 0; i < whole->gemms.size(); ++i) {
    EXPECT_EQ(folded->gemms[i].flops, whole->gemms[i].flops) << i;
    EXPECT_EQ(folded->gemms[i].chip_busy, whole->gemms[i].chip_busy) << i;
  }
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Scenarios, Folding, testing::Values(
    // MeshSlice's rings are the torus's rows and columns: 8×8 folds to 2×2, 16×4 to 2×2.
    Scenario{"MeshsliceGpt3Block8x8", "chips=64 mesh=8x8 model=gpt3 batch=16 seq=512 slices=2", 4},
    Scenario{"MeshsliceGemm16x4", "chips=64 mesh=16x4 workload=gemm gemm=4096,4096,4096 algorithm=meshslice slices=4", 4},
    Scenario{"CollectiveGemmOneDirection", "chips=32 mesh=4x8 workload=gemm gemm=4096,4096,4096 algorithm=collective set=comm.ring_directions=1", 4},
    // An extent of 2 stays (its pair of links is the folded one's); 8 folds.
    Scenario{"MeshsliceGemm2x8", "chips=16 mesh=2x8 workload=gemm gemm=2048,2048,2048 algorithm=meshslice slices=2", 4},
    // With one link per extent-2 pair, a folded extent would lose the − link: only without
    // real extents of 2 does it fold.
    Scenario{"OneLinkPerPairNoExtent2", "chips=64 mesh=8x8 workload=gemm gemm=4096,4096,4096 algorithm=meshslice slices=2 set=torus.length2_links=1", 4},
    Scenario{"OneLinkPerPairExtent2", "chips=16 mesh=2x8 workload=gemm gemm=2048,2048,2048 algorithm=meshslice slices=2 set=torus.length2_links=1", 16},
    // A ring: 64 chips fold to 2.
    Scenario{"AllReduceOnARing", "chips=64 mesh=1x64 topology=ring workload=collective collective=allreduce group=all bytes=16MiB", 2},
    // A 3D torus whose mesh rows and columns are its lines: 1×8×4 folds to 1×2×2.
    Scenario{"MeshsliceGemmTorus3d", "chips=32 mesh=8x4 topology=torus3d dims=1x8x4 workload=gemm gemm=2048,2048,2048 algorithm=meshslice", 4},
    // The micro-benchmark names each row's collective after its row ("allgather row 3"): names
    // that no GeMM's label shares may differ between images.
    Scenario{"RowsNamedApart", "chips=16 mesh=4x4 workload=collective collective=allgather group=row bytes=1MiB", 4},
    // A pipeline of 2 stages × 2 replicas along the first dimension, each replica a 4×4 slice:
    // stages and replicas differ, the slices' dimensions fold (4×4×4 → 4×2×2); the stages'
    // transfers and the replicas' all-reduces run along the first dimension.
    Scenario{"PipelineFoldsAcrossItsSlices", "chips=64 workload=pipeline hidden=1024 heads=16 layers=4 stages=2 dp=2 mesh=4x4 algorithm=meshslice microbatches=4 batch=32 seq=512 topology=torus3d dims=4x4x4", 16},
    // Not folded: Broadcasts (SUMMA), point-to-point shifts (Cannon), a snake ring over the
    // whole torus, a fat-tree.
    Scenario{"SummaNotFolded", "chips=16 mesh=4x4 workload=gemm gemm=2048,2048,2048 algorithm=summa", 16},
    Scenario{"CannonNotFolded", "chips=16 mesh=4x4 workload=gemm gemm=2048,2048,2048 algorithm=cannon", 16},
    Scenario{"SnakeRingNotFolded", "chips=64 mesh=8x8 workload=collective collective=allreduce group=all bytes=4MiB", 64},
    Scenario{"FatTreeNotFolded", "chips=16 mesh=4x4 topology=fattree workload=gemm gemm=2048,2048,2048 algorithm=meshslice", 16}),
    [](const auto& info) { return info.param.name; });
// clang-format on

// The default op budget of a run that may fold counts kFoldedBytesPerOp per op (the whole graph
// is lowered, then folded); a graph that then does not fold is held to the budget of one
// simulated whole (kBytesPerOp per op) before it runs. The runs share the machine's default
// budgets with `concurrent_runs` others, chosen so that the graph fits the first budget and not
// the second: DefaultMaxOps(·, 125) / runs ≥ ops > DefaultMaxOps(·, 200) / runs.
TEST(FoldBudgetTest, AGraphThatDoesNotFoldIsHeldToTheBudgetOfAWholeRun) {
  const auto run = [](const std::string& args, bool fold, int64_t runs) {
    absl::StatusOr<RunOptions> o = ResolveRunOptions(ScenarioOptions(args));
    EXPECT_TRUE(o.ok()) << o.status();
    o->keep_timeline = false;
    o->fold = fold;
    o->concurrent_runs = static_cast<int>(runs);
    return Simulate(*o);
  };
  const auto shared_by = [](double ops) {  // The `runs` that leave the graph between the two.
    return static_cast<int64_t>(double(DefaultMaxOps(false, kFoldedBytesPerOp)) / ops);
  };
  const std::string summa = "chips=16 mesh=4x4 workload=gemm gemm=2048,2048,2048 algorithm=summa";
  const std::string meshslice =
      "chips=16 mesh=4x4 workload=gemm gemm=2048,2048,2048 algorithm=meshslice";
  for (const std::string& args : {summa, meshslice}) {
    absl::StatusOr<formats::RunRecord> alone = run(args, false, 1);
    ASSERT_TRUE(alone.ok()) << alone.status();
    const double ops = alone->Metric("ops");
    const int64_t runs = shared_by(ops);
    ASSERT_GT(double(DefaultMaxOps(false, kFoldedBytesPerOp) / runs), ops - 1) << args;
    ASSERT_LT(double(DefaultMaxOps(false, kBytesPerOp) / runs), ops) << args;
    // Not folded: the budget of a whole run, before lowering.
    absl::StatusOr<formats::RunRecord> whole = run(args, false, runs);
    ASSERT_FALSE(whole.ok()) << args;
    EXPECT_EQ(whole.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string refused(whole.status().message());
    EXPECT_NE(refused.find("at ~200 B per op,"), std::string::npos) << refused;
    EXPECT_EQ(refused.find("folds"), std::string::npos) << refused;
    // May fold: lowered within the folding budget; MeshSlice's graph folds and runs, SUMMA's
    // does not and is refused before it runs.
    absl::StatusOr<formats::RunRecord> folded = run(args, true, runs);
    if (args == meshslice) {
      ASSERT_TRUE(folded.ok()) << folded.status();
      EXPECT_EQ(folded->Metric("simulated_chips"), 4);
      EXPECT_EQ(folded->Metric("makespan_s"), alone->Metric("makespan_s"));
    } else {
      ASSERT_FALSE(folded.ok());
      EXPECT_EQ(folded.status().code(), absl::StatusCode::kInvalidArgument);
      const std::string message(folded.status().message());
      EXPECT_NE(message.find("does not fold (sim/fold.h) and passes the limit of"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("at ~200 B per op of a graph simulated whole,"), std::string::npos)
          << message;
    }
  }
}

}  // namespace
}  // namespace meshsim::sim
