// Mesh rings against the machine's rings (sim/ring_check.h) and --dims: a pipeline stage laid on
// rows of a 2D torus has multi-hop rings (warned, and slower), the same stage on its own torus
// slice of a torus3d does not.
#include "sim/ring_check.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/hdf5_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace meshsim::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

network::Topology Build(const std::string& name, std::vector<int> dims) {
  int chips = 1;
  for (int d : dims) chips *= d;
  network::TopologyParams p;
  p.name = name;
  p.chips = chips;
  p.dims = std::move(dims);
  absl::StatusOr<network::Topology> t = network::Topology::Build(p);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(*t);
}

// Mesh k of `count` R×C meshes placed in chip order: chips k·R·C … (k+1)·R·C − 1, row-major.
std::vector<algorithms::Mesh> Blocks(int count, int rows, int cols) {
  std::vector<algorithms::Mesh> meshes;
  for (int k = 0; k < count; ++k) {
    std::vector<core::ChipId> chips;
    for (int i = 0; i < rows * cols; ++i) chips.push_back(core::ChipId(k * rows * cols + i));
    meshes.push_back(*algorithms::Mesh::Placed(rows, cols, std::move(chips)));
  }
  return meshes;
}

TEST(RingCheckTest, HopsOfAnEightByEightMeshOnFourRowsOfASixteenBySixteenTorus) {
  // Mesh cell (r, c) is chip 8r + c, at torus row (8r + c) / 16, column (8r + c) mod 16.
  // Row ring 0 = chips 0..7 on torus row 0: neighbours 1 hop apart, but the ring closes from
  // column 7 to column 0: min(7, 16 − 7) = 7 hops.
  // Column ring 0 = chips 0, 8, 16, …, 56 at (0,0) (0,8) (1,0) (1,8) (2,0) (2,8) (3,0) (3,8):
  // (0,0)→(0,8) 8 hops, (0,8)→(1,0) 1 + 8 = 9, and the close (3,8)→(0,0) 3 + 8 = 11.
  const network::Topology torus = Build("torus2d", {16, 16});
  const algorithms::Mesh mesh = Blocks(4, 8, 8)[0];
  EXPECT_EQ(WorstRingHops(torus, mesh, /*rows=*/true), 7);
  EXPECT_EQ(WorstRingHops(torus, mesh, /*rows=*/false), 11);
  // Each of the four meshes on its own 8x8 slice of a 4x8x8 torus3d: every neighbour 1 hop.
  const network::Topology torus3d = Build("torus3d", {4, 8, 8});
  for (const algorithms::Mesh& m : Blocks(4, 8, 8)) {
    EXPECT_EQ(WorstRingHops(torus3d, m, true), 1);
    EXPECT_EQ(WorstRingHops(torus3d, m, false), 1);
  }
  // A single-member ring has no neighbour.
  EXPECT_EQ(WorstRingHops(torus, Blocks(1, 8, 1)[0], /*rows=*/true), 0);
}

TEST(RingCheckTest, WarningNamesTheMeshTheHopsAndTheTopologyThatFits) {
  const std::string w = RingWarning(Build("torus2d", {16, 16}), Blocks(4, 8, 8));
  EXPECT_THAT(w, HasSubstr("the row and column rings of the 8x8 mesh on chips 0-63 are not rings "
                           "of torus2d 16x16: ring neighbours are up to 7 and 11 hops apart"));
  EXPECT_THAT(w, HasSubstr("(4 of the run's 4 meshes)"));
  EXPECT_THAT(w, HasSubstr("--topology torus3d --dims 4x8x8 gives each mesh its own 8x8 torus"));
  // Only the rings the run uses count: the rows of one 8x8 mesh on a 4x16 torus close in 7 hops,
  // and one mesh tiling the machine fits a torus2d of its own shape.
  const std::string rows_only =
      RingWarning(Build("torus2d", {4, 16}), Blocks(1, 8, 8), /*rows=*/true, /*cols=*/false);
  EXPECT_THAT(rows_only, HasSubstr("the row rings of the 8x8 mesh on chips 0-63"));
  EXPECT_THAT(rows_only, HasSubstr("up to 7 hops apart"));
  EXPECT_THAT(rows_only, HasSubstr("--topology torus2d --dims 8x8 gives it its own 8x8 torus"));
  // Meshes that do not tile the machine in order get no suggestion.
  std::vector<core::ChipId> strided;
  for (int i = 0; i < 8; ++i) strided.push_back(core::ChipId(2 * i));
  const std::string no_fit =
      RingWarning(Build("torus2d", {4, 4}), {*algorithms::Mesh::Placed(2, 4, strided)});
  EXPECT_THAT(no_fit, HasSubstr("not rings of torus2d 4x4"));
  EXPECT_THAT(no_fit, Not(HasSubstr("--dims")));
  // Physical rings, meshes without wraparound by design, and switched networks: nothing to say.
  EXPECT_THAT(RingWarning(Build("torus3d", {4, 8, 8}), Blocks(4, 8, 8)), IsEmpty());
  EXPECT_THAT(RingWarning(Build("mesh2d", {16, 16}), Blocks(4, 8, 8)), IsEmpty());
}

