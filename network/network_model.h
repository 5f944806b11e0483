// The network model: runs kTransfer and kCollective ops as real flows over the topology's links
// and the chips' HBMs (DESIGN.md §4).
//
// NIC. A transfer from chip a to chip b is one flow over [HBM(a), every directed link of
// Route(a, b), HBM(b)] plus the route's latency (Σ link latencies) after the flow's last byte.
// Each chip has one DMA engine per port; an engine moves data at its port's link rate, so it is
// not a separate resource — transfers on different links proceed in parallel and transfers on
// the same link share it.
//
// Collectives run on an ordered group of P chips (ring order = group order). Every op costs one
// `comm.t_launch`; then it runs in steps (all but Broadcast and Reduce, which run as a pipelined
// chain: below). Each step is a barrier of the participants: once all
// members finished the previous step, they synchronise for `comm.t_sync`, then move that step's
// flows; a step ends when every flow has arrived (and, for reductions, every receiving chip has
// added what it received: an HBM flow of 3× the received bytes — read both operands, write the
// sum — capped at the chip's vector-unit rate). A flow arrives its route's latency after its
// last byte left — in a ring step (AllGather, ReduceScatter, a ring AllReduce, their two-level
// and dimension-order phases) the mean latency of the step's routes: a ring is no barrier, a
// member's next step waits only for its predecessor's data, so the chain that bounds the
// collective crosses the ring's hops in turn (PipelineRingLatency; on a uniform ring, every
// route's own). Per kind, with d ring directions and shard s:
//
//   AllGather      P−1 steps; member i sends s/d to i+1 (and s/d to i−1 when d = 2).
//                  Uncontended: t_launch + (P−1)·(t_sync + latency + s/(d·bw)).
//   ReduceScatter  the same sends (s = the piece each chip keeps), then each chip reduces.
//   AllReduce      ring: ReduceScatter then AllGather of pieces b/P (2(P−1) steps);
//                  on `switch`/`fattree` with P a power of two: halving-doubling (2·log2 P steps).
//   Broadcast      root's buffer b in D = comm.packets packets down the chain root → root+1 → …
//                  (a pipelined chain, no steps: below).
//   Reduce         the reverse chain towards the root, reducing at each receiver.
//   SendRecv       one step; d = 1: i sends b to i+shift (op.root, default 1);
//                  d = 2: i sends b/2 to i+1 and b/2 to i−1 (Wang's bidirectional halves).
//   AllToAll       one step; i sends b/P to every other member.
//
// Pipelined chains (Broadcast, Reduce), P > 1. The chain is c_0 → c_1 → … → c_{P−1}: root,
// root+1, …, root+P−1 (group indices mod P) for Broadcast, the reverse (c_{P−1} = root) for
// Reduce. The buffer is cut into D = comm.packets packets of s = ceil(b/D) bytes (the last one
// smaller; fewer packets when b < D). Hop h (c_h → c_{h+1}) is its own pipeline stage, with no
// barrier between hops: it sends packet k as soon as c_h holds packet k (c_0 holds all of them
// after the launch) and the hop has finished sending packet k−1. A packet is one flow over
// [HBM(c_h), Route(c_h, c_{h+1}) (one route per hop for the whole op), HBM(c_{h+1})], so
// contention comes from the fair-share solver as for any flow; the hop is free again when the
// flow's last byte has left, and the packet lands one route latency later. For Reduce, c_{h+1}
// then adds the packet into its partial (an HBM flow of 3·s, capped at the vector-unit rate, as
// in a ring step; one packet at a time, in order) before it holds it and can forward it. The op
// ends when the last packet has landed (and been reduced) at c_{P−1}. So each hop runs at its own
// link's pace, and the time is the first packet's latency through every hop plus D−1 packet times
// of the slowest hop. Before its first packet each hop's two ends synchronise once (comm.t_sync,
// a kSync row on the sender). Uncontended, one link class (bw, route latency lat), no reductions:
//   t_launch + (P−1)·(t_sync + lat + s/bw) + (D−1)·s/bw,
// the cost model's pipelined broadcast t_launch + b/bw + (n−1)·t_step (t_step = t_sync + lat)
// plus the pipeline's fill, (P−2)·s/bw; with one slow hop among fast ones (packet times
// p_slow > p_fast, route latencies lat_h):
//   t_launch + Σ_{fast hops} (t_sync + lat_h + p_fast) + t_sync + lat_slow + D·p_slow.
// Fixed costs: t_launch once per op, t_sync once per hop, and each route's latency per packet
// (hidden behind the next packet except along the fill); no barrier per packet: a chain's hops
// only hand packets from producer to consumer (NCCL's per-connection flags, whose cost is the
// link latency already charged). The lock-step stages this replaced
// (P+D−2 barriers, each as long as its slowest hop) charged every hop of a heterogeneous chain
// the slowest hop's packet time, and t_sync + the slowest route's latency per stage: 2 µs + 44 µs
// = 46 µs per stage on p3.8xlarge's inter-host route, 4.6 ms over K = 100 packets.
//
// Two-level collectives (comm.two_level = 1). When an AllGather, ReduceScatter or AllReduce
// group spans n > 1 hosts (Topology::HostOf) with the same L > 1 members on each, it runs as
// NCCL's hierarchical algorithms do, in phases of ring steps (rings of d directions as above):
//   AllReduce of b     intra-host ReduceScatter of b/L (L−1 steps), then per local rank an
//                      inter-host ring AllReduce of b/L (2(n−1) steps of b/(L·n)), then an
//                      intra-host AllGather of b/L (L−1 steps);
//   AllGather of s     per local rank an inter-host AllGather of s (n−1 steps), then an
//                      intra-host AllGather of n·s (L−1 steps);
//   ReduceScatter (s)  intra-host ReduceScatter of n·s (L−1 steps), then per local rank an
//                      inter-host ReduceScatter of s (n−1 steps).
// The L concurrent inter-host rings share the hosts' NICs through the fair-share solver. Other
// groups (one host, uneven hosts) run the flat algorithms. Hosts are ordered by their first
// member in the group, local ranks by chip order within the host, so the inter-host ring of
// rank k joins the k-th GPU of every host: the same rail (NIC) on each (Topology::Route leaves
// and enters a host by the GPU's rail NIC), as NCCL's rings cross hosts rail to rail.
//
// Dimension-order collectives on tori (comm.torus_algorithm = dimension-order, torus2d/torus3d).
// When an AllGather, ReduceScatter or AllReduce group is a full grid of the torus — along every
// dimension its members take either one coordinate or all n_d of them, each point once, and at
// least two dimensions are taken whole (n_d > 1): the whole torus, a plane of a torus3d — it
// runs as TPUs and ASTRA-sim run it, one ring phase per taken dimension a_0 < a_1 < … (in
// topology order). A phase along a_j runs n_j − 1 ring steps on every line of the grid along
// a_j at once (rings in coordinate order, so each hop is one link and the wraparound closes the
// ring; d directions as above); the lines of one phase share no link. With N_j = n_0·…·n_j:
//   ReduceScatter (s)  phases a_0, a_1, …: along a_j, steps of s·P/N_j, reducing;
//   AllGather of s     phases …, a_1, a_0: along a_j, steps of s·P/N_j;
//   AllReduce of b     ReduceScatter phases a_0, a_1, … with steps of b/N_j (integer division),
//                      then AllGather phases in reverse order with the same pieces:
//                      Σ_j 2(n_j − 1) steps. Uncontended, links of bw_j per direction:
//                      t_launch + Σ_j 2(n_j−1)·(t_sync + latency + b/(N_j·d·bw_j))
//                      + Σ_j (n_j−1)·(reduction of b/N_j).
// Other groups (a row, a strided subset, any order that is not a full grid) run flat. The ring
// order of the group does not matter to a grid group: its phases use coordinate order.
//
// Timeline: per member, a kLaunch row, a kSync and a kTransfer row per step (the transfer row ends
// when that chip's incoming data has arrived and been reduced), and a kOp row over the whole op
// with the bytes that chip sent; all on unit (kNic, 0). A pipelined chain has no kSync rows and
// one kTransfer row per receiving member (c_1 … c_{P−1}), from its incoming hop's first packet
// start to its last packet landed (and reduced): the time that chip was receiving.
//
// Example:
//   NetworkModel net(fs, topology, config, hbm_per_chip, reduce_bytes_per_s);
//   exec.SetRunner(core::OpKind::kCollective, &net);
//   exec.SetRunner(core::OpKind::kTransfer, &net);
#ifndef MESHSIM_NETWORK_NETWORK_MODEL_H_
#define MESHSIM_NETWORK_NETWORK_MODEL_H_

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/core_ledger.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/ids.h"
#include "core/mode_arbiter.h"
#include "core/time.h"
#include "network/network_config.h"
#include "network/topology.h"
#include "stack/stack_config.h"

