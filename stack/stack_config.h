// The software stack a GPU cluster runs: what communication, kernel launches and the framework
// cost on top of the hardware (`stack.*` keys, `--stack NAME`, `meshsim list stacks`).
//
// On a TPU, collectives are ICI DMA that takes no core, and the compiled program has no host in
// its loop: the `ideal` stack (every cost zero, every efficiency 1) is that machine, and the TPU
// systems use it. On a GPU, communication is software that runs on the GPU: an NCCL collective or
// send/recv is a kernel of `comm.ctas` CTAs (its channels), one per SM, for the kernel's whole
// life, each moving data at most at `comm.cta_bandwidth`; each call runs the protocol (LL, LL128,
// Simple) that NCCL's tuning model picks for its size and path, which sets the call's fixed
// costs (per call and per ring step) and the share of the wire's bytes that is payload. Every
// kernel pays `kernel.launch` on the GPU, every op `host.op_overhead` on the host (which runs
// ahead of the GPU, so it is exposed only when kernels are shorter), and unfused element-wise
// kernels reach a fraction of the HBM bandwidth. Who reads what:
//   accel/   kernel.launch, kernel.*_efficiency, the SMs that comm.ctas hold (core/core_ledger.h)
//   network/ comm.*: CTAs, per-CTA bandwidth, efficiency, p2p.call_overhead
//   sim/     host.op_overhead (the executor's release times), and the composition of the above
//
// Example:
//   StackConfig s = *StackPreset("pytorch-nccl");
//   MESHSIM_RETURN_IF_ERROR(core::SetParam(s.Params(), "stack.comm.ctas", "16"));
//   MESHSIM_RETURN_IF_ERROR(s.Validate());
#ifndef MESHSIM_STACK_STACK_CONFIG_H_
#define MESHSIM_STACK_STACK_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/params.h"

namespace meshsim::stack {

// NCCL's three protocols. Simple moves payload in large chunks behind a memory fence and a flag
// per chunk; LL128 stores 128-byte lines of which 120 are payload; LL stores 8-byte words of 4
// bytes of payload and a 4-byte flag, polled by the receiver: lowest latency, least bandwidth.
enum Protocol { kLl = 0, kLl128 = 1, kSimple = 2, kProtocols = 3 };
// "ll", "ll128", "simple".
const char* ToString(Protocol p);

// The link classes NCCL's tuning model prices a ring hop by: NVLink (and NVSwitch, and any
// direct accelerator link), PCIe (and host memory, CPU sockets), and the network.
enum HopClass { kHopNvlink = 0, kHopPci = 1, kHopNet = 2, kHopClasses = 3 };

// What one protocol costs a communication call.
struct ProtocolCosts {
  double latency_s = 0;  // Per call, before its first step (the model's base latency).
  // Per ring step (a chain: per hop), by the class of the hop's route, the links' own latency
  // included (StepLatency); a step of a ring whose hops differ pays their mean.
  double hop_s[kHopClasses] = {0, 0, 0};
  // Share of Simple's bus bandwidth the protocol reaches: every flow of the call moves
  // payload / efficiency bytes over its links and both HBMs. Simple's is 1.
  double efficiency = 1;
  // Bytes per CTA below which a collective runs fewer CTAs (channels): at most
  // ⌊call bytes / this⌋ (LL: this × the members), at least 1 — NCCL's enqueue drops channels
  // while the buffer is under channels × threads × its per-thread threshold. 0 = every call runs
  // its full CTA count.
  double cta_bytes = 0;
};

// A collective call as NCCL's tuning model sees it when it picks a protocol.
struct CallShape {
  int steps = 0;         // Ring steps of a flat ring (AllReduce 2(P−1), AllGather P−1, ...).
  double bus_bytes = 0;  // Payload each member sends over the whole call.
  double bus_bandwidth = 0;  // Simple's bus bandwidth (B/s): the ring's slowest hop, or CTAs'.
  int hops[kHopClasses] = {0, 0, 0};  // The ring's hops between neighbours, by class.
  // The links' own latency of a hop of each class (the mean over the ring's hops of the class).
  double route_s[kHopClasses] = {0, 0, 0};
  bool ll128_allowed = false;  // Every hop on NVLink-class links (NCCL enables LL128 only there).
};

struct StackConfig;

// The fixed latency of one step of `shape`'s ring under protocol `p`, the mean over its hops of
// max(hop_s, route_s) of their class: NCCL's per-step latency includes the links' own, so the
// protocol's costs nothing more on a hop whose links are slower to cross than that.
double StepLatency(const StackConfig& stack, Protocol p, const CallShape& shape);
// What the protocol adds to a step beyond its links' latencies: StepLatency − mean route_s.
double StepOverhead(const StackConfig& stack, Protocol p, const CallShape& shape);

// The protocol NCCL's tuning model (src/graph/tuning.cc, Ring) picks for a collective of
// `shape`: of the enabled protocols (LL128 only where allowed), the lowest
//   latency_s + steps · StepLatency + bus_bytes / (efficiency · bus_bandwidth),
// ties to the earlier of LL, LL128, Simple. Simple when none is enabled or allowed.
Protocol ChooseProtocol(const StackConfig& stack, const CallShape& shape);

struct StackConfig {
  // --- Communication kernels (NCCL). ---
  // The most CTAs (channels) a communication kernel runs, each holding one SM of every chip the
  // kernel runs on from its launch to its end; a kernel runs fewer where its path is slower
  // (network_model.h); 0 = communication takes no core (DMA engines: TPU ICI).
  int comm_ctas = 0;
  // Bytes/s one CTA moves (payload it sends); a kernel's flows on one chip together move at most
  // comm_ctas × this. 0 = no per-CTA limit.
  double comm_cta_bandwidth_bytes_per_s = 0;
  // The protocols a communication kernel may run (NCCL_PROTO): one of "simple", "ll128", "ll" or
  // a comma list of them in that order ("ll,ll128,simple"). Each collective call runs the one
  // NCCL's tuning model predicts fastest for its size and path (ChooseProtocol); LL128 only
  // where the path stays on NVLink-class links. Point-to-point calls (transfers, SendRecv,
  // AllToAll) run Simple whatever the list says, as NCCL's send/recv of that era did.
  std::string comm_protocols = "simple";
  // What each protocol costs, indexed by Protocol.
  ProtocolCosts protocol[kProtocols];
  // 1 = a communicator (the collectives of one group of chips) runs its collectives one at a
  // time, in the order they start: NCCL enqueues a communicator's operations on one stream.
  // 0 = collectives of a group may run at once.
  int comm_serial = 0;
  // 1 = communication kernels run on a high-priority stream: the block scheduler dispatches
  // their CTAs before those a running GeMM has not dispatched yet, so a kernel takes its SMs at
  // launch and the GeMM's later waves narrow. 0 = one priority for every stream: the scheduler
  // dispatches grids' CTAs in launch order, so a communication kernel launched while a GeMM still
  // has CTAs to dispatch gets only the SMs the GeMM leaves over (those its last wave does not
  // use), or waits for its end (core/core_ledger.h).
  int comm_high_priority = 1;

