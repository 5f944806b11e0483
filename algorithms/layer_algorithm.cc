#include "algorithms/layer_algorithm.h"

#include <vector>

#include "core/status_macros.h"

namespace meshsim::algorithms {

absl::Status LowerLayer(const LayerProblem& p, const LayerAlgorithm& algorithm, const Mesh& mesh,
                        core::OpGraph& graph) {
  MESHSIM_RETURN_IF_ERROR(algorithm.Check(p, mesh));
  LoweringContext ctx{graph, mesh, p.shape.element_bytes, 0,
                      std::vector<core::OpId>(mesh.MachineChips())};
  return algorithm.Lower(p, ctx);
}

}  // namespace meshsim::algorithms
