// Cores (a GPU's SMs) that kernels other than the chip's compute stream hold: a communication
// kernel of N CTAs takes N SMs of every chip it runs on for its whole life (stack.comm.ctas),
// and a GeMM that runs beside it gets the rest. The network model holds and releases; the chip
// model reads `held` when it starts a wave of tiles (accel/chip_model.h). Nothing here decides
// timing: it is a count per chip, shared between the two runners like ModeArbiter.
//
// Example:
//   CoreLedger ledger(num_chips);
//   ledger.Hold(chip, 8);      // an NCCL kernel of 8 channels starts on `chip`
//   int free = cores - ledger.held(chip);
//   ledger.Release(chip, 8);   // it ends
#ifndef MESHSIM_CORE_CORE_LEDGER_H_
#define MESHSIM_CORE_CORE_LEDGER_H_

#include <functional>
#include <vector>

#include "core/check.h"
#include "core/ids.h"

namespace meshsim::core {

class CoreLedger {
 public:
  explicit CoreLedger(int chips) : held_(chips, 0) {}

  // `cores` more cores of `chip` are held (cores ≥ 0).
  void Hold(ChipId chip, int cores) { Change(chip, cores); }
  // `cores` of those held are given back; precondition (fatal): at most what is held.
  void Release(ChipId chip, int cores) { Change(chip, -cores); }
  // Cores of `chip` held now.
  int held(ChipId chip) const { return held_[chip.value()]; }
  int chips() const { return static_cast<int>(held_.size()); }

  // Called after every change with the chip and its new count (e.g. to sample a trace counter).
  void set_listener(std::function<void(ChipId, int)> listener) { listener_ = std::move(listener); }

 private:
  void Change(ChipId chip, int delta) {
    int& h = held_[chip.value()];
    h += delta;
    MESHSIM_CHECK(h >= 0) << "CoreLedger: chip " << chip.value() << " released more than held";
    if (listener_) listener_(chip, h);
  }

  std::vector<int> held_;
  std::function<void(ChipId, int)> listener_;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_CORE_LEDGER_H_
