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
      {"core.mxu_efficiency", Unit::kCount,
       "fraction of the systolic rate sustained in a GeMM k-loop (issue, barriers); 1 = ideal",
       &mxu_efficiency, 0.01, 1},
      {"core.scratchpad_bytes", Unit::kBytes, "scratchpad per core", &scratchpad_bytes, 4096, 1e13},
      {"core.accumulator_bytes", Unit::kBytes,
       "per-core fp32 accumulator storage outside the scratchpad (registers); 0 = in scratchpad",
       &accumulator_bytes, 0, 1e13},
      {"core.output_buffers", Unit::kCount,
       "output-tile accumulators per core: 1 = each write-back is exposed, 2 = it overlaps the "
       "next tile",
       &output_buffers, 1, 2},
      {"core.vector_flops", Unit::kFlopsPerSecond, "vector unit rate per core", &vector_flops_per_s,
       1e6, 1e18},
      {"hbm.bandwidth", Unit::kBytesPerSecond, "HBM bandwidth, shared by cores and NIC",
       &hbm_bandwidth_bytes_per_s, 1e6, 1e16},
      {"hbm.capacity", Unit::kBytes, "HBM capacity", &hbm_capacity_bytes, 1 << 20, 1e15},
      {"chip.element_bytes", Unit::kBytes, "bytes per matrix element", &element_bytes, 1, 16},
      {"l2.capacity", Unit::kBytes, "L2 capacity shared by the cores (used when l2.bandwidth > 0)",
       &l2_bytes, 0, 1e13},
      {"l2.bandwidth", Unit::kBytesPerSecond,
       "L2 to cores bandwidth, shared by the cores; 0 = no L2 level", &l2_bandwidth_bytes_per_s, 0,
       1e17},
      {"gemm.persistent", Unit::kCount,
       "1 = GeMM kernels are persistent: one CTA per core sized at launch for the idle chip; CTAs "
       "displaced by communication kernels run their first tile after the others (needs an L2)",
       &gemm_persistent, 0, 1},
      {"gemm.cluster_ctas", Unit::kCount,
       "CTAs per thread-block cluster of a GeMM kernel (run together on one GPC)",
       &gemm_cluster_ctas, 1, 16},
      {"chip.gpcs", Unit::kCount, "GPCs the cores are grouped in", &gpcs, 1, 1024},
  };
}

int ChipConfig::StrandedCores(int held) const {
  const int c = gemm_cluster_ctas;
  if (c <= 1 || held <= 0) return 0;
  // Round-robin over the GPCs: r GPCs hold q + 1 cores, the others q. A GPC holding h leaves
  // (c − h mod c) mod c of its free cores out of every cluster (its size is a multiple of c).
  const int q = held / gpcs, r = held % gpcs;
  const auto left = [c](int h) { return (c - h % c) % c; };
  return r * left(q + 1) + (gpcs - r) * left(q);
}

absl::Status ChipConfig::Validate() {
  if (absl::Status s = core::CheckRanges(Params()); !s.ok()) return s;
  if (HasL2() && l2_bytes < scratchpad_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "l2.capacity: %d bytes cannot hold one core's double-buffered tile set; allowed: at least "
        "core.scratchpad_bytes (%d) while l2.bandwidth > 0 (set l2.bandwidth=0 for no L2 level)",
        l2_bytes, scratchpad_bytes));
  }
  if (gemm_persistent && !HasL2()) {
    return absl::InvalidArgumentError(
        "gemm.persistent: 1 needs the two-level GeMM pipeline; allowed: 0 while l2.bandwidth = 0");
  }
  if (gemm_cluster_ctas > cores || gpcs > cores) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gemm.cluster_ctas / chip.gpcs: %d / %d; allowed: at most chip.cores (%d)",
                        gemm_cluster_ctas, gpcs, cores));
  }
  return absl::OkStatus();
}

