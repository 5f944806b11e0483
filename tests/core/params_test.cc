#include "core/params.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

using ::testing::HasSubstr;

TEST(ParamsTest, ParsesQuantitiesWithUnits) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("k", "50e9", Unit::kBytesPerSecond), 50e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("k", "45GB/s", Unit::kBytesPerSecond), 45e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("k", "1.2 TB/s", Unit::kBytesPerSecond), 1.2e12);
  EXPECT_DOUBLE_EQ(*ParseQuantity("k", "64MiB", Unit::kBytes), 64.0 * 1048576);
  EXPECT_DOUBLE_EQ(*ParseQuantity("k", "6us", Unit::kSeconds), 6e-6);
  EXPECT_DOUBLE_EQ(*ParseQuantity("k", "100 ns", Unit::kSeconds), 100e-9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("k", "1.05GHz", Unit::kHertz), 1.05e9);
  absl::StatusOr<double> bad = ParseQuantity("link.bandwidth", "fast", Unit::kBytesPerSecond);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("link.bandwidth: 'fast'"));
  EXPECT_FALSE(ParseQuantity("k", "5 parsecs", Unit::kSeconds).ok());
  EXPECT_FALSE(ParseQuantity("k", "nan", Unit::kSeconds).ok());
  EXPECT_FALSE(ParseQuantity("k", "", Unit::kSeconds).ok());
}

TEST(ParamsTest, IntegersRejectFractionsAndSmallValues) {
  EXPECT_EQ(*ParseInteger("--bytes", "1KiB", Unit::kBytes, 1), 1024);
  EXPECT_FALSE(ParseInteger("--chips", "2.5", Unit::kCount, 1).ok());
  EXPECT_THAT(ParseInteger("--chips", "0", Unit::kCount, 1).status().message(),
              HasSubstr("at least 1"));
}

TEST(ParamsTest, SetAndFormatRoundTrip) {
  double bw = 50e9;
  int dirs = 2;
  std::vector<Param> params = {
      {"link.bandwidth", Unit::kBytesPerSecond, "bw", &bw, 1, 1e15},
      {"comm.ring_directions", Unit::kCount, "dirs", &dirs, 1, 2},
  };
  ASSERT_TRUE(SetParam(params, "link.bandwidth", "45GB/s").ok());
  EXPECT_DOUBLE_EQ(bw, 45e9);
  EXPECT_EQ(FormatParam(params[0]), "4.5e+10");
  EXPECT_EQ(FormatHuman(params[0]), "45 GB/s");
  ASSERT_TRUE(SetParam(params, "link.bandwidth", FormatParam(params[0])).ok());
  EXPECT_DOUBLE_EQ(bw, 45e9);
  EXPECT_EQ(SetParam(params, "link.speed", "1").code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(SetParam(params, "comm.ring_directions", "3").message(), HasSubstr("out of range"));
  EXPECT_THAT(SetParam(params, "comm.ring_directions", "1.5").message(), HasSubstr("whole number"));
  EXPECT_EQ(dirs, 2);
  EXPECT_TRUE(CheckRanges(params).ok());
  bw = 0;
  EXPECT_THAT(CheckRanges(params).message(), HasSubstr("link.bandwidth"));
}

TEST(ParamsTest, FormatDoubleIsShortestRoundTrip) {
  EXPECT_EQ(FormatDouble(1e-6), "1e-06");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(8e-5), "8e-05");
}

}  // namespace
}  // namespace meshsim::core
