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

// ATP §5.3's calibration, on the simulated machine (AtpMatrix::kMeasured): for every candidate
// DeviceMesh(d1, d2) of `problem` (its meshes, else every d1 | N), B2 and B1 are the algorithm
// bandwidths S/t of the all-reduces ATP runs over each dimension — every group of the dimension
// at once (`--workload collective --collective allreduce --group row|col`), S the per-device
// hidden-sized tensor it reduces there (b·s·h·e/d1 over dimension 2, b·s·h·e/d2 over dimension
// 1), t the simulated time on the run's system and stack — written to problem.calibrated.
// Cost: two collective simulations per mesh.
absl::Status MeasureAtpBandwidths(const RunOptions& options, algorithms::AtpProblem& problem);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_TUNING_H_
