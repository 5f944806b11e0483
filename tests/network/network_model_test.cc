// Closed-form checks of the network model: collectives on uncontended rings match their
// formulas, the tpuv4 preset matches the MeshSlice simulation-fitted constants, and contention
// (shared links, HBM) is real.
#include "network/network_model.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/core_ledger.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/op_graph.h"
#include "core/simulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "network/network_config.h"
#include "network/topology.h"
#include "stack/stack_config.h"

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
    params.axis_bandwidth_bytes_per_s.assign(cfg.axis_bandwidth_bytes_per_s.begin(),
                                             cfg.axis_bandwidth_bytes_per_s.end());
    params.link_latency_s = cfg.link_latency_s;
    params.length2_links = cfg.torus_length2_links;
    params.hierarchical = cfg.hierarchical;
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
  core::TimelineRows rows;
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

TEST(NetworkModelTest, PipelinedBroadcastIsFillPlusDMinusOnePacketTimes) {
  // A chain root → root+1 → … of P chips, one link per hop (bw, latency lat), b in D packets of
  // s = b/D. Hop h sends packet k once it holds k and has sent k−1: it starts at
  // h·(lat + s/bw) + k·s/bw, so the last packet lands on the last chip at
  //   t_launch + (P−1)·(t_sync + lat + s/bw) + (D−1)·s/bw
  // — each hop's handshake (t_sync) and latency paid once along the fill, no barrier per packet.
  // Not the lock-step t_launch + (P+D−2)·(t_sync + lat + s/bw).
  for (int p : {2, 6, 9}) {
    for (int d : {1, 4, 16}) {
      NetworkConfig c = Config(1);
      c.packets = d;
      const double b = 16 * kMiB, s = b / d, bw = c.link_bandwidth_bytes_per_s;
      Rig rig(Ring(p), c);
      Op op = Op::Collective(CollectiveKind::kBroadcast, rig.Group(Rig::Range(0, p)),
                             static_cast<int64_t>(b));
      op.root = 2;
      rig.graph.Add(op);
      EXPECT_EQ(rig.net->Steps(op, p), p + d - 2);  // Packet slots of the pipeline.
      const double expected =
          c.t_launch_s + (p - 1) * (c.t_sync_s + c.link_latency_s + s / bw) + (d - 1) * s / bw;
      EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected) << "P=" << p << " D=" << d;
    }
  }
}

TEST(NetworkModelTest, PipelinedReduceReducesEachPacketBeforeForwardingIt) {
  // The chain reversed, towards the root: each receiver adds a packet (3·s on its HBM at the
  // reduction rate R; HBM otherwise unbounded) before it forwards it. With 3·s/R < s/bw the
  // reductions hide behind the next packet's transfer except along the fill:
  //   t_launch + (P−1)·(t_sync + lat + s/bw + 3·s/R) + (D−1)·s/bw.
  NetworkConfig c = Config(1);
  c.packets = 8;
  const int p = 5;
  const double b = 32 * kMiB, s = b / 8, bw = c.link_bandwidth_bytes_per_s, red = 600e9;
  Rig rig(Ring(p), c, /*hbm_bw=*/1e15, red);
  Op op =
      Op::Collective(CollectiveKind::kReduce, rig.Group(Rig::Range(0, p)), static_cast<int64_t>(b));
  op.root = 3;
  rig.graph.Add(op);
  const double expected =
      c.t_launch_s + (p - 1) * (c.t_sync_s + c.link_latency_s + s / bw + 3 * s / red) + 7 * s / bw;
  EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected);
  // Reductions slower than the link (3·s/R > s/bw): each receiver adds one packet at a time, so
  // they set the pace: t_launch + (P−1)·(t_sync + lat + s/bw + 3·s/R) + (D−1)·3·s/R.
  {
    const double slow = 50e9;
    Rig slow_rig(Ring(p), c, /*hbm_bw=*/1e15, slow);
    Op slow_op = Op::Collective(CollectiveKind::kReduce, slow_rig.Group(Rig::Range(0, p)),
                                static_cast<int64_t>(b));
    slow_op.root = 3;
    slow_rig.graph.Add(slow_op);
    const double want = c.t_launch_s +
                        (p - 1) * (c.t_sync_s + c.link_latency_s + s / bw + 3 * s / slow) +
                        7 * 3 * s / slow;
    EXPECT_NEAR(slow_rig.Run(), want, 1e-6 * want);
  }
  // Rows: a launch per member, one transfer per receiver (the root and the middle of the chain),
  // an op row per member; the far end (root − 1 = chip 2) receives nothing. Every member but
  // the root sends the whole buffer once.
  int launch = 0, sync = 0, transfer = 0;
  for (const core::TimelineRow& r : rig.rows) {
    launch += r.phase == core::Phase::kLaunch;
    sync += r.phase == core::Phase::kSync;
    transfer += r.phase == core::Phase::kTransfer;
    if (r.phase == core::Phase::kTransfer) {
      EXPECT_NE(r.chip, ChipId(2));
    }
    if (r.phase == core::Phase::kOp) {
      EXPECT_EQ(r.bytes, r.chip == ChipId(3) ? 0 : static_cast<int64_t>(b)) << r.chip;
    }
  }
  EXPECT_EQ(launch, p);
  EXPECT_EQ(sync, p - 1);  // One handshake per hop, on its sender.
  EXPECT_EQ(transfer, p - 1);
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

TopologyParams Torus4x4() {
  TopologyParams p;
  p.name = "torus2d";
  p.chips = 16;
  p.dims = {4, 4};
  return p;
}

TEST(NetworkModelTest, AxisBandwidthsSetTheRingRateOfEachAxis) {
  // One-way rings on a 4×4 torus with axis 0 at 20 GB/s and axis 1 at 80 GB/s per direction.
  // Column group {0, 4, 8, 12} rides dimension-0 links, row group {0, 1, 2, 3} dimension-1
  // links: t_launch + (P−1)·(t_sync + latency + s/bw_axis), each as if alone, also together.
  NetworkConfig c = Config(1);
  c.axis_bandwidth_bytes_per_s = {20e9, 80e9, 0};
  const double s = 16 * kMiB;
  const auto expected = [&](double bw) {
    return c.t_launch_s + 3 * (c.t_sync_s + c.link_latency_s + s / bw);
  };
  Rig rig(Torus4x4(), c);
  rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4, 4)),
                               static_cast<int64_t>(s)));
  rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4)),
                               static_cast<int64_t>(s)));
  rig.Run();
  EXPECT_NEAR(rig.end[0].seconds(), expected(20e9), 1e-6 * expected(20e9));
  EXPECT_NEAR(rig.end[1].seconds(), expected(80e9), 1e-6 * expected(80e9));
  // A SendRecv shift moves b over one link of its axis: t_launch + t_sync + latency + b/bw_axis.
  for (auto [stride, bw] : {std::pair{4, 20e9}, std::pair{1, 80e9}}) {
    Rig shift(Torus4x4(), c);
    shift.graph.Add(Op::Collective(CollectiveKind::kSendRecv, shift.Group(Rig::Range(0, 4, stride)),
                                   static_cast<int64_t>(s)));
    const double one_shift = c.t_launch_s + c.t_sync_s + c.link_latency_s + s / bw;
    EXPECT_NEAR(shift.Run(), one_shift, 1e-6 * one_shift) << "stride " << stride;
  }
}

