// Shared by the layer plugins (atp/): per-chunk chains of per-chip ops on a mesh. Each chunk k
// has, per chip, the op its next op follows (`cur`); GeMMs and vector ops on every chip extend
// that chain, collectives on a group extend the chains of all members, and side GeMMs (dW) hang
// off the chunk's last compute op without extending the chain. Finish() joins every chain end
// and side op of a chip into the chip's one frontier op.
//
// Example:
//   ChunkChains chains(ctx, /*chunks=*/2);
//   chains.Gemm(0, Tags(ctx, op, "gemm", 0), [&](int) { return Shape{t, n, k}; });
//   chains.Collective(0, Tags(...), core::CollectiveKind::kAllReduce, groups, bytes);
//   chains.Finish();
#ifndef MESHSIM_ALGORITHMS_ATP_LAYER_LOWERING_H_
#define MESHSIM_ALGORITHMS_ATP_LAYER_LOWERING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "core/op.h"
#include "workloads/layer.h"

namespace meshsim::algorithms {

// The tags of ops of `op` of kind `what` in chunk `chunk`: name "<label>.<what>", layer =
// fc_index, pass, slice = chunk.
core::OpTags LayerTags(core::OpGraph& graph, const workloads::LayerOp& op, const std::string& what,
                       int chunk);

// A kVector op of `bytes` on `chip`.
// A kVector op of `bytes` on `chip` for the layer's element-wise op `op` (Op::unit says whether
// it is a row reduction, core::kVectorReduction, or element-wise).
core::Op VectorOp(core::ChipId chip, const workloads::LayerOp& op, int64_t bytes);

class ChunkChains {
 public:
  ChunkChains(LoweringContext& ctx, int chunks);

  // One GeMM of m×n×k on every chip of the mesh, after chunk k's chain (side: after chunk k's
  // last compute op, not extending the chain).
  void Gemm(int chunk, const core::OpTags& tags, int64_t m, int64_t n, int64_t k,
            bool side = false);
  // One kVector op of `bytes` on every chip, extending chunk k's chain.
  void Vector(int chunk, const core::OpTags& tags, const workloads::LayerOp& op, int64_t bytes);
  // One collective per group (groups of one chip are skipped), after the chains of its members.
  void Collective(int chunk, const core::OpTags& tags, core::CollectiveKind kind,
                  const std::vector<core::GroupId>& groups,
                  const std::vector<std::vector<core::ChipId>>& members, int64_t bytes);
  // Sets every chip's frontier to one op after all of its chains and side ops.
  void Finish();

 private:
  std::vector<core::OpId> Deps(int chunk, int local) const;

  LoweringContext& ctx_;
  int chunks_;
  std::vector<std::vector<core::OpId>> cur_, last_compute_;  // [chunk][local]
  std::vector<std::vector<core::OpId>> side_;                // [local]
  core::NameId join_name_;
};

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_ATP_LAYER_LOWERING_H_
