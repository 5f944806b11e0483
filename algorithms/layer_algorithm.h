// The second plugin interface: lower one whole transformer layer (workloads/layer.h, forward then
// backward) on a placed device mesh into ops. Used by `--workload layer` with the layer plugins
// (`atp`, `megatron`, `tp2d`); the GeMM plugins of algorithm.h lower one distributed GeMM each.
//
// Conventions are algorithm.h's: chips only through ctx.mesh (Chip, At, Row, Col, All), the
// per-physical-chip frontier in, one frontier op per chip out. A layer plugin emits
//   • kGemm ops for the FC GeMMs and for the attention core (a batch of `count` per-head GeMMs
//     m×n×k is one kGemm of (count·m)×n×k: the same flops, A and C of the right size, and the
//     shared-B reads of a batched kernel — each head's B is re-read per m-tile of that head),
//   • kVector ops for the element-wise ops (bytes = the local shard of the tensor),
//   • kCollective ops for the communication its sharding needs,
// tagged with the op's label ("qkv.fwd.gemm", "qkv.fwd.allreduce", …), FC index (layer tag, −1
// for non-FC ops) and pass.
//
// Example:
//   LayerProblem p{.shape = workloads::ShapeOf(m4, 4, 2048, 2), .chunks = 2};
//   MESHSIM_RETURN_IF_ERROR(algo.Check(p, mesh));
//   MESHSIM_RETURN_IF_ERROR(LowerLayer(p, algo, mesh, graph));
#ifndef MESHSIM_ALGORITHMS_LAYER_ALGORITHM_H_
#define MESHSIM_ALGORITHMS_LAYER_ALGORITHM_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "algorithms/mesh.h"
#include "core/op_graph.h"
#include "workloads/layer.h"

namespace meshsim::algorithms {

// Which ops of the layer a Lower call emits. A pipeline stage (algorithms/pipeline/) lowers a
// microbatch's forward and its backward at different points of its schedule, and with
// backward-weight delaying (MLSys'23 §4) the backward in two parts: the data part (every
// backward op but the FC weight-gradient GeMMs — the attention core's dK and dV are activation
// gradients and stay in it) and then the weight part (the FC dW GeMMs and any communication of
// theirs).
enum class LayerPart { kAll, kForward, kBackward, kBackwardData, kBackwardWeight };

// Whether layer op `op` belongs to `part`.
bool InPart(const workloads::LayerOp& op, LayerPart part);

struct LayerProblem {
  workloads::LayerShape shape;
  // ATP chunk-based overlap (§4.1): the batch split into `chunks` independent pieces whose
  // computation and communication interleave. 1 = no chunking. Must divide shape.batch. 0 = the
  // plugin's `chunks` parameter (its factory's, default 1): how `meshsim run` sets it.
  int chunks = 0;
  LayerPart part = LayerPart::kAll;
};

class LayerAlgorithm {
 public:
  virtual ~LayerAlgorithm() = default;
  // Preconditions on the shape, chunk count and mesh; InvalidArgument with one line naming the
  // key, the value and what is allowed (e.g. "atp: --mesh 3x1: d1 = 3 must divide heads 16").
  virtual absl::Status Check(const LayerProblem& p, const Mesh& mesh) const = 0;
  // Appends the ops of p.part of the layer (forward, then backward), each after the frontier of
  // its chip. Called only after Check succeeded.
  virtual absl::Status Lower(const LayerProblem& p, LoweringContext& ctx) const = 0;
  // The sharding spec (algorithms/reshard/spec.h notation) on `mesh` of the activation tensor
  // [batch, seq, hidden] that enters and leaves the layer, e.g. "RRS1" when every device holds
  // all tokens and the hidden dimension is split over mesh columns. What a pipeline reshards
  // between stages. InvalidArgument when the layout is not such a spec.
  virtual absl::StatusOr<std::string> BoundarySpec(const Mesh& mesh) const = 0;
};

// Checks and lowers one layer on `mesh` into `graph` with a fresh frontier.
absl::Status LowerLayer(const LayerProblem& p, const LayerAlgorithm& algorithm, const Mesh& mesh,
                        core::OpGraph& graph);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_LAYER_ALGORITHM_H_