TEST(NetworkModelTest, TpuV4SlicePresetMatchesTheMeasuredAllGatherOnEachAxis) {
  // reference/meshslice-calibration.md, TPUv4-measured set (a v4-32 slice, 4×4), n = 4, shard s:
  //   AllGather  t_launch + (n−1)·(s/bw_axis + t_step), t_launch = 13 us, t_step = 5 us,
  //              bw 27.472 GB/s on axis 0 (columns, across hosts), 79.751 GB/s on axis 1.
  // tpuv4-slice runs rings one way, so a step moves s over one link at link.bandwidth_axisk.
  const NetworkConfig c = *NetworkPreset("tpuv4-slice");
  EXPECT_EQ(c.ring_directions, 1);
  for (double s : {1 * kMiB, 16 * kMiB, 256 * kMiB}) {
    for (auto [stride, bw] : {std::pair{4, 27.472e9}, std::pair{1, 79.751e9}}) {
      Rig rig(Torus4x4(), c);
      rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4, stride)),
                                   static_cast<int64_t>(s)));
      const double measured = 13e-6 + 3 * (s / bw + 5e-6);
      EXPECT_NEAR(rig.Run(), measured, 1e-6 * measured) << "stride " << stride << " s=" << s;
    }
  }
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

// A ring step without reductions costs its sync, one event for its flows' completions (they end
// together: a flow group, or one batch of completions), two fair-share solves (after the flows
// start, after they finish) and one event for the step's end — not one more per flow for its
// arrival after the route latency: an AllGather of P members and d directions runs
// 1 + (P−1)·(1 + 1 + 2 + 1) events (launch, then per step), plus what the executor spends on
// any one op, the same in every case.
TEST(NetworkModelTest, RingStepCostsOneEventPerFlowPlusSyncAndEnd) {
  std::vector<int64_t> executor_events;
  for (bool groups : {false, true}) {
    for (int d : {1, 2}) {
      for (int p : {4, 8, 16}) {
        Rig rig(Ring(p), Config(d));
        rig.fs.set_flow_groups(groups);
        rig.graph.Add(
            Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, p)), 1 << 20));
        rig.Run();
        // Per step: the sync, the flows' completions (one event: a flow group's — the ring's
        // flows are alone on their links and HBMs — or, flow by flow, the batch of the
        // completions one solve scheduled at one instant), the two solves and the step's end.
        const int completions = 1;
        const int64_t network = 1 + int64_t{p - 1} * (1 + completions + 2 + 1);
        executor_events.push_back(static_cast<int64_t>(rig.sim.events_executed()) - network);
        EXPECT_EQ(rig.fs.groups_formed(), groups ? uint64_t(p - 1) : 0u) << p;
      }
    }
  }
  for (int64_t e : executor_events) EXPECT_EQ(e, executor_events.front());
  EXPECT_EQ(executor_events.front(), 1);  // The op's dispatch.
}

// ---------------------------------------------------------------------------------------------
// Hierarchical GPU hosts: NIC-bound rings, shared NICs, PCIe bridges, two-level collectives.

// Hosts of 4 GPUs on an NVSwitch (300 GB/s), one PCIe switch and one NIC of `nic_bw` per host,
// hosts on one switch. Every inter-host route is GPU → PCIe → NIC → switch → NIC → PCIe → GPU.
NetworkConfig GpuHosts(int directions, double nic_bw = 10e9) {
  NetworkConfig c = Config(directions);
  HierarchicalParams& h = c.hierarchical;
  h.gpus_per_node = 4;
  h.intra = "nvswitch";
  h.nvlink_bandwidth_bytes_per_s = 300e9;
  h.nvlink_latency_s = 1e-6;
  h.gpus_per_pcie_switch = 4;
  h.pcie_bandwidth_bytes_per_s = 25e9;
  h.pcie_latency_s = 1e-6;
  h.sockets = 1;
  h.nics_per_node = 1;
  h.nic_bandwidth_bytes_per_s = nic_bw;
  h.nic_latency_s = 2e-6;
  h.inter = "switch";
  return c;
}

TopologyParams Hosts(int chips) {
  TopologyParams p;
  p.name = "hierarchical";
  p.chips = chips;
  return p;
}

// Latency of an inter-host route: PCIe, NIC, NIC, PCIe hops.
double InterHostLatency(const NetworkConfig& c) {
  return 2 * c.hierarchical.pcie_latency_s + 2 * c.hierarchical.nic_latency_s;
}

// The mean latency of the routes from each member to the next of a ring 0..n−1 (a ring step's
// flows land this long after they finish: NetworkModel::PipelineRingLatency).
double MeanRingLatency(const Topology& t, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    for (core::LinkId l : t.Route(ChipId(i), ChipId((i + 1) % n))) {
      sum += t.links()[l.value()].latency_s;
    }
  }
  return sum / n;
}

TEST(HierarchicalNetworkTest, RingCrossingTwoHostsIsNicBound) {
  // 8 GPUs on 2 hosts, one unidirectional ring 0..7: the hops 3→4 and 7→0 leave their host
  // through its one NIC (its two directions are separate), so every step's bandwidth part is
  // s / nic_bw, and its flows land the ring's mean route latency later:
  //   t_launch + (P−1)·(t_sync + mean latency + s/nic_bw).
  const NetworkConfig c = GpuHosts(1);
  Rig rig(Hosts(8), c);
  const double s = 16 * kMiB;
  rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 8)),
                               static_cast<int64_t>(s)));
  const double expected = c.t_launch_s + 7 * (c.t_sync_s + MeanRingLatency(*rig.topology, 8) +
                                              s / c.hierarchical.nic_bandwidth_bytes_per_s);
  EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected);
}

TEST(HierarchicalNetworkTest, SmallRingStepsCostTheRingsMeanLatencyNotItsSlowestHop) {
  // A ring is not a barrier: member i's step s waits for member i−1's step s−1 only, so the
  // chain that bounds a latency-bound collective crosses the ring's hops in turn, 2(P−1) hops
  // for an AllReduce. 8 GPUs on 2 hosts, 8 bytes: 6 NVSwitch hops of 2 us and 2 host crossings
  // of 8 us (4 PCIe, 2 NIC links): each step costs their mean, 3.5 us, not 8 —
  //   t = t_launch + 14·(t_sync + mean latency) (+ picoseconds of bytes).
  const NetworkConfig c = GpuHosts(1);
  Rig rig(Hosts(8), c, /*hbm_bw=*/1e15, /*reduce_bytes_per_s=*/1e15);
  rig.graph.Add(Op::Collective(CollectiveKind::kAllReduce, rig.Group(Rig::Range(0, 8)), 8));
  const double mean = MeanRingLatency(*rig.topology, 8);
  const HierarchicalParams& h = c.hierarchical;
  EXPECT_NEAR(mean,
              (6 * 2 * h.nvlink_latency_s + 2 * (4 * h.pcie_latency_s + 2 * h.nic_latency_s)) / 8,
              1e-12);
  EXPECT_NEAR(rig.Run(), c.t_launch_s + 14 * (c.t_sync_s + mean), 1e-8);
}

