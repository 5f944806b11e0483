// GeMM tiling and systolic-array timing for one core (DESIGN.md §4, MeshSlice §5.1 / Figure 8).
//
// A local GeMM C[m×n] += A[m×k]·B[k×n] is cut into output tiles C_t of tm×tn, each computed by
// one core in a loop over k-tiles of tk (PlanGemm). Each k-step multiplies A_t (tm×tk) by B_t
// (tk×tn) on the core's systolic arrays (SystolicTime). ChipModel (chip_model.h) turns a plan
// into events and HBM flows; nothing here knows about time beyond one tile product.
//
// Tiling policy (PlanGemm), with d = mxu_dim, e = element_bytes, S = scratchpad_bytes:
//   1. Scratchpad budget: the core double-buffers its input tiles and keeps B = output_buffers
//      fp32 accumulators for C_t:       2·(tm·tk + tk·tn)·e + B·4·tm·tn ≤ S.
//      T = the largest multiple of d with 2·(2T²)·e + B·4T² ≤ S (a square tile's side; 2048 for
//      tpuv4's 64 MiB with B = 2, 2304 with B = 1). If not even a d×d tile fits, d is replaced by 1
//      (tiles smaller than the array, which SystolicTime pads). With accumulator_bytes = R > 0 (a
//      GPU SM: fp32 accumulators in registers, inputs in shared memory) the budgets are separate:
//      2·(tm·tk + tk·tn)·e ≤ S and 4·tm·tn ≤ R; T is the largest multiple of d with 4T² ≤ R (176
//      for R = 128 KiB), capped so that a k-tile of kMinTkBlocks·d still fits S.
//   2. Output tiles, balanced to keep padding small: for x ∈ {m, n},
//        tiles_x = ⌈x / T⌉,  tx = round_up(⌈x / tiles_x⌉, d),  tiles_x = ⌈x / tx⌉
//      (a dimension smaller than d is one tile of the whole dimension). The last tile of each
//      dimension is ragged: its actual size is x − (tiles_x − 1)·tx.
//   3. Every core gets work: while tiles_m·tiles_n < cores, one more tile is cut from n (whose
//      split halves the weight blocks per core while each block still streams tm rows) or,
//      when tn < tm or n cannot be split, from m — never below d.
//   3b. Whole tiles per core (no L2): if tiles_m·tiles_n is not a multiple of the cores, the
//      split with up to `cores` more tiles per dimension that minimises the per-core run
//      ⌈tiles/cores⌉·OrientedSystolicTime(tm, tn, k) wins (ties: fewer tiles).
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
//     cycles = ⌈⌈tk/d⌉·⌈tn/d⌉ / mxus⌉ · (max(tm, d) + d),
//     time = cycles / (mxu_efficiency · clock_hz)
//   • tm cycles stream the rows; the weights of the next block are shifted in (d cycles)
//     behind the current block, double-buffered as in the TPU's matrix unit (Jouppi et al.,
//     ISCA'17 §2: "one 64 KiB tile of weights plus one for double-buffering, to hide the 256
//     cycles it takes to shift a tile in"), so weight loading shows only when tm < d.
//   • + d cycles of fill/drain per block pass: the skewed wavefront needs d cycles to cross
//     the array's depth before the last row's partial sums are out and the weights can swap.
//   So an array is busy tm/(tm + d) of the time at best (94% for tm = 2048, d = 128); padding
//   of ragged tk, tn and idle arrays (blocks < mxus) make small or skinny GeMMs worse.
//   mxu_efficiency (1 on the TPU preset, so its time is exactly cycles / clock) is the GPU
//   presets' one fitted parameter: the rate a GeMM k-loop sustains beside instruction issue and
//   barriers, which are not modelled (chip_config.cc, docs/calibration.md).
//
// Stationary operand (OrientedSystolicTime, chips without an L2): the core may hold either input
// in the arrays — C_t = A_t·B_t streams the tm rows of A_t through blocks of B_t, C_tᵀ = B_tᵀ·A_tᵀ
// streams the tn columns of B_t through blocks of A_t — and takes the faster, as a TPU compiler
// picks which dot operand is loaded as MXU weights. It matters for skinny tiles (tm = 1024 beside
// tn = 2048: fill/drain is d/(tm + d) = 11% one way, 6% the other).
//
// Two-level tiling (PlanL2Gemm), for chips with an L2 (ChipConfig::HasL2, the GPU presets): the
// per-core tiles above are the per-SM tiles (threadblock tiles, streamed from L2 into shared
// memory); a second level decides what HBM traffic they cause. With P = cores (SMs):
//   0. Per-core tiles: every balanced split (tm, tn) with tiles of at most T (PlanGemm's steps
//      2 and 4 for each) is scored by the wave estimate, and the lowest wins (ties: larger tiles):
//        est = Σ_waves max(C, f_w·H, f_w·L)
//      C = tiles_k·SystolicTime(tm, tn, tk) (one wave's compute, whatever its size), f_w = the
//      wave's share of the tiles, H = (m·k + k·n + m·n)·e / hbm_bw, L = (m·k·tiles_n +
//      k·n·tiles_m)·e / l2_bw. So a GeMM is not cut into P + 1 tiles (a second wave of one tile
//      as long as the first), and small tiles pay their L2 traffic — as a GeMM library's
//      heuristic would choose its threadblock tile.
//   1. Raster (a threadblock swizzle): the tiles_n columns of output tiles are cut into stripes of
//      W columns; tiles are numbered stripe by stripe, row-major inside a stripe (the last stripe
//      may be narrower). Wave w is the P consecutive tiles w·P .. w·P + P − 1: one per core, run
//      concurrently; waves = ⌈tiles / P⌉ (the last one is partial: wave quantization).
//   2. A wave marches through k in L2 steps of kt k-tiles (k-panel bk = kt·tk). For each step the
//      wave's A panel (the distinct m-tiles it touches: rows_w × bk) and B panel (bk × cols_w)
//      are read from HBM into L2 once, and shared there by all its cores. The L2 holds the
//      panel being streamed and the next one:      2·(rows_w + cols_w)·bk·e ≤ l2_bytes
//      kt is the largest such that every wave fits and each wave has at least
//      kMinL2StepsPerWave steps (or one step per k-tile if there are fewer). If not even kt = 1
//      fits, P is lowered until it does (never below 1: Validate keeps l2 ≥ one tile set).
//   3. W minimizes the HBM traffic, computed exactly over the waves for the candidates whose
//      estimate ⌈P/W⌉·tm + W·tn is within 10% of the best; ties prefer W dividing P.
//   HBM traffic, per wave Σ_steps (rows_w + cols_w)·bk·e, plus C once:
//     hbm_bytes = Σ_w (rows_w + cols_w)·k·e + m·n·e
//   which is the closed form of an L2 block of bm × bn = ⌈P/W⌉·tm × W·tn — A read ⌈n/bn⌉ times,
//   B about ⌈m/bm⌉ times, C once — up to the rows shared by two waves that split a row of tiles.
//   L2 → core traffic is the one-level traffic (A read tiles_n times, B tiles_m times).
//
// Example:
//   GemmTiling t = PlanGemm(*ChipPreset("tpuv4"), 8192, 8192, 8192);
//   // t.tm = t.tn = t.tk = 2048, 4×4 output tiles, 4 k-steps; 48 MiB of 64 MiB used.
//   core::Time step = SystolicTime(*ChipPreset("tpuv4"), 2048, 2048, 2048);  // 134.2 us
#ifndef MESHSIM_ACCEL_TILING_H_
#define MESHSIM_ACCEL_TILING_H_

