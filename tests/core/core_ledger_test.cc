// CoreLedger: held cores, and kernels waiting for the cores a GeMM keeps.
#include "core/core_ledger.h"

#include <vector>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

TEST(CoreLedgerTest, KernelsStartAtOnceUnlessAGemmLeavesTooFewCores) {
  CoreLedger ledger(2, /*cores_per_chip=*/132);
  std::vector<int> started;
  const auto start = [&started](int id) { return [&started, id] { started.push_back(id); }; };
  // Nothing occupies the chips: kernels never wait, even beyond the chip's cores (kernels do not
  // wait for each other), and hold their cores on every chip they run on.
  ledger.WhenFree({ChipId(0), ChipId(1)}, 100, start(1));
  ledger.WhenFree({ChipId(0)}, 100, start(2));
  EXPECT_EQ(started, (std::vector<int>{1, 2}));
  EXPECT_EQ(ledger.held(ChipId(0)), 200);
  EXPECT_EQ(ledger.held(ChipId(1)), 100);
  ledger.Release(ChipId(0), 200);
  ledger.Release(ChipId(1), 100);
  started.clear();
  // A GeMM keeps all 132 SMs of chip 1: a kernel of 24 CTAs on chips 0 and 1 waits (resident on
  // chip 0 already: its cores there are held), one on chip 0 alone does not.
  ledger.SetOccupied(ChipId(1), 132);
  ledger.WhenFree({ChipId(0), ChipId(1)}, 24, start(3));
  ledger.WhenFree({ChipId(0)}, 24, start(4));
  ledger.WhenFree({ChipId(1)}, 8, start(5));
  EXPECT_EQ(started, (std::vector<int>{4}));
  EXPECT_EQ(ledger.waiting(), 2u);
  EXPECT_EQ(ledger.held(ChipId(0)), 48);
  EXPECT_EQ(ledger.held(ChipId(1)), 0);
  // Its last wave keeps 110: 22 cores free, enough for the 8-CTA kernel only.
  ledger.SetOccupied(ChipId(1), 110);
  EXPECT_EQ(started, (std::vector<int>{4, 5}));
  // 100 kept: 132 − 8 held − 100 = 24, enough for kernel 3.
  ledger.SetOccupied(ChipId(1), 100);
  EXPECT_EQ(started, (std::vector<int>{4, 5, 3}));
  EXPECT_EQ(ledger.waiting(), 0u);
  EXPECT_EQ(ledger.held(ChipId(1)), 32);
}

TEST(CoreLedgerTest, AChipThatFreesLaterDoesNotTakeBackCoresAnotherAlreadyHolds) {
  // A kernel on chips 0 and 1 whose GeMMs end at different times: resident on chip 0 when its
  // GeMM ends, it keeps those cores while chip 1's GeMM runs, so chip 0's next GeMM (occupying
  // what is not held) cannot starve it.
  CoreLedger ledger(2, /*cores_per_chip=*/16);
  ledger.SetOccupied(ChipId(0), 16);
  ledger.SetOccupied(ChipId(1), 16);
  bool started = false;
  ledger.WhenFree({ChipId(0), ChipId(1)}, 4, [&] { started = true; });
  ledger.SetOccupied(ChipId(0), 0);  // Chip 0's GeMM ends: resident there.
  EXPECT_EQ(ledger.held(ChipId(0)), 4);
  ledger.SetOccupied(ChipId(0), 12);  // Its next GeMM takes the 12 cores not held.
  EXPECT_FALSE(started);
  ledger.SetOccupied(ChipId(1), 0);
  EXPECT_TRUE(started);
  EXPECT_EQ(ledger.held(ChipId(1)), 4);
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
  EXPECT_EQ(ledger.held(ChipId(0)), 12);
}

}  // namespace
}  // namespace meshsim::core