TEST(HierarchicalNetworkTest, TwoGroupsSharingOneNicGetHalfItsRateEach) {
  // Groups {0,1,4,5} and {2,3,6,7}: each ring crosses hosts twice per step (1→4, 5→0 and
  // 3→6, 7→2), so host 0's NIC sends for both groups at once. Alone, a group's step moves
  // s at nic_bw; together, at nic_bw / 2 — from the fair-share solver, not a formula in code.
  const NetworkConfig c = GpuHosts(1);
  const double s = 16 * kMiB;
  const double fixed = c.t_launch_s + 3 * (c.t_sync_s + InterHostLatency(c));
  double alone, both;
  {
    Rig rig(Hosts(8), c);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group({0, 1, 4, 5}),
                                 static_cast<int64_t>(s)));
    alone = rig.Run() - fixed;
  }
  {
    Rig rig(Hosts(8), c);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group({0, 1, 4, 5}),
                                 static_cast<int64_t>(s)));
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group({2, 3, 6, 7}),
                                 static_cast<int64_t>(s)));
    both = rig.Run() - fixed;
  }
  // Alone: 3·s/nic_bw; together: 3·s/(nic_bw/2).
  const double step = s / c.hierarchical.nic_bandwidth_bytes_per_s;
  EXPECT_NEAR(alone, 3 * step, 0.01 * alone);
  EXPECT_NEAR(both, 6 * step, 0.01 * both);
}

TEST(HierarchicalNetworkTest, PcieBridgeIsSharedAcrossSwitches) {
  // One host of 4 GPUs over PCIe only, 2 per PCIe switch, one socket: GPU 0 → GPU 2 crosses
  // switch 0's uplink to the CPU; so does GPU 1 → GPU 3. Alone: t_launch + 4·lat + b/pcie_bw;
  // together they share the uplink: t_launch + 4·lat + 2·b/pcie_bw. GPU 0 → GPU 1 stays under
  // its switch and does not slow them.
  NetworkConfig c = GpuHosts(1);
  c.hierarchical.intra = "pcie";
  c.hierarchical.gpus_per_pcie_switch = 2;
  const double b = 64 * kMiB, bw = c.hierarchical.pcie_bandwidth_bytes_per_s;
  const double lat = 4 * c.hierarchical.pcie_latency_s;
  {
    Rig rig(Hosts(4), c);
    rig.graph.Add(Op::Transfer(ChipId(0), ChipId(2), static_cast<int64_t>(b)));
    EXPECT_NEAR(rig.Run(), c.t_launch_s + lat + b / bw, 1e-8);
  }
  {
    Rig rig(Hosts(4), c);
    rig.graph.Add(Op::Transfer(ChipId(0), ChipId(2), static_cast<int64_t>(b)));
    rig.graph.Add(Op::Transfer(ChipId(1), ChipId(3), static_cast<int64_t>(b)));
    EXPECT_NEAR(rig.Run(), c.t_launch_s + lat + 2 * b / bw, 1e-8);
  }
  {
    Rig rig(Hosts(4), c);
    rig.graph.Add(Op::Transfer(ChipId(0), ChipId(2), static_cast<int64_t>(b)));
    rig.graph.Add(Op::Transfer(ChipId(1), ChipId(0), static_cast<int64_t>(b / 4)));
    EXPECT_NEAR(rig.Run(), c.t_launch_s + lat + b / bw, 1e-8);
  }
}

TEST(HierarchicalNetworkTest, TwoLevelAllReduceBeatsTheFlatRingAcrossHosts) {
  // 2 hosts × 4 GPUs, AllReduce of b, unidirectional rings, reductions free (HBM unbounded).
  // Flat ring: 2(P−1) steps of b/P, each bound by a NIC crossing:
  //   t_launch + 2(P−1)·(t_sync + lat_inter + b/(P·nic_bw)).
  // Two-level (L = 4 per host, n = 2 hosts): intra-host ReduceScatter and AllGather of b/L over
  // NVSwitch (L−1 steps each), and between them 4 concurrent inter-host rings (one per local
  // rank) of 2(n−1) steps of b/(L·n) sharing each host's NIC (4 flows → nic_bw/4 each):
  //   t_launch + 2(L−1)·(t_sync + 2·lat_nv + b/(L·nv_bw)) + 2(n−1)·(t_sync + lat_inter +
  //   b/(n·nic_bw)).
  const double b = 256 * kMiB;
  NetworkConfig c = GpuHosts(1);
  const HierarchicalParams& h = c.hierarchical;
  const double flat_expected = c.t_launch_s + 14 * (c.t_sync_s + InterHostLatency(c) +
                                                    b / (8 * h.nic_bandwidth_bytes_per_s));
  {
    Rig rig(Hosts(8), c, /*hbm_bw=*/1e15, /*reduce_bytes_per_s=*/1e15);  // Free reductions.
    rig.graph.Add(Op::Collective(CollectiveKind::kAllReduce, rig.Group(Rig::Range(0, 8)),
                                 static_cast<int64_t>(b)));
    EXPECT_NEAR(rig.Run(), flat_expected, 0.01 * flat_expected);
  }
  c.two_level = 1;
  const double two_level_expected =
      c.t_launch_s +
      6 * (c.t_sync_s + 2 * h.nvlink_latency_s + b / (4 * h.nvlink_bandwidth_bytes_per_s)) +
      2 * (c.t_sync_s + InterHostLatency(c) + b / (2 * h.nic_bandwidth_bytes_per_s));
  Rig rig(Hosts(8), c, /*hbm_bw=*/1e15, /*reduce_bytes_per_s=*/1e15);
  const Op ar = Op::Collective(CollectiveKind::kAllReduce, rig.Group(Rig::Range(0, 8)), int64_t(b));
  EXPECT_EQ(rig.net->Steps(ar, 8), 14);  // Flat count; the run plans 2(L−1) + 2(n−1) = 8.
  rig.graph.Add(ar);
  const double two_level = rig.Run();
  EXPECT_NEAR(two_level, two_level_expected, 0.01 * two_level_expected);
  EXPECT_LT(two_level, 0.75 * flat_expected);
}

