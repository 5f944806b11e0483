// CoreLedger: held cores, and kernels waiting for the cores a persistent GeMM keeps.
#include "core/core_ledger.h"

#include <vector>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

TEST(CoreLedgerTest, KernelsStartAtOnceUnlessAPersistentGemmLeavesTooFewCores) {
  CoreLedger ledger(2, /*cores_per_chip=*/132);
  std::vector<int> started;
  const auto start = [&](int id, ChipId chip, int ctas) {
    return [&started, &ledger, id, chip, ctas] {
      started.push_back(id);
      ledger.Hold(chip, ctas);
    };
  };
  // Nothing occupies the chips: kernels never wait, even beyond the chip's cores (kernels do not
  // wait for each other).
  ledger.WhenFree({ChipId(0), ChipId(1)}, 100, start(1, ChipId(0), 100));
  ledger.WhenFree({ChipId(0)}, 100, start(2, ChipId(0), 100));
  EXPECT_EQ(started, (std::vector<int>{1, 2}));
  ledger.Release(ChipId(0), 200);
  // A persistent GeMM keeps all 132 SMs of chip 1: a kernel of 24 CTAs on chips 0 and 1 waits,
  // one on chip 0 alone does not.
  ledger.SetOccupied(ChipId(1), 132);
  ledger.WhenFree({ChipId(0), ChipId(1)}, 24, start(3, ChipId(1), 24));
  ledger.WhenFree({ChipId(0)}, 24, start(4, ChipId(0), 24));
  ledger.WhenFree({ChipId(1)}, 8, start(5, ChipId(1), 8));
  EXPECT_EQ(started, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(ledger.waiting(), 2u);
  // Its last wave keeps 110: 22 cores free, enough for the 8-CTA kernel only.
  ledger.SetOccupied(ChipId(1), 110);
  EXPECT_EQ(started, (std::vector<int>{1, 2, 4, 5}));
  // 100 kept: 132 − 8 held − 100 = 24, enough for kernel 3.
  ledger.SetOccupied(ChipId(1), 100);
  EXPECT_EQ(started, (std::vector<int>{1, 2, 4, 5, 3}));
  EXPECT_EQ(ledger.waiting(), 0u);
  EXPECT_EQ(ledger.held(ChipId(1)), 32);
}

TEST(CoreLedgerTest, ReleasingHeldCoresStartsAWaitingKernel) {
  CoreLedger ledger(1, /*cores_per_chip=*/16);
  ledger.Hold(ChipId(0), 10);
  ledger.SetOccupied(ChipId(0), 4);  // 16 − 10 − 4 = 2 free.
  bool started = false;
  ledger.WhenFree({ChipId(0)}, 4, [&] { started = true; });
  EXPECT_FALSE(started);
  ledger.Release(ChipId(0), 2);  // 4 free.
  EXPECT_TRUE(started);
}

}  // namespace
}  // namespace meshsim::core
