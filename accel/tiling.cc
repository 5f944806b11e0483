#include "accel/tiling.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace meshsim::accel {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

struct Split {
  int64_t tile = 0;
  int64_t count = 0;
};

// Cuts x into about `count` equal tiles rounded up to `align`; a dimension smaller than `align`
// stays whole (rounding it up would only pad). Rounding may leave fewer tiles than asked.
Split BalancedSplit(int64_t x, int64_t count, int64_t align) {
  if (x < align) return {x, 1};
  const int64_t tile = RoundUp(CeilDiv(x, count), align);
  return {tile, CeilDiv(x, tile)};
}

// Largest multiple of `align` (≥ align) no greater than x; x ≥ align.
int64_t RoundDown(int64_t x, int64_t align) { return std::max(align, x / align * align); }

}  // namespace

GemmTiling PlanGemm(const ChipConfig& chip, int64_t m, int64_t n, int64_t k) {
  MESHSIM_CHECK(m >= 1 && n >= 1 && k >= 1) << "GeMM " << m << "x" << n << "x" << k;
  const int64_t e = chip.element_bytes;
  const int64_t budget = chip.scratchpad_bytes;

  // 1. The largest square tile: 2·(2T²)·e + 4T² ≤ S.
  int64_t side = static_cast<int64_t>(
      std::floor(std::sqrt(static_cast<double>(budget) / double(4 * e + kAccumulatorBytes))));
  while ((4 * e + kAccumulatorBytes) * side * side > budget) --side;  // Guard sqrt rounding.
  side = std::max<int64_t>(side, 1);
  const int64_t align = side >= chip.mxu_dim ? chip.mxu_dim : 1;
  side = RoundDown(side, align);

  // 2. Balanced output tiles of at most `side`.
  Split sm = BalancedSplit(m, CeilDiv(m, side), align);
  Split sn = BalancedSplit(n, CeilDiv(n, side), align);

  // 3. At least one output tile per core where the dimensions allow it.
  int64_t want_m = sm.count, want_n = sn.count;
  while (sm.count * sn.count < chip.cores) {
    const bool can_m = sm.tile > align, can_n = sn.tile > align;
    if (!can_m && !can_n) break;
    if (can_n && (sn.tile >= sm.tile || !can_m)) {
      sn = BalancedSplit(n, ++want_n, align);
    } else {
      sm = BalancedSplit(m, ++want_m, align);
    }
  }

  // 4. k-tiles: the budget's largest, then finer for pipelining down to kMinTkBlocks·align.
  const int64_t fixed = kAccumulatorBytes * sm.tile * sn.tile;
  MESHSIM_CHECK(fixed < budget);
  const int64_t tk_cap = (budget - fixed) / (2 * e * (sm.tile + sn.tile));
  MESHSIM_CHECK(tk_cap >= align) << "tk_cap " << tk_cap;
  const int64_t tk_max = RoundDown(tk_cap, align);
  const int64_t tiles_per_core =
      CeilDiv(sm.count * sn.count, std::min<int64_t>(chip.cores, sm.count * sn.count));
  const int64_t ks_budget = CeilDiv(k, tk_max);
  const int64_t ks_pipeline = std::min(CeilDiv(kMinStepsPerCore, tiles_per_core),
                                       std::max<int64_t>(1, k / (kMinTkBlocks * align)));
  const Split sk = BalancedSplit(k, std::max(ks_budget, ks_pipeline), align);

  GemmTiling t;
  t.tm = sm.tile;
  t.tn = sn.tile;
  t.tk = sk.tile;
  t.tiles_m = sm.count;
  t.tiles_n = sn.count;
  t.tiles_k = sk.count;
  t.scratchpad_bytes_used = 2 * (t.tm * t.tk + t.tk * t.tn) * e + kAccumulatorBytes * t.tm * t.tn;
  MESHSIM_CHECK_LE(t.scratchpad_bytes_used, budget);
  return t;
}

int64_t SystolicCycles(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk) {
  MESHSIM_CHECK(tm >= 1 && tn >= 1 && tk >= 1) << "tile " << tm << "x" << tn << "x" << tk;
  const int64_t d = chip.mxu_dim;
  const int64_t blocks = CeilDiv(tk, d) * CeilDiv(tn, d);
  const int64_t passes = CeilDiv(blocks, chip.mxus);  // Per array; the busiest array sets time.
  return passes * (std::max(tm, d) + d);
}

core::Time SystolicTime(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk) {
  return core::ComputeTime(static_cast<double>(SystolicCycles(chip, tm, tn, tk)), chip.clock_hz);
}

}  // namespace meshsim::accel