TEST(HierarchicalNetworkTest, GpusCrossHostsOnTheirOwnRail) {
  // 2 hosts × 4 GPUs, 2 per PCIe switch, 4 NICs (one per GPU, 2 per switch), one fabric switch.
  // GPU k of host 0 to GPU k of host 1 (4 transfers at once): each leaves by its own NIC k and
  // enters by NIC k, as NCCL binds GPUs to NICs, so none shares a NIC:
  //   t = t_launch + 4·pcie_lat (GPU–switch–NIC at each end) + 2·nic_lat + b / nic_bw.
  // Without rails, equal-cost NICs were picked by hash and two transfers could share one.
  NetworkConfig c = GpuHosts(1);
  c.hierarchical.gpus_per_pcie_switch = 2;
  c.hierarchical.nics_per_node = 4;
  const double b = 64 * kMiB;
  Rig rig(Hosts(8), c);
  for (int k = 0; k < 4; ++k) {
    rig.graph.Add(Op::Transfer(ChipId(k), ChipId(4 + k), static_cast<int64_t>(b)));
  }
  const double expected = c.t_launch_s + 4 * c.hierarchical.pcie_latency_s +
                          2 * c.hierarchical.nic_latency_s +
                          b / c.hierarchical.nic_bandwidth_bytes_per_s;
  EXPECT_NEAR(rig.Run(), expected, 1e-8);
  // The routes: GPU k → host0.nic k → switch → host1.nic k' → GPU k' (k' the destination's).
  const Topology& t = *rig.topology;
  for (const auto& [src, dst] : std::vector<std::pair<int, int>>{{1, 5}, {1, 6}, {3, 4}}) {
    std::vector<std::string> nodes;
    for (core::LinkId l : t.Route(ChipId(src), ChipId(dst), 7)) {
      nodes.push_back(t.node_name(t.links()[l.value()].dst));
    }
    EXPECT_THAT(nodes, ::testing::Contains(absl::StrCat("host0.nic", src)));
    EXPECT_THAT(nodes, ::testing::Contains(absl::StrCat("host1.nic", dst - 4)));
  }
}

TEST(HierarchicalNetworkTest, TwoLevelRingsJoinTheSameRankOfEveryHost) {
  // A two-level AllReduce over a group listing host 1's GPUs in reverse (7, 6, 5, 4, as a snake
  // order does): its inter-host rings still join GPU k of host 0 with GPU k of host 1 — one rail
  // each. On a rail-optimized fat-tree (NIC k of both hosts on one edge switch) a rail ring
  // crosses one switch; with the group's order as ranks (0 with 7, …) every ring would cross
  // rails through an aggregation switch, two links more per step. So both orders take the time
  // of the rail rings: intra-host ReduceScatter and AllGather (2(L−1) steps over NVSwitch), and
  // 2(n−1) inter-host steps of b/(L·n), one ring per NIC, over GPU–switch–NIC–edge–NIC–switch–GPU.
  NetworkConfig c = GpuHosts(1);
  c.hierarchical.gpus_per_pcie_switch = 2;
  c.hierarchical.nics_per_node = 4;
  c.hierarchical.inter = "fattree";
  c.two_level = 1;
  const double b = 256 * kMiB;
  const auto run = [&](std::vector<int> group) {
    Rig rig(Hosts(8), c, /*hbm_bw=*/1e15, /*reduce_bytes_per_s=*/1e15);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllReduce, rig.Group(group), int64_t(b)));
    return rig.Run();
  };
  const HierarchicalParams& h = c.hierarchical;
  const double rail = 4 * h.pcie_latency_s + 2 * h.nic_latency_s;
  const double expected =
      c.t_launch_s +
      6 * (c.t_sync_s + 2 * h.nvlink_latency_s + b / (4 * h.nvlink_bandwidth_bytes_per_s)) +
      2 * (c.t_sync_s + rail + b / (8 * h.nic_bandwidth_bytes_per_s));
  // (Within 2e-4: the reductions at 1e15 B/s add 0.7 us; a ring across rails would add 8 us.)
  const double ordered = run({0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_NEAR(ordered, expected, 2e-4 * expected);
  EXPECT_DOUBLE_EQ(run({0, 1, 2, 3, 7, 6, 5, 4}), ordered);
}

TEST(HierarchicalNetworkTest, TwoLevelAllGatherAndReduceScatterMoveTheSameData) {
  // AllGather of s: n−1 inter-host steps of s (L rings sharing each NIC: s·L/nic_bw per step),
  // then L−1 intra-host steps of n·s over NVSwitch. ReduceScatter: the same phases reversed.
  NetworkConfig c = GpuHosts(1);
  c.two_level = 1;
  const HierarchicalParams& h = c.hierarchical;
  const double s = 8 * kMiB;
  const double expected =
      c.t_launch_s + (c.t_sync_s + InterHostLatency(c) + 4 * s / h.nic_bandwidth_bytes_per_s) +
      3 * (c.t_sync_s + 2 * h.nvlink_latency_s + 2 * s / h.nvlink_bandwidth_bytes_per_s);
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    Rig rig(Hosts(8), c, /*hbm_bw=*/1e15, /*reduce_bytes_per_s=*/1e15);
    rig.graph.Add(Op::Collective(kind, rig.Group(Rig::Range(0, 8)), static_cast<int64_t>(s)));
    EXPECT_NEAR(rig.Run(), expected, 0.01 * expected) << ToString(kind);
  }
}

TEST(HierarchicalNetworkTest, PipelinedBroadcastAcrossHostsRunsEachHopAtItsOwnPace) {
  // A chain broadcast 0 → 1 → … → 7 over 2 hosts in D packets of s = b/D: three NVSwitch hops
  // (f = 2·lat_nv + s/nv_bw each), the NIC hop 3 → 4 (lat_inter + s/nic_bw a packet), three
  // NVSwitch hops. The fast hops deliver packets to chip 3 faster than the NIC takes them, so the
  // NIC hop sends back to back; behind it, the fast hops forward each packet in f:
  //   t_launch + 4·t_sync + 3·f + D·s/nic_bw + lat_inter + 3·f
  // (each hop's handshake once, before its first packet: those up to the NIC hop delay its first
  // packet; those behind it wait for packets anyway, so theirs hide).
  // The lock-step stages gave every stage that carried a NIC packet a full NIC-packet time,
  // t_launch + D·(t_sync + lat_inter + s/nic_bw) + (P−2)·(t_sync + f): far more at D = 8.
  NetworkConfig c = GpuHosts(1);
  const HierarchicalParams& h = c.hierarchical;
  const double b = 64 * kMiB;
  const int d = c.packets;
  const double s = b / d, nic = s / h.nic_bandwidth_bytes_per_s;
  const double f = 2 * h.nvlink_latency_s + s / h.nvlink_bandwidth_bytes_per_s;
  Rig rig(Hosts(8), c);
  rig.graph.Add(Op::Collective(CollectiveKind::kBroadcast, rig.Group(Rig::Range(0, 8)),
                               static_cast<int64_t>(b)));
  const double expected = c.t_launch_s + 4 * c.t_sync_s + 6 * f + d * nic + InterHostLatency(c);
  const double t = rig.Run();
  EXPECT_NEAR(t, expected, 1e-3 * expected) << t - expected;
  const double lockstep =
      c.t_launch_s + d * (c.t_sync_s + InterHostLatency(c) + nic) + 6 * (c.t_sync_s + f);
  EXPECT_LT(t, lockstep - 0.5 * 6 * f);
  // A slow hop sets the pace: D NIC-packet times, not (P+D−2) of them.
  EXPECT_LT(t, (d + 1) * nic + c.t_launch_s);
}

