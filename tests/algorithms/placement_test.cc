// Placed device meshes: every plugin addresses chips only through the mesh, so lowering on a
// mesh placed on any chips of a larger machine (any order) gives the same graph with each chip
// id mapped through the placement — and, on a machine where every chip is alike (a switch),
// the same makespan.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "algorithms/mesh.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lowering_testing.h"

namespace meshsim::testing_util {
namespace {

using algorithms::Dataflow;
using algorithms::Mesh;
using core::ChipId;

constexpr int kMachineChips = 48;

// `chips` distinct chips of a kMachineChips machine in a seeded random order.
std::vector<ChipId> Shuffled(int chips, unsigned seed) {
  std::vector<int> all(kMachineChips);
  std::iota(all.begin(), all.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<ChipId> out;
  for (int i = 0; i < chips; ++i) out.push_back(ChipId(all[i]));
  return out;
}

struct Case {
  std::string algorithm;
  int rows, cols, slices;
};

// g_placed must be g with every chip c replaced by placement[c].
void ExpectMappedGraph(const core::OpGraph& g, const core::OpGraph& g_placed, const Mesh& placed) {
  ASSERT_EQ(g.size(), g_placed.size());
  for (uint32_t i = 0; i < g.size(); ++i) {
    const core::Op& a = g.op(core::OpId(i));
    const core::Op& b = g_placed.op(core::OpId(i));
    ASSERT_EQ(a.kind, b.kind) << "op " << i;
    EXPECT_EQ(a.m, b.m);
    EXPECT_EQ(a.n, b.n);
    EXPECT_EQ(a.k, b.k);
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(g.names().Get(a.tags.name), g_placed.names().Get(b.tags.name));
    if (a.chip.valid()) {
      EXPECT_EQ(b.chip, placed.Chip(static_cast<int>(a.chip.value()))) << "op " << i;
    }
    if (a.kind == core::OpKind::kCollective) {
      const auto ma = g.group(a.group);
      const auto mb = g_placed.group(b.group);
      ASSERT_EQ(ma.size(), mb.size());
      for (size_t x = 0; x < ma.size(); ++x) {
        EXPECT_EQ(mb[x], placed.Chip(static_cast<int>(ma[x].value()))) << "op " << i;
      }
    }
    const auto da = g.deps(core::OpId(i));
    const auto db = g_placed.deps(core::OpId(i));
    EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end())) << "op " << i;
  }
}

TEST(PlacedMeshTest, EveryPluginLowersThroughThePlacement) {
  const std::vector<Case> cases = {
      {"collective", 4, 4, 0}, {"summa", 2, 4, 4},   {"cannon", 4, 4, 0}, {"wang", 2, 4, 2},
      {"meshslice", 4, 4, 2},  {"example", 2, 4, 0}, {"tp1d", 1, 8, 0},   {"fsdp", 1, 8, 0}};
  unsigned seed = 1;
  for (const Case& c : cases) {
    for (Dataflow d : kDataflows) {
      if (c.algorithm == "example" && d != Dataflow::kOS) continue;  // It only has kOS.
      SCOPED_TRACE(c.algorithm + " " + algorithms::ToString(d));
      const algorithms::GemmProblem p = Problem(d, 1024, 2048, 4096, "p");
      const Mesh identity{c.rows, c.cols};
      absl::StatusOr<Mesh> placed = Mesh::Placed(c.rows, c.cols, Shuffled(c.rows * c.cols, seed++));
      ASSERT_TRUE(placed.ok()) << placed.status();
      const core::OpGraph g = Lower(c.algorithm, p, identity, c.slices);
      const core::OpGraph gp = Lower(c.algorithm, p, *placed, c.slices);
      ASSERT_GT(g.size(), 0u);
      ExpectMappedGraph(g, gp, *placed);
      // Nothing lands outside the placement.
      for (uint32_t i = 0; i < gp.size(); ++i) {
        for (ChipId chip : gp.ChipsOf(core::OpId(i))) {
          EXPECT_TRUE(placed->Contains(chip)) << "op " << i << " on chip " << chip;
        }
      }
    }
  }
}

TEST(PlacedMeshTest, SameMakespanOnAnyChipsOfASwitch) {
  // On a switch every chip is alike, so a 4×4 MeshSlice GeMM placed on 16 scattered chips of
  // 48 runs exactly as on chips 0..15 of a 16-chip switch.
  const algorithms::GemmProblem p = Problem(Dataflow::kOS, 2048, 2048, 4096, "p");
  const Mesh identity{4, 4};
  absl::StatusOr<Mesh> placed = Mesh::Placed(4, 4, Shuffled(16, 7));
  ASSERT_TRUE(placed.ok());
  const double t = Simulate(Lower("meshslice", p, identity, 2), identity, {}, "switch");
  const double tp = Simulate(Lower("meshslice", p, *placed, 2), *placed, {}, "switch");
  ASSERT_GT(t, 0);
  EXPECT_DOUBLE_EQ(t, tp);
}

TEST(PlacedMeshTest, PlacementErrors) {
  EXPECT_THAT(std::string(Mesh::Placed(2, 2, {ChipId(0), ChipId(1), ChipId(2)}).status().message()),
              ::testing::HasSubstr("must name R*C = 4 chips"));
  EXPECT_THAT(std::string(Mesh::Placed(1, 2, {ChipId(3), ChipId(3)}).status().message()),
              ::testing::HasSubstr("chip 3 appears twice"));
}

}  // namespace
}  // namespace meshsim::testing_util
