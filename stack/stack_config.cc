#include "stack/stack_config.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/did_you_mean.h"
#include "core/status_macros.h"

namespace meshsim::stack {

bool StackConfig::IsIdeal() const {
  return comm_ctas == 0 && comm_cta_bandwidth_bytes_per_s == 0 && comm_efficiency == 1.0 &&
         comm_call_latency_s == 0 && comm_step_latency_s == 0 && kernel_launch_s == 0 &&
         pointwise_efficiency == 1.0 && reduction_efficiency == 1.0 && host_op_overhead_s == 0 &&
         p2p == "async" && p2p_call_overhead_s == 0;
}

std::vector<core::Param> StackConfig::Params() {
  using core::Unit;
  return {
      {"stack.comm.ctas", Unit::kCount,
       "SMs a communication kernel holds on each chip it runs on (NCCL channels, one CTA each); 0 "
       "= communication takes no core",
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
      {"stack.p2p",
       Unit::kCount,
       "point-to-point transfers: async (never block, idealized) or paired (NCCL send/recv: "
       "sender and receiver meet in program order)",
       &p2p,
       0,
       0,
       {"async", "paired"}},
      {"stack.p2p.call_overhead", Unit::kSeconds,
       "extra setup per point-to-point call, on the sender before the first byte",
       &p2p_call_overhead_s, 0, 1},
  };
}

absl::Status StackConfig::Validate() { return core::CheckRanges(Params()); }

const std::vector<StackInfo>& Stacks() {
  static const auto* stacks = new std::vector<StackInfo>{
      {"ideal", "the hardware alone: communication takes no core, no launch or host costs (TPU)"},
      {"nccl",
       "NCCL kernels on the GPU (SMs, protocol, latencies) and CUDA launches; no framework"},
      {"pytorch-nccl",
       "nccl plus PyTorch eager: host time per op, unfused element-wise kernels (ATP, Megatron)"},
      {"alpa",
       "pytorch-nccl's kernels with Alpa's runtime: paired send/recv per tile, each call set up"},
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
  // nccl: values with their sources (docs/stack.md has the derivations).
  s.comm_ctas = 8;
  s.comm_cta_bandwidth_bytes_per_s = 20e9;
  s.comm_efficiency = 1.0;
  s.comm_call_latency_s = 8.4e-6;
  s.comm_step_latency_s = 2e-6;
  s.kernel_launch_s = 0.85e-6;
  if (name == "nccl") return s;
  s.pointwise_efficiency = 0.7;
  s.reduction_efficiency = 0.4;
  s.host_op_overhead_s = 10e-6;
  if (name == "pytorch-nccl") return s;
  s.p2p = "paired";
  return s;
}

}  // namespace meshsim::stack