TEST(HierarchicalNetworkTest, PipelinedBroadcastsSharingANicSplitIt) {
  // Chains 0 → 1 → 4 → 5 and 2 → 3 → 6 → 7 both cross from host 0 to host 1: alone, a chain
  // takes t_launch + 3·t_sync + 2·f + lat_inter + D·s/nic_bw (f = one NVSwitch packet hop);
  // together their packets share each NIC direction — the fair-share solver's doing, no formula
  // in code — and the NIC term doubles.
  NetworkConfig c = GpuHosts(1);
  const HierarchicalParams& h = c.hierarchical;
  const double b = 64 * kMiB;
  const int d = c.packets;
  const double s = b / d, nic = s / h.nic_bandwidth_bytes_per_s;
  const double f = 2 * h.nvlink_latency_s + s / h.nvlink_bandwidth_bytes_per_s;
  const double fixed = c.t_launch_s + 3 * c.t_sync_s + 2 * f + InterHostLatency(c);
  double alone, both;
  {
    Rig rig(Hosts(8), c);
    rig.graph.Add(Op::Collective(CollectiveKind::kBroadcast, rig.Group({0, 1, 4, 5}),
                                 static_cast<int64_t>(b)));
    alone = rig.Run();
  }
  {
    Rig rig(Hosts(8), c);
    rig.graph.Add(Op::Collective(CollectiveKind::kBroadcast, rig.Group({0, 1, 4, 5}),
                                 static_cast<int64_t>(b)));
    rig.graph.Add(Op::Collective(CollectiveKind::kBroadcast, rig.Group({2, 3, 6, 7}),
                                 static_cast<int64_t>(b)));
    both = rig.Run();
  }
  EXPECT_NEAR(alone, fixed + d * nic, 1e-3 * alone);
  EXPECT_NEAR(both, fixed + 2 * d * nic, 0.01 * both);
}

// Dimension-order collectives on tori (comm.torus_algorithm = dimension-order).

TopologyParams Grid(const std::string& name, std::vector<int> dims) {
  TopologyParams p;
  p.name = name;
  p.dims = std::move(dims);
  p.chips = 1;
  for (int e : p.dims) p.chips *= e;
  return p;
}

NetworkConfig DimensionOrder(int directions) {
  NetworkConfig c = Config(directions);
  c.torus_algorithm = "dimension-order";
  return c;
}

// Every chip of an R×C torus in boustrophedon order (Mesh::All's ring order for --group all).
std::vector<int> Snake(int rows, int cols) {
  std::vector<int> v;
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < cols; ++i) v.push_back(r * cols + (r % 2 == 0 ? i : cols - 1 - i));
  }
  return v;
}

std::vector<ChipId> Chips(const std::vector<int>& ids) {
  std::vector<ChipId> v;
  for (int c : ids) v.push_back(ChipId(c));
  return v;
}

// The kTransfer rows of `chip`, in step order: each step's flows and reductions, in seconds.
std::vector<double> TransferSeconds(const Rig& rig, int chip) {
  std::vector<std::pair<Time, Time>> rows;
  for (const core::TimelineRow& r : rig.rows) {
    if (r.phase == core::Phase::kTransfer && r.chip == ChipId(chip)) {
      rows.emplace_back(r.start, r.end);
    }
  }
  std::sort(rows.begin(), rows.end());
  std::vector<double> seconds;
  for (const auto& [start, end] : rows) seconds.push_back((end - start).seconds());
  return seconds;
}

TEST(TorusDimensionOrderTest, TwoDimensionalAllReduceMatchesClosedForm) {
  // AllReduce of b over every chip of an n0×n1 = 4×8 torus, rings both ways (d = 2), links of bw
  // per direction, hop latency lat. Phase along dimension j moves pieces b/N_j (N_0 = n0,
  // N_1 = n0·n1): ReduceScatter along 0 then 1, AllGather along 1 then 0; every ring of a phase
  // is a line of the torus (one hop per step, lines share no link). Each reducing step adds
  // 3·piece on the chip's HBM (both halves at once):
  //   t_launch + Σ_j 2(n_j−1)·(t_sync + lat + (b/N_j)/(2·bw)) + Σ_j (n_j−1)·3·(b/N_j)/hbm_bw
  // (the bandwidth term is Σ_j 2(n_j−1)/N_j · b/(2·bw)); 2·(3 + 7) = 20 steps in all.
  const NetworkConfig c = DimensionOrder(2);
  const double b = 64 * kMiB, bw = 50e9, hbm = 1.2e12;
  Rig rig(Grid("torus2d", {4, 8}), c, hbm);
  Op op =
      Op::Collective(CollectiveKind::kAllReduce, rig.Group(Snake(4, 8)), static_cast<int64_t>(b));
  rig.graph.Add(op);
  EXPECT_EQ(rig.net->GroupSteps(op, Chips(Snake(4, 8))), 20);
  double expected = c.t_launch_s;
  for (auto [n, piece] : {std::pair{4, b / 4}, std::pair{8, b / 32}}) {
    expected += 2 * (n - 1) * (c.t_sync_s + c.link_latency_s + piece / (2 * bw)) +
                (n - 1) * 3 * piece / hbm;
  }
  EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected);
  // Step by step: 3 reducing steps of b/4, 7 of b/32, then 7 of b/32 and 3 of b/4 without.
  const std::vector<double> steps = TransferSeconds(rig, 0);
  ASSERT_EQ(steps.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    const bool outer = i < 3 || i >= 17, reduce = i < 10;
    const double piece = outer ? b / 4 : b / 32;
    const double want = c.link_latency_s + piece / (2 * bw) + (reduce ? 3 * piece / hbm : 0);
    EXPECT_NEAR(steps[i], want, 1e-6 * want) << "step " << i;
  }
}

TEST(TorusDimensionOrderTest, ThreeDimensionalAllReduceMatchesClosedFormPerAxisBandwidth) {
  // 3×4×4 torus3d, links along dimension j at bw_j = 20, 40, 80 GB/s per direction, d = 2:
  //   t_launch + Σ_j 2(n_j−1)·(t_sync + lat + (b/N_j)/(2·bw_j)) + Σ_j (n_j−1)·3·(b/N_j)/hbm_bw
  // with N = 3, 12, 48 and b = 192 MiB (every piece whole); 2·(2 + 3 + 3) = 16 steps.
  NetworkConfig c = DimensionOrder(2);
  c.axis_bandwidth_bytes_per_s = {20e9, 40e9, 80e9};
  const double b = 192 * kMiB, hbm = 1.2e12;
  Rig rig(Grid("torus3d", {3, 4, 4}), c, hbm);
  Op op = Op::Collective(CollectiveKind::kAllReduce, rig.Group(Rig::Range(0, 48)),
                         static_cast<int64_t>(b));
  rig.graph.Add(op);
  EXPECT_EQ(rig.net->GroupSteps(op, Chips(Rig::Range(0, 48))), 16);
  double expected = c.t_launch_s;
  const int n[3] = {3, 4, 4};
  const double bw[3] = {20e9, 40e9, 80e9};
  double prefix = 1;
  for (int j = 0; j < 3; ++j) {
    prefix *= n[j];
    const double piece = b / prefix;
    expected += 2 * (n[j] - 1) * (c.t_sync_s + c.link_latency_s + piece / (2 * bw[j])) +
                (n[j] - 1) * 3 * piece / hbm;
  }
  EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected);
}

