#include "sim/tuning.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "sim/run.h"

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

absl::Status MeasureAtpBandwidths(const RunOptions& o, algorithms::AtpProblem& p) {
  const int chips = o.mesh_chips();
  std::vector<algorithms::Mesh> meshes = p.meshes;
  if (meshes.empty()) {
    for (int d1 = chips; d1 >= 1; --d1) {
      if (chips % d1 == 0) meshes.push_back({d1, chips / d1});
    }
  }
  const int64_t tensor = p.batch * p.seq * p.hidden * p.element_bytes;
  for (const algorithms::Mesh& mesh : meshes) {
    algorithms::AtpCalibration& c = p.calibrated[mesh.ToString()];
    // Dimension 1 = the mesh's columns (strided groups of d1), dimension 2 = its rows.
    for (const int dim : {1, 2}) {
      const int d = dim == 1 ? mesh.rows : mesh.cols;
      if (d == 1) continue;
      RunOptions r = o;
      r.workload = "collective";
      r.collective = "allreduce";
      r.group = dim == 1 ? "col" : "row";
      r.bytes = tensor / (dim == 1 ? mesh.cols : mesh.rows);
      r.mesh_rows = mesh.rows;
      r.mesh_cols = mesh.cols;
      r.out.clear();
      r.trace.clear();
      r.keep_timeline = false;
      r.fold = true;  // Only the makespan is read.
      r.progress = RunOptions::Progress::kNone;
      r.warn = nullptr;
      MESHSIM_ASSIGN_OR_RETURN(const formats::RunRecord rec, Simulate(r));
      const double t = rec.Metric("makespan_s");
      if (!(t > 0)) {
        return absl::InternalError(absl::StrFormat(
            "ATP's measured bandwidths: the all-reduce over dimension %d of mesh %s took no time",
            dim, mesh.ToString()));
      }
      (dim == 1 ? c.b1_bytes_per_s : c.b2_bytes_per_s) = static_cast<double>(r.bytes) / t;
    }
  }
  return absl::OkStatus();
}

}  // namespace meshsim::sim
