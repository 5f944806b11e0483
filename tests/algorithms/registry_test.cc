#include "algorithms/registry.h"

#include <set>

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

}  // namespace
}  // namespace meshsim::algorithms