TEST(TorusDimensionOrderTest, AllGatherAndReduceScatterAloneMatchClosedForm) {
  // Shard s on a 4×8 torus (P = 32), d = 2. AllGather runs the phases last dimension first:
  // along 1, 7 steps of s; along 0, 3 steps of 8·s (= s·P/N_0):
  //   t_launch + 7·(t_sync + lat + s/(2·bw)) + 3·(t_sync + lat + 8s/(2·bw)).
  // ReduceScatter (s = the piece each chip keeps, buffer P·s) runs dimension 0 first: 3 steps of
  // 8·s, then 7 steps of s, each step followed by its reduction (3 × the bytes on HBM):
  //   t_launch + 3·(t_sync + lat + 8s/(2·bw) + 3·8s/hbm) + 7·(t_sync + lat + s/(2·bw) + 3s/hbm).
  const NetworkConfig c = DimensionOrder(2);
  const double s = 2 * kMiB, bw = 50e9, hbm = 1.2e12;
  const double sync = c.t_sync_s + c.link_latency_s;
  const double ag = c.t_launch_s + 7 * (sync + s / (2 * bw)) + 3 * (sync + 8 * s / (2 * bw));
  const double rs = c.t_launch_s + 3 * (sync + 8 * s / (2 * bw) + 3 * 8 * s / hbm) +
                    7 * (sync + s / (2 * bw) + 3 * s / hbm);
  for (auto [kind, expected] :
       {std::pair{CollectiveKind::kAllGather, ag}, std::pair{CollectiveKind::kReduceScatter, rs}}) {
    Rig rig(Grid("torus2d", {4, 8}), c, hbm);
    Op op = Op::Collective(kind, rig.Group(Snake(4, 8)), static_cast<int64_t>(s));
    rig.graph.Add(op);
    EXPECT_EQ(rig.net->GroupSteps(op, Chips(Snake(4, 8))), 10) << ToString(kind);
    EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected) << ToString(kind);
    // The phase order: AllGather's 7 steps of s come first, ReduceScatter's 3 steps of 8·s.
    const std::vector<double> steps = TransferSeconds(rig, 5);
    ASSERT_EQ(steps.size(), 10u);
    const bool gather = kind == CollectiveKind::kAllGather;
    const double small = c.link_latency_s + s / (2 * bw) + (gather ? 0 : 3 * s / hbm);
    const double large = c.link_latency_s + 8 * s / (2 * bw) + (gather ? 0 : 3 * 8 * s / hbm);
    for (int i = 0; i < 10; ++i) {
      const double want = (i < (gather ? 7 : 3)) == gather ? small : large;
      EXPECT_NEAR(steps[i], want, 1e-6 * want) << ToString(kind) << " step " << i;
    }
  }
}

TEST(TorusDimensionOrderTest, OnlyFullGridGroupsDecompose) {
  // On a 3×4×4 torus3d: a plane (dimension 0 fixed, chips 16..31) is a 4×4 sub-torus:
  // 2·(3 + 3) AllReduce steps. A line, half a plane, a strided set and a group with a repeated
  // chip keep the flat ring's 2(P−1).
  const NetworkConfig c = DimensionOrder(2);
  Rig rig(Grid("torus3d", {3, 4, 4}), c);
  const Op op = Op::Collective(CollectiveKind::kAllReduce, core::GroupId(0), 1 << 20);
  EXPECT_EQ(rig.net->GroupSteps(op, Chips(Rig::Range(16, 16))), 12);
  EXPECT_EQ(rig.net->GroupSteps(op, Chips(Rig::Range(0, 3, 16))), 4);   // Line along 0.
  EXPECT_EQ(rig.net->GroupSteps(op, Chips(Rig::Range(16, 8))), 14);     // Half a plane.
  EXPECT_EQ(rig.net->GroupSteps(op, Chips(Rig::Range(0, 24, 2))), 46);  // Every other chip.
  EXPECT_EQ(rig.net->GroupSteps(op, Chips({0, 1, 4, 4})), 6);           // Repeated chip.
  // Other collectives, and a mesh (no wraparound), stay flat whatever the parameter says.
  const Op bcast = Op::Collective(CollectiveKind::kBroadcast, core::GroupId(0), 1 << 20);
  EXPECT_EQ(rig.net->GroupSteps(bcast, Chips(Rig::Range(16, 16))), rig.net->Steps(bcast, 16));
  Rig mesh(Grid("mesh2d", {4, 4}), c);
  EXPECT_EQ(mesh.net->GroupSteps(op, Chips(Rig::Range(0, 16))), 30);
}

TEST(TorusLengthTwoTest, AllReduceOverALengthTwoDimensionUsesBothLinksWhenJoinedTwice) {
  // AllReduce of b over a column {0, 4} of a 2×4 torus (P = 2, the length-2 dimension), rings
  // both ways (d = 2), links of bw per direction. The ring takes 2(P−1) = 2 steps of b/P = b/2
  // per member, split into b/4 to the successor and b/4 to the predecessor — the same chip. The
  // first step reduces what arrived, 3·(b/2) bytes on the chip's HBM:
  //   links = 2 (the + and − ports both to the neighbour): the halves take a link each,
  //     t = t_launch + 2·(t_sync + lat + (b/4)/bw) + 3·(b/2)/hbm_bw;
  //   links = 1: both halves share the pair's one link,
  //     t = t_launch + 2·(t_sync + lat + (b/2)/bw) + 3·(b/2)/hbm_bw.
  const double b = 64 * kMiB, bw = 50e9, hbm = 1.2e12;
  for (int links : {1, 2}) {
    NetworkConfig c = Config(2);
    c.torus_length2_links = links;
    Rig rig(Grid("torus2d", {2, 4}), c, hbm);
    rig.graph.Add(
        Op::Collective(CollectiveKind::kAllReduce, rig.Group({0, 4}), static_cast<int64_t>(b)));
    const double expected = c.t_launch_s +
                            2 * (c.t_sync_s + c.link_latency_s + (b / (2 * links)) / bw) +
                            3 * (b / 2) / hbm;
    EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected) << "links=" << links;
  }
}

TEST(TorusLengthTwoTest, DimensionOrderAllReduceOnTwoByFourMatchesClosedForm) {
  // AllReduce of b over all 8 chips of a 2×4 torus, dimension-order, d = 2. The phases along
  // dimension 0 (n_0 = 2, pieces b/2) get both ring directions' bandwidth only when the pair is
  // joined twice; along dimension 1 (n_1 = 4, pieces b/8) every ring has its own links:
  //   t_launch + 2·(t_sync + lat + (b/2)/(L·bw)) + 2·3·(t_sync + lat + (b/8)/(2·bw))
  //   + 3·(b/2)/hbm_bw + 3·3·(b/8)/hbm_bw,
  // with L = links per direction of the pair (2: the halves in parallel; 1: they share a link).
  const double b = 64 * kMiB, bw = 50e9, hbm = 1.2e12;
  for (int links : {1, 2}) {
    NetworkConfig c = DimensionOrder(2);
    c.torus_length2_links = links;
    Rig rig(Grid("torus2d", {2, 4}), c, hbm);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllReduce, rig.Group(Snake(2, 4)),
                                 static_cast<int64_t>(b)));
    const double step = c.t_sync_s + c.link_latency_s;
    const double expected = c.t_launch_s + 2 * (step + (b / 2) / (links * bw)) +
                            6 * (step + (b / 8) / (2 * bw)) + 3 * (b / 2) / hbm +
                            3 * 3 * (b / 8) / hbm;
    EXPECT_NEAR(rig.Run(), expected, 1e-6 * expected) << "links=" << links;
  }
}