namespace meshsim::network {

class NetworkModel : public core::OpRunner {
 public:
  // Adds one fair-share resource per directed link of `topology` (which must outlive this).
  // `hbm[c]` is chip c's HBM resource; `reduce_bytes_per_s` caps a chip's reduction flows.
  NetworkModel(core::FairShare& fs, const Topology& topology, const NetworkConfig& config,
               std::vector<core::ResourceId> hbm, double reduce_bytes_per_s);

  // With an arbiter, a collective runs in ModeArbiter::kCollective mode on its members (launch
  // included), never beside a GeMM on the same chip: every collective but SendRecv when
  // comm.collective_overlap = 0 (TPUv4, MeshSlice §5.3), SendRecv when comm.sendrecv_overlap =
  // 0. Transfers stay asynchronous. Not owned; may be null.
  void set_arbiter(core::ModeArbiter* arbiter) { arbiter_ = arbiter; }

  // The communication part of the software stack (stack/stack_config.h); without a call, or with
  // the ideal stack, nothing changes. A collective or transfer is then a kernel:
  //   • it runs N CTAs (channels), sized to its path as NCCL's topology search sizes its rings:
  //     N = min(stack.comm.ctas, ⌈slowest link between ring neighbours / cta_bandwidth⌉), at
  //     least 1 (stack.comm.ctas without a cta_bandwidth); the slowest link is taken over the
  //     routes from each member to the next in group order (a transfer: its own route);
  //   • it holds N cores of every member (a transfer: its sender and its receiver) in `ledger`
  //     from its launch to its end, which the chip model's GeMMs do not get; where a GeMM keeps
  //     a member's SMs (a persistent one, or any with stack.comm.high_priority = 0), its CTAs
  //     become resident there only when N are free (CoreLedger::WhenFree), and it starts once
  //     resident on every member (until then a kInterference row on each member's NIC);
  //   • its flows leaving one chip in one step move together at most N × cta_bandwidth bytes of
  //     payload per second: each of the k flows a member starts in a step is capped at
  //     N·cta_bw / k (a chain hop's one flow at N·cta_bw);
  //   • it runs one protocol (stack::ChooseProtocol: NCCL's tuning model picks, among
  //     stack.comm.protocols, the one it predicts fastest for the call's size and ring; LL128
  //     only where every hop between ring neighbours stays on NVLink/NVSwitch or plain links;
  //     transfers, SendRecv and AllToAll run Simple): every flow moves its payload / the
  //     protocol's efficiency bytes over the links and both HBMs (its flags), so a cap in payload
  //     bytes/s is cap / efficiency on the wire; the call pays the protocol's latency after
  //     comm.t_launch, and each step (a chain: each hop, once) the mean over the ring's hops of
  //     the protocol's hop latency by hop class (NVLink, PCI, network) after comm.t_sync;
  //   • a transfer pays stack.p2p.call_overhead after its launch, before its first byte (inside its
  //     kLaunch row);
  //   • with stack.comm.serial, the collectives of one group (a communicator) run one at a time,
  //     in the order the executor starts them: a later one waits, unlaunched, until the earlier
  //     one has ended (NCCL's one stream per communicator).
  // `ledger` is not owned; it may be null when stack.comm_ctas is 0.
  void set_stack(const stack::StackConfig& stack, core::CoreLedger* ledger);

