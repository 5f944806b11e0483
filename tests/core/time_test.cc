#include "core/time.h"

#include <sstream>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

TEST(TimeTest, FactoriesAreExactPicoseconds) {
  static_assert(Time::Nanoseconds(3).ps() == 3'000);
  static_assert(Time::Microseconds(6).ps() == 6'000'000);
  static_assert(Time::Milliseconds(2).ps() == 2'000'000'000);
  EXPECT_EQ(Time::Seconds(1.5).ps(), 1'500'000'000'000);
  EXPECT_EQ(Time::Seconds(1e-12).ps(), 1);
}

TEST(TimeTest, ArithmeticAndOrder) {
  Time t = Time::Microseconds(5);
  t += Time::Nanoseconds(1);
  EXPECT_EQ(t.ps(), 5'001'000);
  EXPECT_LT(Time::Nanoseconds(999), Time::Microseconds(1));
  EXPECT_EQ(Time::Microseconds(2) * 3, Time::Microseconds(6));
  EXPECT_DOUBLE_EQ(Time::Milliseconds(250).seconds(), 0.25);
}

TEST(TimeTest, PrintsWithUnits) {
  EXPECT_EQ(Time::Picoseconds(512).ToString(), "512 ps");
  EXPECT_EQ(Time::Nanoseconds(3).ToString(), "3.000 ns");
  EXPECT_EQ(Time::Microseconds(27).ToString(), "27.000 us");
  EXPECT_EQ(Time::Milliseconds(1234).ToString(), "1.2340 s");
  std::ostringstream os;
  os << Time::Milliseconds(2);
  EXPECT_EQ(os.str(), "2.000 ms");
}

TEST(TimeTest, ConversionsSaturateJustPastTheHorizon) {
  // 1 TiB at 1 kB/s is ~35 years: more than int64 picoseconds hold (~106 days).
  const Time beyond = Time::Horizon() + Time::Picoseconds(1);
  EXPECT_EQ(TransferTime(1099511627776.0, 1000), beyond);
  EXPECT_EQ(ComputeTime(1e30, 1), beyond);
  EXPECT_EQ(TransferTime(1e11, 1e6), Time::Seconds(1e5));  // Below the horizon: exact.
}

TEST(TimeTest, ConversionsRoundUp) {
  // 1 MiB at 50 GB/s = 20.97152 us → 20'971'520 ps exactly.
  EXPECT_EQ(TransferTime(1 << 20, 50e9).ps(), 20'971'520);
  // 1 byte at 3 B/s = 0.333... s → rounded up to the next picosecond.
  EXPECT_EQ(TransferTime(1, 3).ps(), 333'333'333'334);
  EXPECT_EQ(TransferTime(0, 1e9).ps(), 0);
  // 2·8192³ = 1'099'511'627'776 flops at 249 TFLOP/s = 4.415709349 ms (ceil to 1 ps).
  EXPECT_EQ(ComputeTime(2.0 * 8192 * 8192 * 8192, 249e12).ps(), 4'415'709'349);
}

}  // namespace
}  // namespace meshsim::core