TEST(TorusDimensionOrderTest, GroupsThatAreNoGridRunExactlyAsFlat) {
  // Half of a 4×8 torus (rows 0 and 1): not a full grid, so dimension-order runs the flat ring,
  // to the picosecond.
  Time end[2];
  for (int i = 0; i < 2; ++i) {
    Rig rig(Grid("torus2d", {4, 8}), i == 0 ? Config(2) : DimensionOrder(2));
    rig.graph.Add(Op::Collective(CollectiveKind::kAllReduce, rig.Group(Snake(2, 8)), 16 << 20));
    rig.Run();
    end[i] = rig.end[0];
  }
  EXPECT_EQ(end[0], end[1]);
}

TEST(TorusDimensionOrderTest, BeatsTheFlatRingOn16x16AndFlatIsTheDefault) {
  // AllReduce of 1 GiB over all 256 chips of a 16×16 torus. Both algorithms send the same bytes
  // per chip and reduce the same bytes: Σ_j 2(n_j−1)/N_j = 2(1/1·15/16 + 15/256) = 2·255/256 =
  // 2(P−1)/P, and every ring hop is one link (the snake closes on a 16-row torus). They differ in
  // steps: flat 2(P−1) = 510, dimension-order Σ_j 2(n_j−1) = 60, so flat takes
  // (510 − 60)·(t_sync + lat) longer.
  EXPECT_EQ(NetworkConfig().torus_algorithm, "flat");
  const double b = 1024 * kMiB;
  double t[3];
  const NetworkConfig configs[3] = {Config(2), DimensionOrder(2), [] {
                                      NetworkConfig c = Config(2);
                                      c.torus_algorithm = "flat";
                                      return c;
                                    }()};
  for (int i = 0; i < 3; ++i) {
    Rig rig(Grid("torus2d", {16, 16}), configs[i]);
    Op op = Op::Collective(CollectiveKind::kAllReduce, rig.Group(Snake(16, 16)),
                           static_cast<int64_t>(b));
    rig.graph.Add(op);
    EXPECT_EQ(rig.net->GroupSteps(op, Chips(Snake(16, 16))), i == 1 ? 60 : 510);
    t[i] = rig.Run();
  }
  const NetworkConfig& c = configs[0];
  EXPECT_EQ(t[0], t[2]);  // The default is flat.
  EXPECT_LT(t[1], t[0]);
  const double gap = 450 * (c.t_sync_s + c.link_latency_s);
  EXPECT_NEAR(t[0] - t[1], gap, 1e-3 * gap);
}

}  // namespace
}  // namespace meshsim::network

// --- The software stack's communication kernels (NetworkModel::set_stack). ---
namespace meshsim::network {
namespace {

// A ring AllGather of shard s on P chips, ring links of 50 GB/s, through `stack`; returns the
// makespan. `held` (optional) samples the ledger of chip 0 at `at` seconds.
double StackAllGather(const stack::StackConfig& stack, int p, double s, int d, double at = -1,
                      int* held = nullptr) {
  Rig rig(Ring(p), Config(d), /*hbm_bw=*/1e15);
  core::CoreLedger ledger(p);
  rig.net->set_stack(stack, &ledger);
  rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, p)),
                               static_cast<int64_t>(s)));
  if (held != nullptr) {
    rig.sim.ScheduleAt(core::Time::Seconds(at), [&] { *held = ledger.held(ChipId(0)); });
  }
  const double t = rig.Run();
  EXPECT_EQ(ledger.held(ChipId(0)), 0);  // Every kernel gave its SMs back.
  return t;
}

TEST(NetworkStackTest, CtaBandwidthCapsAKernelsFlowsFromEachChip) {
  // Ring links of 50 GB/s per direction; a kernel of N CTAs of c bytes/s moves at most N·c from a
  // chip, split over its d flows of a step. N = min(ctas, ⌈50 GB/s / c⌉): with c = 10 GB/s and
  // at most 2 CTAs, N = 2 and each of d flows runs at min(50 GB/s, 2·10/d GB/s):
  //   t_launch + (P−1)·(t_sync + latency + s/(d·min(bw, N·c/d))).
  const NetworkConfig c = Config(1);
  for (int d : {1, 2}) {
    stack::StackConfig st;
    st.comm_ctas = 2;
    st.comm_cta_bandwidth_bytes_per_s = 10e9;
    const int p = 8;
    const double s = 64 * kMiB;
    const double rate = std::min(50e9, 2 * 10e9 / d);
    const double expected =
        c.t_launch_s + (p - 1) * (c.t_sync_s + c.link_latency_s + s / (d * rate));
    EXPECT_NEAR(StackAllGather(st, p, s, d), expected, 1e-6 * expected) << "d=" << d;
  }
  // Enough CTAs for the path: N = ⌈50/10⌉ = 5 of at most 24, and the link binds again.
  stack::StackConfig wide;
  wide.comm_ctas = 24;
  wide.comm_cta_bandwidth_bytes_per_s = 10e9;
  stack::StackConfig none;
  EXPECT_NEAR(StackAllGather(wide, 8, 64 * kMiB, 1), StackAllGather(none, 8, 64 * kMiB, 1), 1e-9);
}

TEST(NetworkStackTest, ProtocolEfficiencyScalesTheBandwidthTerm) {
  // Payload share e: every flow moves s/e bytes, t = t_launch + (P−1)·(t_sync + lat + s/(e·bw)).
  // LL128 alone, allowed on plain links.
  const NetworkConfig c = Config(1);
  stack::StackConfig st;
  st.comm_protocols = "ll128";
  st.protocol[stack::kLl128].efficiency = 0.5;
  const double s = 32 * kMiB;
  const double expected = c.t_launch_s + 3 * (c.t_sync_s + c.link_latency_s + s / (0.5 * 50e9));
  EXPECT_NEAR(StackAllGather(st, 4, s, 1), expected, 1e-6 * expected);
}

