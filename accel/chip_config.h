// The chip model's parameters: cores of systolic arrays, a vector unit, a scratchpad per core,
// an optional on-chip L2 shared by the cores, and one HBM shared by the cores and the NIC
// (DESIGN.md §4, MeshSlice §5.1 / Figure 8).
//
// Without an L2 level (l2.bandwidth = 0, the TPU presets) each core streams its tiles straight from
// HBM. With one (the GPU presets a100, v100, h100) a GeMM is tiled twice: per-core (per-SM) tiles
// streamed from the L2, and L2 panels fetched from HBM once per wave of cores (see tiling.h).
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
  int cores = 2;               // Cores (TensorCores) per chip.
  int mxus = 4;                // Systolic arrays (MXUs) per core.
  int mxu_dim = 128;           // Each MXU is mxu_dim × mxu_dim MACs.
  double clock_hz = 1.0376e9;  // MXU clock.
  // Fraction of the systolic timing's rate a core sustains inside a GeMM's k-loop (instruction
  // issue, operand loads, barriers between k-tiles). 1 = the arrays' systolic timing alone (TPU).
  double mxu_efficiency = 1.0;
  int64_t scratchpad_bytes = 64 << 20;  // On-core scratchpad (per core).
  // Per-core storage for the fp32 accumulator of C_t outside the scratchpad (a GPU SM's register
  // file); 0 = the accumulator lives in the scratchpad (TPU). See PlanGemm in tiling.h.
  int64_t accumulator_bytes = 0;
  // fp32 accumulators of C_t per core in the scratchpad (chips without an L2): 1 = the core waits
  // for each output tile's write-back before starting the next tile; 2 = double-buffered output,
  // the write-back of one tile overlaps the next tile's k-loop (only the last one is exposed).
  // Both buffers count against scratchpad_bytes (PlanGemm).
  int output_buffers = 1;
  double vector_flops_per_s = 4.25e12;        // Vector unit rate per core (element-wise ops).
  double hbm_bandwidth_bytes_per_s = 1.2e12;  // HBM, shared by the cores and the NIC.
  int64_t hbm_capacity_bytes = int64_t{32} << 30;
  int element_bytes = 2;  // bf16.
  // On-chip L2 shared by all cores, between the cores' scratchpads and HBM. Bandwidth 0 = no L2
  // level (every tile is fetched from HBM; l2_bytes is then ignored). With an L2, l2_bytes must be
  // at least scratchpad_bytes (one core's double-buffered tile set; see Validate).
  int64_t l2_bytes = 0;                 // L2 capacity.
  double l2_bandwidth_bytes_per_s = 0;  // L2 → cores read bandwidth, shared by all cores.
  // How the GeMM library's kernels use the SMs (two-level pipeline only; see chip_model.h,
  // "Persistent kernels"). 0 = one CTA per output tile, issued in waves onto the free SMs (the
  // A100-era cuBLAS/CUTLASS 2 kernels). 1 = persistent: the grid is sized at launch for the idle
  // chip (one CTA per core, at most one per tile); a CTA that finds its core held by another
  // kernel starts only when a core frees, and still owns its first tile (Hopper's cuBLAS).
  int gemm_persistent = 0;
  // CTAs per thread-block cluster of the GeMM kernel; a cluster's CTAs run on free cores of one
  // GPC at once, so a core held alone in a GPC can strand others (StrandedCores).
  int gemm_cluster_ctas = 1;
  int gpcs = 1;  // Graphics processing clusters the cores are grouped in (equal sizes assumed).

  bool HasL2() const { return l2_bandwidth_bytes_per_s > 0; }

  // cores × mxus × mxu_dim² MACs × 2 flop × clock (the datasheet peak; mxu_efficiency excluded).
  double PeakFlops() const {
    return double(cores) * mxus * double(mxu_dim) * mxu_dim * 2.0 * clock_hz;
  }
  // Cores a GeMM cannot use while `held` are held by other kernels, beyond those held: the held
  // cores are spread round-robin over the GPCs (the CTA scheduler's placement of a kernel's
  // CTAs), and a GPC whose free cores are not a multiple of gemm_cluster_ctas leaves the rest
  // idle. 0 when gemm_cluster_ctas = 1.
  int StrandedCores(int held) const;
  // The parameters with keys, units and ranges, bound to this struct's fields.
  std::vector<core::Param> Params();
  // InvalidArgument naming the first parameter out of range, or an L2 that cannot hold one
  // core's tile set (l2.capacity < core.scratchpad_bytes while l2.bandwidth > 0).
  absl::Status Validate();
};

// Chip presets: "tpuv4", "a100", "v100", "h100". NotFound lists the names.
absl::StatusOr<ChipConfig> ChipPreset(const std::string& name);

}  // namespace meshsim::accel

#endif  // MESHSIM_ACCEL_CHIP_CONFIG_H_
