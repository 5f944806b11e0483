// example: the docs/plugins.md plugin — AllGather A along rows and B along columns, one GeMM.
#include "algorithms/examples/example.h"

#include <algorithm>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/algorithms/lowering_testing.h"

namespace meshsim::algorithms {
namespace {

using ::testing::HasSubstr;
using testing_util::FlopsPerChip;
using testing_util::Lower;
using testing_util::OpCounts;
using testing_util::Problem;
using testing_util::ReceivedBytesPerChip;
using testing_util::Simulate;

TEST(ExampleTest, LowersToOneGatherPerRowAndColumnAndOneGemmPerChip) {
  for (const Mesh& mesh : {Mesh{2, 4}, Mesh{4, 4}, Mesh{4, 8}}) {
    SCOPED_TRACE(mesh.ToString());
    const int64_t m = 1024, n = 512, k = 256, e = 2, r = mesh.rows, c = mesh.cols;
    const core::OpGraph g = Lower("example", Problem(Dataflow::kOS, m, n, k, "gemm"), mesh, 0);
    const auto counts = OpCounts(g);
    EXPECT_EQ(counts.at("allgather"), r + c);
    EXPECT_EQ(counts.at("gemm"), r * c);
    EXPECT_EQ(g.size(), size_t(r + c + r * c));
    for (double f : FlopsPerChip(g, mesh.chips())) EXPECT_EQ(f, 2.0 * (m / r) * (n / c) * k);
    // Collective OS: each chip receives the rest of its row's A and of its column's B,
    // (C−1)·(M/R)·(K/C) + (R−1)·(K/R)·(N/C) elements.
    const double expected = ((c - 1) * (m / r) * (k / c) + (r - 1) * (k / r) * (n / c)) * e;
    for (double b : ReceivedBytesPerChip(g, mesh.chips())) EXPECT_EQ(b, expected);
  }
}

TEST(ExampleTest, RejectsLsAndRsWithAClearMessage) {
  std::unique_ptr<Algorithm> algo = MakeExample();
  GemmProblem p = Problem(Dataflow::kOS, 1024, 512, 256, "gemm");
  p.dataflow = Dataflow::kLS;
  const absl::Status s = algo->Check(p, Mesh{2, 4}, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("example: dataflow ls is not supported; only os"));
  p.dataflow = Dataflow::kRS;
  EXPECT_THAT(algo->Check(p, Mesh{2, 4}, 0).message(), HasSubstr("dataflow rs"));
  // Shards must divide: M = 1001 over 8 rows.
  EXPECT_THAT(algo->Check(Problem(Dataflow::kOS, 1001, 512, 256, "gemm"), Mesh{8, 2}, 0).message(),
              HasSubstr("M = 1001 is not divisible"));
}

TEST(ExampleTest, Simulates) {
  const Mesh mesh{4, 4};
  const int64_t m = 8192, n = 8192, k = 8192;
  const double t =
      Simulate(Lower("example", Problem(Dataflow::kOS, m, n, k, "gemm"), mesh, 0), mesh);
  // The two gathers use different links (rows vs columns) and run together; then the GeMM.
  // Uncontended ring AllGather of shard s on 4 chips: 100 µs + 3·(6 µs + s/(2·30 GB/s)).
  const double shard = (m / 4) * (k / 4) * 2.0;  // A and B shards are the same size here.
  const double gather = 100e-6 + 3 * (6e-6 + shard / 60e9);
  const double gemm = 2.0 * (m / 4) * (n / 4) * k / 272e12;  // At peak: a lower bound.
  EXPECT_GT(t, gather + gemm);
  EXPECT_LT(t, 1.3 * (gather + gemm));
}

}  // namespace
}  // namespace meshsim::algorithms
