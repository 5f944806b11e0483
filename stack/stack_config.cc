#include "stack/stack_config.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/did_you_mean.h"
#include "core/status_macros.h"

namespace meshsim::stack {

bool StackConfig::IsIdeal() const {
  return comm_ctas == 0 && comm_cta_bandwidth_bytes_per_s == 0 && comm_efficiency == 1.0 &&
         comm_serial == 0 && comm_call_latency_s == 0 && comm_step_latency_s == 0 &&
         kernel_launch_s == 0 && pointwise_efficiency == 1.0 && reduction_efficiency == 1.0 &&
         host_op_overhead_s == 0 && host_gemm_overhead_s == 0 && p2p_call_overhead_s == 0 &&
         p2p == "async";
}

std::vector<core::Param> StackConfig::Params() {
  using core::Unit;
  return {
      {"stack.comm.ctas", Unit::kCount,
       "the most CTAs (channels, one SM each) a communication kernel runs, holding their SMs on "
       "every chip it runs on; fewer where its path is slower; 0 = communication takes no core",
       &comm_ctas, 0, 1024},
      {"stack.comm.cta_bandwidth", Unit::kBytesPerSecond,
       "payload bytes/s one communication CTA moves; a kernel's flows on a chip move at most "
       "ctas x this (0 = no limit)",
       &comm_cta_bandwidth_bytes_per_s, 0, 1e15},
      {"stack.comm.efficiency", Unit::kCount,
       "payload fraction of the bytes a communication kernel moves (protocol flags and framing); "
       "1 = none",
       &comm_efficiency, 0.01, 1},
      {"stack.comm.call_latency", Unit::kSeconds,
       "software latency per collective or transfer call, on top of comm.t_launch",
       &comm_call_latency_s, 0, 1},
      {"stack.comm.step_latency", Unit::kSeconds,
       "software latency per collective step, on top of comm.t_sync", &comm_step_latency_s, 0, 1},
      {"stack.comm.serial", Unit::kCount,
       "1 = the collectives of one group of chips (a communicator) run one at a time, in the "
       "order they start; 0 = they may run at once",
       &comm_serial, 0, 1},
      {"stack.kernel.launch", Unit::kSeconds,
       "GPU time between a kernel's end and the next one's start on a chip (every kernel)",
       &kernel_launch_s, 0, 1},
      {"stack.kernel.pointwise_efficiency", Unit::kCount,
       "fraction of hbm.bandwidth unfused element-wise kernels reach (GeLU, dropout, adds, casts)",
       &pointwise_efficiency, 0.01, 1},
      {"stack.kernel.reduction_efficiency", Unit::kCount,
       "fraction of hbm.bandwidth row-reduction kernels reach (softmax, LayerNorm)",
       &reduction_efficiency, 0.01, 1},
      {"stack.host.op_overhead", Unit::kSeconds,
       "host time to issue one op (framework dispatch + launch call); the host runs ahead of the "
       "GPU in program order",
       &host_op_overhead_s, 0, 1},
      {"stack.host.gemm_overhead", Unit::kSeconds,
       "host time to issue one GeMM (stack.host.op_overhead is every other op's)",
       &host_gemm_overhead_s, 0, 1},
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
}

absl::Status StackConfig::Validate() { return core::CheckRanges(Params()); }

const std::vector<StackInfo>& Stacks() {
  static const auto* stacks = new std::vector<StackInfo>{
      {"ideal", "the hardware alone: communication takes no core, no launch or host costs (TPU)"},
      {"nccl",
       "NCCL kernels (SMs, protocol, latencies), CUDA launches, unfused element-wise kernels; no "
       "host framework"},
      {"pytorch-nccl",
       "nccl plus PyTorch eager's host time per op and blocking paired p2p (ATP, Megatron)"},
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
  // [T] NVIDIA/nccl src/graph/tuning.cc (the 2.8–2.10 tuning model, e.g. commit 01afd20),
  // [I100] github.com/NVIDIA/nccl-tests/issues/100 (HGX A100, 2nd-gen NVSwitch, NCCL log),
  // [P] docs/measurements/gpu_stack_probe.md (one H200, measured for this model).
  //   comm.ctas 24: the ring channels NCCL opens on an 8-GPU A100 NVSwitch node ("Channel
  //     xx/24" in [I100]); a kernel runs fewer where its path is slower (network_model.h).
  //   comm.cta_bandwidth 235/24 GB/s: [T] caps the bus bandwidth of a ring on compute
  //     capability 8.0 (A100) at 235 GB/s, whatever the channel count; over 24 channels, 9.79
  //     GB/s each.
  //   comm.efficiency 0.92: [T]'s payload share of the LL128 protocol (120 of 128 bytes, which
  //     its model rounds to 0.92), the protocol NCCL picks on Ampere NVLink for all but the
  //     largest messages.
  //   comm.call_latency 8.4 us: [T]'s baseLat of Ring/Simple.
  //   comm.step_latency 3.4 us: [T]'s hwLat per ring step of Ring/Simple over NVLink (PCI 5.7,
  //     NET 9.6 us: the network's own link latencies add the difference's order).
  //   kernel.launch 0.85 us: GPU time per back-to-back kernel [P].
  //   kernel.*_efficiency: what unfused kernels reach of the datasheet HBM [P]: softmax
  //     0.39/0.45 (fwd/bwd), LayerNorm 0.32/0.30 → reduction 0.36; GeLU 0.60, residual add 0.68,
  //     dropout 0.62 → element-wise 0.63.
  s.comm_ctas = 24;
  // comm.serial: NCCL executes a communicator's operations in order on its stream, and
  // PyTorch's ProcessGroupNCCL gives each process group one NCCL stream per device.
  s.comm_serial = 1;
  s.comm_cta_bandwidth_bytes_per_s = 235e9 / 24;
  s.comm_efficiency = 0.92;
  s.comm_call_latency_s = 8.4e-6;
  s.comm_step_latency_s = 3.4e-6;
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
  // Megatron's pipeline p2p (megatron/p2p_communication.py) is torch.distributed send/recv on
  // NCCL, batched per step (send_forward_recv_backward, ...) and waited on before the next
  // compute: blocking, matched pairs.
  s.p2p = "paired";
  return s;
}

}  // namespace meshsim::stack
