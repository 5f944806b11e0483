#include "core/mode_arbiter.h"

#include <vector>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

using M = ModeArbiter;

TEST(ModeArbiterTest, SameModeSharesOtherModeWaits) {
  ModeArbiter a(2);
  std::vector<int> started;
  const std::vector<ChipId> c0 = {ChipId(0)}, both = {ChipId(0), ChipId(1)};
  a.Acquire(c0, M::kCompute, [&] { started.push_back(1); });       // Runs.
  a.Acquire(c0, M::kCompute, [&] { started.push_back(2); });       // Same mode: runs too.
  a.Acquire(both, M::kCollective, [&] { started.push_back(3); });  // Waits for chip 0.
  EXPECT_EQ(started, (std::vector<int>{1, 2}));
  a.Release(c0, M::kCompute);
  EXPECT_EQ(started.size(), 2u);  // One compute still runs on chip 0.
  a.Release(c0, M::kCompute);
  EXPECT_EQ(started, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(a.waiting(), 0u);
}

TEST(ModeArbiterTest, ExclusiveCollectivesRunOneAtATimePerChip) {
  // A row collective {0, 1} and a column collective {0, 2} share chip 0: with exclusive
  // collectives the second waits for the first; a collective on {3} is unaffected. Without the
  // flag both would run together (SameModeSharesOtherModeWaits).
  ModeArbiter a(4, /*exclusive_collectives=*/true);
  std::vector<int> started;
  const std::vector<ChipId> row = {ChipId(0), ChipId(1)}, col = {ChipId(0), ChipId(2)},
                            other = {ChipId(3)};
  a.Acquire(row, M::kCollective, [&] { started.push_back(1); });
  a.Acquire(col, M::kCollective, [&] { started.push_back(2); });
  a.Acquire(other, M::kCollective, [&] { started.push_back(3); });
  EXPECT_EQ(started, (std::vector<int>{1, 3}));
  a.Release(row, M::kCollective);
  EXPECT_EQ(started, (std::vector<int>{1, 3, 2}));
  a.Release(col, M::kCollective);
  a.Release(other, M::kCollective);
  EXPECT_EQ(a.waiting(), 0u);
}

TEST(ModeArbiterTest, LaterRequestsDoNotOvertakeAnEarlierConflictingOne) {
  // Chip 0 computes; a collective on {0, 1} waits; a later compute on chip 1 must wait behind
  // the collective (request order), otherwise the collective could starve.
  ModeArbiter a(2);
  std::vector<int> started;
  a.Acquire(std::vector<ChipId>{ChipId(0)}, M::kCompute, [&] { started.push_back(1); });
  a.Acquire(std::vector<ChipId>{ChipId(0), ChipId(1)}, M::kCollective,
            [&] { started.push_back(2); });
  a.Acquire(std::vector<ChipId>{ChipId(1)}, M::kCompute, [&] { started.push_back(3); });
  EXPECT_EQ(started, (std::vector<int>{1}));
  a.Release(std::vector<ChipId>{ChipId(0)}, M::kCompute);
  EXPECT_EQ(started, (std::vector<int>{1, 2}));
  a.Release(std::vector<ChipId>{ChipId(0), ChipId(1)}, M::kCollective);
  EXPECT_EQ(started, (std::vector<int>{1, 2, 3}));
}

TEST(ModeArbiterTest, OverlappingCollectivesNeverDeadlock) {
  // Row and column collectives crossing on chip 0 with computes in between all finish.
  ModeArbiter a(4);
  int done = 0;
  std::vector<std::vector<ChipId>> sets = {{ChipId(0), ChipId(1)},
                                           {ChipId(0), ChipId(2)},
                                           {ChipId(1), ChipId(3)},
                                           {ChipId(2), ChipId(3)}};
  std::vector<std::pair<std::vector<ChipId>, M::Mode>> running;
  for (int round = 0; round < 3; ++round) {
    for (const auto& s : sets) {
      a.Acquire(s, M::kCollective, [&, s] { running.push_back({s, M::kCollective}); });
    }
    for (int c = 0; c < 4; ++c) {
      std::vector<ChipId> one = {ChipId(c)};
      a.Acquire(one, M::kCompute, [&, one] { running.push_back({one, M::kCompute}); });
    }
  }
  while (!running.empty()) {
    auto [chips, mode] = running.front();
    running.erase(running.begin());
    a.Release(chips, mode);
    ++done;
  }
  EXPECT_EQ(done, 3 * 8);
  EXPECT_EQ(a.waiting(), 0u);
}

}  // namespace
}  // namespace meshsim::core