using testing_cli::Cli;
using testing_cli::Result;

double MakespanOf(const std::string& json) {
  const size_t at = json.find("\"makespan_s\": ");
  EXPECT_NE(at, std::string::npos) << json;
  return at == std::string::npos ? 0.0 : std::stod(json.substr(at + 14));
}

TEST(RingCheckTest, APipelineOnRowsOfATorusIsWarnedAndSlowerThanOnTorusSlices) {
  // 4 stages of a 4x4 mesh on 64 chips: the tpuv4 preset's torus2d 8x8 puts stage i on two
  // torus rows (multi-hop rings); a torus3d 4x4x4 gives each stage its own 4x4 torus.
  const std::vector<std::string> pipeline = {
      "run", "--workload",  "pipeline",  "--hidden",       "1024", "--layers",
      "4",   "--chips",     "64",        "--stages",       "4",    "--mesh",
      "4x4", "--algorithm", "meshslice", "--microbatches", "4",    "--batch",
      "16",  "--format",    "json"};
  const Result flat = Cli(pipeline);
  ASSERT_EQ(flat.status, 0) << flat.err;
  EXPECT_THAT(flat.out, HasSubstr("\"warnings\": [\"the row and column rings of the 4x4 mesh on "
                                  "chips 0-15 are not rings of torus2d 8x8"));
  EXPECT_THAT(flat.out, HasSubstr("--topology torus3d --dims 4x4x4 gives each mesh its own 4x4 "
                                  "torus"));
  EXPECT_THAT(flat.err, HasSubstr("meshsim: warning: the row and column rings of the 4x4 mesh"));
  std::vector<std::string> sliced = pipeline;
  sliced.insert(sliced.end(), {"--topology", "torus3d", "--dims", "4x4x4"});
  const Result slices = Cli(sliced);
  ASSERT_EQ(slices.status, 0) << slices.err;
  EXPECT_THAT(slices.out, Not(HasSubstr("warnings")));
  EXPECT_THAT(slices.err, Not(HasSubstr("warning")));
  EXPECT_THAT(slices.out, HasSubstr("\"dims\": \"4x4x4\""));
  // Rings that share links take longer for the same bytes.
  EXPECT_LT(MakespanOf(slices.out), 0.9 * MakespanOf(flat.out));
}

TEST(RingCheckTest, CompareSaysTheWarningOfEachRun) {
  const Result r =
      Cli({"compare", "--workload", "collective", "--collective", "allgather", "--bytes", "1MiB",
           "--chips", "64", "--mesh", "8x8", "--dims", "4x16", "--algorithms", "meshslice,summa"});
  ASSERT_EQ(r.status, 0) << r.err;
  // One line per run (compare prints every run's).
  size_t warnings = 0;
  for (size_t at = r.err.find("meshsim: warning: the row rings of the 8x8 mesh");
       at != std::string::npos; at = r.err.find("meshsim: warning:", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 2u) << r.err;
}

TEST(RingCheckTest, WarningsAreStoredInTheArchive) {
  const std::string path = testing_cli::TempPath("ring_check_warnings.h5");
  const Result r = Cli({"run", "--workload", "collective", "--collective", "allgather", "--bytes",
                        "1MiB", "--chips", "64", "--mesh", "8x8", "--dims", "4x16", "--out", path});
  ASSERT_EQ(r.status, 0) << r.err;
  const absl::StatusOr<formats::RunRecord> rec = formats::ReadRun(path);
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_EQ(rec->warnings.size(), 1u);
  EXPECT_THAT(rec->warnings[0], HasSubstr("the row rings of the 8x8 mesh on chips 0-63 are not "
                                          "rings of torus2d 4x16"));
}

TEST(RingCheckTest, DimsSetsTheTorusAndRefusesWhatItCannotBe) {
  const Result shown = Cli({"show", "topology", "torus2d", "--chips", "64", "--dims", "4x16"});
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("dims 4x16"));
  struct Bad {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {{"--topology", "torus3d", "--dims", "4x16"},
       "--dims: '4x16' is not allowed; --topology torus3d takes XxYxZ with X*Y*Z = --chips 64"},
      {{"--dims", "4x4x4"},
       "--dims: '4x4x4' is not allowed; --topology torus2d takes RxC with R*C = --chips 64"},
      {{"--dims", "0x64"}, "--dims: '0x64' is not allowed"},
      {{"--dims", "8xeight"}, "--dims: '8xeight' is not allowed"},
      {{"--topology", "fattree", "--dims", "8x8"},
       "--dims: '8x8' is not allowed; does not apply to --topology fattree; it is read by "
       "--topology torus2d, torus3d, mesh2d"},
  };
  for (const Bad& b : bad) {
    std::vector<std::string> args = {"run", "--chips", "64"};
    args.insert(args.end(), b.args.begin(), b.args.end());
    const Result r = Cli(args);
    EXPECT_EQ(r.status, 2) << b.message;
    EXPECT_THAT(r.err, HasSubstr(b.message));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace meshsim::sim
