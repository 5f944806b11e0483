#include "accel/tiling.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

// Step 1 of PlanGemm: the side of the largest square tile and the alignment of tiles.
struct SquareTile {
  int64_t side = 0;
  int64_t align = 0;
};

SquareTile LargestSquare(const ChipConfig& chip) {
  const int64_t e = chip.element_bytes;
  const int64_t budget = chip.scratchpad_bytes;
  // 2·(2T²)·e + 4T² ≤ S, or, with the accumulator in registers, 4T² ≤ accumulator_bytes (the
  // inputs then only need a k-tile of kMinTkBlocks·d).
  const int64_t acc_budget = chip.accumulator_bytes;
  int64_t side;
  if (acc_budget == 0) {
    const int64_t per_elem = 4 * e + kAccumulatorBytes * chip.output_buffers;
    side =
        static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(budget) / double(per_elem))));
    while (per_elem * side * side > budget) --side;  // Guard sqrt rounding.
  } else {
    side = static_cast<int64_t>(
        std::floor(std::sqrt(static_cast<double>(acc_budget) / double(kAccumulatorBytes))));
    while (kAccumulatorBytes * side * side > acc_budget) --side;
    side = std::min<int64_t>(side, budget / (2 * e * 2 * kMinTkBlocks * chip.mxu_dim));
  }
  side = std::max<int64_t>(side, 1);
  const int64_t align = side >= chip.mxu_dim ? chip.mxu_dim : 1;
  return {RoundDown(side, align), align};
}

// Step 4 of PlanGemm: k-tiles for the output tiles sm × sn.
GemmTiling FinishTiling(const ChipConfig& chip, int64_t k, Split sm, Split sn, int64_t align) {
  const int64_t e = chip.element_bytes;
  const int64_t budget = chip.scratchpad_bytes;
  const int64_t acc_budget = chip.accumulator_bytes;
  const int64_t acc_used = kAccumulatorBytes * sm.tile * sn.tile;
  const int64_t fixed = acc_budget == 0 ? acc_used * chip.output_buffers : 0;
  MESHSIM_CHECK(fixed < budget);
  MESHSIM_CHECK(acc_budget == 0 || acc_used <= acc_budget) << acc_used;
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
  t.scratchpad_bytes_used = 2 * (t.tm * t.tk + t.tk * t.tn) * e + fixed;
  MESHSIM_CHECK_LE(t.scratchpad_bytes_used, budget);
  return t;
}

}  // namespace

GemmTiling PlanGemm(const ChipConfig& chip, int64_t m, int64_t n, int64_t k) {
  MESHSIM_CHECK(m >= 1 && n >= 1 && k >= 1) << "GeMM " << m << "x" << n << "x" << k;
  // 1. The largest square tile.
  const auto [side, align] = LargestSquare(chip);

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

  // 3b. Whole tiles per core (chips without an L2): when the tile count is not a multiple of
  // the cores, one core would run an extra tile while the others idle (3 tiles on 2 cores: 75%).
  // Among splits with up to `cores` more tiles per dimension, keep the one with the shortest
  // per-core run, ⌈tiles/cores⌉ · OrientedSystolicTime(tm, tn, k); ties keep the fewer tiles.
  if (!chip.HasL2() && chip.cores > 1 && (sm.count * sn.count) % chip.cores != 0) {
    const auto run = [&](const Split& a, const Split& b) {
      return CeilDiv(a.count * b.count, chip.cores) *
             OrientedSystolicTime(chip, a.tile, b.tile, k).ps();
    };
    Split best_m = sm, best_n = sn;
    int64_t best = run(sm, sn);
    for (int64_t cm = sm.count; cm <= sm.count + chip.cores; ++cm) {
      const Split a = BalancedSplit(m, cm, align);
      for (int64_t cn = sn.count; cn <= sn.count + chip.cores; ++cn) {
        const Split b = BalancedSplit(n, cn, align);
        const int64_t t = run(a, b);
        if (t < best || (t == best && a.count * b.count < best_m.count * best_n.count)) {
          best = t;
          best_m = a;
          best_n = b;
        }
      }
    }
    sm = best_m;
    sn = best_n;
  }

  // 4. k-tiles: the budget's largest, then finer for pipelining down to kMinTkBlocks·align.
  return FinishTiling(chip, k, sm, sn, align);
}

