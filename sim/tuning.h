// The tuners' problems from a run's options, built in one place for `meshsim run` (--mesh auto,
// --slices auto) and `meshsim tune`: the model of an llm/layer run, the MeshSlice autotuner's
// TuneProblem and the cost model runs use, and ATP's AtpProblem.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(algorithms::TuneProblem p, MakeTuneProblem(options));
//   MESHSIM_ASSIGN_OR_RETURN(algorithms::TuneResult r, algorithms::Autotune(p, RunCostModel()));
#ifndef MESHSIM_SIM_TUNING_H_
#define MESHSIM_SIM_TUNING_H_

#include "absl/status/statusor.h"
#include "algorithms/autotune/atp_tuner.h"
#include "algorithms/autotune/autotuner.h"
#include "algorithms/autotune/cost_model.h"
#include "sim/options.h"
#include "workloads/transformer.h"

namespace meshsim::sim {

// The model of an llm or layer run: a built-in one (--model), or the custom shape of --hidden,
// --heads, --ffn, --layers. NotFound for an unknown name.
absl::StatusOr<workloads::ModelShape> RunModel(const RunOptions& options);

// The autotuner's problem for an llm run's options: model, batch, seq, chips, pass, dataflow,
// element size; meshes = {mesh_rows × mesh_cols} when the run fixes the mesh, else the tuner's
// candidates.
absl::StatusOr<algorithms::TuneProblem> MakeTuneProblem(const RunOptions& options);

// The cost model `run` uses for --mesh auto / --slices auto with meshslice on llm: the
// simulation-fitted set, whose constants the tpuv4 preset is calibrated to.
const algorithms::CostModel& RunCostModel();

// ATP's search problem for a run's options (§3.5: layers, batch, seq, hidden, element size);
// meshes = {mesh_rows × mesh_cols} when the run fixes the mesh, else every DeviceMesh(d1, d2).
// Calibrated bandwidths (`tune --atp-bandwidth`) are the caller's to add.
absl::StatusOr<algorithms::AtpProblem> MakeAtpProblem(const RunOptions& options);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_TUNING_H_