  void Start(core::OpId id, const core::Op& op, core::Executor& exec) override;
  std::string DescribeWait(core::OpId id) const override;

  core::ResourceId link_resource(core::LinkId link) const { return links_[link.value()]; }

  // Number of steps a flat collective of `kind` on `members` chips runs (for tests and reports).
  // Broadcast/Reduce run no barrier steps: their count is the chain's P+D−2 packet slots (the
  // pipeline's depth when every hop is alike); each hop pays t_sync once.
  int Steps(const core::Op& op, int members) const;

  // Number of steps `op` runs on the ordered group `members`, whichever algorithm it takes
  // (flat, two-level, dimension-order). Cost: O(members).
  int GroupSteps(const core::Op& op, const std::vector<core::ChipId>& members) const;

  // How many communication calls ran each protocol so far (indexed by stack::Protocol); all
  // zero with a stack whose protocols cost nothing.
  const int64_t* protocol_calls() const { return calls_; }

  // The most flows one step of a collective of `kind` on P = `members` chips holds at once, an
  // upper bound for any configuration: P·(P−1) for AllToAll (its one step), 2·P for the others
  // (rings of two directions, halving-doubling pairs, a packet and a reduction per hop of a
  // chain). Memory
  // grows with it (~1 KB per flow with its route), so sim/ bounds it before a run (--max-flows).
  static int64_t MaxStepFlows(core::CollectiveKind kind, int members);

