// Micro-benchmark workloads that calibrate and check the machine model: one local GeMM, and one
// collective per mesh group, all groups at once.
//
// Example:
//   core::OpGraph g;
//   MESHSIM_RETURN_IF_ERROR(BuildCollectiveBench(Mesh{4, 4}, core::CollectiveKind::kAllGather,
//                                                "row", 64 << 20, g));   // 4 concurrent rings
#ifndef MESHSIM_ALGORITHMS_MICROBENCH_H_
#define MESHSIM_ALGORITHMS_MICROBENCH_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "algorithms/mesh.h"
#include "core/op.h"
#include "core/op_graph.h"

namespace meshsim::algorithms {

// One GeMM C[m×n] += A[m×k]·B[k×n] on chip 0.
absl::Status BuildLocalGemm(int64_t m, int64_t n, int64_t k, core::OpGraph& graph);

// One collective of `kind` with per-chip `bytes` (CLI.md --bytes) on every group of `group`.
absl::Status BuildCollectiveBench(const Mesh& mesh, core::CollectiveKind kind,
                                  const std::string& group, int64_t bytes, core::OpGraph& graph);

// "allgather" → kAllGather, …; InvalidArgument naming the allowed values.
absl::StatusOr<core::CollectiveKind> ParseCollective(const std::string& name);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_MICROBENCH_H_