absl::StatusOr<ChipConfig> ChipPreset(const std::string& name) {
  ChipConfig c;
  if (name == "tpuv4") {
    // Google TPU v4 as the MeshSlice paper simulates it (§5.1, Figure 8): 2 TensorCores × 4 MXUs
    // of 128×128; the clock is set so that the peak is the paper's 100% point, 272 TFLOPS
    // (272e12 / (2·4·128²·2) = 1.0376 GHz; the public spec is 275 TFLOPS at ≈1.05 GHz).
    // 64 MB scratchpad per core (paper §5.1). HBM2: 32 GiB at 1.2 TB/s (public spec).
    // Vector unit: 128 lanes × 8 sublanes × 2 ALUs × 2 flop at the clock ≈ 4.25 TFLOP/s per core
    // (an estimate; it only matters for reductions, which are HBM-bound anyway).
    // Output tiles double-buffered: a TPU kernel's pipeline (XLA/Pallas TPU: "inputs and outputs
    // are double-buffered in VMEM") writes block i back while block i+1 computes; the paper's
    // simulated core overlaps its HBM traffic with the multiplications (§4.1).
    c.output_buffers = 2;
    return c;
  }
  if (name == "a100") {
    // NVIDIA A100 SXM4 80 GB. Sources: NVIDIA A100 datasheet (2021) and "NVIDIA A100 Tensor Core
    // GPU Architecture" whitepaper (2020).
    c.cores = 108;   // SMs (whitepaper: 108 SMs enabled on A100).
    c.mxus = 4;      // Third-generation tensor cores per SM (whitepaper).
    c.mxu_dim = 16;  // 256 dense fp16/bf16 FMA/clk per tensor core (whitepaper) = a 16×16 array.
    c.clock_hz = 1.41e9;  // Boost clock (whitepaper); 108·4·256·2·1.41e9 = 312 TFLOPS (datasheet).
    // Fitted, not measured (docs/calibration.md, "GPU chips"): the tensor cores' systolic timing
    // alone puts 8192³ at 88% of peak; real kernels also lose issue slots, operand loads and
    // barriers between k-tiles, which are not modelled. 0.92 puts 8192³ at 81% (issue 9's target
    // is 75–85%). Ampere's cp.async copies global → shared memory without registers, so it sits
    // between Volta (synchronous loads through registers) and Hopper (TMA + async wgmma).
    c.mxu_efficiency = 0.92;
    // Shared memory per SM, configurable up to 164 KB (whitepaper); the rest of the 192 KB is L1.
    c.scratchpad_bytes = 164 << 10;
    // fp32 accumulators in registers: half of the 256 KB register file per SM (whitepaper), the
    // share CUTLASS's largest tiles use (128×256 fp32 = 128 regs/thread × 256 threads).
    c.accumulator_bytes = 128 << 10;
    c.vector_flops_per_s = 180e9;              // 64 FP32 FMA/clk/SM (whitepaper) · 2 · 1.41 GHz.
    c.hbm_bandwidth_bytes_per_s = 2.039e12;    // HBM2e, datasheet (80 GB SXM).
    c.hbm_capacity_bytes = int64_t{80} << 30;  // Datasheet.
    c.l2_bytes = int64_t{40} << 20;            // 40 MB L2 (whitepaper).
    // Whitepaper: "A100 L2 cache read bandwidth is 5120 Bytes/clk" → 5120 · 1.41 GHz.
    c.l2_bandwidth_bytes_per_s = 5120 * 1.41e9;
    return c;
  }
  if (name == "v100") {
    // NVIDIA V100 SXM2 16 GB. Sources: "NVIDIA Tesla V100 GPU Architecture" whitepaper (2017),
    // A100 whitepaper (V100 L2 bandwidth).
    c.cores = 80;         // SMs (whitepaper: 80 SMs enabled on Tesla V100).
    c.mxus = 8;           // Tensor cores per SM (whitepaper).
    c.mxu_dim = 8;        // 64 fp16 FMA/clk per tensor core (whitepaper) = an 8×8 array.
    c.clock_hz = 1.53e9;  // Boost clock (whitepaper); 80·8·64·2·1.53e9 = 125 TFLOPS (whitepaper).
    // Fitted as for a100 (92% of peak for 8192³ at 1.0 → 82% at 0.90): Volta stages global loads
    // through registers (no cp.async), costing more issue slots than Ampere.
    c.mxu_efficiency = 0.90;
    c.scratchpad_bytes = 96 << 10;  // Shared memory per SM, configurable up to 96 KB (whitepaper).
    c.accumulator_bytes = 128 << 10;      // Half of the 256 KB register file per SM (whitepaper).
    c.vector_flops_per_s = 196e9;         // 64 FP32 FMA/clk/SM (whitepaper) · 2 · 1.53 GHz.
    c.hbm_bandwidth_bytes_per_s = 900e9;  // HBM2 (whitepaper).
    c.hbm_capacity_bytes = int64_t{16} << 30;  // HBM2 (whitepaper).
    c.l2_bytes = int64_t{6} << 20;             // 6144 KB L2 (whitepaper).
    // A100 whitepaper: V100's L2 read bandwidth is 2048 Bytes/clk → 2048 · 1.53 GHz.
    c.l2_bandwidth_bytes_per_s = 2048 * 1.53e9;
    return c;
  }
  if (name == "h100") {
    // NVIDIA H100 SXM5 80 GB. Sources: NVIDIA H100 datasheet (2023) and "NVIDIA H100 Tensor Core
    // GPU Architecture" whitepaper (2022).
    c.cores = 132;   // SMs (datasheet: 132 SMs on H100 SXM5).
    c.mxus = 8;      // 4 fourth-generation tensor cores per SM (whitepaper), each 512 dense
    c.mxu_dim = 16;  // bf16 FMA/clk (2× A100's per SM per clock): two 16×16 arrays each.
    // Clock implied by the datasheet's 989.4 dense bf16 TFLOPS: 989.4e12 / (132·8·256·2).
    c.clock_hz = 1.83e9;
    // Fitted as for a100; TMA and asynchronous wgmma leave the least issue overhead. (8192³ is
    // L2-bound here: 77% of peak at 1.0, 76.6% at 0.95.)
    c.mxu_efficiency = 0.95;
    c.scratchpad_bytes = 228 << 10;         // Shared memory per SM, configurable up to 228 KB.
    c.accumulator_bytes = 128 << 10;        // Half of the 256 KB register file per SM (whitepaper).
    c.vector_flops_per_s = 468e9;           // 128 FP32 FMA/clk/SM (whitepaper) · 2 · 1.83 GHz.
    c.hbm_bandwidth_bytes_per_s = 3.35e12;  // HBM3, datasheet.
    c.hbm_capacity_bytes = int64_t{80} << 30;  // Datasheet.
    c.l2_bytes = int64_t{50} << 20;            // 50 MB L2 (whitepaper).
    // Estimate: NVIDIA publishes no L2 bandwidth for H100; assumed A100's 5120 B/clk at H100's
    // clock (9.4 TB/s). 8192³ GeMMs are L2-bound with it (docs/calibration.md); override with
    // --set l2.bandwidth=... when a measured figure is at hand.
    c.l2_bandwidth_bytes_per_s = 5120 * 1.83e9;
    // The GeMM library of Hopper (cuBLAS 12–13, measured on an H200 with 132 SMs in
    // docs/measurements/gemm_beside_comm.md): every fp16 GeMM from 1024³ to 8192×16384×4096 ran a
    // persistent `nvjet_sm90` kernel with a grid of 2×66 CTAs (2×64 for 128 tiles) in clusters of
    // two (the "1x2"/"2x1" in the kernel names). 8 GPCs: the whitepaper's GH100 (a full GH100
    // has 8 GPCs; the SXM5 part keeps 132 of its 144 SMs, in whole 2-SM TPCs).
    c.gemm_persistent = 1;
    c.gemm_cluster_ctas = 2;
    c.gpcs = 8;
    return c;
  }
  return absl::NotFoundError(
      absl::StrFormat("--system: unknown chip '%s' (known: tpuv4, a100, v100, h100)", name));
}

}  // namespace meshsim::accel
