#include "accel/chip_config.h"

#include "absl/strings/str_format.h"

namespace meshsim::accel {

std::vector<core::Param> ChipConfig::Params() {
  using core::Unit;
  return {
      {"chip.cores", Unit::kCount, "cores per chip", &cores, 1, 1024},
      {"core.mxus", Unit::kCount, "systolic arrays (MXUs) per core", &mxus, 1, 1024},
      {"core.mxu_dim", Unit::kCount, "MXU side: mxu_dim x mxu_dim MACs", &mxu_dim, 1, 4096},
      {"core.clock_hz", Unit::kHertz, "MXU clock", &clock_hz, 1e6, 1e11},
      {"core.scratchpad_bytes", Unit::kBytes, "scratchpad per core", &scratchpad_bytes, 4096, 1e13},
      {"core.vector_flops", Unit::kFlopsPerSecond, "vector unit rate per core", &vector_flops_per_s,
       1e6, 1e18},
      {"hbm.bandwidth", Unit::kBytesPerSecond, "HBM bandwidth, shared by cores and NIC",
       &hbm_bandwidth_bytes_per_s, 1e6, 1e16},
      {"hbm.capacity", Unit::kBytes, "HBM capacity", &hbm_capacity_bytes, 1 << 20, 1e15},
      {"chip.element_bytes", Unit::kBytes, "bytes per matrix element", &element_bytes, 1, 16},
  };
}

absl::Status ChipConfig::Validate() { return core::CheckRanges(Params()); }

absl::StatusOr<ChipConfig> ChipPreset(const std::string& name) {
  ChipConfig c;
  if (name == "tpuv4") {
    // Google TPU v4 as the MeshSlice paper simulates it (§5.1, Figure 8): 2 TensorCores × 4 MXUs
    // of 128×128; the clock is set so that the peak is the paper's 100% point, 272 TFLOPS
    // (272e12 / (2·4·128²·2) = 1.0376 GHz; the public spec is 275 TFLOPS at ≈1.05 GHz).
    // 64 MB scratchpad per core (paper §5.1). HBM2: 32 GiB at 1.2 TB/s (public spec).
    // Vector unit: 128 lanes × 8 sublanes × 2 ALUs × 2 flop at the clock ≈ 4.25 TFLOP/s per core
    // (an estimate; it only matters for reductions, which are HBM-bound anyway).
    return c;
  }
  if (name == "a100") {
    // NVIDIA A100 80 GB (public spec): 108 SMs × 4 tensor cores; each dense bf16 tensor core
    // does 256 FMA/clk (a 16×16 array here) at 1.41 GHz → 312 TFLOPS. 2.039 TB/s HBM2e.
    // 192 KiB shared memory/L1 per SM. CUDA cores: 64 FP32 FMA/clk/SM → 180 GFLOP/s per SM.
    c.cores = 108;
    c.mxus = 4;
    c.mxu_dim = 16;
    c.clock_hz = 1.41e9;
    c.scratchpad_bytes = 192 << 10;
    c.vector_flops_per_s = 180e9;
    c.hbm_bandwidth_bytes_per_s = 2.039e12;
    c.hbm_capacity_bytes = int64_t{80} << 30;
    return c;
  }
  if (name == "v100") {
    // NVIDIA V100 16 GB SXM2 (public spec): 80 SMs × 8 tensor cores, 64 FMA/clk each (8×8 here)
    // at 1.53 GHz → 125 TFLOPS fp16. 900 GB/s HBM2. 96 KiB shared memory per SM.
    c.cores = 80;
    c.mxus = 8;
    c.mxu_dim = 8;
    c.clock_hz = 1.53e9;
    c.scratchpad_bytes = 96 << 10;
    c.vector_flops_per_s = 196e9;
    c.hbm_bandwidth_bytes_per_s = 900e9;
    c.hbm_capacity_bytes = int64_t{16} << 30;
    return c;
  }
  return absl::NotFoundError(
      absl::StrFormat("--system: unknown chip '%s' (known: tpuv4, a100, v100)", name));
}

}  // namespace meshsim::accel
