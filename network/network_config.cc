#include "network/network_config.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace meshsim::network {
namespace {

// The range of every link bandwidth parameter (bytes/s per direction).
constexpr double kMinLinkBytesPerS = 1e3;
constexpr double kMaxLinkBytesPerS = 1e15;

// The parameters of --topology hierarchical's hosts and inter-node fabric (hierarchical.*).
std::vector<core::Param> HostParams(HierarchicalParams& h) {
  using core::Unit;
  return {
      {"node.gpus", Unit::kCount, "hierarchical: GPUs per host", &h.gpus_per_node, 1, 256},
      {"node.fabric",
       Unit::kCount,
       "hierarchical: GPUs joined inside a host by",
       &h.intra,
       0,
       0,
       {"nvswitch", "nvlink-pairs", "nvlink-mesh", "pcie"}},
      {"nvlink.bandwidth", Unit::kBytesPerSecond,
       "hierarchical: per direction, GPU to NVSwitch or per NVLink pair",
       &h.nvlink_bandwidth_bytes_per_s, 1e3, 1e15},
      {"nvlink.latency", Unit::kSeconds, "hierarchical: NVLink latency per hop",
       &h.nvlink_latency_s, 0, 1},
      {"pcie.gpus_per_switch", Unit::kCount, "hierarchical: GPUs under one PCIe switch",
       &h.gpus_per_pcie_switch, 1, 256},
      {"pcie.bandwidth", Unit::kBytesPerSecond, "hierarchical: PCIe link, per direction",
       &h.pcie_bandwidth_bytes_per_s, 1e3, 1e15},
      {"pcie.latency", Unit::kSeconds, "hierarchical: PCIe latency per hop", &h.pcie_latency_s, 0,
       1},
      {"node.sockets", Unit::kCount, "hierarchical: CPU sockets per host (PCIe roots)", &h.sockets,
       1, 16},
      {"socket.bandwidth", Unit::kBytesPerSecond, "hierarchical: socket bridge, per direction",
       &h.socket_bandwidth_bytes_per_s, 1e3, 1e15},
      {"socket.stream_bandwidth", Unit::kBytesPerSecond,
       "hierarchical: the most one flow moves across a socket bridge (0 = no per-flow limit)",
       &h.socket_stream_bytes_per_s, 0, 1e15},
      {"socket.latency", Unit::kSeconds, "hierarchical: socket bridge latency", &h.socket_latency_s,
       0, 1},
      {"nic.count", Unit::kCount, "hierarchical: NICs per host", &h.nics_per_node, 1, 64},
      {"nic.bandwidth", Unit::kBytesPerSecond, "hierarchical: per NIC, per direction",
       &h.nic_bandwidth_bytes_per_s, 1e3, 1e15},
      {"nic.latency", Unit::kSeconds, "hierarchical: NIC to fabric latency per hop",
       &h.nic_latency_s, 0, 1},
      {"inter.fabric",
       Unit::kCount,
       "hierarchical: hosts joined by",
       &h.inter,
       0,
       0,
       {"switch", "fattree"}},
  };
}

}  // namespace

