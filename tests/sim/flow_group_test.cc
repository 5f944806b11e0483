// Flow groups (core/fair_share.h, "Flow groups") against the per-flow reference: the same
// scenarios run with FairShare's flow groups off and on must give the same run — fingerprint
// (every op's finish time), makespan, every metric but the event counts, every timeline row (so
// every per-chip metric), every counter sample and every resource's bytes, bit for bit. Rows and
// samples of one instant may come in another order: a group completes its members in one event,
// and a resource it shares is accounted by the solve's main loop rather than in its walk.
#include <cstdint>
#include <string>
#include <vector>

#include "core/fair_share.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "tests/sim/run_pairs.h"

namespace meshsim::sim {
namespace {

struct Scenario {
  std::string name;
  std::string args;  // "key=value ..." run options; "set=K=V" for --set.
  bool grouped;      // Whether some step's flows form a flow group.
};

void PrintTo(const Scenario& s, std::ostream* os) { *os << s.name; }

absl::StatusOr<formats::RunRecord> RunWith(const std::string& args, bool groups) {
  absl::StatusOr<RunOptions> o = ResolveRunOptions(ScenarioOptions(args));
  if (!o.ok()) return o.status();
  core::FairShare::set_default_flow_groups(groups);
  absl::StatusOr<formats::RunRecord> r = Simulate(*o);
  core::FairShare::set_default_flow_groups(true);
  return r;
}

class FlowGroups : public testing::TestWithParam<Scenario> {};

TEST_P(FlowGroups, SameRunAsOneFlowAtATime) {
  const Scenario& s = GetParam();
  absl::StatusOr<formats::RunRecord> per_flow = RunWith(s.args, false);
  ASSERT_TRUE(per_flow.ok()) << per_flow.status();
  absl::StatusOr<formats::RunRecord> grouped = RunWith(s.args, true);
  ASSERT_TRUE(grouped.ok()) << grouped.status();

  EXPECT_EQ(Fingerprint(*grouped), Fingerprint(*per_flow));
  EXPECT_EQ(grouped->Metric("makespan_s"), per_flow->Metric("makespan_s"));
  ExpectSameMetrics(*per_flow, *grouped, {"events", "events_cancelled", "flow_groups", "wall_s"});
  EXPECT_EQ(per_flow->Metric("flow_groups"), 0);
  if (s.grouped) {
    EXPECT_GT(grouped->Metric("flow_groups"), 0);
  } else {
    EXPECT_EQ(grouped->Metric("flow_groups"), 0);
  }
  // Timelines stay per chip: every row, in time order (ties in any order).
  ASSERT_EQ(grouped->timeline.size(), per_flow->timeline.size());
  ASSERT_FALSE(per_flow->timeline.empty());
  const auto grouped_rows = SortedRows(*grouped), per_flow_rows = SortedRows(*per_flow);
  for (size_t i = 0; i < per_flow_rows.size(); ++i) {
    ASSERT_EQ(grouped_rows[i], per_flow_rows[i]) << "row " << i;
  }
  ASSERT_EQ(grouped->counters.size(), per_flow->counters.size());
  const auto grouped_samples = SortedSamples(*grouped), per_flow_samples = SortedSamples(*per_flow);
  for (size_t i = 0; i < per_flow_samples.size(); ++i) {
    ASSERT_EQ(grouped_samples[i], per_flow_samples[i]) << "counter sample " << i;
  }
  ExpectSameResources(*per_flow, *grouped);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Scenarios, FlowGroups, testing::Values(
    // Ring collectives alone on their links and HBMs: every step is one group.
    Scenario{"AllReduceOnARing", "chips=32 mesh=1x32 topology=ring workload=collective collective=allreduce group=all bytes=4MiB", true},
    Scenario{"AllReduceOnARingOneDirection", "chips=32 mesh=1x32 topology=ring workload=collective collective=allreduce group=all bytes=4MiB set=comm.ring_directions=1", true},
    Scenario{"AllGatherRowsOfATorus", "chips=16 mesh=4x4 workload=collective collective=allgather bytes=1MiB", true},
    Scenario{"ReduceScatterColumnsOfATorus", "chips=16 mesh=4x4 workload=collective collective=reducescatter group=col bytes=1MiB", true},
    Scenario{"AllReduceSnakeRingOfATorus", "chips=64 mesh=8x8 topology=torus2d workload=collective collective=allreduce group=all bytes=4MiB", true},
    // Every line of the torus is a ring of its own: a step is several components, not a flow
    // group; the arrivals of its reducing sends that land together are one event.
    Scenario{"AllReduceDimensionOrder", "chips=16 mesh=4x4 workload=collective collective=allreduce group=all bytes=1MiB set=comm.torus_algorithm=dimension-order", true},
    // Shared core links bind: no flow group forms, only arrivals that land together batch.
    Scenario{"AllReduceFatTree", "chips=16 mesh=4x4 topology=fattree workload=collective collective=allreduce group=all bytes=1MiB", true},
    // GeMMs beside collectives (HBM contention): a group forms and lives on beside the
    // prefetches and write-backs on its HBMs and beside the other rings' flows and groups there
    // while those HBMs cannot limit a ring flow (decoupled); the reductions, which share an HBM
    // with the GeMM's flows, stay flows.
    Scenario{"MeshsliceGemm", "chips=16 mesh=4x4 workload=gemm gemm=4096,4096,4096 algorithm=meshslice slices=4", true},
    Scenario{"MeshsliceGpt3Block", "chips=16 model=gpt3 batch=8 seq=512", true},
    Scenario{"WangGpt3Block", "chips=16 mesh=4x4 model=gpt3 batch=8 seq=512 algorithm=wang dataflow=ls", true},
    // A GPT-3 block on a fat-tree (groups cannot form where core links bind; arrivals batch),
    // and a pipeline of MeshSlice stages on a 3D torus (stage meshes on their own slices, the
    // stages' transfers and the DP all-reduce beside the rings' groups).
    Scenario{"MeshsliceGpt3BlockFatTree", "chips=16 mesh=4x4 topology=fattree model=gpt3 batch=8 seq=512", true},
    Scenario{"PipelineMeshsliceTorus3d", "chips=64 workload=pipeline hidden=1024 heads=16 layers=4 stages=2 dp=2 mesh=4x4 algorithm=meshslice microbatches=4 batch=32 seq=512 topology=torus3d dims=4x4x4", true},
    // GPU systems with NCCL kernels that hold SMs (CTA caps on every flow).
    Scenario{"NcclAllReduceDgx", "system=dgx-a100 chips=16 stack=nccl workload=collective collective=allreduce group=all bytes=64MiB", true},
    Scenario{"NcclPipelineP3", "system=p3.8xlarge chips=8 workload=pipeline hidden=1024 heads=16 layers=4 stages=2 dp=2 mesh=2x1 microbatches=4 batch=16 seq=512 schedule=eager-1f1b delay-dw=1", true}),
    [](const auto& info) { return info.param.name; });
// clang-format on

}  // namespace
}  // namespace meshsim::sim