 private:
  struct Send {
    int src;  // Member indices.
    int dst;
    int64_t bytes;
    bool reduce;
    // A ring's send to its predecessor: on a torus dimension of length 2 joined twice it takes
    // the − port (Topology::Route), so the ring's two halves use both links.
    bool backward = false;
  };
  // A group's split by host for two-level collectives: member indices per host (hosts[h][l] is
  // local rank l of host h), empty when the group runs flat.
  using HostSplit = std::vector<std::vector<int>>;

  // One phase of a phased ring collective (dimension-order): `steps` ring steps on every ring
  // of `rings` at once (member indices in ring order), each member sending `bytes` per step.
  struct RingPhase {
    std::vector<std::vector<int>> rings;
    int steps = 0;
    int64_t bytes = 0;
    bool reduce = false;
  };

  // One hop of a pipelined chain (Broadcast, Reduce): chain member h → h + 1.
  struct Hop {
    int ready = 0;          // Packets the hop's sender holds (received, and reduced for Reduce).
    int next = 0;           // Next packet to send over the hop; packets go in order.
    int arrived = 0;        // Packets that reached the receiver (its reduction may still run).
    int landed = 0;         // Packets the receiver holds (arrived and, for Reduce, reduced).
    bool busy = false;      // A packet's flow is on the hop.
    bool reducing = false;  // Reduce: the receiver is adding a packet into its partial.
    bool synced = false;    // The hop's handshake (comm.t_sync, once, before its first packet).
    core::Time first;       // When the hop's first packet started (its kTransfer row's start).
    core::Time latency;     // The hop's route latency.
    uint64_t hash = 0;      // Picks the hop's route among equal-cost ones (one route per hop).
  };

  struct Run {
    core::OpId id;
    HostSplit hosts;
    std::vector<RingPhase> phases;  // Dimension-order phases; empty when the run is not phased.
    const core::Op* op = nullptr;
    core::Executor* exec = nullptr;
    std::vector<core::ChipId> members;
    // A folded ring (its group lists images, sim/fold.h): per member, the first member with the
    // same chip, whose flows and rows stand for it. Empty for other runs.
    std::vector<int> image_of;
    bool Simulated(int member) const { return image_of.empty() || image_of[member] == member; }
    int step = 0;
    int steps = 0;
    int pending = 0;  // Flows and reductions still running in this step.
    core::Time start, step_start, transfer_start;
    core::Time last_arrival;          // Latest arrival of this step's flows accounted so far.
    std::vector<Send> sends;          // This step's sends.
    std::vector<core::Time> latency;  // Route latency of each send.
    std::vector<int> flows_from;      // Per member: its flows in this step (with a CTA cap only).
    // Reducing sends of this step whose arrivals run as one event (ArriveBatch): batch b's sends,
    // and for the last batch its arrival time and the sequence number after its event's.
    std::vector<std::vector<uint32_t>> batches;
    core::Time batch_at;
    uint64_t batch_seq_end = 0;
    int ctas = 0;                     // CTAs of the communication kernel (0 = no SMs held).
    double wire_per_payload = 1;      // Wire bytes per payload byte (the protocol's share).
    double call_s = 0;                // The protocol's latency per call (on top of t_launch).
    double step_s = 0;                // The protocol's latency per step or hop (on top of t_sync).
    std::vector<core::Time> arrived;  // Per member: when its part of the step ended.
    std::vector<int64_t> sent;        // Per member: bytes sent so far.
    // Pipelined chain runs (Broadcast, Reduce): chain[i] is the member at position i (the root
    // first for Broadcast, last for Reduce), hops[h] moves packets chain[h] → chain[h+1].
    std::vector<int> chain;
    std::vector<Hop> hops;
    int chain_packets = 0;   // Packets of the buffer (ceil(bytes / packet)).
    int64_t packet = 0;      // Bytes per packet (the last one may be smaller).
    int64_t chain_left = 0;  // Packet landings still to come, over all hops.
    // The routes of the sends of the steps so far, by send index, reused while a send repeats
    // (RoutesIgnoreHash topologies: a ring's steps send to the same neighbours): its key, its
    // resources path_cache_resources[begin, end), its latency and cap. Cleared by Begin.
    struct CachedPath {
      int src = -1, dst = -1, flows = 0;
      bool backward = false;
      uint32_t begin = 0, end = 0;
      core::Time latency;
      double cap = 0;
    };
    std::vector<CachedPath> path_cache;
    std::vector<core::ResourceId> path_cache_resources;
    size_t path_cache_live = 0;  // Resources of the entries in use (the rest are replaced ones).
    bool active = false;
    bool blocking = false;        // Holds the arbiter's collective mode on its members.
    bool awaiting_cores = false;  // Launched, waiting for SMs a persistent GeMM keeps.
  };

