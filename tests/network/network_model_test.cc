// Closed-form checks of the network model: collectives on uncontended rings match their
// formulas, the tpuv4 preset matches the MeshSlice simulation-fitted constants, and contention
// (shared links, HBM) is real.
#include "network/network_model.h"

#include <memory>
#include <vector>

#include "core/executor.h"
#include "core/fair_share.h"
#include "core/op_graph.h"
#include "core/simulator.h"
#include "gtest/gtest.h"
#include "network/network_config.h"
#include "network/topology.h"

namespace meshsim::network {
namespace {

using core::ChipId;
using core::CollectiveKind;
using core::Op;
using core::Time;

constexpr double kMiB = 1024.0 * 1024.0;

// A machine of `topology` with HBM resources of `hbm_bw` per chip and a network model.
struct Rig {
  Rig(TopologyParams params, NetworkConfig cfg, double hbm_bw = 1.2e12,
      double reduce_bytes_per_s = 51e12)
      : config(cfg) {
    params.link_bandwidth_bytes_per_s = cfg.link_bandwidth_bytes_per_s;
    params.link_latency_s = cfg.link_latency_s;
    auto t = Topology::Build(params);
    EXPECT_TRUE(t.ok()) << t.status();
    topology = std::make_unique<Topology>(std::move(*t));
    std::vector<core::ResourceId> hbm;
    for (int c = 0; c < topology->num_chips(); ++c) {
      core::ResourceInfo info;
      info.name = "hbm";
      info.kind = core::ResourceKind::kHbm;
      info.capacity_bytes_per_s = hbm_bw;
      hbm.push_back(fs.AddResource(info));
    }
    net = std::make_unique<NetworkModel>(fs, *topology, config, hbm, reduce_bytes_per_s);
  }

  core::GroupId Group(std::vector<int> chips) {
    std::vector<ChipId> members;
    for (int c : chips) members.push_back(ChipId(c));
    return graph.AddGroup(members);
  }
  static std::vector<int> Range(int begin, int count, int stride = 1) {
    std::vector<int> v;
    for (int i = 0; i < count; ++i) v.push_back(begin + i * stride);
    return v;
  }

  // Runs the graph; returns the makespan in seconds.
  double Run() {
    core::Executor exec(sim, graph);
    exec.SetRunner(core::OpKind::kCollective, net.get());
    exec.SetRunner(core::OpKind::kTransfer, net.get());
    absl::Status s = exec.Run();
    EXPECT_TRUE(s.ok()) << s;
    for (size_t i = 0; i < graph.size(); ++i) end.push_back(exec.end_time(core::OpId(i)));
    rows = exec.timeline();
    return exec.makespan().seconds();
  }

  NetworkConfig config;
  core::Simulator sim;
  core::FairShare fs{sim};
  std::unique_ptr<Topology> topology;
  std::unique_ptr<NetworkModel> net;
  core::OpGraph graph;
  std::vector<Time> end;
  std::vector<core::TimelineRow> rows;
};

NetworkConfig Config(int directions) {
  NetworkConfig c;
  c.link_bandwidth_bytes_per_s = 50e9;
  c.link_latency_s = 1e-6;
  c.t_sync_s = 5e-6;
  c.t_launch_s = 20e-6;
  c.ring_directions = directions;
  return c;
}

TopologyParams Ring(int chips) {
  TopologyParams p;
  p.name = "ring";
  p.chips = chips;
  return p;
}

TEST(NetworkModelTest, RingAllGatherMatchesClosedForm) {
  for (int d : {1, 2}) {
    for (int p : {4, 8, 16, 32}) {
      for (double s : {1 * kMiB, 16 * kMiB, 256 * kMiB}) {
        NetworkConfig c = Config(d);
        Rig rig(Ring(p), c);
        rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, p)),
                                     static_cast<int64_t>(s)));
        // t_launch + (P−1)·(t_sync + latency + s/(d·bw))
        const double expected = c.t_launch_s + (p - 1) * (c.t_sync_s + c.link_latency_s +
                                                          s / (d * c.link_bandwidth_bytes_per_s));
        EXPECT_NEAR(rig.Run(), expected, 0.01 * expected) << "d=" << d << " P=" << p << " s=" << s;
      }
    }
  }
}

TEST(NetworkModelTest, TwoDirectionsHalveTheTransferTerm) {
  const double s = 64 * kMiB;
  const int p = 8;
  double transfer[3];
  for (int d : {1, 2}) {
    NetworkConfig c = Config(d);
    Rig rig(Ring(p), c);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, p)),
                                 static_cast<int64_t>(s)));
    // Remove the fixed terms: t_launch + (P−1)·(t_sync + latency).
    transfer[d] = rig.Run() - c.t_launch_s - (p - 1) * (c.t_sync_s + c.link_latency_s);
  }
  EXPECT_NEAR(transfer[2], transfer[1] / 2, 0.005 * transfer[1]);
}