#include <cstdint>
#include <vector>

#include "accel/chip_config.h"
#include "core/time.h"

namespace meshsim::accel {

// Policy constants of PlanGemm (see the banner).
inline constexpr int64_t kMinStepsPerCore = 32;
inline constexpr int64_t kMinTkBlocks = 4;
// Bytes per element of the on-core accumulator of C_t (fp32).
inline constexpr int64_t kAccumulatorBytes = 4;
// Policy constant of PlanL2Gemm: fewest L2 steps per wave. Only the last step's compute and the
// C write-back of a memory-bound wave are exposed, so 16 steps keep skinny GeMMs within ~2–5% of
// the HBM roofline at ~6 events per step.
inline constexpr int64_t kMinL2StepsPerWave = 16;

// How a GeMM is cut into tiles. All sizes in elements.
struct GemmTiling {
  int64_t tm = 0, tn = 0, tk = 0;                 // Tile sizes.
  int64_t tiles_m = 0, tiles_n = 0, tiles_k = 0;  // Tile counts (ceil).
  int64_t scratchpad_bytes_used = 0;              // 2·(A_t + B_t) + C_t, must be ≤ scratchpad.

  // Output tiles (tiles_m·tiles_n); the core count that works on them is min(tiles, cores).
  int64_t output_tiles() const { return tiles_m * tiles_n; }
};

// One wave of a two-level plan: the output tiles its cores run concurrently.
struct Wave {
  int64_t first_tile = 0;    // Raster index of its first tile.
  int64_t tiles = 0;         // Tiles (= busy cores) in the wave.
  int64_t rows = 0;          // Σ a_m over the distinct m-tiles touched: A rows read per k.
  int64_t cols = 0;          // Σ a_n over the distinct n-tiles touched: B columns read per k.
  int64_t streamed = 0;      // Σ over its tiles of (a_m + a_n): elements L2 → cores per k.
  int64_t c_elements = 0;    // Σ a_m·a_n: C elements written back.
  bool m_edge_only = false;  // Every tile is in the last (ragged) m-tile row.
  bool n_edge_only = false;  // Every tile is in the last (ragged) n-tile column.
};

// A two-level GeMM plan: per-core tiles, waves and L2 steps. Sizes in elements unless named.
struct L2GemmPlan {
  GemmTiling sm;                 // Per-core (per-SM) tiles, from PlanGemm.
  int64_t swizzle = 1;           // W: n-tiles per stripe of the raster.
  int64_t wave_tiles = 0;        // P: tiles per full wave (≤ cores).
  int64_t k_tiles_per_step = 1;  // kt: k-tiles per L2 step (k-panel bk = kt·tk).
  int64_t steps = 0;             // ⌈tiles_k / kt⌉ L2 steps per wave.
  std::vector<Wave> waves;
  int64_t hbm_bytes = 0;      // Σ_w (rows_w + cols_w)·k·e + m·n·e.
  int64_t l2_bytes_used = 0;  // 2·(largest panel): must be ≤ l2_bytes.

