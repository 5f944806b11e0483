#include "algorithms/microbench.h"

#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {

absl::Status BuildLocalGemm(int64_t m, int64_t n, int64_t k, core::OpGraph& graph) {
  if (m < 1 || n < 1 || k < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--gemm: %d,%d,%d is not allowed; dimensions must be positive", m, n, k));
  }
  core::Op op = core::Op::Gemm(core::ChipId(0), m, n, k);
  op.tags.name = graph.Intern(absl::StrFormat("gemm %dx%dx%d", m, n, k));
  graph.Add(op);
  return absl::OkStatus();
}

absl::StatusOr<core::CollectiveKind> ParseCollective(const std::string& name) {
  using K = core::CollectiveKind;
  for (K k : {K::kAllGather, K::kReduceScatter, K::kAllReduce, K::kBroadcast, K::kReduce,
              K::kSendRecv, K::kAllToAll}) {
    if (name == core::ToString(k)) return k;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--collective: '%s' is not allowed; allowed: allgather, reducescatter, allreduce, "
      "broadcast, reduce, sendrecv, alltoall",
      name));
}

absl::Status BuildCollectiveBench(const Mesh& mesh, core::CollectiveKind kind,
                                  const std::string& group, int64_t bytes, core::OpGraph& graph) {
  if (bytes < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--bytes: %d is not allowed; must be at least 1", bytes));
  }
  MESHSIM_ASSIGN_OR_RETURN(auto groups, MeshGroups(mesh, group));
  int index = 0;
  for (std::vector<core::ChipId>& members : groups) {
    core::Op op = core::Op::Collective(kind, graph.AddGroup(std::move(members)), bytes);
    op.tags.name = graph.Intern(absl::StrFormat("%s %s %d", core::ToString(kind), group, index++));
    graph.Add(op);
  }
  return absl::OkStatus();
}

}  // namespace meshsim::algorithms
