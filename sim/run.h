// Runs one scenario (system + workload + strategy) and returns its RunRecord: the resolved
// configuration, the timeline, dependency edges, resource counters and the metrics.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(RunOptions opt, ResolveRunOptions(raw));
//   MESHSIM_ASSIGN_OR_RETURN(RunRecord rec, Simulate(opt));
//   double makespan = rec.Metric("makespan_s");
#ifndef MESHSIM_SIM_RUN_H_
#define MESHSIM_SIM_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/mesh.h"
#include "core/op_graph.h"
#include "formats/run_record.h"
#include "sim/options.h"

namespace meshsim::sim {

// Lowers the scenario's workload without simulating it (milliseconds), so that plugin
// preconditions (mesh divides the matrices, S allowed, square mesh for Cannon) fail before any
// run of a batch starts. Same errors as Simulate's lowering.
absl::Status CheckRun(const RunOptions& options);

// Errors: Unimplemented for workloads this build cannot run yet; Internal with a hang report if
// the simulation stalls.
absl::StatusOr<formats::RunRecord> Simulate(const RunOptions& options);

// Simulates a graph built by the caller (e.g. `meshsim reshard`) on the machine of `options`;
// `mesh` is passed to BuildMachine (torus extents). The record's config is options.Resolved();
// its metrics are the engine's (makespan_s, ops, events, fingerprint, ...).
absl::StatusOr<formats::RunRecord> SimulateGraph(const RunOptions& options,
                                                 const algorithms::Mesh& mesh,
                                                 const core::OpGraph& graph);

// Simulate with the llm workload's per-layer MeshSlice slice counts fixed to
// `layer_slices` (indexed by FcLayer::index) instead of options.slices; the record's config
// "slices" shows them ("8,4,8,4").
absl::StatusOr<formats::RunRecord> SimulateWithLayerSlices(const RunOptions& options,
                                                           const std::vector<int>& layer_slices);

// The logical mesh a run would use ("32x8"): the given one, the autotuner's for MeshSlice on
// llm with --mesh auto, a ring of every chip for 1D algorithms, else the squarest.
absl::StatusOr<std::string> ResolvedMesh(const RunOptions& options);

// The DeviceMesh of --workload layer (not yet placed): the given --mesh, else for `auto`: atp on
// the mesh of ATP's search (Eq. 2–4 on the run's hierarchical communication matrix, as `meshsim
// tune --algorithm atp` without --atp-bandwidth; algorithms/autotune/atp_tuner.h), megatron on
// DeviceMesh(N, 1) (N = the mesh's chips) and tp2d on q×(d·q) with the largest q such that q²
// divides N. The one place where `--mesh auto` for layer plugins is decided (in
// sim/workloads/layer.cc). Cost for atp: one
// topology build and O(N²) routed flows per matrix layer.
absl::StatusOr<algorithms::Mesh> ResolveLayerMesh(const RunOptions& options);

// The determinism fingerprint of the last run's op completion order, kept in the record as the
// metric "fingerprint" split into two exact 32-bit halves.
uint64_t Fingerprint(const formats::RunRecord& record);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_RUN_H_