  // Raster index → (m-tile i, n-tile j).
  void TileAt(int64_t r, int64_t* i, int64_t* j) const;
};

// Chooses tile sizes for C[m×n] += A[m×k]·B[k×n] on `chip` by the policy above.
// Precondition (fatal): m, n, k ≥ 1. Cost: O(tiles_m + tiles_n) in the worst case.
GemmTiling PlanGemm(const ChipConfig& chip, int64_t m, int64_t n, int64_t k);

// The two-level plan of C[m×n] += A[m×k]·B[k×n] on `chip` (policy above).
// Precondition (fatal): chip.HasL2(), chip.l2_bytes ≥ chip.scratchpad_bytes, m, n, k ≥ 1.
// Cost: O((T/d)² + tiles · 16): tile candidates scored in O(1), then up to 16 swizzle
// candidates walked exactly over the tiles.
L2GemmPlan PlanL2Gemm(const ChipConfig& chip, int64_t m, int64_t n, int64_t k);

// The order in which a GeMM's CTAs take the raster's tiles: the raster, except that the `moved`
// tiles from raster tile `moved_first` on come last — the first tiles of a persistent kernel's
// CTAs that found no free core at launch (chip_model.h, "Persistent kernels"). Identity when
// moved = 0. Raster(l) is the raster index of the l-th tile in this order.
struct TileOrder {
  int64_t moved_first = 0;
  int64_t moved = 0;
  int64_t tiles = 0;
  int64_t Raster(int64_t l) const {
    if (moved == 0 || l < moved_first) return l;
    if (l < tiles - moved) return l + moved;
    return moved_first + (l - (tiles - moved));
  }
};

// Appends to `waves` the tiles [first_tile, end_tile) of `order` (a wave's first_tile is then an
// index in `order`) in waves of `wave_tiles` tiles: a GeMM whose cores are partly held by
// communication kernels (core/core_ledger.h) runs its remaining tiles in narrower waves
// (plan.waves are the identity order's tiles [0, tiles) in waves of plan.wave_tiles). The plan's
// L2 step is kept (k_tiles_per_step; the L2 capacity rule is not re-checked).
// Preconditions (fatal): wave_tiles ≥ 1, 0 ≤ first_tile < end_tile ≤ tiles.
// Cost: O(end_tile − first_tile).
void AppendWavesFrom(const L2GemmPlan& plan, int64_t m, int64_t n, const TileOrder& order,
                     int64_t first_tile, int64_t end_tile, int64_t wave_tiles,
                     std::vector<Wave>& waves);

// MXU cycles for one core to compute a tm×tn×tk tile product (equation above).
// Precondition (fatal): tm, tn, tk ≥ 1.
int64_t SystolicCycles(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk);

// Time for one core's systolic arrays to compute a tm×tn×tk tile product: SystolicCycles /
// (mxu_efficiency · clock_hz), rounded up to a picosecond.
core::Time SystolicTime(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk);

// min(SystolicTime(tm, tn, tk), SystolicTime(tn, tm, tk)): the faster choice of stationary
// operand (banner). Used for the tiles of chips without an L2.
core::Time OrientedSystolicTime(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk);

}  // namespace meshsim::accel

#endif  // MESHSIM_ACCEL_TILING_H_
