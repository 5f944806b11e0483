#include "sim/system.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "accel/tiling.h"
#include "core/did_you_mean.h"
#include "core/status_macros.h"

namespace meshsim::sim {

std::vector<core::Param> SystemConfig::Params() {
  std::vector<core::Param> params = chip.Params();
  for (core::Param& p : net.Params()) params.push_back(std::move(p));
  for (core::Param& p : stack.Params()) params.push_back(std::move(p));
  return params;
}

absl::Status SystemConfig::Validate() {
  MESHSIM_RETURN_IF_ERROR(core::CheckRanges(Params()));
  MESHSIM_RETURN_IF_ERROR(net.Validate());  // Cross-parameter rules of the network.
  MESHSIM_RETURN_IF_ERROR(stack.Validate());
  // A scratchpad that cannot hold one mxu_dim × mxu_dim tile of A and B double-buffered plus C
  // forces sub-array tiles: the GeMM splits into (mxu_dim / side)² times more tile steps and a
  // run takes hundreds of times longer, modelling nothing real.
  const int64_t dim = chip.mxu_dim;
  const int64_t min_bytes = (4 * chip.element_bytes + accel::kAccumulatorBytes) * dim * dim;
  if (chip.scratchpad_bytes < min_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "core.scratchpad_bytes: '%d' is not allowed; must be at least %d = (4*chip.element_bytes "
        "+ 4)*core.mxu_dim^2, one MXU-sized tile of A and B double-buffered plus C",
        chip.scratchpad_bytes, min_bytes));
  }
  // The same with the accumulator in registers: below one MXU-sized fp32 tile of C, tiles shrink
  // below the array (and below one element, PlanGemm has no tile at all).
  const int64_t min_accumulator = accel::kAccumulatorBytes * dim * dim;
  if (chip.accumulator_bytes > 0 && chip.accumulator_bytes < min_accumulator) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "core.accumulator_bytes: '%d' is not allowed; must be 0 (accumulators in the scratchpad) "
        "or at least %d = 4*core.mxu_dim^2, one MXU-sized fp32 tile of C",
        chip.accumulator_bytes, min_accumulator));
  }
  return chip.Validate();  // Cross-parameter rules of the chip (e.g. L2 vs scratchpad).
}

const std::vector<SystemInfo>& Systems() {
  static const auto* systems = new std::vector<SystemInfo>{
      {"tpuv4", "Google TPU v4 as simulated in MeshSlice: 272 TFLOPS, 1.2 TB/s HBM, 2D torus ICI",
       "tpuv4", "tpuv4", "ideal"},
      {"tpuv4-slice",
       "MeshSlice §5.3's real 4x4 TPU v4 slice: one-way rings, no AG/RdS overlap, measured ICI",
       "tpuv4", "tpuv4-slice", "ideal"},
      {"a100", "NVIDIA A100 80 GB: 312 TFLOPS bf16, 2.0 TB/s HBM2e, one flat NVSwitch", "a100",
       "a100", "nccl"},
      {"v100", "NVIDIA V100 16 GB: 125 TFLOPS fp16, 900 GB/s HBM2, NVLink ring", "v100", "v100",
       "nccl"},
      {"h100", "DGX H100 hosts: 8 H100 SXM (989 TFLOPS bf16, 3.35 TB/s) on NVSwitch, 8x400G NICs",
       "h100", "h100", "nccl"},
      {"dgx-a100", "DGX A100 hosts: 8 A100 on NVSwitch, PCIe 4.0, 8x200G InfiniBand, fat-tree",
       "a100", "dgx-a100", "nccl"},
      {"a100-nvlink2", "ATP IC2: 8 A100, dual-card NVLink bridges over a PCIe 4.0 tree", "a100",
       "a100-nvlink2", "nccl"},
      {"a100-pcie", "ATP IC1: 8 A100 over a PCIe 4.0 tree, no NVLink", "a100", "a100-pcie", "nccl"},
      {"a100-pcie-shm",
       "ATP IC1 as run: 8 A100, NCCL_P2P_DISABLE (host-memory staging), calibrated to §5.3", "a100",
       "a100-pcie-shm", "nccl"},
      {"a100-ib", "ATP IC4: hosts of 4 NVLinked A100, 200 Gb/s InfiniBand per host", "a100",
       "a100-ib", "nccl"},
      {"p3.8xlarge", "Resharding paper: hosts of 4 NVLinked V100, 10 Gb/s Ethernet", "v100",
       "p3.8xlarge", "nccl"},
      {"nvl-switch", "ATP IC5: H100s on one NVLink-Network switch, 450 GB/s per GPU", "h100",
       "nvl-switch", "nccl"},
      {"gpu-torus", "ATP IC6: A100s in a 2D torus, 25 GB/s links", "a100", "gpu-torus", "nccl"},
  };
  return *systems;
}

absl::StatusOr<SystemConfig> SystemPreset(const std::string& name, const std::string& stack) {
  const SystemInfo* info = nullptr;
  std::vector<std::string> names;
  for (const SystemInfo& s : Systems()) {
    names.push_back(s.name);
    if (s.name == name) info = &s;
  }
  if (info == nullptr) {
    return absl::NotFoundError(absl::StrFormat("--system: unknown system '%s'%s (known: %s)", name,
                                               core::DidYouMean(name, names),
                                               absl::StrJoin(names, ", ")));
  }
  SystemConfig sys;
  sys.name = name;
  MESHSIM_ASSIGN_OR_RETURN(sys.chip, accel::ChipPreset(info->chip));
  MESHSIM_ASSIGN_OR_RETURN(sys.net, network::NetworkPreset(info->network));
  sys.stack_name = stack.empty() ? info->stack : stack;
  MESHSIM_ASSIGN_OR_RETURN(sys.stack, stack::StackPreset(sys.stack_name));
  return sys;
}

}  // namespace meshsim::sim
