#include "algorithms/gemm2d/shards.h"

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {

Shards LocalShards(const GemmProblem& p, const Mesh& mesh) {
  const int64_t r = mesh.rows, c = mesh.cols;
  Shards s;
  s.c_rows = p.m / r;
  s.c_cols = p.n / c;
  switch (p.dataflow) {
    case Dataflow::kOS:
      s.a_rows = p.m / r, s.a_cols = p.k / c;
      s.b_rows = p.k / r, s.b_cols = p.n / c;
      break;
    case Dataflow::kLS:
      s.a_rows = p.m / r, s.a_cols = p.k / c;
      s.b_rows = p.n / r, s.b_cols = p.k / c;
      break;
    case Dataflow::kRS:
      s.a_rows = p.k / r, s.a_cols = p.m / c;
      s.b_rows = p.k / r, s.b_cols = p.n / c;
      break;
  }
  return s;
}

absl::Status CheckShardable(const std::string& algorithm, const GemmProblem& p, const Mesh& mesh) {
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: GeMM %dx%dx%d has a non-positive dimension", algorithm, p.m, p.n, p.k));
  }
  const auto need = [&](const char* dim, int64_t value, int extent, const char* axis) {
    if (value % extent == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s = %d is not divisible by the %d mesh %s (mesh %s, dataflow %s)", algorithm, dim,
        value, extent, axis, mesh.ToString(), ToString(p.dataflow)));
  };
  // Every stored matrix: its rows split over mesh rows, its columns over mesh columns.
  struct Dim {
    const char* name;
    int64_t value;
  };
  const Dim M{"M", p.m}, N{"N", p.n}, K{"K", p.k};
  Dim row_dims[3], col_dims[3];
  switch (p.dataflow) {
    case Dataflow::kOS:  // A M×K, B K×N, C M×N.
      row_dims[0] = M, col_dims[0] = K, row_dims[1] = K, col_dims[1] = N;
      break;
    case Dataflow::kLS:  // A M×K, B N×K, C M×N.
      row_dims[0] = M, col_dims[0] = K, row_dims[1] = N, col_dims[1] = K;
      break;
    case Dataflow::kRS:  // A K×M, B K×N, C M×N.
      row_dims[0] = K, col_dims[0] = M, row_dims[1] = K, col_dims[1] = N;
      break;
  }
  row_dims[2] = M, col_dims[2] = N;
  for (int i = 0; i < 3; ++i) {
    MESHSIM_RETURN_IF_ERROR(need(row_dims[i].name, row_dims[i].value, mesh.rows, "rows"));
    MESHSIM_RETURN_IF_ERROR(need(col_dims[i].name, col_dims[i].value, mesh.cols, "columns"));
  }
  return absl::OkStatus();
}

absl::Status CheckSlices(const std::string& algorithm, const std::string& what, int64_t dimension,
                         int slices, int block) {
  if (slices < 1 || dimension % (int64_t{slices} * block) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --slices %d is not allowed for %s = %d; S·%d must divide it (blocked slicing, "
        "block %d)",
        algorithm, slices, what, dimension, block, block));
  }
  return absl::OkStatus();
}

}  // namespace meshsim::algorithms
