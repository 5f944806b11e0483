#include "sim/system.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "accel/tiling.h"
#include "core/status_macros.h"

namespace meshsim::sim {

std::vector<core::Param> SystemConfig::Params() {
  std::vector<core::Param> params = chip.Params();
  for (core::Param& p : net.Params()) params.push_back(std::move(p));
  return params;
}

absl::Status SystemConfig::Validate() {
  MESHSIM_RETURN_IF_ERROR(core::CheckRanges(Params()));
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
  return absl::OkStatus();
}

const std::vector<SystemInfo>& Systems() {
  static const auto* systems = new std::vector<SystemInfo>{
      {"tpuv4", "Google TPU v4 as simulated in MeshSlice: 272 TFLOPS, 1.2 TB/s HBM, 2D torus ICI"},
      {"a100", "NVIDIA A100 80 GB: 312 TFLOPS bf16, 2.0 TB/s HBM2e, NVSwitch"},
      {"v100", "NVIDIA V100 16 GB: 125 TFLOPS fp16, 900 GB/s HBM2, NVLink ring"},
  };
  return *systems;
}

absl::StatusOr<SystemConfig> SystemPreset(const std::string& name) {
  bool known = false;
  std::vector<std::string> names;
  for (const SystemInfo& s : Systems()) {
    names.push_back(s.name);
    known = known || s.name == name;
  }
  if (!known) {
    return absl::NotFoundError(absl::StrFormat("--system: unknown system '%s' (known: %s)", name,
                                               absl::StrJoin(names, ", ")));
  }
  SystemConfig sys;
  sys.name = name;
  MESHSIM_ASSIGN_OR_RETURN(sys.chip, accel::ChipPreset(name));
  MESHSIM_ASSIGN_OR_RETURN(sys.net, network::NetworkPreset(name));
  return sys;
}

}  // namespace meshsim::sim
