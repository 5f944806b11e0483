// The example plugin of docs/plugins.md: the smallest complete 2D GeMM algorithm, to copy.
//
// What: C = A·B in the output-stationary dataflow (MeshSlice Figure 2b, Collective OS without
// overlap). Chip (i, j) holds shards A_ij (M/R × K/C), B_ij (K/R × N/C) and computes C_ij:
//   1. AllGather A along mesh row i    → A_i* (M/R × K)   one collective per row
//   2. AllGather B along mesh column j → B_*j (K × N/C)   one collective per column
//   3. C_ij = A_i* · B_*j                                 one GeMM per chip
// Dependency pattern: the row and column gathers are independent of each other; each waits for
// the frontier of its members; the GeMM of (i, j) waits for row i's and column j's gathers and
// becomes the chip's frontier. Each chip receives (C−1)·(M/R)·(K/C) + (R−1)·(K/R)·(N/C) elements.
#include "algorithms/examples/example.h"

#include "algorithms/gemm2d/shards.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

class Example : public Algorithm {
 public:
  // Reject what Lower cannot do, with a one-line message naming the value and what is allowed.
  absl::Status Check(const GemmProblem& p, const Mesh& mesh, int slices) const override {
    if (p.dataflow != Dataflow::kOS) {
      return absl::InvalidArgumentError(
          std::string("example: dataflow ") + ToString(p.dataflow) +
          " is not supported; only os (C = A·B, both inputs gathered) is");
    }
    return CheckShardable("example", p, mesh);  // Every matrix splits evenly over the mesh.
  }

  absl::Status Lower(const GemmProblem& p, LoweringContext& ctx) const override {
    const Mesh& mesh = ctx.mesh;
    const Shards s = LocalShards(p, mesh);  // Shard shapes per chip (gemm2d/shards.h).
    // Step 1: one AllGather per mesh row; `bytes` is the piece each member contributes.
    std::vector<core::OpId> gather_a(mesh.rows), gather_b(mesh.cols);
    for (int i = 0; i < mesh.rows; ++i) {
      const std::vector<core::ChipId> row = mesh.Row(i);
      core::Op ag = core::Op::Collective(core::CollectiveKind::kAllGather, ctx.graph.AddGroup(row),
                                         s.a_elems() * ctx.element_bytes);
      ctx.Tag(ag, p, "ag_a");  // Name "<label>.ag_a" plus layer and pass tags for the trace.
      gather_a[i] = ctx.graph.Add(ag, ctx.After(row));  // Starts once every member is free.
    }
    // Step 2: one AllGather per mesh column.
    for (int j = 0; j < mesh.cols; ++j) {
      const std::vector<core::ChipId> col = mesh.Col(j);
      core::Op ag = core::Op::Collective(core::CollectiveKind::kAllGather, ctx.graph.AddGroup(col),
                                         s.b_elems() * ctx.element_bytes);
      ctx.Tag(ag, p, "ag_b");
      gather_b[j] = ctx.graph.Add(ag, ctx.After(col));
    }
    // Step 3: the local GeMM, after both gathers; it is the chip's last op, so its frontier.
    for (int i = 0; i < mesh.rows; ++i) {
      for (int j = 0; j < mesh.cols; ++j) {
        core::Op g = core::Op::Gemm(mesh.At(i, j), s.c_rows, s.c_cols, p.k);
        ctx.Tag(g, p, "gemm");
        ctx.SetFrontier(mesh.At(i, j), ctx.graph.Add(g, {gather_a[i], gather_b[j]}));
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<Algorithm> MakeExample() { return std::make_unique<Example>(); }

AlgorithmInfo ExamplePlugin() {
  return {
      .name = "example",
      .description =
          "The example plugin of docs/plugins.md: AllGather both inputs, then one "
          "GeMM (OS only)",
      .params = {DataflowParam("os only: Check refuses ls and rs")},
      .make = MakeExample,
  };
}

}  // namespace meshsim::algorithms
