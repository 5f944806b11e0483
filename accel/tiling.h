// GeMM tiling and systolic-array timing for one core (DESIGN.md §4, MeshSlice §5.1 / Figure 8).
//
// A local GeMM C[m×n] += A[m×k]·B[k×n] is cut into output tiles C_t of tm×tn, each computed by
// one core in a loop over k-tiles of tk (PlanGemm). Each k-step multiplies A_t (tm×tk) by B_t
// (tk×tn) on the core's systolic arrays (SystolicTime). ChipModel (chip_model.h) turns a plan
// into events and HBM flows; nothing here knows about time beyond one tile product.
//
// Tiling policy (PlanGemm), with d = mxu_dim, e = element_bytes, S = scratchpad_bytes:
//   1. Scratchpad budget: the core double-buffers its input tiles and keeps one fp32
//      accumulator for C_t:       2·(tm·tk + tk·tn)·e + 4·tm·tn ≤ S.
//      T = the largest multiple of d with 2·(2T²)·e + 4T² ≤ S (a square tile's side; 2304 for
//      tpuv4's 64 MiB). If not even a d×d tile fits, d is replaced by 1 (tiles smaller than the
//      array, which SystolicTime pads).
//   2. Output tiles, balanced to keep padding small: for x ∈ {m, n},
//        tiles_x = ⌈x / T⌉,  tx = round_up(⌈x / tiles_x⌉, d),  tiles_x = ⌈x / tx⌉
//      (a dimension smaller than d is one tile of the whole dimension). The last tile of each
//      dimension is ragged: its actual size is x − (tiles_x − 1)·tx.
//   3. Every core gets work: while tiles_m·tiles_n < cores, one more tile is cut from n (whose
//      split halves the weight blocks per core while each block still streams tm rows) or,
//      when tn < tm or n cannot be split, from m — never below d.
//   4. k-tiles: the largest tk the budget allows beside tm, tn, then split finer so that each
//      core runs at least kMinStepsPerCore pipeline steps (tiles per core × tiles_k), but never
//      below kMinTkBlocks·d. A core exposes its first prefetch and its last k-step's compute
//      (the pipeline's fill and drain); with ≥ 32 steps these are ≤ ~3% of a core's run, and
//      HBM-bound GeMMs reach the HBM roofline. The tk floor keeps events per GeMM bounded.
//   Same rounding as step 2: tk = round_up(⌈k / tiles_k⌉, d).
//
// Systolic timing (SystolicTime), weight-stationary d×d arrays, `mxus` of them per core:
//   B_t is cut into ⌈tk/d⌉·⌈tn/d⌉ weight blocks (ragged edges padded with zeros); the blocks
//   are dealt to the mxus arrays; for each block the array streams the tm rows of A_t through
//   it (one row per cycle) and the partial sums leave through the bottom.
//     cycles = ⌈⌈tk/d⌉·⌈tn/d⌉ / mxus⌉ · (max(tm, d) + d),     time = cycles / clock_hz
//   • tm cycles stream the rows; the weights of the next block are shifted in (d cycles)
//     behind the current block, double-buffered as in the TPU's matrix unit (Jouppi et al.,
//     ISCA'17 §2: "one 64 KiB tile of weights plus one for double-buffering, to hide the 256
//     cycles it takes to shift a tile in"), so weight loading shows only when tm < d.
//   • + d cycles of fill/drain per block pass: the skewed wavefront needs d cycles to cross
//     the array's depth before the last row's partial sums are out and the weights can swap.
//   So an array is busy tm/(tm + d) of the time at best (94% for tm = 2048, d = 128); padding
//   of ragged tk, tn and idle arrays (blocks < mxus) make small or skinny GeMMs worse.
//
// Example:
//   GemmTiling t = PlanGemm(*ChipPreset("tpuv4"), 8192, 8192, 8192);
//   // t.tm = t.tn = t.tk = 2048, 4×4 output tiles, 4 k-steps; 48 MiB of 64 MiB used.
//   core::Time step = SystolicTime(*ChipPreset("tpuv4"), 2048, 2048, 2048);  // 134.2 us
#ifndef MESHSIM_ACCEL_TILING_H_
#define MESHSIM_ACCEL_TILING_H_

#include <cstdint>

#include "accel/chip_config.h"
#include "core/time.h"

namespace meshsim::accel {

// Policy constants of PlanGemm (see the banner).
inline constexpr int64_t kMinStepsPerCore = 32;
inline constexpr int64_t kMinTkBlocks = 4;
// Bytes per element of the on-core accumulator of C_t (fp32).
inline constexpr int64_t kAccumulatorBytes = 4;

// How a GeMM is cut into tiles. All sizes in elements.
struct GemmTiling {
  int64_t tm = 0, tn = 0, tk = 0;                 // Tile sizes.
  int64_t tiles_m = 0, tiles_n = 0, tiles_k = 0;  // Tile counts (ceil).
  int64_t scratchpad_bytes_used = 0;              // 2·(A_t + B_t) + C_t, must be ≤ scratchpad.

  // Output tiles (tiles_m·tiles_n); the core count that works on them is min(tiles, cores).
  int64_t output_tiles() const { return tiles_m * tiles_n; }
};

// Chooses tile sizes for C[m×n] += A[m×k]·B[k×n] on `chip` by the policy above.
// Precondition (fatal): m, n, k ≥ 1. Cost: O(tiles_m + tiles_n) in the worst case.
GemmTiling PlanGemm(const ChipConfig& chip, int64_t m, int64_t n, int64_t k);

// MXU cycles for one core to compute a tm×tn×tk tile product (equation above).
// Precondition (fatal): tm, tn, tk ≥ 1.
int64_t SystolicCycles(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk);

// Time for one core's systolic arrays to compute a tm×tn×tk tile product: SystolicCycles /
// clock_hz, rounded up to a picosecond.
core::Time SystolicTime(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk);

}  // namespace meshsim::accel

#endif  // MESHSIM_ACCEL_TILING_H_
