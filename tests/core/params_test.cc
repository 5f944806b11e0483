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

namespace meshsim::core {
namespace {

std::vector<ParamSpec> PluginSpecs() {
  return {
      {.key = "chunks",
       .type = ParamType::kInt,
       .description = "batch chunks",
       .default_value = "1",
       .min = 1,
       .max = 4,
       .choices = {"1", "2", "4"}},
      {.key = "tiles", .type = ParamType::kInt, .default_value = "auto", .min = 1, .max = 64},
      {.key = "ratio", .type = ParamType::kDouble, .default_value = "0.5", .max = 1},
      {.key = "fuse", .type = ParamType::kBool, .default_value = "0"},
      {.key = "order", .type = ParamType::kEnum, .default_value = "row", .choices = {"row", "col"}},
      {.key = "buffer",
       .type = ParamType::kInt,
       .unit = Unit::kBytes,
       .default_value = "1MiB",
       .min = 1}};
}

TEST(ParamValuesTest, StartAtTheDefaultsAndReadTyped) {
  absl::StatusOr<ParamValues> v = ParamValues::Defaults(PluginSpecs());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Int("chunks"), 1);
  EXPECT_EQ(v->Int("tiles"), 0);  // auto
  EXPECT_EQ(v->Text("tiles"), "auto");
  EXPECT_EQ(v->Double("ratio"), 0.5);
  EXPECT_FALSE(v->Bool("fuse"));
  EXPECT_EQ(v->Enum("order"), "row");
  EXPECT_EQ(v->Int("buffer"), 1 << 20);
  EXPECT_EQ(v->Text("buffer"), "1048576");
}

TEST(ParamValuesTest, SetParsesUnitsWordsAndChoices) {
  ParamValues v = *ParamValues::Defaults(PluginSpecs());
  ASSERT_TRUE(v.Set("chunks", "4", "--chunks").ok());
  ASSERT_TRUE(v.Set("tiles", "16", "--param tiles").ok());
  ASSERT_TRUE(v.Set("ratio", "0.25", "--param ratio").ok());
  ASSERT_TRUE(v.Set("fuse", "true", "--param fuse").ok());
  ASSERT_TRUE(v.Set("order", "col", "--param order").ok());
  ASSERT_TRUE(v.Set("buffer", "64KiB", "--param buffer").ok());
  EXPECT_EQ(v.Int("chunks"), 4);
  EXPECT_EQ(v.Int("tiles"), 16);
  EXPECT_EQ(v.Double("ratio"), 0.25);
  EXPECT_TRUE(v.Bool("fuse"));
  EXPECT_EQ(v.Text("fuse"), "1");
  EXPECT_EQ(v.Enum("order"), "col");
  EXPECT_EQ(v.Int("buffer"), 65536);
  ASSERT_TRUE(v.Set("tiles", "auto", "--param tiles").ok());
  EXPECT_EQ(v.Int("tiles"), 0);
}

TEST(ParamValuesTest, BadValuesNameTheKeyTheValueAndWhatIsAllowed) {
  ParamValues v = *ParamValues::Defaults(PluginSpecs());
  const auto message = [&](const std::string& key, const std::string& text) {
    absl::Status st = v.Set(key, text, "--param " + key);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << key << "=" << text;
    EXPECT_EQ(std::string(st.message()).find('\n'), std::string::npos);
    return std::string(st.message());
  };
  EXPECT_EQ(message("chunks", "3"), "--param chunks: '3' is not allowed; allowed: 1, 2, 4");
  EXPECT_EQ(message("chunks", "8"), "--param chunks: '8' is not allowed; allowed: 1, 2, 4");
  EXPECT_EQ(message("chunks", "1.5"), "--param chunks: '1.5' is not allowed; allowed: 1, 2, 4");
  EXPECT_THAT(message("chunks", "two"),
              ::testing::StartsWith("--param chunks: 'two' is not a valid value; expected"));
  EXPECT_THAT(message("tiles", "65"),
              ::testing::StartsWith("--param tiles: '65' is out of range; allowed 1 to 64"));
  EXPECT_THAT(message("ratio", "2"),
              ::testing::StartsWith("--param ratio: '2' is out of range; allowed 0 to 1"));
  EXPECT_EQ(message("fuse", "yes"),
            "--param fuse: 'yes' is not allowed; allowed: 0 or 1 (false, true)");
  EXPECT_EQ(message("order", "diag"), "--param order: 'diag' is not allowed; allowed: row, col");
  EXPECT_THAT(message("ratio", "auto"), ::testing::HasSubstr("'auto' is not a valid value"));
  EXPECT_EQ(v.Int("chunks"), 1);  // Refused values leave the default.
  absl::Status unknown = v.Set("chunk", "2", "--param chunk");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.message(), ::testing::HasSubstr("did you mean chunks?"));
}

TEST(ParamValuesTest, MalformedSpecsAreRefused) {
  EXPECT_FALSE(ParamValues::Defaults({{.key = "a", .default_value = "0", .min = 1}}).ok());
  EXPECT_FALSE(ParamValues::Defaults({{.key = "a", .type = ParamType::kEnum}}).ok());
  EXPECT_FALSE(ParamValues::Defaults(
                   {{.key = "a", .default_value = "1"}, {.key = "a", .default_value = "1"}})
                   .ok());
  EXPECT_FALSE(ParamValues::Defaults({{.key = "", .default_value = "1"}}).ok());
}

TEST(ParamValuesTest, DescribeSpecHasTypeRangeAndDefault) {
  const std::vector<ParamSpec> specs = PluginSpecs();
  EXPECT_EQ(DescribeSpec(specs[0]), "chunks (int: 1, 2, 4; default 1): batch chunks");
  EXPECT_THAT(DescribeSpec(specs[1]),
              ::testing::StartsWith("tiles (int: auto, 1 to 64; default auto)"));
  EXPECT_THAT(DescribeSpec(specs[3]), ::testing::StartsWith("fuse (bool: 0 or 1"));
  EXPECT_THAT(DescribeSpec(specs[4]), ::testing::StartsWith("order (enum: row, col; default row)"));
  EXPECT_THAT(DescribeSpec(specs[5]), ::testing::StartsWith("buffer (int: at least 1 B;"));
}

}  // namespace
}  // namespace meshsim::core