  // A ring step's arrivals: every flow lands its step's mean route latency after it finishes.
  // A ring is not a barrier: a member's next step waits for its predecessor's data only, so over
  // the ring's steps the chain that bounds the collective crosses each of its hops in turn, and
  // its latency adds up to the hops' mean per step (a uniform ring's hops are all alike); the
  // bandwidth part stays the step's slowest flow. The latencies of the step's sends, in place.
  void PipelineRingLatency(Run& r) const;

  int Directions(const core::Op& op) const;
  // The host split of `members` when `op` runs two-level (see the banner), else empty.
  HostSplit SplitByHost(const core::Op& op, const std::vector<core::ChipId>& members) const;
  // Steps of a two-level run of `op` over `hosts`.
  int TwoLevelSteps(const core::Op& op, const HostSplit& hosts) const;
  // The sends of step `step` of a two-level run.
  void PlanTwoLevelStep(const Run& r, int step, std::vector<Send>& out) const;
  // The dimension-order phases of `op` on `members` (see the banner), else empty.
  std::vector<RingPhase> TorusPhases(const core::Op& op,
                                     const std::vector<core::ChipId>& members) const;
  // The sends of step `step` of a phased run.
  void PlanPhasedStep(const Run& r, int step, std::vector<Send>& out) const;
  bool HalvingDoubling(const core::Op& op, int members) const;
  // The sends of `step` of run `r` into `out` (cleared first).
  void PlanStep(const Run& r, int step, std::vector<Send>& out) const;
  void Launch(uint32_t slot);  // Sizes the kernel and waits for its SMs (CoreLedger::WhenFree).
  void Begin(uint32_t slot);   // Its SMs held: records the launch and starts the steps.
  void BeginStep(uint32_t slot);
  void StartFlows(uint32_t slot);
  // The last byte of r.sends[send] left its route. A reducing send schedules its arrival (the
  // reduction starts there); any other send is accounted at once at its arrival time, since
  // nothing happens when it lands but the step's bookkeeping — one event per step instead of one
  // per flow.
  void FlowDone(uint32_t slot, uint32_t send);
  void Arrive(uint32_t slot, uint32_t send);
  // The end of member `member`'s reduction: its part of the step is done.
  core::FairShare::Callback ReductionDone(uint32_t slot, int member);
  // The arrivals of reducing sends that land at one instant, scheduled consecutively, as one event
  // holding their sequence numbers (Simulator::ReserveSequence): the same order, one event.
  void ScheduleArrival(uint32_t slot, uint32_t send, core::Time arrival);
  void ArriveBatch(uint32_t slot, uint32_t batch);
  // `member`'s part of the step ends at `when` (>= now); true once every send is accounted for
  // (the caller then ends the step at r.last_arrival).
  bool PartDone(uint32_t slot, int member, core::Time when);
  // Records each member's transfer phase of the step and begins the next one.
  void StepArrived(uint32_t slot);
  void EndStep(uint32_t slot);
  // Starts the flow of r.sends[send]; returns the route's latency.
  core::Time StartFlow(uint32_t slot, uint32_t send);
  // The resources of r.sends[send] into *path (valid until the next Path or Route call) and its
  // rate cap into *flow_cap; returns the route's latency. Kept per send index (Run::path_cache)
  // where routes ignore the hash.
  core::Time Path(uint32_t slot, uint32_t send, double* flow_cap,
                  std::span<const core::ResourceId>* path);
  // Path without the cache: routes `s` of run `r` into path_.
  core::Time Route(const Run& r, const Send& s, double* flow_cap);