std::vector<core::Param> NetworkConfig::Params() {
  using core::Unit;
  std::vector<core::Param> params = {
      {"link.bandwidth", Unit::kBytesPerSecond, "link bandwidth per direction",
       &link_bandwidth_bytes_per_s, kMinLinkBytesPerS, kMaxLinkBytesPerS},
      {"link.bandwidth_axis0", Unit::kBytesPerSecond,
       "torus2d/torus3d/mesh2d: per direction, links along dimension 0 (between mesh rows: "
       "column groups); 0 = link.bandwidth",
       &axis_bandwidth_bytes_per_s[0], 0, kMaxLinkBytesPerS},
      {"link.bandwidth_axis1", Unit::kBytesPerSecond,
       "torus2d/torus3d/mesh2d: per direction, links along dimension 1 (between mesh columns: "
       "row groups); 0 = link.bandwidth",
       &axis_bandwidth_bytes_per_s[1], 0, kMaxLinkBytesPerS},
      {"link.bandwidth_axis2", Unit::kBytesPerSecond,
       "torus3d: per direction, links along dimension 2; 0 = link.bandwidth",
       &axis_bandwidth_bytes_per_s[2], 0, kMaxLinkBytesPerS},
      {"link.latency", Unit::kSeconds, "link latency per hop", &link_latency_s, 0, 1},
      {"comm.t_sync", Unit::kSeconds, "synchronisation per collective step", &t_sync_s, 0, 1},
      {"comm.t_launch", Unit::kSeconds, "launch overhead per collective/transfer op", &t_launch_s,
       0, 1},
      {"comm.ring_directions", Unit::kCount, "ring directions used by AllGather/ReduceScatter",
       &ring_directions, 1, 2},
      {"comm.packets", Unit::kCount, "packets per buffer of a pipelined Broadcast/Reduce", &packets,
       1, 4096},
      {"comm.collective_overlap", Unit::kCount,
       "1 = collectives overlap compute; 0 = a chip computes or runs a collective other than "
       "SendRecv, not both (TPUv4 today, MeshSlice §5.3)",
       &collective_overlap, 0, 1},
      {"comm.concurrent_collectives", Unit::kCount,
       "with comm.collective_overlap = 0: 1 = a chip may run several AllGather/ReduceScatter at "
       "once; 0 = one at a time (synchronous collectives, TPUv4 today)",
       &concurrent_collectives, 0, 1},
      {"comm.sendrecv_overlap", Unit::kCount,
       "1 = SendRecv overlaps compute; 0 = a chip computes or runs a SendRecv, not both (MeshSlice "
       "§5.3: JAX's dependencies serialised Wang's SendRecvs)",
       &sendrecv_overlap, 0, 1},
      {"fattree.k", Unit::kCount, "fat-tree radix (even; 0 = smallest that fits)", &fattree_k, 0,
       128},
      {"fattree.oversubscription", Unit::kCount, "fat-tree switch links run at link.bandwidth/o",
       &oversubscription, 1, 1024},
      {"comm.two_level", Unit::kCount,
       "1 = AllReduce/AllGather/ReduceScatter over several hosts run intra-host, across hosts, "
       "intra-host (hierarchical topologies)",
       &two_level, 0, 1},
      {"comm.torus_algorithm",
       Unit::kCount,
       "torus2d/torus3d: AllReduce/AllGather/ReduceScatter over a full grid of the torus (every "
       "chip, or a whole plane of a torus3d): flat = one ring in group order; dimension-order = "
       "a ring phase per dimension (ReduceScatter along dim 0, 1, 2, AllGather back)",
       &torus_algorithm,
       0,
       0,
       {"flat", "dimension-order"}},
      {"torus.length2_links", Unit::kCount,
       "ring/torus2d/torus3d: full-duplex links between the two chips of a wraparound dimension "
       "of length 2: 1 = one; 2 = both of a chip's ports for that dimension (+ and −) wired to "
       "its one neighbour, so a bidirectional ring's halves take a link each",
       &torus_length2_links, 1, 2},
      // Read by --topology hierarchical only.
  };
  for (core::Param& p : HostParams(hierarchical)) params.push_back(std::move(p));
  return params;
}

absl::Status NetworkConfig::Validate() {
  MESHSIM_RETURN_IF_ERROR(core::CheckRanges(Params()));
  for (size_t k = 0; k < axis_bandwidth_bytes_per_s.size(); ++k) {
    const double bw = axis_bandwidth_bytes_per_s[k];
    if (bw > 0 && bw < kMinLinkBytesPerS) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "link.bandwidth_axis%d: %s is not allowed; allowed: 0 (= link.bandwidth) or %g to %g "
          "B/s",
          k, core::FormatDouble(bw), kMinLinkBytesPerS, kMaxLinkBytesPerS));
    }
  }
  return absl::OkStatus();
}