  // --- Kernels. ---
  // 1 = streams: a chip runs its compute kernels (GeMM, element-wise, copies) one at a time in
  // program order, as on one CUDA stream (an op that waits for a collective's result holds back
  // every kernel issued after it), and a collective starts no earlier than the compute issued
  // before it on each member (PyTorch's ProcessGroupNCCL makes the NCCL stream wait for the
  // compute stream). 0 = an op starts once its inputs are ready.
  int kernel_in_order = 0;
  // 1 = one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1): the GPU takes a chip's kernels, its
  // compute and communication streams' alike, in the order the host issued them, so a kernel
  // begins only once every kernel issued before it on that chip has begun — a compute kernel
  // issued after a collective waits until the collective's CTAs are dispatched (which a
  // communicator's earlier collective may hold back), and a collective never waits for the SMs
  // of compute issued after it. Needs kernel_in_order. 0 = each stream has its own queue.
  int kernel_single_queue = 0;
  // GPU time between one kernel's end and the next one's start on a chip (the launch as the GPU
  // sees it, host already ahead); paid by GeMM, element-wise and communication kernels alike.
  double kernel_launch_s = 0;
  // Fraction of hbm.bandwidth reached by unfused element-wise kernels that read and write each
  // element once (GeLU, dropout, residual adds, casts) ...
  double pointwise_efficiency = 1.0;
  // ... and by row-reduction kernels (softmax, LayerNorm: a reduction per row, then a pass).
  double reduction_efficiency = 1.0;
  // 1 = the attention's 1/sqrt(d) scaling and causal mask run inside the softmax kernel (a
  // fused kernel, or an XLA fusion); 0 = as two more element-wise kernels over the b·a·s²
  // scores in each pass, as an eager program without fused kernels runs them
  // (workloads/layer.h: attn_scale, attn_mask).
  int kernel_fused_softmax = 1;

  // --- Host. ---
  // Host time to issue one op (the framework's dispatch, argument checks and the launch call).
  // The host issues a chip's ops in program order without waiting for the GPU, so an op cannot
  // start before the host has issued it: exposed only where kernels are shorter than this.
  double host_op_overhead_s = 0;
  // The same for a GeMM (a framework's matmul checks more than an element-wise op does).
  double host_gemm_overhead_s = 0;
  // The same for a collective or transfer call (a framework's process group: its work object,
  // the event that makes the communication stream wait for the compute stream, the enqueue).
  double host_comm_overhead_s = 0;

  // --- Point-to-point transfers. ---
  // Extra setup per point-to-point call (a runtime that creates or looks up a communicator and
  // stages a tile per call), paid on the sender before the transfer's first byte. No preset has
  // a documented value for it (0); a user can study one.
  double p2p_call_overhead_s = 0;
  // How a pipeline's runtime issues point-to-point transfers (algorithms/pipeline/pipeline.h):
  // "async" — idealized: sends never block, a transfer starts once its data is produced (and,
  // with overlap off, its receive posted); "paired" — NCCL send/recv semantics: a transfer is a
  // matched pair that starts when both streams reach it and blocks both until it completes.
  std::string p2p = "async";

  // Whether `p` is in comm_protocols.
  bool Enabled(Protocol p) const;
  // True when the protocols cost nothing: Simple alone, every latency 0, every efficiency 1.
  bool FreeProtocols() const;

  // True when nothing is added: every cost 0, every efficiency 1.
  bool IsIdeal() const;
  // The parameters with keys (stack.*), units and ranges, bound to this struct's fields.
  std::vector<core::Param> Params();
  // InvalidArgument, one line, for a value out of range.
  absl::Status Validate();
};

struct StackInfo {
  std::string name;
  std::string description;  // One line, for `meshsim list stacks`.
};

// The built-in stacks, in display order: ideal, nccl, pytorch-nccl, alpa.
const std::vector<StackInfo>& Stacks();

// A stack by name; NotFound (one line, naming the known ones) otherwise. Every value of every
// preset is commented with its source in stack_config.cc.
absl::StatusOr<StackConfig> StackPreset(const std::string& name);

}  // namespace meshsim::stack

#endif  // MESHSIM_STACK_STACK_CONFIG_H_