TEST(NetworkModelTest, TpuV4PresetMatchesSimulationFittedConstants) {
  // reference/meshslice-calibration.md, simulation-fitted set, n chips on a ring, shard s:
  //   AllGather      t_launch + (n−1)·(s/60 GB/s + 6 us), t_launch = 100 us
  //   ReduceScatter  t_launch + (n−1)·(s/50 GB/s + 6 us)
  const NetworkConfig c = *NetworkPreset("tpuv4");
  for (int n : {4, 16, 64}) {
    for (double s : {1 * kMiB, 16 * kMiB, 256 * kMiB}) {
      for (auto [kind, bw] : {std::pair{CollectiveKind::kAllGather, 60e9},
                              std::pair{CollectiveKind::kReduceScatter, 50e9}}) {
        Rig rig(Ring(n), c, 1.2e12, /*tpuv4 reduce rate=*/3.0 * 2 * 2 * 4.25e12);
        rig.graph.Add(Op::Collective(kind, rig.Group(Rig::Range(0, n)), static_cast<int64_t>(s)));
        const double fitted = 100e-6 + (n - 1) * (s / bw + 6e-6);
        EXPECT_NEAR(rig.Run(), fitted, 0.05 * fitted)
            << core::ToString(kind) << " n=" << n << " s=" << s;
      }
    }
  }
}

TEST(NetworkModelTest, SendRecvShiftAndBidirectionalHalves) {
  const NetworkConfig c = Config(2);
  const double b = 32 * kMiB;
  // One-way shift: t_launch + t_sync + latency + b/bw.
  {
    Rig rig(Ring(8), c);
    Op op = Op::Collective(CollectiveKind::kSendRecv, rig.Group(Rig::Range(0, 8)),
                           static_cast<int64_t>(b));
    op.directions = 1;
    rig.graph.Add(op);
    const double expected = c.t_launch_s + c.t_sync_s + c.link_latency_s + b / 50e9;
    EXPECT_NEAR(rig.Run(), expected, 0.01 * expected);
  }
  // Halves both ways: t_launch + t_sync + latency + (b/2)/bw.
  {
    Rig rig(Ring(8), c);
    Op op = Op::Collective(CollectiveKind::kSendRecv, rig.Group(Rig::Range(0, 8)),
                           static_cast<int64_t>(b));
    op.directions = 2;
    rig.graph.Add(op);
    const double expected = c.t_launch_s + c.t_sync_s + c.link_latency_s + b / 2 / 50e9;
    EXPECT_NEAR(rig.Run(), expected, 0.01 * expected);
  }
}

TEST(NetworkModelTest, ReduceScatterAddsHbmBoundReductions) {
  // Per step: t_sync + latency + s/(d·bw), then the reduction reads 2s and writes s on HBM:
  // 3s / hbm_bw (both halves reduce concurrently on one HBM).
  const NetworkConfig c = Config(2);
  const double s = 64 * kMiB, hbm = 0.6e12;
  const int p = 4;
  Rig rig(Ring(p), c, hbm);
  rig.graph.Add(Op::Collective(CollectiveKind::kReduceScatter, rig.Group(Rig::Range(0, p)),
                               static_cast<int64_t>(s)));
  const double expected =
      c.t_launch_s + (p - 1) * (c.t_sync_s + c.link_latency_s + s / (2 * 50e9) + 3 * s / hbm);
  EXPECT_NEAR(rig.Run(), expected, 0.01 * expected);
}

TEST(NetworkModelTest, PipelinedBroadcastTakesPPlusDMinusTwoStages) {
  // t_launch + (P+D−2)·(t_sync + latency + b/(D·bw))
  NetworkConfig c = Config(1);
  c.packets = 4;
  const double b = 16 * kMiB;
  const int p = 6;
  Rig rig(Ring(p), c);
  Op op = Op::Collective(CollectiveKind::kBroadcast, rig.Group(Rig::Range(0, p)),
                         static_cast<int64_t>(b));
  op.root = 2;
  rig.graph.Add(op);
  EXPECT_EQ(rig.net->Steps(op, p), p + 4 - 2);
  const double expected =
      c.t_launch_s + (p + 4 - 2) * (c.t_sync_s + c.link_latency_s + b / 4 / 50e9);
  EXPECT_NEAR(rig.Run(), expected, 0.01 * expected);
}

