// Shared by the layer plugins (atp/): one chain of per-chip ops on a mesh, in program order. The
// chain holds, per chip, the ops its next op follows; GeMMs and vector ops on every chip extend
// it, collectives on a group extend it for all members, and side GeMMs (dW) hang off the chip's
// last compute op without extending it. Chunked() runs a stretch once per chunk, each chunk from
// the same ops, and the chain then follows every chunk's end (a wait for all of them). Finish()
// joins every chain end and side op of a chip into the chip's one frontier op.
//
// Example (a linear layer of ATP's forward pass in c chunks, §4.1):
//   LayerChain chain(ctx);
//   chain.Chunked(c, [&](int k) {
//     chain.Gemm(LayerTags(ctx.graph, op, "gemm", k), t / c, n, k_dim);
//     chain.Collective(LayerTags(ctx.graph, op, "allreduce", k), core::CollectiveKind::kAllReduce,
//                      groups, members, bytes / c);
//   });
//   chain.Finish();
#ifndef MESHSIM_ALGORITHMS_ATP_LAYER_LOWERING_H_
#define MESHSIM_ALGORITHMS_ATP_LAYER_LOWERING_H_

#include <cstdint>
#include <functional>
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

// A kVector op of `bytes` on `chip` for the layer's element-wise op `op` (Op::unit says whether
// it is a row reduction, core::kVectorReduction, or element-wise).
core::Op VectorOp(core::ChipId chip, const workloads::LayerOp& op, int64_t bytes);

class LayerChain {
 public:
  explicit LayerChain(LoweringContext& ctx);

  // One GeMM of m×n×k on every chip of the mesh, after the chain (side: after the chip's last
  // compute op, not extending the chain).
  void Gemm(const core::OpTags& tags, int64_t m, int64_t n, int64_t k, bool side = false);
  // One kVector op of `bytes` on every chip, extending the chain.
  void Vector(const core::OpTags& tags, const workloads::LayerOp& op, int64_t bytes);
  // One collective per group (groups of one chip are skipped), after the chains of its members.
  void Collective(const core::OpTags& tags, core::CollectiveKind kind,
                  const std::vector<core::GroupId>& groups,
                  const std::vector<std::vector<core::ChipId>>& members, int64_t bytes);
  // body(k) for k = 0 .. chunks−1, each starting where the chain stands now; afterwards the
  // chain follows the ends of all of them.
  void Chunked(int chunks, const std::function<void(int)>& body);
  // Sets every chip's frontier to one op after its chain and side ops.
  void Finish();

 private:
  std::vector<core::OpId> Deps(int local) const;
  void Extend(int local, core::OpId id);

  LoweringContext& ctx_;
  std::vector<std::vector<core::OpId>> front_;  // [local]: what the next op follows
  std::vector<core::OpId> last_compute_;        // [local]
  std::vector<std::vector<core::OpId>> side_;   // [local]
  core::NameId join_name_;
};

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_ATP_LAYER_LOWERING_H_