namespace {

// GPU interconnects are hardware here: a link's latency per hop, no software cost per collective
// call or step (comm.t_launch = comm.t_sync = 0). What NCCL and the framework add — launch, setup,
// per-step handshakes, SMs, protocol — is the software stack's (stack/stack_config.h, --stack),
// so a GPU system runs with and without them (--stack ideal).
void GpuLinkLatency(NetworkConfig& n) {
  n.link_latency_s = 1e-6;
  n.t_sync_s = 0;
  n.t_launch_s = 0;
}

// PCIe 4.0 x16: 32 GB/s per direction raw (16 GT/s × 16 lanes, 128b/130b); ~25 GB/s measured
// for GPU peer-to-peer and host copies, which is what a DMA sees.
constexpr double kPcie4BytesPerS = 25e9;
// PCIe 3.0 x16: 16 GB/s raw per direction, ~12 GB/s measured.
constexpr double kPcie3BytesPerS = 12e9;
// AMD EPYC xGMI / Intel UPI socket bridges: tens of GB/s per direction; 40 GB/s taken.
constexpr double kSocketBytesPerS = 40e9;

// Every GPU preset: link latencies, no software costs (the stack's); hierarchical hosts with
// PCIe 4.0 trees of two GPUs per PCIe switch over two sockets unless said otherwise (DGX A100
// and the ATP paper's Figure 2 servers are built this way).
void GpuHost(NetworkConfig& n) {
  HierarchicalParams& h = n.hierarchical;
  GpuLinkLatency(n);
  h.pcie_bandwidth_bytes_per_s = kPcie4BytesPerS;
  h.gpus_per_pcie_switch = 2;
  h.sockets = 2;
  h.socket_bandwidth_bytes_per_s = kSocketBytesPerS;
}

// TPU v4 ICI as the MeshSlice paper simulates it: a 2D torus, 4 links per chip, rings
// bidirectional. Calibrated to the simulation-fitted cost-model constants
// (reference/meshslice-calibration.md): an uncontended ring AllGather of shard s costs
// 100 us + (n−1)·(s/60 GB/s + 6 us). A bidirectional ring step moves s/2 each way, so the
// effective rate per link direction is 60/2 = 30 GB/s (below the ≈50 GB/s raw ICI rate:
// packet, protocol and DMA overheads of the paper's simulated NIC are folded into it).
// t_step = 6 us is split into t_sync = 5 us and a 1 us hop latency (not published; only the
// sum is fitted). t_launch = 100 us. ReduceScatter then comes out at (n−1)·(s/52.2 GB/s +
// 6 us) from the simulated reduction traffic (3 bytes of HBM per byte received), within 5% of
// the fitted 50 GB/s. The fitted SendRecv rate (38.8 GB/s) is the hardware-measured value
// repeated; with full-duplex links a one-way shift runs at the 30 GB/s link rate.
void TpuV4(NetworkConfig& n) {
  n.link_bandwidth_bytes_per_s = 30e9;
  n.link_latency_s = 1e-6;
  n.t_sync_s = 5e-6;
  n.t_launch_s = 100e-6;
  n.ring_directions = 2;
}

// A real Google Cloud TPU v4 slice of 16 chips (v4-32: 4 hosts of 4 chips) as the MeshSlice
// paper ran Table 3 on it (§5.3), as the logical 4x4 mesh: mesh axis 0 (the column groups,
// over dimension-0 links) spans hosts, axis 1 (the row groups) stays inside a host. Every
// value comes from the TPUv4-measured cost-model constants, none from Table 3 (the authors'
// CostModel.py, measured on a v4-32 slice; reference/meshslice-calibration.md):
//  - One-way rings: §5.3, "Google Cloud's 4×4 TPU clusters only utilize the uni-directional
//    bandwidth of the bi-directional inter-node ICI links".
//  - No AllGather/ReduceScatter beside compute (§5.3: "current TPUv4 clusters do not allow
//    the overlap of AG/RdS operations with computations"), and one at a time per chip, as a
//    program issues them synchronously; SendRecv stays asynchronous (§5.3).
//  - link.bandwidth_axis0/1 = the measured AllGather rates, 27.472 / 79.751 GB/s. A one-way
//    ring step moves the whole shard s over one link per member, so meshsim's uncontended
//    AllGather, t_launch + (n−1)·(t_sync + latency + s/bw_link), equals the cost model's
//    t_launch + (n−1)·(s/bw_AG + t_step) exactly when bw_link = bw_AG. 79.751 GB/s is above
//    one ICI link's ≈50 GB/s per direction: the in-host ring gets more than one link's worth
//    per step on the real slice; meshsim folds that into an effective rate, as the tpuv4
//    preset folds its NIC's overheads into 30 GB/s. link.bandwidth (links of no measured
//    axis: torus3d's third dimension, other topologies) takes the cross-host rate.
//  - t_sync 4 us + link latency 1 us = the measured AllGather/ReduceScatter t_step of 5 us
//    (only the sum is measured; the 1 us hop latency is the tpuv4 preset's).
//  - t_launch 13 us: the measured AllGather and SendRecv launch.
// meshsim has one launch, sync and link rate for every op, so the per-op constants are not
// all matched (docs/calibration.md, "tpuv4-slice"): ReduceScatter launches in 13 us instead
// of 26 and runs at the AllGather link rate plus its simulated reduction (slower than the
// measured 37.5 GB/s across hosts, close to the measured 63.2 in a host); SendRecv syncs in
// 5 us instead of 50 and a one-way shift runs at the link rate of its axis (27.5 / 79.8 GB/s
// against the measured 38.8 / 35.2).
void TpuV4Slice(NetworkConfig& n) {
  n.topology = "torus2d";
  n.link_bandwidth_bytes_per_s = 27.472e9;
  n.axis_bandwidth_bytes_per_s = {27.472e9, 79.751e9, 0};
  n.link_latency_s = 1e-6;
  n.t_sync_s = 4e-6;
  n.t_launch_s = 13e-6;
  n.ring_directions = 1;
  n.collective_overlap = 0;
  n.concurrent_collectives = 0;
}

// One flat NVSwitch of A100s: 12 NVLink3 links × 25 GB/s = 300 GB/s per direction per GPU.
void A100Switch(NetworkConfig& n) {
  GpuHost(n);
  n.topology = "switch";
  n.link_bandwidth_bytes_per_s = 300e9;
}

// A ring of V100s, two NVLink2 links (2 × 25 GB/s) per neighbour pair.
void V100Ring(NetworkConfig& n) {
  GpuHost(n);
  n.topology = "ring";
  n.link_bandwidth_bytes_per_s = 50e9;
}

// DGX A100: 8 A100s on NVSwitch (12 NVLink3 × 25 GB/s = 300 GB/s per direction per GPU),
// 4 PCIe 4.0 switches with 2 GPUs and 2 HDR InfiniBand NICs each (8 × 200 Gb/s = 25 GB/s),
// 2 AMD EPYC sockets; nodes joined by an InfiniBand fat-tree (DGX SuperPOD).
// h100 = DGX H100: NVLink4, 18 × 25 GB/s = 450 GB/s per direction per GPU; 8 ConnectX-7
// NDR NICs (400 Gb/s = 50 GB/s); PCIe 5.0 (≈50 GB/s measured per direction).
void Dgx(NetworkConfig& n, bool hopper) {
  GpuHost(n);
  HierarchicalParams& h = n.hierarchical;
  n.topology = "hierarchical";
  n.link_bandwidth_bytes_per_s = hopper ? 450e9 : 300e9;  // Used only by flat topologies.
  h.gpus_per_node = 8;
  h.intra = "nvswitch";
  h.nvlink_bandwidth_bytes_per_s = hopper ? 450e9 : 300e9;
  h.nvlink_latency_s = 0.7e-6;
  if (hopper) h.pcie_bandwidth_bytes_per_s = 50e9;
  h.nics_per_node = 8;
  h.nic_bandwidth_bytes_per_s = hopper ? 50e9 : 25e9;
  h.inter = "fattree";
  // The DGX SuperPOD compute fabric (NVIDIA's reference architectures): rail-optimized (the
  // hierarchical family attaches NIC r of every host to the same leaf switches) fat-trees of
  // 40-port HDR (QM8790, A100) or 64-port NDR (QM9700, H100) InfiniBand switches.
  n.fattree_k = hopper ? 64 : 40;
  // Collectives over several hosts run intra-host, across hosts on every rail at once,
  // intra-host: the bandwidth NCCL's rings reach on a multi-rail host, where a single flat ring
  // would cross hosts through one GPU pair and one NIC (docs/topologies.md).
  n.two_level = 1;
}

// The ATP paper's single-node machines (§5.1, Figure 2): 8 A100s over a PCIe 4.0 tree
// (IC1: a100-pcie, NVLink unused), or with dual-card NVLink bridges between GPUs 2i and 2i+1
// (IC2: a100-nvlink2; NVIDIA's A100 NVLink bridge: 600 GB/s both ways = 300 GB/s per
// direction). One 200 Gb/s NIC for completeness.
void AtpSingleNode(NetworkConfig& n, bool pcie) {
  GpuHost(n);
  HierarchicalParams& h = n.hierarchical;
  n.topology = "hierarchical";
  n.link_bandwidth_bytes_per_s = kPcie4BytesPerS;
  h.gpus_per_node = 8;
  h.intra = pcie ? "pcie" : "nvlink-pairs";
  h.nvlink_bandwidth_bytes_per_s = 300e9;
  h.nics_per_node = 1;
  h.nic_bandwidth_bytes_per_s = 25e9;
  h.inter = "switch";
}

// The ATP paper's IC1 as it was run (§5, §5.3): Machine A with NCCL_P2P_DISABLE=1, so NCCL
// moves every byte through host memory (its shared-memory transport: a GPU writes into a
// pinned host buffer, the peer reads it back), never GPU-to-GPU over the PCIe switch. The
// PCIe 4.0 links (25 GB/s) are not what binds then; the staging copies are. Modelled as the
// PCIe tree with every GPU on its own path to its socket's root complex (pcie.gpus_per_switch
// = 1: no peer path under a shared switch; two GPUs' staged flows, 2 × 7.4 GB/s, also fit a
// shared 25 GB/s uplink) at the effective staging rate, and the socket bridge at the
// effective cross-socket staging rate. Both are calibrated to §5.3's measured all-reduce
// (algorithm) bandwidths on DeviceMesh(2, 4), 8 GPUs, 4 per socket (docs/calibration.md):
//   B2 = 4.95 GB/s: a 4-GPU ring inside a socket, one flow per link and direction, moves
//        2·(3/4)·b per member: B = (4/6)·pcie.bandwidth → pcie.bandwidth = 7.425 GB/s;
//   B1 = 1.20 GB/s: the 4 pairs (i, i+4) across the sockets at once, 4 flows per bridge
//        direction, a 2-member all-reduce moves b/2 each way twice: B = socket.bandwidth/4
//        → socket.bandwidth = 4.8 GB/s.
void A100PcieShm(NetworkConfig& n) {
  GpuHost(n);
  HierarchicalParams& h = n.hierarchical;
  n.topology = "hierarchical";
  n.link_bandwidth_bytes_per_s = 7.425e9;  // Used only by flat topologies.
  h.gpus_per_node = 8;
  h.intra = "pcie";
  h.gpus_per_pcie_switch = 1;
  h.pcie_bandwidth_bytes_per_s = 7.425e9;
  h.socket_bandwidth_bytes_per_s = 4.8e9;
  // §5.3's third measurement, B1 = 0.97 GB/s for one 8-GPU ring (DeviceMesh(8, 1)), is what one
  // staged stream across the sockets reaches: the ring's 2 directions each cross a bridge
  // direction once, so its all-reduce moves 2·8/14 of a stream's rate per member as algorithm
  // bandwidth (ring of P, d directions: B = d·P/(2(P−1))·r) → r = 0.97 / (16/14) = 0.8488 GB/s.
  // The 4 concurrent pairs (B1 = 1.20) run at 0.6 GB/s per stream, under it, bound by the
  // bridge; the 4-GPU rings stay in a socket. So all three of §5.3's numbers hold at once.
  h.socket_stream_bytes_per_s = 0.8488e9;
  h.nics_per_node = 1;
  h.nic_bandwidth_bytes_per_s = 25e9;
  h.inter = "switch";
}

// The ATP paper's Cluster C / Figure 7(a): hosts of 4 A100s, every pair joined by 4 NVLink3
// links (4 × 25 GB/s = 100 GB/s per direction; 300 GB/s per GPU), one 200 Gb/s HDR
// InfiniBand NIC per host (25 GB/s) into an InfiniBand switch.
void A100Ib(NetworkConfig& n) {
  GpuHost(n);
  HierarchicalParams& h = n.hierarchical;
  n.topology = "hierarchical";
  n.link_bandwidth_bytes_per_s = 100e9;
  h.gpus_per_node = 4;
  h.intra = "nvlink-mesh";
  h.nvlink_bandwidth_bytes_per_s = 100e9;
  h.sockets = 1;
  h.nics_per_node = 1;
  h.nic_bandwidth_bytes_per_s = 25e9;
  h.inter = "switch";
}

// The resharding paper's AWS cluster (§5): p3.8xlarge hosts of 4 V100s, fully connected by
// NVLink2 (one quad of the DGX-1 hybrid cube-mesh; 2 × 25 GB/s per pair and direction
// taken), PCIe 3.0, one socket, and 10 Gb/s Ethernet between hosts (1.25 GB/s) in one
// placement group (a switch).
void P38xlarge(NetworkConfig& n) {
  GpuHost(n);
  HierarchicalParams& h = n.hierarchical;
  n.topology = "hierarchical";
  n.link_bandwidth_bytes_per_s = 50e9;
  h.gpus_per_node = 4;
  h.intra = "nvlink-mesh";
  h.nvlink_bandwidth_bytes_per_s = 50e9;
  h.pcie_bandwidth_bytes_per_s = kPcie3BytesPerS;
  h.sockets = 1;
  h.nics_per_node = 1;
  h.nic_bandwidth_bytes_per_s = 1.25e9;
  h.nic_latency_s = 20e-6;  // Cloud Ethernet round trips are tens of µs.
  h.inter = "switch";
}

// ATP IC5: every GPU on one NVLink-Network switch (NVLink4, 450 GB/s per direction).
void NvlSwitch(NetworkConfig& n) {
  GpuHost(n);
  n.topology = "switch";
  n.link_bandwidth_bytes_per_s = 450e9;
}

// ATP IC6 / Figure 7(b): GPUs in a 2D torus, 25 GB/s per link and direction.
void GpuTorus(NetworkConfig& n) {
  GpuHost(n);
  n.topology = "torus2d";
  n.link_bandwidth_bytes_per_s = 25e9;
}

// Every preset in the order `meshsim list systems` shows them, with what sets its parameters.
struct Preset {
  const char* name;
  void (*build)(NetworkConfig& n);
};
constexpr Preset kPresets[] = {
    {"tpuv4", TpuV4},
    {"tpuv4-slice", TpuV4Slice},
    {"a100", A100Switch},
    {"v100", V100Ring},
    {"h100", [](NetworkConfig& n) { Dgx(n, /*hopper=*/true); }},
    {"dgx-a100", [](NetworkConfig& n) { Dgx(n, /*hopper=*/false); }},
    {"a100-nvlink2", [](NetworkConfig& n) { AtpSingleNode(n, /*pcie=*/false); }},
    {"a100-pcie", [](NetworkConfig& n) { AtpSingleNode(n, /*pcie=*/true); }},
    {"a100-pcie-shm", A100PcieShm},
    {"a100-ib", A100Ib},
    {"p3.8xlarge", P38xlarge},
    {"nvl-switch", NvlSwitch},
    {"gpu-torus", GpuTorus},
};

}  // namespace

const std::vector<std::string>& NetworkPresetNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (const Preset& p : kPresets) v->push_back(p.name);
    return v;
  }();
  return *names;
}

absl::StatusOr<NetworkConfig> NetworkPreset(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    NetworkConfig n;
    p.build(n);
    return n;
  }
  return absl::NotFoundError(absl::StrFormat("--system: unknown network '%s' (known: %s)", name,
                                             absl::StrJoin(NetworkPresetNames(), ", ")));
}

}  // namespace meshsim::network
