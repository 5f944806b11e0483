#include "algorithms/layer_algorithm.h"

#include <vector>

#include "core/status_macros.h"

namespace meshsim::algorithms {

bool InPart(const workloads::LayerOp& op, LayerPart part) {
  const bool weight = op.kind == workloads::LayerOpKind::kFc && op.pass == core::Pass::kBwdWeight;
  switch (part) {
    case LayerPart::kAll:
      return true;
    case LayerPart::kForward:
      return op.pass == core::Pass::kFwd;
    case LayerPart::kBackward:
      return op.pass != core::Pass::kFwd;
    case LayerPart::kBackwardData:
      return op.pass != core::Pass::kFwd && !weight;
    case LayerPart::kBackwardWeight:
      return weight;
  }
  return false;
}

absl::Status LowerLayer(const LayerProblem& p, const LayerAlgorithm& algorithm, const Mesh& mesh,
                        core::OpGraph& graph) {
  MESHSIM_RETURN_IF_ERROR(algorithm.Check(p, mesh));
  LoweringContext ctx{graph, mesh, p.shape.element_bytes, 0,
                      std::vector<core::OpId>(mesh.MachineChips())};
  return algorithm.Lower(p, ctx);
}

}  // namespace meshsim::algorithms
