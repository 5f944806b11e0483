// The chip model's parameters: cores of systolic arrays, a vector unit, a scratchpad per core and
// one HBM shared by the cores and the NIC (DESIGN.md §4, MeshSlice §5.1 / Figure 8).
//
// Example:
//   ChipConfig chip = *ChipPreset("tpuv4");
//   chip.hbm_bandwidth_bytes_per_s = 0.6e12;     // halve HBM
//   MESHSIM_RETURN_IF_ERROR(chip.Validate());
//   double peak = chip.PeakFlops();               // 2.72e14 for tpuv4
#ifndef MESHSIM_ACCEL_CHIP_CONFIG_H_
#define MESHSIM_ACCEL_CHIP_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/params.h"

namespace meshsim::accel {

struct ChipConfig {
  int cores = 2;                              // Cores (TensorCores) per chip.
  int mxus = 4;                               // Systolic arrays (MXUs) per core.
  int mxu_dim = 128;                          // Each MXU is mxu_dim × mxu_dim MACs.
  double clock_hz = 1.0376e9;                 // MXU clock.
  int64_t scratchpad_bytes = 64 << 20;        // On-core scratchpad (per core).
  double vector_flops_per_s = 4.25e12;        // Vector unit rate per core (element-wise ops).
  double hbm_bandwidth_bytes_per_s = 1.2e12;  // HBM, shared by the cores and the NIC.
  int64_t hbm_capacity_bytes = int64_t{32} << 30;
  int element_bytes = 2;  // bf16.

  // cores × mxus × mxu_dim² MACs × 2 flop × clock.
  double PeakFlops() const {
    return double(cores) * mxus * double(mxu_dim) * mxu_dim * 2.0 * clock_hz;
  }
  // The parameters with keys, units and ranges, bound to this struct's fields.
  std::vector<core::Param> Params();
  // InvalidArgument naming the first parameter out of range.
  absl::Status Validate();
};

// Chip presets: "tpuv4", "a100", "v100". NotFound lists the names.
absl::StatusOr<ChipConfig> ChipPreset(const std::string& name);

}  // namespace meshsim::accel

#endif  // MESHSIM_ACCEL_CHIP_CONFIG_H_