TEST(NetworkModelTest, RingAllReduceIsReduceScatterThenAllGather) {
  // 2(P−1) steps of b/P: P−1 with reductions (3·b/P on HBM), P−1 without.
  const NetworkConfig c = Config(1);
  const double b = 64 * kMiB, piece = b / 8;
  Rig rig(Ring(8), c);
  rig.graph.Add(Op::Collective(CollectiveKind::kAllReduce, rig.Group(Rig::Range(0, 8)),
                               static_cast<int64_t>(b)));
  const double step = c.t_sync_s + c.link_latency_s + piece / 50e9;
  const double expected = c.t_launch_s + 7 * (step + 3 * piece / 1.2e12) + 7 * step;
  EXPECT_NEAR(rig.Run(), expected, 0.01 * expected);
}

TEST(NetworkModelTest, SwitchAllReduceUsesHalvingDoubling) {
  TopologyParams p;
  p.name = "switch";
  p.chips = 8;
  Rig rig(p, Config(1));
  Op op = Op::Collective(CollectiveKind::kAllReduce, rig.Group(Rig::Range(0, 8)), 8 << 20);
  rig.graph.Add(op);
  EXPECT_EQ(rig.net->Steps(op, 8), 6);  // 2·log2(8)
  rig.Run();
}

TEST(NetworkModelTest, TransferTakesLaunchLatencyAndBandwidth) {
  // Chip 0 → chip 2 on an 8-ring: 2 hops. t_launch + 2·latency + b/bw.
  const NetworkConfig c = Config(1);
  Rig rig(Ring(8), c);
  const double b = 10e6;
  rig.graph.Add(Op::Transfer(ChipId(0), ChipId(2), static_cast<int64_t>(b)));
  const double expected = c.t_launch_s + 2 * c.link_latency_s + b / 50e9;
  EXPECT_NEAR(rig.Run(), expected, 1e-9);
}

TEST(NetworkModelTest, TwoCollectivesSharingLinksTakeTwiceAsLong) {
  const NetworkConfig c = Config(1);
  const double s = 128 * kMiB;
  double transfer[3];
  for (int copies : {1, 2}) {
    Rig rig(Ring(8), c);
    for (int i = 0; i < copies; ++i) {
      rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 8)),
                                   static_cast<int64_t>(s)));
    }
    transfer[copies] = rig.Run() - c.t_launch_s - 7 * (c.t_sync_s + c.link_latency_s);
  }
  EXPECT_NEAR(transfer[2] / transfer[1], 2.0, 0.02);
}

TEST(NetworkModelTest, RowAndColumnAllGathersOnATorusDoNotSlowEachOther) {
  TopologyParams p;
  p.name = "torus2d";
  p.chips = 16;
  p.dims = {4, 4};
  const NetworkConfig c = Config(2);
  const int64_t s = 64 << 20;
  double alone, together;
  {
    Rig rig(p, c);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4)), s));
    alone = rig.Run();
  }
  {
    Rig rig(p, c);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4)), s));
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4, 4)), s));
    together = rig.Run();
    EXPECT_EQ(rig.end[0], rig.end[1]);  // Symmetric: the row and the column finish together.
  }
  EXPECT_NEAR(together, alone, 1e-3 * alone);
}

TEST(NetworkModelTest, LowHbmBandwidthMakesRingStepsHbmBound) {
  // Unidirectional ring: each chip reads one outgoing and writes one incoming flow at a time,
  // so with hbm_bw < 2·link_bw each flow gets hbm_bw/2. Step transfer = s / (hbm_bw/2).
  const NetworkConfig c = Config(1);
  const double hbm = 40e9, s = 32 * kMiB;
  Rig rig(Ring(4), c, hbm);
  rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4)),
                               static_cast<int64_t>(s)));
  const double expected = c.t_launch_s + 3 * (c.t_sync_s + c.link_latency_s + s / (hbm / 2));
  EXPECT_NEAR(rig.Run(), expected, 0.01 * expected);
}

TEST(NetworkModelTest, RecordsPhaseRowsPerMember) {
  const NetworkConfig c = Config(1);
  Rig rig(Ring(4), c);
  rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4)), 1 << 20));
  rig.Run();
  int launch = 0, sync = 0, transfer = 0, op = 0;
  int64_t bytes = 0;
  for (const core::TimelineRow& r : rig.rows) {
    launch += r.phase == core::Phase::kLaunch;
    sync += r.phase == core::Phase::kSync;
    transfer += r.phase == core::Phase::kTransfer;
    if (r.phase == core::Phase::kOp) {
      ++op;
      bytes += r.bytes;
    }
  }
  EXPECT_EQ(launch, 4);
  EXPECT_EQ(sync, 4 * 3);  // P members × (P−1) steps.
  EXPECT_EQ(transfer, 4 * 3);
  EXPECT_EQ(op, 4);
  EXPECT_EQ(bytes, 4 * 3 * (1 << 20));  // Each member forwards (P−1) shards.
}

}  // namespace
}  // namespace meshsim::network
