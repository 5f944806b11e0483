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
  hbm_.reserve(num_chips);
  for (int c = 0; c < num_chips; ++c) {
    core::ResourceInfo info;
    info.name = absl::StrCat("chip", c, ".hbm");
    info.kind = core::ResourceKind::kHbm;
    info.chip = ChipId(c);
    info.capacity_bytes_per_s = config.hbm_bandwidth_bytes_per_s;
    hbm_.push_back(fs_.AddResource(std::move(info)));
  }
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
  const auto run = [this, chip] {
    Chip& c = chips_[chip];
    c.current_start = exec_->sim().Now();
    const core::Op& op = exec_->graph().op(c.current);
    if (op.kind == OpKind::kGemm) {
      StartGemm(chip, op);
    } else {
      StartVector(chip, op);
    }
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
  const double max_rate =
      double(config_.cores) * config_.vector_flops_per_s * config_.element_bytes * 2.0;
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
        c.step_time[idx] = SystolicTime(config_, sm, sn, sk);
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
  exec_->sim().ScheduleAfter(dt, [this, slot] { OnComputed(slot); });
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
  r.writing = true;
  const int64_t bytes = chips_[chip].writeback_bytes[StepEdges(slot, step) / 2];
  r.bytes += bytes;
  fs_.StartFlow(double(bytes), {hbm_[chip]}, [this, slot] { OnWritten(slot); });
}

void ChipModel::OnWritten(uint32_t slot) {
  CoreRun& r = cores_[slot];
  r.writing = false;
  if (r.next_step < r.num_steps) {
    TryCompute(slot);
    return;
  }
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