namespace {

// Distinct balanced splits of x with tiles of at most `side` (largest tiles first).
std::vector<Split> TileCandidates(int64_t x, int64_t side, int64_t align) {
  std::vector<Split> out;
  for (int64_t t = side; t >= align; t -= align) {
    const Split s = BalancedSplit(x, CeilDiv(x, t), align);
    if (out.empty() || s.tile < out.back().tile) out.push_back(s);
    if (x < align) break;
  }
  return out;
}

// PlanL2Gemm step 0: the per-core tiles minimizing the wave estimate
//   Σ_waves max(C, H·f_w, L·f_w)
// C = tiles_k · SystolicTime(tm, tn, tk) (a wave's compute), f_w = the wave's share of the tiles,
// H = (m·k + k·n + m·n)·e / hbm_bw (compulsory HBM time), L = one-level traffic / l2_bw.
GemmTiling ChooseCoreTiles(const ChipConfig& chip, int64_t m, int64_t n, int64_t k) {
  const auto [side, align] = LargestSquare(chip);
  const double e = chip.element_bytes;
  const double hbm_s =
      (double(m) * k + double(k) * n + double(m) * n) * e / chip.hbm_bandwidth_bytes_per_s;
  GemmTiling best;
  double best_s = 0;
  for (const Split& sm : TileCandidates(m, side, align)) {
    for (const Split& sn : TileCandidates(n, side, align)) {
      const GemmTiling t = FinishTiling(chip, k, sm, sn, align);
      const int64_t tiles = t.output_tiles();
      const int64_t p = std::min<int64_t>(chip.cores, tiles);
      const int64_t full_waves = tiles / p, rest = tiles % p;
      const double compute_s = double(t.tiles_k) * SystolicTime(chip, t.tm, t.tn, t.tk).seconds();
      const double l2_s = (double(m) * k * t.tiles_n + double(k) * n * t.tiles_m) * e /
                          chip.l2_bandwidth_bytes_per_s;
      const auto wave_s = [&](int64_t w_tiles) {
        const double f = double(w_tiles) / double(tiles);
        return std::max({compute_s, hbm_s * f, l2_s * f});
      };
      const double s = double(full_waves) * wave_s(p) + (rest > 0 ? wave_s(rest) : 0.0);
      if (best.tm == 0 || s < best_s * (1 - 1e-9)) {
        best = t;
        best_s = s;
      }
    }
  }
  return best;
}

}  // namespace

void L2GemmPlan::TileAt(int64_t r, int64_t* i, int64_t* j) const {
  const int64_t stripe_tiles = sm.tiles_m * swizzle;  // Tiles in a full stripe.
  const int64_t stripe = r / stripe_tiles;
  const int64_t width = std::min(swizzle, sm.tiles_n - stripe * swizzle);
  const int64_t offset = r - stripe * stripe_tiles;
  *i = offset / width;
  *j = stripe * swizzle + offset % width;
}

namespace {

// The waves of `plan`'s raster (sm and swizzle set) from raster tile `first_tile` on, `p` tiles
// per wave. `seen_m`/`seen_n` are scratch of tiles_m / tiles_n entries.
void AppendWaves(const L2GemmPlan& plan, int64_t m, int64_t n, int64_t first_tile, int64_t p,
                 std::vector<Wave>& waves, std::vector<int64_t>& seen_m,
                 std::vector<int64_t>& seen_n, int64_t end_tile = -1,
                 const TileOrder& order = TileOrder{}) {
  const GemmTiling& t = plan.sm;
  const int64_t tiles = end_tile >= 0 ? end_tile : t.output_tiles();
  const int64_t last_m = m - (t.tiles_m - 1) * t.tm, last_n = n - (t.tiles_n - 1) * t.tn;
  seen_m.assign(t.tiles_m, -1);
  seen_n.assign(t.tiles_n, -1);
  for (int64_t first = first_tile, w = 0; first < tiles; first += p, ++w) {
    Wave wave;
    wave.first_tile = first;
    wave.tiles = std::min(p, tiles - first);
    wave.m_edge_only = wave.n_edge_only = true;
    for (int64_t r = first; r < first + wave.tiles; ++r) {
      int64_t i, j;
      plan.TileAt(order.Raster(r), &i, &j);
      const int64_t am = i == t.tiles_m - 1 ? last_m : t.tm;
      const int64_t an = j == t.tiles_n - 1 ? last_n : t.tn;
      if (seen_m[i] != w) {
        seen_m[i] = w;
        wave.rows += am;
      }
      if (seen_n[j] != w) {
        seen_n[j] = w;
        wave.cols += an;
      }
      wave.streamed += am + an;
      wave.c_elements += am * an;
      wave.m_edge_only = wave.m_edge_only && i == t.tiles_m - 1;
      wave.n_edge_only = wave.n_edge_only && j == t.tiles_n - 1;
    }
    waves.push_back(wave);
  }
}

}  // namespace

void AppendWavesFrom(const L2GemmPlan& plan, int64_t m, int64_t n, const TileOrder& order,
                     int64_t first_tile, int64_t end_tile, int64_t wave_tiles,
                     std::vector<Wave>& waves) {
  MESHSIM_CHECK(wave_tiles >= 1 && first_tile >= 0 && first_tile < end_tile &&
                end_tile <= plan.sm.output_tiles())
      << "AppendWavesFrom " << first_tile << ".." << end_tile << ", " << wave_tiles;
  std::vector<int64_t> seen_m, seen_n;
  AppendWaves(plan, m, n, first_tile, wave_tiles, waves, seen_m, seen_n, end_tile, order);
}