TEST(NetworkStackTest, EachCallRunsTheProtocolNcclsModelPicksForItsSize) {
  // Two protocols on a ring of 4 (plain links: NVLink class, 50 GB/s, 1 us, no CTA cap):
  //   LL:     3 us per call, 0.5 us per step, a quarter of the bandwidth;
  //   Simple: 9 us per call, 4 us per step, all of it.
  // A protocol's step latency includes the links' own: a step costs max(hop, 1 us), LL's 1 us
  // (nothing added to the link's), Simple's 4 us (3 us added). NCCL's model for an AllGather of
  // shard s: t_p = lat_p + 3·max(hop_p, 1 us) + 3·s / (e_p · 50 GB/s); equal where
  // (9 + 12) − (3 + 3) = 15 us = 3·s·(4 − 1) / 50e9, s = 83.3 KB. The run then pays the chosen
  // protocol's costs on top of the network's:
  //   t = t_launch + lat_p + 3·(t_sync + max(hop_p, 1 us) + s / (e_p · 50 GB/s)).
  const NetworkConfig c = Config(1);
  stack::StackConfig st;
  st.comm_protocols = "ll,simple";
  st.protocol[stack::kLl] = {3e-6, {0.5e-6, 7e-6, 9e-6}, 0.25};
  st.protocol[stack::kSimple] = {9e-6, {4e-6, 7e-6, 9e-6}, 1.0};
  const auto expected = [&](stack::Protocol p, double s) {
    const stack::ProtocolCosts& k = st.protocol[p];
    return c.t_launch_s + k.latency_s +
           3 * (c.t_sync_s + std::max(k.hop_s[0], c.link_latency_s) + s / (k.efficiency * 50e9));
  };
  const double crossover = 15e-6 * 50e9 / 9;
  for (double s : {0.0, 4096.0, std::floor(0.9 * crossover)}) {
    EXPECT_NEAR(StackAllGather(st, 4, s, 1), expected(stack::kLl, s), 1e-11) << s;
  }
  for (double s : {std::floor(1.1 * crossover), 64.0 * kMiB}) {
    EXPECT_NEAR(StackAllGather(st, 4, s, 1), expected(stack::kSimple, s), 1e-11) << s;
  }
  // LL128 runs where it is enabled and allowed (plain links) and NCCL's model prices it lowest:
  // here at every size.
  st.comm_protocols = "ll,ll128,simple";
  st.protocol[stack::kLl128] = {1e-6, {0.1e-6, 7e-6, 9e-6}, 1.0};
  EXPECT_NEAR(StackAllGather(st, 4, 4096, 1), expected(stack::kLl128, 4096), 1e-11);
}

TEST(NetworkStackTest, SmallCallsRunFewerCtas) {
  // As NCCL's enqueue, a collective of B bytes runs at most ⌊B / cta_bytes⌋ CTAs (at least 1) of
  // the N its path needs: Simple at 32 KiB per CTA, 16 CTAs of 10 GB/s for 50 GB/s links →
  // N = 5. An AllGather of 4 shards of 16 KiB (64 KiB): 2 CTAs; of 4 × 1 MiB: all 5; of 4 × 4
  // KiB: 1. LL's threshold grows with the ring: 4 members × 8 KiB per CTA = 32 KiB.
  stack::StackConfig st;
  st.comm_ctas = 16;
  st.comm_cta_bandwidth_bytes_per_s = 10e9;
  st.protocol[stack::kSimple].cta_bytes = 32768;
  for (const auto& [shard, ctas] :
       std::vector<std::pair<double, int>>{{16 * 1024, 2}, {1 * kMiB, 5}, {4096, 1}}) {
    int held = -1;
    StackAllGather(st, 4, shard, 1, /*at=*/20e-6 + 1e-9, &held);
    EXPECT_EQ(held, ctas) << shard;
  }
  st.comm_protocols = "ll";
  st.protocol[stack::kLl].cta_bytes = 8192;
  int held = -1;
  StackAllGather(st, 4, 16 * 1024, 1, /*at=*/20e-6 + 1e-9, &held);
  EXPECT_EQ(held, 2);  // ⌊64 KiB / (4 × 8 KiB)⌋.
}

TEST(NetworkStackTest, KernelsHoldTheirCtasOnEveryMemberUntilTheyEnd) {
  stack::StackConfig st;
  st.comm_ctas = 6;
  st.comm_cta_bandwidth_bytes_per_s = 20e9;  // N = min(6, ⌈50/20⌉) = 3.
  int held = -1;
  const double t = StackAllGather(st, 4, 16 * kMiB, 1, /*at=*/1e-4, &held);
  ASSERT_GT(t, 1e-4);
  EXPECT_EQ(held, 3);
  // A transfer holds them on both ends, and pays the p2p call overhead before its first byte.
  stack::StackConfig p2p;
  p2p.comm_ctas = 4;
  p2p.p2p_call_overhead_s = 30e-6;
  Rig rig(Ring(4), Config(1));
  core::CoreLedger ledger(4);
  rig.net->set_stack(p2p, &ledger);
  const double b = 10e6;
  rig.graph.Add(Op::Transfer(ChipId(0), ChipId(1), static_cast<int64_t>(b)));
  int src = -1, dst = -1, other = -1;
  rig.sim.ScheduleAt(core::Time::Microseconds(40), [&] {
    src = ledger.held(ChipId(0));
    dst = ledger.held(ChipId(1));
    other = ledger.held(ChipId(2));
  });
  const NetworkConfig c = Config(1);
  // t_launch + overhead + latency + b/bw.
  EXPECT_NEAR(rig.Run(), c.t_launch_s + 30e-6 + c.link_latency_s + b / 50e9, 1e-9);
  EXPECT_EQ(src, 4);
  EXPECT_EQ(dst, 4);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(ledger.held(ChipId(0)), 0);
}

TEST(NetworkStackTest, SerialCommunicatorsRunTheirCollectivesOneAtATime) {
  // Two AllGathers of one group started together: with stack.comm.serial the second waits for
  // the first (2·t_one); on two disjoint groups (rows of a 2x4 torus) both run at once (t_one).
  // Without it, the same group's two share the links (≈2·t_one in transfer, one launch).
  const NetworkConfig c = Config(1);
  const double s = 16 * kMiB;
  const auto run = [&](bool serial, bool same_group) {
    TopologyParams p;
    p.name = "torus2d";
    p.chips = 8;
    p.dims = {2, 4};
    Rig rig(p, c, /*hbm_bw=*/1e15);
    stack::StackConfig st;
    st.comm_serial = serial ? 1 : 0;
    rig.net->set_stack(st, nullptr);
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather, rig.Group(Rig::Range(0, 4)),
                                 static_cast<int64_t>(s)));
    rig.graph.Add(Op::Collective(CollectiveKind::kAllGather,
                                 rig.Group(Rig::Range(same_group ? 0 : 4, 4)),
                                 static_cast<int64_t>(s)));
    return rig.Run();
  };
  const double one = c.t_launch_s + 3 * (c.t_sync_s + c.link_latency_s + s / 50e9);
  EXPECT_NEAR(run(true, true), 2 * one, 1e-6 * one);
  EXPECT_NEAR(run(true, false), one, 1e-6 * one);
  EXPECT_LT(run(false, true), 2 * one);  // Shared links, but one launch and overlapped syncs.
}

TEST(NetworkStackTest, IdealStackIsTheHardware) {
  stack::StackConfig ideal;
  Rig plain(Ring(8), Config(2));
  plain.graph.Add(
      Op::Collective(CollectiveKind::kAllReduce, plain.Group(Rig::Range(0, 8)), 64 << 20));
  const double t = plain.Run();
  Rig rig(Ring(8), Config(2));
  rig.net->set_stack(ideal, nullptr);
  rig.graph.Add(Op::Collective(CollectiveKind::kAllReduce, rig.Group(Rig::Range(0, 8)), 64 << 20));
  EXPECT_EQ(rig.Run(), t);
}

}  // namespace
}  // namespace meshsim::network
