#include "algorithms/registry.h"

#include <set>

#include "algorithms/atp/atp.h"
#include "algorithms/gemm2d/collective.h"
#include "algorithms/layer_algorithm.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meshsim::algorithms {
namespace {

TEST(RegistryTest, EveryAlgorithmOfTheContractIsRegisteredAndDocumented) {
  std::set<std::string> names;
  for (const AlgorithmInfo& info : Algorithms()) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    // Exactly one factory: a GeMM plugin or a layer plugin.
    ASSERT_NE(static_cast<bool>(info.make), info.is_layer()) << info.name;
    if (info.is_layer()) {
      EXPECT_NE(info.make_layer(), nullptr) << info.name;
    } else {
      EXPECT_NE(info.make(), nullptr) << info.name;
    }
  }
  for (const char* name : {"collective", "summa", "cannon", "wang", "meshslice", "tp1d", "fsdp",
                           "atp", "megatron", "tp2d"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
}

TEST(RegistryTest, UnknownNameListsTheKnownOnes) {
  auto r = FindAlgorithm("magic");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("meshslice"));
  ASSERT_TRUE(FindAlgorithm("cannon").ok());
  EXPECT_EQ((*FindAlgorithm("cannon"))->name, "cannon");
}

TEST(RegistryTest, EveryParameterIsTypedDocumentedAndItsDefaultAllowed) {
  for (const AlgorithmInfo& info : Algorithms()) {
    for (const core::ParamSpec& p : info.params) {
      EXPECT_FALSE(p.description.empty()) << info.name << " " << p.key;
      EXPECT_FALSE(p.default_value.empty()) << info.name << " " << p.key;
    }
    EXPECT_TRUE(ResolveParams(info, {}).ok()) << info.name;
  }
  EXPECT_EQ(AlgorithmsDeclaring("chunks"), (std::vector<std::string>{"atp", "megatron", "tp2d"}));
  EXPECT_EQ(AlgorithmsDeclaring("slices"),
            (std::vector<std::string>{"meshslice", "wang", "summa", "tp1d", "fsdp"}));
}

// A one-line InvalidArgument of ResolveParams for `key`=`text` on algorithm `name`.
std::string Refused(const std::string& name, const std::string& key, const std::string& text) {
  absl::StatusOr<core::ParamValues> v =
      ResolveParams(**FindAlgorithm(name), {{key, text, "--param " + key}});
  EXPECT_FALSE(v.ok()) << name << " " << key << "=" << text;
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(v.status().message()).find('\n'), std::string::npos);
  return std::string(v.status().message());
}

TEST(RegistryTest, ResolveParamsChecksRangeValuesTypeAndName) {
  absl::StatusOr<core::ParamValues> v = ResolveParams(**FindAlgorithm("atp"), {});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Int("chunks"), 1);  // The default.
  v = ResolveParams(**FindAlgorithm("atp"), {{"chunks", "4", "--chunks"}});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Int("chunks"), 4);
  // Allowed values.
  EXPECT_EQ(Refused("atp", "chunks", "3"), "--param chunks: '3' is not allowed; allowed: 1, 2, 4");
  EXPECT_EQ(Refused("tp2d", "chunks", "2"), "--param chunks: '2' is not allowed; allowed: 1");
  // Range.
  EXPECT_EQ(Refused("meshslice", "slices", "0"),
            "--param slices: '0' is out of range; allowed 1 to 4096");
  // Type.
  EXPECT_THAT(
      Refused("atp", "chunks", "many"),
      ::testing::StartsWith("--param chunks: 'many' is not a valid value; expected a number"));
  EXPECT_EQ(Refused("meshslice", "slices", "2.5"),
            "--param slices: '2.5' is not allowed; must be a whole number");
  // Enum.
  EXPECT_EQ(Refused("summa", "dataflow", "xs"),
            "--param dataflow: 'xs' is not allowed; allowed: auto, os, ls, rs");
  // A parameter of other plugins, and one of none.
  EXPECT_EQ(Refused("collective", "chunks", "2"),
            "--param chunks: '2' does not apply to --algorithm collective (its parameters: "
            "dataflow); it is read by --algorithm atp, megatron, tp2d");
  EXPECT_EQ(Refused("atp", "chunk", "2"),
            "--param chunk: '2' is not allowed; 'chunk' is not a parameter of --algorithm atp "
            "(its parameters: chunks, matrix, activations); did you mean chunks?");
}

TEST(RegistryTest, CheckedRegistryRefusesMalformedEntries) {
  const auto entry = [](std::vector<core::ParamSpec> params) {
    return AlgorithmInfo{
        .name = "mine", .description = "d", .params = std::move(params), .make = MakeCollective};
  };
  EXPECT_TRUE(
      CheckedRegistry(
          {entry(
              {{.key = "tiles", .description = "t", .default_value = "4", .min = 1, .max = 64}})})
          .ok());
  const auto refused = [](absl::StatusOr<std::vector<AlgorithmInfo>> r) {
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  // A default outside its own range.
  EXPECT_THAT(refused(CheckedRegistry({entry({{.key = "tiles", .default_value = "0", .min = 1}})})),
              ::testing::HasSubstr("algorithm 'mine': parameter 'tiles': default"));
  // An enum without values; a key declared twice.
  EXPECT_THAT(refused(CheckedRegistry({entry(
                  {{.key = "order", .type = core::ParamType::kEnum, .default_value = "a"}})})),
              ::testing::HasSubstr("an enum without values"));
  EXPECT_THAT(refused(CheckedRegistry({entry(
                  {{.key = "t", .default_value = "1"}, {.key = "t", .default_value = "1"}})})),
              ::testing::HasSubstr("declared twice"));
  // A name registered twice; no factory.
  EXPECT_THAT(refused(CheckedRegistry({entry({}), entry({})})),
              ::testing::HasSubstr("registered twice"));
  EXPECT_THAT(refused(CheckedRegistry({AlgorithmInfo{.name = "none"}})),
              ::testing::HasSubstr("exactly one of make and make_layer"));
}

// The factory gets the resolved values: atp made with chunks = 2 lowers what a problem with
// chunks = 2 does; made without, the declared default (1).
TEST(RegistryTest, FactoriesReceiveTheResolvedParameters) {
  const AlgorithmInfo& atp = **FindAlgorithm("atp");
  const workloads::LayerShape shape{.batch = 4, .seq = 512, .hidden = 1024, .heads = 16};
  const Mesh mesh{2, 2};
  const auto ops = [&](const LayerAlgorithm& algo, int chunks) {
    core::OpGraph g;
    EXPECT_TRUE(LowerLayer(LayerProblem{shape, chunks}, algo, mesh, g).ok());
    return g.size();
  };
  const core::ParamValues two = *ResolveParams(atp, {{"chunks", "2", "--chunks"}});
  EXPECT_EQ(ops(*atp.make_layer(two), 0), ops(*MakeAtp(), 2));
  EXPECT_EQ(ops(*atp.make_layer(), 0), ops(*MakeAtp(), 1));
  EXPECT_NE(ops(*MakeAtp(), 2), ops(*MakeAtp(), 1));
}

}  // namespace
}  // namespace meshsim::algorithms
