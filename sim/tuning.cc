#include "sim/tuning.h"

#include "core/status_macros.h"

namespace meshsim::sim {

absl::StatusOr<workloads::ModelShape> RunModel(const RunOptions& o) {
  if (o.model == "custom") return workloads::CustomModel(o.hidden, o.heads, o.ffn, o.layers);
  return workloads::FindModel(o.model);
}

absl::StatusOr<algorithms::TuneProblem> MakeTuneProblem(const RunOptions& o) {
  algorithms::TuneProblem p;
  MESHSIM_ASSIGN_OR_RETURN(p.model, RunModel(o));
  p.batch = o.batch;
  p.seq = o.seq;
  p.chips = o.mesh_chips();
  p.pass = o.pass;
  p.dataflow = o.dataflow;
  p.element_bytes = o.system.chip.element_bytes;
  if (o.mesh_rows > 0) p.meshes = {algorithms::Mesh{o.mesh_rows, o.mesh_cols}};
  return p;
}

const algorithms::CostModel& RunCostModel() { return algorithms::CostModel::SimulationFitted(); }

absl::StatusOr<algorithms::AtpProblem> MakeAtpProblem(const RunOptions& o) {
  MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));
  algorithms::AtpProblem p;
  p.layers = model.layers;
  p.batch = o.batch;
  p.seq = o.seq;
  p.hidden = model.hidden;
  p.element_bytes = o.system.chip.element_bytes;
  if (o.mesh_rows > 0) p.meshes = {algorithms::Mesh{o.mesh_rows, o.mesh_cols}};
  return p;
}

}  // namespace meshsim::sim