namespace {

// Walks the raster of `plan` (sm, swizzle, wave_tiles set) and fills its waves.
void BuildWaves(L2GemmPlan& plan, int64_t m, int64_t n, std::vector<int64_t>& seen_m,
                std::vector<int64_t>& seen_n) {
  plan.waves.clear();
  AppendWaves(plan, m, n, 0, plan.wave_tiles, plan.waves, seen_m, seen_n);
}

int64_t WavesHbmBytes(const L2GemmPlan& plan, int64_t m, int64_t n, int64_t k, int64_t e) {
  int64_t bytes = m * n * e;
  for (const Wave& w : plan.waves) bytes += (w.rows + w.cols) * k * e;
  return bytes;
}

}  // namespace

L2GemmPlan PlanL2Gemm(const ChipConfig& chip, int64_t m, int64_t n, int64_t k) {
  MESHSIM_CHECK(chip.HasL2() && chip.l2_bytes >= chip.scratchpad_bytes)
      << "PlanL2Gemm needs an L2 of at least one tile set; l2_bytes " << chip.l2_bytes;
  const int64_t e = chip.element_bytes;
  L2GemmPlan plan;
  plan.sm = ChooseCoreTiles(chip, m, n, k);
  const GemmTiling& t = plan.sm;
  std::vector<int64_t> seen_m, seen_n;
  int64_t max_panel_per_k = 0;  // max_w (rows_w + cols_w): panel elements per unit of k.
  for (int64_t p = std::min<int64_t>(chip.cores, t.output_tiles());;) {
    plan.wave_tiles = p;
    // 3. Swizzle: estimate every W, walk the promising ones exactly.
    const int64_t w_max = std::min(t.tiles_n, p);
    const auto estimate = [&](int64_t w) {
      const int64_t rows = std::min(t.tiles_m, CeilDiv(p, w));
      const int64_t cols = std::min(t.tiles_n, std::max(w, CeilDiv(p, t.tiles_m)));
      return rows * t.tm + cols * t.tn;
    };
    int64_t best_estimate = estimate(1);
    for (int64_t w = 2; w <= w_max; ++w) best_estimate = std::min(best_estimate, estimate(w));
    std::vector<int64_t> candidates;
    for (int64_t w = 1; w <= w_max; ++w) {
      if (10 * estimate(w) <= 11 * best_estimate) candidates.push_back(w);
    }
    // Keep at most 16, nearest to the best estimate (stable: smaller W first among equals).
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](int64_t a, int64_t b) { return estimate(a) < estimate(b); });
    if (candidates.size() > 16) candidates.resize(16);
    int64_t best_w = 0, best_bytes = 0;
    for (int64_t w : candidates) {
      plan.swizzle = w;
      BuildWaves(plan, m, n, seen_m, seen_n);
      const int64_t bytes = WavesHbmBytes(plan, m, n, k, e);
      const bool better = best_w == 0 || bytes < best_bytes ||
                          (bytes == best_bytes && p % w == 0 && p % best_w != 0);
      if (better) {
        best_w = w;
        best_bytes = bytes;
      }
    }
    plan.swizzle = best_w;
    BuildWaves(plan, m, n, seen_m, seen_n);
    plan.hbm_bytes = best_bytes;
    max_panel_per_k = 0;
    for (const Wave& w : plan.waves) max_panel_per_k = std::max(max_panel_per_k, w.rows + w.cols);
    // 2. The L2 must double-buffer one k-tile panel of every wave.
    if (2 * max_panel_per_k * t.tk * e <= chip.l2_bytes || p == 1) break;
    p = std::max<int64_t>(1, p - std::max<int64_t>(1, p / 8));
  }
  const int64_t kt_cap = std::max<int64_t>(1, chip.l2_bytes / (2 * max_panel_per_k * t.tk * e));
  const int64_t kt_steps = std::max<int64_t>(1, t.tiles_k / kMinL2StepsPerWave);
  plan.k_tiles_per_step = std::min(kt_cap, kt_steps);
  plan.steps = CeilDiv(t.tiles_k, plan.k_tiles_per_step);
  plan.l2_bytes_used = 2 * max_panel_per_k * std::min(k, plan.k_tiles_per_step * t.tk) * e;
  MESHSIM_CHECK_LE(plan.l2_bytes_used, chip.l2_bytes);
  return plan;
}

int64_t SystolicCycles(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk) {
  MESHSIM_CHECK(tm >= 1 && tn >= 1 && tk >= 1) << "tile " << tm << "x" << tn << "x" << tk;
  const int64_t d = chip.mxu_dim;
  const int64_t blocks = CeilDiv(tk, d) * CeilDiv(tn, d);
  const int64_t passes = CeilDiv(blocks, chip.mxus);  // Per array; the busiest array sets time.
  return passes * (std::max(tm, d) + d);
}

core::Time SystolicTime(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk) {
  const double cycles = static_cast<double>(SystolicCycles(chip, tm, tn, tk));
  if (chip.mxu_efficiency == 1.0) return core::ComputeTime(cycles, chip.clock_hz);
  return core::ComputeTime(cycles / chip.mxu_efficiency, chip.clock_hz);
}

core::Time OrientedSystolicTime(const ChipConfig& chip, int64_t tm, int64_t tn, int64_t tk) {
  return std::min(SystolicTime(chip, tm, tn, tk), SystolicTime(chip, tn, tm, tk));
}

}  // namespace meshsim::accel
