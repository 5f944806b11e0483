// Shard shapes of a 2D GeMM on an R×C mesh, per dataflow (see algorithms/algorithm.h), and the
// divisibility preconditions every 2D plugin shares.
//
//   dataflow  A shard (stored)     B shard (stored)     C shard
//   kOS       M/R × K/C            K/R × N/C            M/R × N/C
//   kLS       M/R × K/C            N/R × K/C  (B is N×K) M/R × N/C
//   kRS       K/R × M/C (A is K×M) K/R × N/C            M/R × N/C
//
// Example:
//   MESHSIM_RETURN_IF_ERROR(CheckShardable("summa", p, mesh));
//   Shards s = LocalShards(p, mesh);   // s.a_rows × s.a_cols elements of A per chip
#ifndef MESHSIM_ALGORITHMS_GEMM2D_SHARDS_H_
#define MESHSIM_ALGORITHMS_GEMM2D_SHARDS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "algorithms/algorithm.h"
#include "algorithms/mesh.h"

namespace meshsim::algorithms {

struct Shards {
  int64_t a_rows = 0, a_cols = 0;  // As stored (A is K×M for kRS).
  int64_t b_rows = 0, b_cols = 0;  // As stored (B is N×K for kLS).
  int64_t c_rows = 0, c_cols = 0;
  int64_t a_elems() const { return a_rows * a_cols; }
  int64_t b_elems() const { return b_rows * b_cols; }
  int64_t c_elems() const { return c_rows * c_cols; }
};

// Precondition: CheckShardable(...) is OK.
Shards LocalShards(const GemmProblem& p, const Mesh& mesh);

// InvalidArgument "<algorithm>: M = 100 is not divisible by the 3 mesh rows (mesh 3x4)" when a
// stored matrix dimension is not divisible by the mesh extent that splits it.
absl::Status CheckShardable(const std::string& algorithm, const GemmProblem& p, const Mesh& mesh);

// MeshSlice blocked slicing (paper Algorithm 2, block B = 8 on TPUs): InvalidArgument unless
// S ≥ 1 and S·B divides `dimension` (the local length that is sliced).
absl::Status CheckSlices(const std::string& algorithm, const std::string& what, int64_t dimension,
                         int slices, int block = 8);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_GEMM2D_SHARDS_H_