  // Pipelined chains (Broadcast, Reduce; see the banner).
  bool IsChain(const core::Op& op, int members) const;
  void ChainBegin(uint32_t slot);
  // Sends the hop's next packet if the hop is free and its sender holds that packet.
  void ChainTrySend(uint32_t slot, uint32_t hop);
  void ChainFlowDone(uint32_t slot, uint32_t hop);
  void ChainArrive(uint32_t slot, uint32_t hop);
  // Reduce: starts adding the receiver's next arrived packet, if it is not adding one already.
  void ChainTryReduce(uint32_t slot, uint32_t hop);
  // The hop's receiver holds one more packet: it may forward it; the op ends with the last.
  void ChainLanded(uint32_t slot, uint32_t hop);
  int64_t ChainPacketBytes(const Run& r, int packet) const;

  core::ModeArbiter* arbiter_ = nullptr;
  core::CoreLedger* ledger_ = nullptr;
  int comm_ctas_ = 0;            // The most CTAs a communication kernel runs.
  double cta_bytes_per_s_ = 0;   // Payload bytes/s of one CTA; 0 = no per-CTA limit.
  stack::StackConfig stack_;     // The protocols and their costs (comm.protocols, comm.ll.*, …).
  bool protocol_costs_ = false;  // Some protocol costs something (not the ideal stack's).
  int64_t calls_[stack::kProtocols] = {0, 0, 0};  // Calls run per protocol.
  double p2p_call_overhead_s_ = 0;
  // Flows crossing a socket bridge move at most this (hierarchical socket.stream_bandwidth).
  double socket_stream_cap_ = core::FairShare::kNoCap;
  // The wire bytes and rate cap of a flow of `payload` bytes, one of `flows` from its chip.
  static double WireBytes(const Run& r, int64_t payload) {
    return double(payload) * r.wire_per_payload;
  }
  double FlowCap(const Run& r, int flows) const;
  // socket.stream_bandwidth on the wire if `link` is a socket bridge, else no cap.
  double StreamCap(const Run& r, core::LinkId link) const;
  // Sizes the run's kernel (above): its CTAs (N), its protocol and with it its wire bytes per
  // payload byte and its latencies per call and per step.
  void SizeKernel(Run& r);
  core::FairShare& fs_;
  const Topology& topology_;
  NetworkConfig config_;
  std::vector<core::ResourceId> hbm_;
  double reduce_bytes_per_s_;
  std::vector<core::ResourceId> links_;
  std::vector<double> link_latency_s_;
  bool switched_;         // Topology without direct chip-to-chip links (switch, fattree).
  bool dimension_order_;  // comm.torus_algorithm = dimension-order on a torus2d or torus3d.
  std::vector<Run> runs_;
  std::vector<uint32_t> free_runs_;
  // stack.comm.serial: per group id, whether a collective of it runs, and those waiting (in
  // start order) with their executor.
  bool serial_ = false;
  struct GroupQueue {
    bool busy = false;
    std::deque<std::pair<core::OpId, core::Executor*>> waiting;
  };
  std::unordered_map<uint32_t, GroupQueue> groups_;
  void Begin(core::OpId id, const core::Op& op, core::Executor& exec);  // Start, unqueued.
  std::vector<core::ResourceId> path_;
  // A step's flows for FairShare::StartGroup: their resources, route ends, callbacks, caps.
  std::vector<core::ResourceId> group_path_;
  std::vector<uint32_t> group_ends_;
  std::vector<core::FairShare::Callback> group_done_;
  std::vector<double> group_caps_;
};

}  // namespace meshsim::network

#endif  // MESHSIM_NETWORK_NETWORK_MODEL_H_
