#include "stack/stack_config.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/did_you_mean.h"
#include "core/status_macros.h"

namespace meshsim::stack {

const char* ToString(Protocol p) {
  switch (p) {
    case kLl:
      return "ll";
    case kLl128:
      return "ll128";
    default:
      return "simple";
  }
}

double StepLatency(const StackConfig& stack, Protocol p, const CallShape& shape) {
  double sum = 0;
  int hops = 0;
  for (int c = 0; c < kHopClasses; ++c) {
    sum += shape.hops[c] * std::max(stack.protocol[p].hop_s[c], shape.route_s[c]);
    hops += shape.hops[c];
  }
  return hops > 0 ? sum / hops : 0.0;
}

double StepOverhead(const StackConfig& stack, Protocol p, const CallShape& shape) {
  double sum = 0;
  int hops = 0;
  for (int c = 0; c < kHopClasses; ++c) {
    sum += shape.hops[c] * std::max(0.0, stack.protocol[p].hop_s[c] - shape.route_s[c]);
    hops += shape.hops[c];
  }
  return hops > 0 ? sum / hops : 0.0;
}

Protocol ChooseProtocol(const StackConfig& stack, const CallShape& shape) {
  Protocol best = kSimple;
  double best_s = std::numeric_limits<double>::infinity();
  for (Protocol p : {kLl, kLl128, kSimple}) {
    if (!stack.Enabled(p) || (p == kLl128 && !shape.ll128_allowed)) continue;
    const ProtocolCosts& c = stack.protocol[p];
    const double t = c.latency_s + shape.steps * StepLatency(stack, p, shape) +
                     shape.bus_bytes / (c.efficiency * shape.bus_bandwidth);
    if (t < best_s) {
      best_s = t;
      best = p;
    }
  }
  return best;
}

bool StackConfig::Enabled(Protocol p) const {
  for (absl::string_view name : absl::StrSplit(comm_protocols, ',')) {
    if (name == ToString(p)) return true;
  }
  return false;
}

bool StackConfig::FreeProtocols() const {
  bool free = comm_protocols == "simple";
  for (const ProtocolCosts& c : protocol) {
    free = free && c.latency_s == 0 && c.efficiency == 1.0 && c.hop_s[0] == 0 && c.hop_s[1] == 0 &&
           c.hop_s[2] == 0 && c.cta_bytes == 0;
  }
  return free;
}

bool StackConfig::IsIdeal() const {
  return comm_ctas == 0 && comm_cta_bandwidth_bytes_per_s == 0 && FreeProtocols() &&
         comm_serial == 0 && comm_high_priority == 1 && kernel_in_order == 0 &&
         kernel_single_queue == 0 && kernel_launch_s == 0 && pointwise_efficiency == 1.0 &&
         reduction_efficiency == 1.0 && kernel_fused_softmax == 1 && host_op_overhead_s == 0 &&
         host_gemm_overhead_s == 0 && host_comm_overhead_s == 0 && p2p_call_overhead_s == 0 &&
         p2p == "async";
}

std::vector<core::Param> StackConfig::Params() {
  using core::Unit;
  std::vector<core::Param> params = {
      {"stack.comm.ctas", Unit::kCount,
       "the most CTAs (channels, one SM each) a communication kernel runs, holding their SMs on "
       "every chip it runs on; fewer where its path is slower; 0 = communication takes no core",
       &comm_ctas, 0, 1024},
      {"stack.comm.cta_bandwidth", Unit::kBytesPerSecond,
       "payload bytes/s one communication CTA moves; a kernel's flows on a chip move at most "
       "ctas x this (0 = no limit)",
       &comm_cta_bandwidth_bytes_per_s, 0, 1e15},
      {"stack.comm.serial", Unit::kCount,
       "1 = the collectives of one group of chips (a communicator) run one at a time, in the "
       "order they start; 0 = they may run at once",
       &comm_serial, 0, 1},
      {"stack.comm.high_priority", Unit::kCount,
       "1 = communication kernels' CTAs are dispatched before a running GeMM's pending ones (a "
       "high-priority stream); 0 = in launch order: a kernel launched during a GeMM gets only the "
       "SMs its last wave leaves over, or waits for its end",
       &comm_high_priority, 0, 1},
      {"stack.kernel.in_order", Unit::kCount,
       "1 = a chip runs its compute kernels one at a time in program order (one CUDA stream) and "
       "a collective waits for the compute issued before it on each member; 0 = an op starts once "
       "its inputs are ready",
       &kernel_in_order, 0, 1},
      {"stack.kernel.single_queue", Unit::kCount,
       "1 = a chip's kernels, compute and communication, begin in the order the host issued "
       "them (one hardware queue, CUDA_DEVICE_MAX_CONNECTIONS=1; needs stack.kernel.in_order); "
       "0 = a queue per stream",
       &kernel_single_queue, 0, 1},
      {"stack.kernel.launch", Unit::kSeconds,
       "GPU time between a kernel's end and the next one's start on a chip (every kernel)",
       &kernel_launch_s, 0, 1},
      {"stack.kernel.pointwise_efficiency", Unit::kCount,
       "fraction of hbm.bandwidth unfused element-wise kernels reach (GeLU, dropout, adds, casts)",
       &pointwise_efficiency, 0.01, 1},
      {"stack.kernel.reduction_efficiency", Unit::kCount,
       "fraction of hbm.bandwidth row-reduction kernels reach (softmax, LayerNorm)",
       &reduction_efficiency, 0.01, 1},
      {"stack.kernel.fused_softmax", Unit::kCount,
       "1 = the attention's scaling and causal mask run inside the softmax kernel; 0 = as two "
       "more element-wise kernels over the scores in each pass (eager, unfused)",
       &kernel_fused_softmax, 0, 1},
      {"stack.host.op_overhead", Unit::kSeconds,
       "host time to issue one op (framework dispatch + launch call); the host runs ahead of the "
       "GPU in program order",
       &host_op_overhead_s, 0, 1},
      {"stack.host.gemm_overhead", Unit::kSeconds,
       "host time to issue one GeMM (stack.host.op_overhead is every other op's)",
       &host_gemm_overhead_s, 0, 1},
      {"stack.host.comm_overhead", Unit::kSeconds,
       "host time to issue one collective or transfer call (stack.host.op_overhead is every "
       "other op's)",
       &host_comm_overhead_s, 0, 1},
      {"stack.p2p.call_overhead", Unit::kSeconds,
       "extra setup per point-to-point call, on the sender before the first byte",
       &p2p_call_overhead_s, 0, 1},
      {"stack.p2p.mode",
       Unit::kCount,
       "point-to-point semantics of pipeline transfers: async (sends never block) or paired "
       "(NCCL send/recv: both streams block until the matched transfer is done)",
       &p2p,
       0,
       0,
       {"async", "paired"}},
  };
  // The protocols, after the other comm.* keys.
  std::vector<core::Param> protocols = {
      {"stack.comm.protocols",
       Unit::kCount,
       "protocols a collective may run (NCCL_PROTO); each call runs the one NCCL's tuning model "
       "predicts fastest for its size and path; point-to-point calls run simple",
       &comm_protocols,
       0,
       0,
       {"simple", "ll128", "ll", "ll128,simple", "ll,simple", "ll,ll128", "ll,ll128,simple"}},
  };
  for (Protocol p : {kLl, kLl128, kSimple}) {
    ProtocolCosts& c = protocol[p];
    const std::string key = absl::StrCat("stack.comm.", ToString(p), ".");
    protocols.push_back(
        {key + "latency", Unit::kSeconds,
         absl::StrCat("software latency per ", ToString(p), " call, on top of comm.t_launch"),
         &c.latency_s, 0, 1});
    const char* classes[kHopClasses] = {"nvlink", "pci", "net"};
    const char* where[kHopClasses] = {"over NVLink/NVSwitch or a direct link",
                                      "over PCIe or host memory", "across the network"};
    for (int h = 0; h < kHopClasses; ++h) {
      protocols.push_back({absl::StrCat(key, "hop_", classes[h]), Unit::kSeconds,
                           absl::StrCat("software latency per ", ToString(p), " ring step ",
                                        where[h], ", on top of comm.t_sync"),
                           &c.hop_s[h], 0, 1});
    }
    if (p != kSimple) {
      protocols.push_back({key + "efficiency", Unit::kCount,
                           absl::StrCat("share of simple's bus bandwidth ", ToString(p),
                                        " reaches: its flows move payload / this bytes"),
                           &c.efficiency, 0.01, 1});
    }
    protocols.push_back({key + "cta_bytes", Unit::kBytes,
                         absl::StrCat("a ", ToString(p),
                                      " collective of B bytes runs at most floor(B / this) CTAs, "
                                      "at least 1 (fewer channels for small calls; LL: this × "
                                      "members); 0 = always its full count"),
                         &c.cta_bytes, 0, 1e12});
  }
  // Insert them after stack.comm.high_priority, the last of the other comm.* keys.
  auto at = params.begin();
  while (at != params.end() && at->key != "stack.comm.high_priority") ++at;
  params.insert(at == params.end() ? at : at + 1, protocols.begin(), protocols.end());
  return params;
}

absl::Status StackConfig::Validate() {
  MESHSIM_RETURN_IF_ERROR(core::CheckRanges(Params()));
  if (kernel_single_queue == 1 && kernel_in_order == 0) {
    return absl::InvalidArgumentError(
        "stack.kernel.single_queue: '1' needs stack.kernel.in_order = 1 (the queue takes the "
        "kernels of the program's streams in issue order); allowed: 0 while in_order = 0");
  }
  return absl::OkStatus();
}

const std::vector<StackInfo>& Stacks() {
  static const auto* stacks = new std::vector<StackInfo>{
      {"ideal", "the hardware alone: communication takes no core, no launch or host costs (TPU)"},
      {"nccl",
       "NCCL kernels (SMs, protocol, latencies), CUDA launches, unfused element-wise kernels; no "
       "host framework"},
      {"pytorch-nccl",
       "nccl plus PyTorch eager's host time per op, one hardware queue and blocking paired p2p "
       "(ATP, Megatron)"},
      {"alpa", "nccl with Alpa's runtime: paired, blocking cross-mesh send/recv (MLSys'23)"},
  };
  return *stacks;
}

absl::StatusOr<StackConfig> StackPreset(const std::string& name) {
  StackConfig s;
  if (name == "ideal") return s;
  std::vector<std::string> names;
  for (const StackInfo& info : Stacks()) names.push_back(info.name);
  if (name != "nccl" && name != "pytorch-nccl" && name != "alpa") {
    return absl::NotFoundError(absl::StrFormat("--stack: unknown stack '%s'%s (known: %s)", name,
                                               core::DidYouMean(name, names),
                                               absl::StrJoin(names, ", ")));
  }
  // nccl — NCCL 2.x of the papers' time (2021–2022) and CUDA launches, no framework. Sources:
  // [T] NVIDIA/nccl src/graph/tuning.cc (the 2.8–2.10 tuning model, e.g. commit 01afd20) and
  //     [E] its enqueue.cc (getAlgoInfo: the channel and thread counts of a call),
  // [I100] github.com/NVIDIA/nccl-tests/issues/100 (HGX A100, 2nd-gen NVSwitch, NCCL log),
  // [P] docs/measurements/gpu_stack_probe.md (one H200, measured for this model),
  // [C] docs/measurements/collective_host_probe.md (the same card type, another lent machine).
  //   comm.ctas 24: the ring channels NCCL opens on an 8-GPU A100 NVSwitch node ("Channel
  //     xx/24" in [I100]); a kernel runs fewer where its path is slower (network_model.h).
  //   comm.cta_bandwidth 235/24 GB/s: [T] caps the bus bandwidth of a ring on compute
  //     capability 8.0 (A100) at 235 GB/s, whatever the channel count; over 24 channels, 9.79
  //     GB/s each.
  //   comm.protocols ll,ll128,simple, and each protocol's costs: [T]'s Ring model, whose
  //     predicted time, latency + bytes / bandwidth, NCCL minimises per call:
  //       latency (baseLat): LL 3.6, LL128 10.0, Simple 8.4 us per call;
  //       hop_* (hwLat, per ring step): NVLink LL 0.47 / LL128 1.9 / Simple 3.4 us, PCI 1.0 /
  //         2.5 / 5.7 us, network 2.7 / 4.0 / 9.6 us (the network's own link latencies add);
  //       efficiency: LL128 0.92 ([T]: 120 of 128 bytes, rounded), LL 0.25 ([T]: 1/4 of the bus
  //         bandwidth for AllReduce and across nodes; its 1/3 for single-node AllGather and
  //         ReduceScatter is not kept).
  //     [T] enables LL128 only on Volta/Ampere paths of NVLink; ChooseProtocol keeps the path
  //     condition. On an 8-GPU A100 NVSwitch ring the model then picks LL for an AllReduce below
  //     ~1 MB, LL128 below ~30 MB and Simple above.
  //   kernel.launch 0.85 us: GPU time per back-to-back kernel [P].
  //   kernel.*_efficiency: what unfused kernels reach of the datasheet HBM [P]: softmax
  //     0.39/0.45 (fwd/bwd), LayerNorm 0.32/0.30 → reduction 0.36; GeLU 0.60, residual add 0.68,
  //     dropout 0.62 → element-wise 0.63.
  s.comm_ctas = 24;
  // comm.serial: NCCL executes a communicator's operations in order on its stream, and
  // PyTorch's ProcessGroupNCCL gives each process group one NCCL stream per device.
  s.comm_serial = 1;
  // comm.high_priority 0: NCCL runs on the stream its caller gives it; nccl-tests' and
  // PyTorch's (ProcessGroupNCCL::Options::is_high_priority_stream, false by default) are of the
  // default priority, so the block scheduler dispatches their CTAs after those of grids launched
  // earlier: a kernel launched while a GeMM fills the GPU starts only as the GeMM's last CTAs
  // leave SMs free ([N1431]: github.com/NVIDIA/nccl/issues/1431, "the next communication kernel
  // will be delayed until the gemm is completed because there are not enough SM resources";
  // seen on an H200 beside a persistent GeMM: docs/measurements/gemm_beside_comm.md).
  s.comm_high_priority = 0;
  s.comm_cta_bandwidth_bytes_per_s = 235e9 / 24;
  s.comm_protocols = "ll,ll128,simple";
  // cta_bytes: [E]'s getAlgoInfo drops a channel while the call's bytes are under channels ×
  // threads × the protocol's per-thread threshold (src/include/comm.h of the same releases:
  // NCCL_LL_THREAD_THRESHOLD 8, NCCL_LL128_THREAD_THRESHOLD 8, NCCL_SIMPLE_THREAD_THRESHOLD 64
  // bytes, a ring's LL threshold × ranks; 512 threads, 640 for LL128): LL 512 × 8 = 4 KiB per
  // channel (× ranks, network_model.cc), LL128 640 × 8 = 5 KiB, Simple 512 × 64 = 32 KiB.
  s.protocol[kLl] = {3.6e-6, {0.47e-6, 1.0e-6, 2.7e-6}, 0.25, 4096};
  s.protocol[kLl128] = {10.0e-6, {1.9e-6, 2.5e-6, 4.0e-6}, 0.92, 5120};
  s.protocol[kSimple] = {8.4e-6, {3.4e-6, 5.7e-6, 9.6e-6}, 1.0, 32768};
  // kernel.in_order: PyTorch eager issues every kernel on the current (default) stream, whose
  // kernels CUDA runs in issue order; ProcessGroupNCCL makes its NCCL stream wait for an event
  // recorded on that stream when a collective is called, and Work.wait() makes the compute
  // stream wait for the collective. An XLA program (Alpa's stages) runs its kernels in one
  // stream too.
  s.kernel_in_order = 1;
  s.kernel_launch_s = 0.85e-6;
  s.pointwise_efficiency = 0.63;
  s.reduction_efficiency = 0.36;
  if (name == "nccl") return s;
  if (name == "alpa") {
    // Alpa (MLSys'23 §2, §5): XLA-compiled stages, no eager host framework; its runtime issues
    // the cross-mesh send/recv as NCCL p2p calls in one fixed order on both meshes, each call
    // blocking its stream until matched and done.
    s.p2p = "paired";
    return s;
  }
  // pytorch-nccl: PyTorch eager issues every op from the host, measured [P]: 10.3 us for an
  // element-wise op, 19.5 us for a matmul.
  s.host_op_overhead_s = 10.3e-6;
  s.host_gemm_overhead_s = 19.5e-6;
  // kernel.fused_softmax 0: an eager program without fused kernels (ATP §5.1: "we do not use
  // optimized kernels in any of the implementations") scales and masks the scores in kernels of
  // their own — the ATP authors' benchmark (github.com/Shenggan/atp,
  // example/aten_transformer_atp.py) runs aten div and where over them before _softmax, and
  // their gradients after it, as Megatron-LM's unfused path (FusedScaleMaskSoftmax's
  // forward_torch_softmax: scale, mask, softmax) does; on an H200 they took 56% of the
  // attention's element-wise time at ATP's M2 and M3 sizes (docs/measurements/layer_probe.md).
  s.kernel_fused_softmax = 0;
  // A torch.distributed collective on NCCL, measured beside x.add_(1) in one run [C]
  // (docs/measurements/collective_host_probe.md): dist.all_reduce 18.4 us where the add took
  // 7.9 us on that lent machine (10.3 us on [P]'s), i.e. 2.33 element-wise ops: 2.33 × 10.3 us,
  // on [P]'s scale like the two values above.
  s.host_comm_overhead_s = 10.3e-6 * 18.399 / 7.907;
  // Megatron's pipeline p2p (megatron/p2p_communication.py) is torch.distributed send/recv on
  // NCCL, batched per step (send_forward_recv_backward, ...) and waited on before the next
  // compute: blocking, matched pairs.
  s.p2p = "paired";
  // kernel.single_queue: ATP sets CUDA_DEVICE_MAX_CONNECTIONS=1 "to prevent the communication
  // kernel from being delayed" (ATP §4.2), and Megatron-LM refuses sequence parallelism without
  // it (its message quoted in github.com/alibaba/Megatron-LLaMA/issues/44; what it does:
  // github.com/NVIDIA/Megatron-LM/issues/533): one hardware queue takes every stream's kernels
  // in issue order.
  s.kernel_single_queue = 1;
  return s;
}

}  // namespace meshsim::stack
