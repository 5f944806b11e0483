// Cores (a GPU's SMs) that kernels other than the chip's compute stream hold: a communication
// kernel of N CTAs takes N SMs of every chip it runs on for its whole life (stack.comm.ctas),
// and a GeMM that runs beside it gets the rest. The network model holds and releases; the chip
// model reads `held` when it starts a wave of tiles (accel/chip_model.h). Nothing here decides
// timing: it is a count per chip, shared between the two runners like ModeArbiter.
//
// A GeMM's CTAs can keep SMs from a communication kernel too: a persistent GeMM (accel/
// chip_model.h) keeps its cores until its CTAs run out of tiles, and one CTA per tile keeps
// taking every core that frees until its last wave when the block scheduler dispatches its CTAs
// before the kernel's (stack.comm.high_priority = 0; an element-wise kernel until its end). The
// chip model says how many cores such a kernel occupies (SetOccupied), and a communication kernel
// asks WhenFree for its cores: on each chip its CTAs become resident (hold their cores) as soon as
// they fit there, as each GPU dispatches them on its own, and it starts once it is resident
// everywhere. Kernels never wait for each other (their holds are not capped).
//
// Example:
//   CoreLedger ledger(num_chips, /*cores_per_chip=*/132);
//   ledger.WhenFree({chip}, 8, [&] { /* its 8 SMs are held: run */ });  // NCCL, 8 channels
//   int free = cores - ledger.held(chip);
//   ledger.Release(chip, 8);   // it ends
#ifndef MESHSIM_CORE_CORE_LEDGER_H_
#define MESHSIM_CORE_CORE_LEDGER_H_

#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/ids.h"

namespace meshsim::core {

class CoreLedger {
 public:
  explicit CoreLedger(int chips, int cores_per_chip = 0)
      : cores_(cores_per_chip), held_(chips, 0), occupied_(chips, 0) {}

  // `cores` more cores of `chip` are held (cores ≥ 0).
  void Hold(ChipId chip, int cores) { Change(chip, cores); }
  // `cores` of those held are given back; precondition (fatal): at most what is held. Starts the
  // waiting kernels that now fit.
  void Release(ChipId chip, int cores) {
    Change(chip, -cores);
    Wake();
  }
  // Cores of `chip` held now.
  int held(ChipId chip) const { return held_[chip.value()]; }
  int chips() const { return static_cast<int>(held_.size()); }

  // A compute kernel on `chip` (a GeMM, an element-wise pass) occupies `cores` cores now (0:
  // none, or it ended). Lowering it starts the waiting kernels that now fit.
  void SetOccupied(ChipId chip, int cores) {
    int& o = occupied_[chip.value()];
    const bool lower = cores < o;
    o = cores;
    if (lower) Wake();
  }
  int occupied(ChipId chip) const { return occupied_[chip.value()]; }

  // Holds `cores` cores of each chip of `chips` as soon as they fit there (at once unless a GeMM
  // occupies it and leaves fewer than `cores` cores not held; otherwise when it does, waiting
  // kernels in the order they asked), calling `resident(i)` (if given) as chips[i]'s are held,
  // and runs `start` once they are held on every chip.
  void WhenFree(std::vector<ChipId> chips, int cores, std::function<void()> start,
                std::function<void(size_t)> resident = nullptr) {
    Waiting w{std::move(chips), {}, cores, std::move(start), std::move(resident)};
    w.resident.assign(w.chips.size(), false);
    if (TakeWhatFits(w)) {
      w.start();
      return;
    }
    waiting_.push_back(std::move(w));
  }
  // Kernels waiting for cores.
  size_t waiting() const { return waiting_.size(); }

  // Called after every change with the chip and its new count (e.g. to sample a trace counter).
  void set_listener(std::function<void(ChipId, int)> listener) { listener_ = std::move(listener); }

 private:
  void Change(ChipId chip, int delta) {
    int& h = held_[chip.value()];
    h += delta;
    MESHSIM_CHECK(h >= 0) << "CoreLedger: chip " << chip.value() << " released more than held";
    if (listener_) listener_(chip, h);
  }

  struct Waiting {
    std::vector<ChipId> chips;
    std::vector<bool> resident;  // By position in `chips`: its cores are held.
    int cores;
    std::function<void()> start;
    std::function<void(size_t)> resident_cb;
  };

  bool Fits(ChipId c, int cores) const {
    const int o = occupied_[c.value()];
    return o == 0 || cores_ - held_[c.value()] - o >= cores;
  }
  // Holds the kernel's cores on each chip where they fit now; true once it is resident on all.
  bool TakeWhatFits(Waiting& w) {
    bool all = true;
    for (size_t i = 0; i < w.chips.size(); ++i) {
      if (!w.resident[i] && Fits(w.chips[i], w.cores)) {
        w.resident[i] = true;
        Change(w.chips[i], w.cores);
        if (w.resident_cb) w.resident_cb(i);
      }
      all = all && w.resident[i];
    }
    return all;
  }
  // Makes resident, in the order they asked, the waiting kernels' CTAs that fit now, and starts
  // each kernel that is resident everywhere.
  void Wake() {
    if (waking_) return;  // A start that releases or lowers cores: the loop below goes on.
    waking_ = true;
    for (size_t i = 0; i < waiting_.size();) {
      if (!TakeWhatFits(waiting_[i])) {
        ++i;
        continue;
      }
      std::function<void()> start = std::move(waiting_[i].start);
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
      start();
      i = 0;  // A start changes the counts: look again from the first.
    }
    waking_ = false;
  }

  int cores_;
  std::vector<int> held_;
  std::vector<int> occupied_;
  std::deque<Waiting> waiting_;
  bool waking_ = false;
  std::function<void(ChipId, int)> listener_;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_CORE_LEDGER_H_
