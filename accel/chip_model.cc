#include "accel/chip_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/check.h"

namespace meshsim::accel {

using core::ChipId;
using core::OpId;
using core::OpKind;
using core::Phase;
using core::Time;
using core::UnitKind;

ChipModel::ChipModel(core::FairShare& fs, const ChipConfig& config, int num_chips)
    : fs_(fs), config_(config), chips_(num_chips), cores_(size_t(num_chips) * config.cores) {
  MESHSIM_CHECK(num_chips >= 1) << "ChipModel with " << num_chips << " chips";
  MESHSIM_CHECK(config.cores >= 1 && config.mxus >= 1 && config.mxu_dim >= 1 &&
                config.clock_hz > 0 && config.element_bytes >= 1)
      << "invalid ChipConfig";
  // One resource per chip and memory level: "chipN.hbm" (shared with the NIC), "chipN.l2".
  const auto add = [&](int c, const char* level, core::ResourceKind kind, double bytes_per_s) {
    core::ResourceInfo info;
    info.name = absl::StrCat("chip", c, ".", level);
    info.kind = kind;
    info.chip = ChipId(c);
    info.capacity_bytes_per_s = bytes_per_s;
    return fs_.AddResource(std::move(info));
  };
  hbm_.reserve(num_chips);
  for (int c = 0; c < num_chips; ++c) {
    hbm_.push_back(add(c, "hbm", core::ResourceKind::kHbm, config.hbm_bandwidth_bytes_per_s));
  }
  if (config.HasL2()) {
    MESHSIM_CHECK(config.l2_bytes >= config.scratchpad_bytes) << "invalid ChipConfig: L2";
    l2_.reserve(num_chips);
    for (int c = 0; c < num_chips; ++c) {
      l2_.push_back(add(c, "l2", core::ResourceKind::kOther, config.l2_bandwidth_bytes_per_s));
    }
  }
}

void ChipModel::set_stack(const stack::StackConfig& stack, core::CoreLedger* ledger) {
  kernel_launch_ = core::Time::Seconds(stack.kernel_launch_s);
  pointwise_efficiency_ = stack.pointwise_efficiency;
  reduction_efficiency_ = stack.reduction_efficiency;
  ledger_ = ledger;
  fifo_dispatch_ = stack.comm_high_priority == 0;
}

core::ResourceId ChipModel::l2(ChipId chip) const {
  MESHSIM_CHECK(!l2_.empty()) << "chip model without an L2";
  return l2_[chip.value()];
}

void ChipModel::Start(OpId id, const core::Op& op, core::Executor& exec) {
  MESHSIM_CHECK(exec_ == nullptr || exec_ == &exec) << "ChipModel driven by two executors";
  exec_ = &exec;
  MESHSIM_CHECK(op.chip.valid() && op.chip.value() < chips_.size())
      << "op " << id << " on chip " << op.chip << " of " << chips_.size();
  const uint32_t chip = op.chip.value();
  switch (op.kind) {
    case OpKind::kCopy:
      StartCopy(id, op);
      return;
    case OpKind::kGemm:
      MESHSIM_CHECK(op.m >= 1 && op.n >= 1 && op.k >= 1)
          << "op " << id << ": GeMM " << op.m << "x" << op.n << "x" << op.k;
      break;
    case OpKind::kVector:
      MESHSIM_CHECK(op.bytes >= 0) << "op " << id << ": vector op of " << op.bytes << " bytes";
      break;
    default:
      MESHSIM_CHECK(false) << "ChipModel cannot run '" << core::ToString(op.kind) << "' ops";
  }
  chips_[chip].queue.push_back(id);
  if (!chips_[chip].busy) Launch(chip);
}

void ChipModel::Launch(uint32_t chip) {
  Chip& c = chips_[chip];
  if (c.busy || c.queue.empty()) return;
  const OpId id = c.queue.front();
  c.queue.pop_front();
  c.busy = true;
  c.current = id;
  const auto body = [this, chip] {
    Chip& c = chips_[chip];
    c.current_start = exec_->sim().Now();
    const core::Op& op = exec_->graph().op(c.current);
    if (op.kind == OpKind::kGemm) {
      if (config_.HasL2()) {
        StartL2Gemm(chip, op);
      } else {
        StartGemm(chip, op);
      }
    } else {
      StartVector(chip, op);
    }
  };
  // The kernel's launch as the GPU sees it (stack.kernel.launch): the chip is taken, nothing runs.
  const auto run = [this, chip, body] {
    if (kernel_launch_ == Time::Zero()) {
      body();
      return;
    }
    const Time start = exec_->sim().Now();
    exec_->sim().ScheduleAfterInBatch(kernel_launch_, [this, chip, start, body] {
      exec_->Record(exec_->MakeRow(chips_[chip].current, ChipId(chip), Phase::kLaunch,
                                   UnitKind::kChip, 0, start, exec_->sim().Now()));
      body();
    });
  };
  if (arbiter_ == nullptr) {
    run();
  } else {  // Hardware that cannot compute during a blocking collective: wait for the chip.
    const core::ChipId id_of_chip(chip);
    arbiter_->Acquire({&id_of_chip, 1}, core::ModeArbiter::kCompute, run);
  }
}

void ChipModel::FinishCurrent(uint32_t chip) {
  Chip& c = chips_[chip];
  c.busy = false;
  // A persistent GeMM's last CTAs leave: communication kernels waiting for them start first (the
  // block scheduler has their CTAs queued before the next kernel's).
  if (ledger_ != nullptr && ledger_->occupied(ChipId(chip)) > 0)
    ledger_->SetOccupied(ChipId(chip), 0);
  if (arbiter_ != nullptr) {
    const core::ChipId id_of_chip(chip);
    arbiter_->Release({&id_of_chip, 1}, core::ModeArbiter::kCompute);
  }
  exec_->Finish(c.current);
  // The next op starts in this same event: back to back, no idle gap.
  Launch(chip);
}

void ChipModel::StartCopy(OpId id, const core::Op& op) {
  MESHSIM_CHECK(op.bytes >= 0) << "op " << id << ": copy of " << op.bytes << " bytes";
  // The copy starts now (exec_->start_time(id)), so the callback needs only the op id.
  fs_.StartFlow(2.0 * double(op.bytes), {hbm_[op.chip.value()]}, [this, id] {
    const core::Op& o = exec_->graph().op(id);
    core::TimelineRow row = exec_->MakeRow(id, o.chip, Phase::kOp, UnitKind::kHbm, 0,
                                           exec_->start_time(id), exec_->sim().Now());
    row.bytes = 2 * o.bytes;
    exec_->Record(row);
    exec_->Finish(id);
  });
}

void ChipModel::StartVector(uint32_t chip, const core::Op& op) {
  // Its blocks (one per row, or per few thousand elements) outnumber what the SMs hold many
  // times over, so with launch-order dispatch it takes every SM that frees until its end.
  if (ledger_ != nullptr && fifo_dispatch_) ledger_->SetOccupied(ChipId(chip), config_.cores);
  double max_rate =
      double(config_.cores) * config_.vector_flops_per_s * config_.element_bytes * 2.0;
  // An unfused kernel reaches a fraction of the HBM bandwidth (stack.kernel.*_efficiency).
  const double efficiency =
      op.unit == core::kVectorReduction ? reduction_efficiency_ : pointwise_efficiency_;
  if (efficiency < 1.0) {
    max_rate = std::min(max_rate, efficiency * config_.hbm_bandwidth_bytes_per_s);
  }
  fs_.StartFlow(
      2.0 * double(op.bytes), {hbm_[chip]},
      [this, chip] {
        const Chip& c = chips_[chip];
        core::TimelineRow row =
            exec_->MakeRow(c.current, ChipId(chip), Phase::kOp, UnitKind::kVector, 0,
                           c.current_start, exec_->sim().Now());
        row.bytes = 2 * exec_->graph().op(c.current).bytes;
        exec_->Record(row);
        FinishCurrent(chip);
      },
      max_rate);
}

void ChipModel::StartGemm(uint32_t chip, const core::Op& op) {
  Chip& c = chips_[chip];
  const GemmTiling& t = c.plan = PlanGemm(config_, op.m, op.n, op.k);
  const int64_t e = config_.element_bytes;
  // Actual sizes of full and last (ragged) tiles per dimension.
  const int64_t am[2] = {t.tm, op.m - (t.tiles_m - 1) * t.tm};
  const int64_t an[2] = {t.tn, op.n - (t.tiles_n - 1) * t.tn};
  const int64_t ak[2] = {t.tk, op.k - (t.tiles_k - 1) * t.tk};
  for (int em = 0; em < 2; ++em) {
    for (int en = 0; en < 2; ++en) {
      const int64_t sm = am[em], sn = an[en];
      c.writeback_bytes[EdgeIndex(em, en, false) / 2] = sm * sn * e;
      for (int ek = 0; ek < 2; ++ek) {
        const int64_t sk = ak[ek];
        const int idx = EdgeIndex(em, en, ek);
        c.step_time[idx] = OrientedSystolicTime(config_, sm, sn, sk);
        c.step_bytes[idx] = (sm * sk + sk * sn) * e;
      }
    }
  }

  const int64_t tiles = t.output_tiles();
  const int64_t used = std::min<int64_t>(config_.cores, tiles);
  c.cores_running = static_cast<int>(used);
  for (int q = 0; q < config_.cores; ++q) cores_[chip * config_.cores + q] = CoreRun();
  for (int64_t q = 0; q < used; ++q) {
    const uint32_t slot = chip * config_.cores + static_cast<uint32_t>(q);
    CoreRun& r = cores_[slot];
    r.first_tile = q;
    r.tiles = (tiles - q + used - 1) / used;
    r.stride = used;
    r.num_steps = r.tiles * t.tiles_k;
    // Integer sums of 2·a_m·a_n·k are exact in a double below 2^53, so the rows add up to
    // exactly op.flops().
    int64_t flops = 0;
    for (int64_t tile = q; tile < tiles; tile += used) {
      const int64_t i = tile / t.tiles_n, j = tile % t.tiles_n;
      const int64_t sm = i == t.tiles_m - 1 ? am[1] : t.tm;
      const int64_t sn = j == t.tiles_n - 1 ? an[1] : t.tn;
      flops += 2 * sm * sn * op.k;
    }
    r.flops = static_cast<double>(flops);
    Prefetch(slot, 0);
  }
}

int ChipModel::StepEdges(uint32_t slot, int64_t step) const {
  const CoreRun& r = cores_[slot];
  const GemmTiling& t = chips_[slot / config_.cores].plan;
  const int64_t tile = r.first_tile + step / t.tiles_k * r.stride;
  const int64_t i = tile / t.tiles_n, j = tile % t.tiles_n, kk = step % t.tiles_k;
  return EdgeIndex(i == t.tiles_m - 1, j == t.tiles_n - 1, kk == t.tiles_k - 1);
}

void ChipModel::Prefetch(uint32_t slot, int64_t step) {
  const uint32_t chip = slot / config_.cores;
  const int64_t bytes = chips_[chip].step_bytes[StepEdges(slot, step)];
  cores_[slot].bytes += bytes;
  fs_.StartFlow(double(bytes), {hbm_[chip]}, [this, slot] { OnPrefetched(slot); });
}

void ChipModel::OnPrefetched(uint32_t slot) {
  ++cores_[slot].fetched;
  TryCompute(slot);
}

void ChipModel::TryCompute(uint32_t slot) {
  CoreRun& r = cores_[slot];
  if (r.computing || r.writing || r.next_step >= r.num_steps || r.fetched <= r.next_step) return;
  r.computing = true;
  const int64_t step = r.next_step;
  if (step + 1 < r.num_steps) Prefetch(slot, step + 1);
  const Time dt = chips_[slot / config_.cores].step_time[StepEdges(slot, step)];
  // Never cancelled: chips in step end their cores' tiles in one engine event.
  exec_->sim().ScheduleAfterInBatch(dt, [this, slot] { OnComputed(slot); });
}

void ChipModel::OnComputed(uint32_t slot) {
  CoreRun& r = cores_[slot];
  r.computing = false;
  const int64_t step = r.next_step++;
  const uint32_t chip = slot / config_.cores;
  const GemmTiling& t = chips_[chip].plan;
  if (step % t.tiles_k != t.tiles_k - 1) {
    TryCompute(slot);
    return;
  }
  const int64_t bytes = chips_[chip].writeback_bytes[StepEdges(slot, step) / 2];
  r.bytes += bytes;
  ++r.writes_in_flight;
  fs_.StartFlow(double(bytes), {hbm_[chip]}, [this, slot] { OnWritten(slot); });
  // With a free output buffer the next tile starts now; otherwise wait for a write-back.
  if (r.next_step < r.num_steps && r.writes_in_flight < config_.output_buffers) {
    TryCompute(slot);
  } else {
    r.writing = true;
  }
}

void ChipModel::OnWritten(uint32_t slot) {
  CoreRun& r = cores_[slot];
  --r.writes_in_flight;
  if (r.next_step < r.num_steps) {
    r.writing = false;
    TryCompute(slot);
    return;
  }
  if (r.writes_in_flight > 0) return;  // The core ends with its last write-back.
  r.writing = false;
  const uint32_t chip = slot / config_.cores;
  Chip& c = chips_[chip];
  const uint16_t core = static_cast<uint16_t>(slot % config_.cores);
  core::TimelineRow row = exec_->MakeRow(c.current, ChipId(chip), Phase::kOp, UnitKind::kCore, core,
                                         c.current_start, exec_->sim().Now());
  row.flops = r.flops;
  row.bytes = r.bytes;
  exec_->Record(row);
  if (--c.cores_running == 0) FinishCurrent(chip);
}

void ChipModel::StartL2Gemm(uint32_t chip, const core::Op& op) {
  Chip& c = chips_[chip];
  // Plans depend only on the shape: plan each shape once per model (sliced algorithms repeat
  // shapes on every chip and step). std::map keeps the plans' addresses stable.
  auto it = l2_plans_.find({op.m, op.n, op.k});
  if (it == l2_plans_.end()) {
    it = l2_plans_
             .emplace(std::array<int64_t, 3>{op.m, op.n, op.k},
                      PlanL2Gemm(config_, op.m, op.n, op.k))
             .first;
  }
  c.l2plan = &it->second;
  const L2GemmPlan& p = *c.l2plan;
  const GemmTiling& t = p.sm;
  const int64_t am[2] = {t.tm, op.m - (t.tiles_m - 1) * t.tm};
  const int64_t an[2] = {t.tn, op.n - (t.tiles_n - 1) * t.tn};
  const int64_t ak[2] = {t.tk, op.k - (t.tiles_k - 1) * t.tk};
  for (int em = 0; em < 2; ++em) {
    for (int en = 0; en < 2; ++en) {
      for (int ek = 0; ek < 2; ++ek) {
        c.step_time[EdgeIndex(em, en, ek)] = SystolicTime(config_, am[em], an[en], ak[ek]);
      }
    }
  }
  c.k = op.k;
  c.wave = c.step = 0;
  c.panels_issued = c.panels_landed = 0;
  c.pending = 0;
  c.filling = c.filled = c.wave_writing = false;
  c.m = op.m;
  c.n = op.n;
  c.core_flops.assign(config_.cores, 0);
  c.core_bytes.assign(config_.cores, 0);
  c.core_start.assign(config_.cores, c.current_start);
  c.narrowed_since = Time::Max();
  c.wave_tiles = WaveWidth(chip);
  const int64_t tiles = p.sm.output_tiles();
  const int64_t displaced = Displaced(c, c.wave_tiles);
  c.tail_first = tiles - displaced;
  c.order = TileOrder{c.wave_tiles, displaced, tiles};
  // The plan's waves unless communication kernels hold SMs now (no copy per GeMM otherwise).
  c.recut = c.wave_tiles != p.wave_tiles;
  if (c.recut) Recut(c, 0, 0, c.wave_tiles);
  IssuePanel(chip);
}

int64_t ChipModel::WaveWidth(uint32_t chip) const {
  const int64_t full = chips_[chip].l2plan->wave_tiles;
  if (ledger_ == nullptr) return full;
  const int held = ledger_->held(ChipId(chip));
  const int free = config_.cores - held - config_.StrandedCores(held);
  return std::min<int64_t>(full, std::max(1, free));
}

int64_t ChipModel::Displaced(const Chip& c, int64_t width) const {
  if (!config_.gemm_persistent) return 0;
  return std::max<int64_t>(0, c.l2plan->wave_tiles - width);
}

bool ChipModel::Narrowed(const Chip& c, int64_t wave) const {
  const Wave& w = c.waves()[wave];
  // Not the GeMM's ragged last wave, unless it is a persistent kernel's displaced CTAs.
  return w.tiles < c.l2plan->wave_tiles &&
         (wave + 1 < int64_t(c.waves().size()) || w.first_tile >= c.tail_first);
}

void ChipModel::Recut(Chip& c, size_t next, int64_t first, int64_t width) {
  const L2GemmPlan& p = *c.l2plan;
  if (!c.recut) c.recut_waves = p.waves;
  c.recut = true;
  c.recut_waves.resize(next);
  const int64_t tiles = p.sm.output_tiles();
  if (first < c.tail_first) {
    AppendWavesFrom(p, c.m, c.n, c.order, first, c.tail_first, width, c.recut_waves);
  }
  const int64_t from = std::max(first, c.tail_first);
  if (from < tiles) {
    AppendWavesFrom(p, c.m, c.n, c.order, from, tiles, std::min(width, tiles - c.tail_first),
                    c.recut_waves);
  }
  c.wave_tiles = width;
}

int64_t ChipModel::StepK(const Chip& c, int64_t step) const {
  const int64_t bk = c.l2plan->k_tiles_per_step * c.l2plan->sm.tk;
  return std::min(c.k, (step + 1) * bk) - step * bk;
}

void ChipModel::IssuePanel(uint32_t chip) {
  Chip& c = chips_[chip];
  const L2GemmPlan& p = *c.l2plan;
  const int64_t g = c.panels_issued++;
  // A wave's first panel: its tiles go to the SMs free now. When communication kernels took or
  // gave back SMs since the last wave, the remaining tiles are re-cut into waves of the new width.
  if (g > 0 && g % p.steps == 0) {
    const int64_t width = WaveWidth(chip);
    const size_t next = static_cast<size_t>(g / p.steps);
    const int64_t first = c.waves()[next].first_tile;
    // Displaced CTAs of a persistent GeMM start as soon as cores free: their tiles rejoin the rest.
    const int64_t tiles = p.sm.output_tiles();
    // At most those displaced so far: a CTA, once resident, keeps its core.
    const int64_t tail_first = first < c.tail_first
                                   ? tiles - std::min(Displaced(c, width), tiles - c.tail_first)
                                   : c.tail_first;
    if (width != c.wave_tiles || tail_first != c.tail_first) {
      c.tail_first = tail_first;
      Recut(c, next, first, width);
    }
  }
  const Wave& w = c.waves()[g / p.steps];
  const int64_t bytes = (w.rows + w.cols) * StepK(c, g % p.steps) * config_.element_bytes;
  fs_.StartFlow(double(bytes), {hbm_[chip]}, [this, chip] {
    ++chips_[chip].panels_landed;
    TryWaveStep(chip);
  });
}

void ChipModel::TryWaveStep(uint32_t chip) {
  Chip& c = chips_[chip];
  const L2GemmPlan& p = *c.l2plan;
  const int64_t g = c.wave * p.steps + c.step;
  if (c.pending > 0 || c.filling || c.wave_writing || c.panels_landed <= g) return;
  // Step g begins: prefetch the next panel into L2 (one in flight at a time).
  const int64_t total = int64_t(c.waves().size()) * p.steps;
  if (c.panels_issued == g + 1 && g + 1 < total) IssuePanel(chip);
  if (c.step > 0 || c.filled) {
    StartStepBody(chip);
    return;
  }
  // A wave's first step: the cores' first k-tiles must arrive before any compute.
  const Wave& w = c.waves()[c.wave];
  // A persistent GeMM's CTAs keep their cores while they have tiles: this wave's. A GeMM whose
  // CTAs are dispatched before a communication kernel's (stack.comm.high_priority = 0) takes
  // every core that frees until its last wave, which leaves the others over.
  if (ledger_ != nullptr && (config_.gemm_persistent || fifo_dispatch_)) {
    const bool last = c.wave + 1 == int64_t(c.waves().size());
    ledger_->SetOccupied(
        ChipId(chip), config_.gemm_persistent || last ? static_cast<int>(w.tiles) : config_.cores);
  }
  if (Narrowed(c, c.wave) && c.narrowed_since == Time::Max()) {
    c.narrowed_since = exec_->sim().Now();  // A narrowed wave (not the GeMM's ragged last one).
  }
  const int64_t ak0 = std::min(p.sm.tk, c.k);
  c.filling = true;
  fs_.StartFlow(double(w.streamed * ak0 * config_.element_bytes), {l2_[chip]}, [this, chip] {
    Chip& c = chips_[chip];
    c.filling = false;
    c.filled = true;
    StartStepBody(chip);
  });
}

void ChipModel::StartStepBody(uint32_t chip) {
  Chip& c = chips_[chip];
  const L2GemmPlan& p = *c.l2plan;
  const Wave& w = c.waves()[c.wave];
  const int64_t e = config_.element_bytes;
  int64_t bytes = w.streamed * StepK(c, c.step) * e;
  if (c.step == 0) bytes -= w.streamed * std::min(p.sm.tk, c.k) * e;  // Sent by the fill.
  // The wave's slowest core: its largest tile, over the step's k-tiles.
  const int64_t first_kt = c.step * p.k_tiles_per_step;
  const int64_t end_kt = std::min(p.sm.tiles_k, first_kt + p.k_tiles_per_step);
  const bool last = end_kt == p.sm.tiles_k;
  const Time full = c.step_time[EdgeIndex(w.m_edge_only, w.n_edge_only, false)];
  Time dt = full * (end_kt - first_kt - (last ? 1 : 0));
  if (last) dt = dt + c.step_time[EdgeIndex(w.m_edge_only, w.n_edge_only, true)];
  c.pending = 1;
  if (bytes > 0) {
    ++c.pending;
    fs_.StartFlow(double(bytes), {l2_[chip]}, [this, chip] { OnStepPart(chip); });
  }
  exec_->sim().ScheduleAfterInBatch(dt, [this, chip] { OnStepPart(chip); });
}

void ChipModel::OnStepPart(uint32_t chip) {
  Chip& c = chips_[chip];
  if (--c.pending > 0) return;
  if (++c.step < c.l2plan->steps) {
    TryWaveStep(chip);
    return;
  }
  const Wave& w = c.waves()[c.wave];
  c.wave_writing = true;
  fs_.StartFlow(double(w.c_elements * config_.element_bytes), {l2_[chip], hbm_[chip]},
                [this, chip] { OnWaveWritten(chip); });
}

void ChipModel::OnWaveWritten(uint32_t chip) {
  Chip& c = chips_[chip];
  const L2GemmPlan& p = *c.l2plan;
  const Wave& w = c.waves()[c.wave];
  const Time now = exec_->sim().Now();
  c.wave_writing = false;
  // The wave's flops per core (core q ran raster tile first_tile + q; integer sums keep
  // Σ flops = 2·m·n·k exact) and its HBM bytes (panels and C), shared evenly by its cores.
  const GemmTiling& t = p.sm;
  const int64_t am[2] = {t.tm, c.m - (t.tiles_m - 1) * t.tm};
  const int64_t an[2] = {t.tn, c.n - (t.tiles_n - 1) * t.tn};
  for (int64_t q = 0; q < w.tiles; ++q) {
    int64_t i, j;
    p.TileAt(c.order.Raster(w.first_tile + q), &i, &j);
    c.core_flops[q] += 2 * am[i == t.tiles_m - 1] * an[j == t.tiles_n - 1] * c.k;
  }
  const int64_t bytes = ((w.rows + w.cols) * c.k + w.c_elements) * config_.element_bytes;
  for (int64_t q = 0; q < w.tiles; ++q) c.core_bytes[q] += bytes / w.tiles;
  c.core_bytes[0] += bytes % w.tiles;
  // Cores that no later wave uses leave the GeMM now: one row each.
  const int64_t waves = int64_t(c.waves().size());
  int64_t later = 0;  // The most tiles of a later wave (the next one, unless it is narrower).
  for (int64_t v = c.wave + 1; v < waves && later < w.tiles; ++v) {
    later = std::max(later, c.waves()[v].tiles);
  }
  for (int64_t q = later; q < w.tiles; ++q) {
    core::TimelineRow row = exec_->MakeRow(c.current, ChipId(chip), Phase::kOp, UnitKind::kCore,
                                           static_cast<uint16_t>(q), c.core_start[q], now);
    row.flops = static_cast<double>(c.core_flops[q]);
    row.bytes = c.core_bytes[q];
    exec_->Record(row);
    c.core_flops[q] = 0;  // A core that a later, wider wave takes again starts a new row.
    c.core_bytes[q] = 0;
    c.core_start[q] = now;
  }
  c.step = 0;
  c.filled = false;
  const bool done = ++c.wave == waves;
  // The waves narrowed by communication kernels, as one interference row per stretch.
  const bool next_narrowed = !done && Narrowed(c, c.wave);
  if (c.narrowed_since != Time::Max() && !next_narrowed) {
    exec_->Record(exec_->MakeRow(c.current, ChipId(chip), Phase::kInterference, UnitKind::kChip, 0,
                                 c.narrowed_since, now));
    c.narrowed_since = Time::Max();
  }
  if (done) {
    FinishCurrent(chip);
    return;
  }
  TryWaveStep(chip);
}

std::string ChipModel::DescribeWait(OpId id) const {
  if (exec_ == nullptr) return "never started by the chip model";
  const core::Op& op = exec_->graph().op(id);
  if (op.kind == OpKind::kCopy) {
    return absl::StrFormat("HBM copy of %d bytes in flight on chip %d", op.bytes, op.chip.value());
  }
  const uint32_t chip = op.chip.value();
  const Chip& c = chips_[chip];
  if (!c.busy || c.current != id) {
    const auto it = std::find(c.queue.begin(), c.queue.end(), id);
    if (it == c.queue.end()) return "unknown to the chip model";
    return absl::StrFormat("queued on chip %d behind op %d (%d ahead in the queue)", chip,
                           c.current.value(), it - c.queue.begin());
  }
  if (op.kind == OpKind::kVector) {
    return absl::StrFormat("vector pass over %d bytes in flight on chip %d", op.bytes, chip);
  }
  std::string s = absl::StrFormat("GeMM %dx%dx%d on chip %d:", op.m, op.n, op.k, chip);
  if (config_.HasL2()) {
    if (c.l2plan == nullptr) return s + " not started;";
    const L2GemmPlan& p = *c.l2plan;
    const char* what = c.wave_writing  ? "writing back C"
                       : c.filling     ? "filling the cores' first tiles"
                       : c.pending > 0 ? "computing"
                                       : "waiting for an L2 panel from HBM";
    absl::StrAppendFormat(&s, " wave %d/%d step %d/%d %s;", c.wave, c.waves().size(), c.step,
                          p.steps, what);
    return s;
  }
  for (int q = 0; q < config_.cores; ++q) {
    const CoreRun& r = cores_[chip * config_.cores + q];
    if (r.num_steps == 0) continue;
    const char* what = r.computing                  ? "computing"
                       : r.writing                  ? "writing back"
                       : r.next_step == r.num_steps ? "done"
                                                    : "waiting for a prefetch";
    absl::StrAppendFormat(&s, " core %d step %d/%d %s;", q, r.next_step, r.num_steps, what);
  }
  return s;
}

}  // namespace meshsim::accel
