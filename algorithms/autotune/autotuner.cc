#include "algorithms/autotune/autotuner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "algorithms/llm.h"
#include "algorithms/registry.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

constexpr int kBlock = 8;  // MeshSlice's blocked slicing on TPUs (Algorithm 2).

// The problems of one FC layer (its GeMMs of the tuned pass), in execution order.
struct LayerProblems {
  LayerChoice base;  // name, index, stationary.
  FcLayer layer;
  std::vector<GemmProblem> gemms;
};

}  // namespace

std::vector<int> TuneResult::LayerSlices() const {
  std::vector<int> s(layers.size(), 0);
  for (const LayerChoice& l : layers) {
    if (l.index >= 0 && l.index < static_cast<int>(s.size())) s[l.index] = l.slices;
  }
  return s;
}

const MeshChoice* TuneResult::Find(const Mesh& m) const {
  for (const MeshChoice& c : meshes) {
    if (c.mesh.rows == m.rows && c.mesh.cols == m.cols) return &c;
  }
  return nullptr;
}

std::vector<Mesh> MeshCandidates(int chips) {
  std::vector<Mesh> meshes;
  if (chips < 16 || chips % 4 != 0) return meshes;
  int r = 4, c = chips / 4;
  while (c >= 4) {
    meshes.push_back({r, c});
    if (c % 2 != 0) break;
    r *= 2;
    c /= 2;
  }
  return meshes;
}

const std::vector<int>& SliceCountList() {
  static const auto* v = new std::vector<int>{3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40};
  return *v;
}

int64_t SlicedDimension(const FcLayer& l, Stationary s) {
  switch (s) {
    case Stationary::kY:
      return l.in;
    case Stationary::kX:
      return l.out;
    case Stationary::kW:
      break;
  }
  return l.tokens;
}

std::vector<int> SliceCandidates(const FcLayer& layer, Stationary s, const Mesh& mesh) {
  std::vector<int> out = {1};
  const int64_t d = SlicedDimension(layer, s);
  const int64_t unit = std::lcm(int64_t{mesh.rows}, int64_t{mesh.cols}) * kBlock;
  if (d <= 0 || d % unit != 0) return out;
  const int64_t q = d / unit;
  for (int x : SliceCountList()) {
    if (q % x == 0) out.push_back(x);
  }
  return out;
}

namespace {

// Phase 1: the block's GeMMs (Table 1 per layer's stationary choice), grouped by layer.
absl::StatusOr<std::vector<LayerProblems>> BlockLayerProblems(const TuneProblem& problem) {
  BlockPlan plan;
  plan.model = problem.model;
  plan.batch = problem.batch;
  plan.seq = problem.seq;
  plan.pass = problem.pass;
  plan.dataflow = problem.dataflow;
  plan.element_bytes = problem.element_bytes;
  MESHSIM_ASSIGN_OR_RETURN(const std::vector<GemmProblem> gemms, BlockProblems(plan));
  std::vector<LayerProblems> layers;
  for (const workloads::FcLayerShape& s :
       workloads::BlockFcLayers(problem.model, problem.batch, problem.seq)) {
    LayerProblems lp;
    lp.layer = {s.name, s.index, s.tokens, s.in, s.out, s.column_parallel};
    lp.base.name = s.name;
    lp.base.index = s.index;
    if (problem.dataflow == "auto") {
      lp.base.stationary = AutoStationary(lp.layer);
    } else {
      MESHSIM_ASSIGN_OR_RETURN(lp.base.stationary, ParseStationary(problem.dataflow));
    }
    for (const GemmProblem& g : gemms) {
      if (g.layer.index == s.index) lp.gemms.push_back(g);
    }
    layers.push_back(std::move(lp));
  }
  return layers;
}

// The fastest valid slice count of one layer on `mesh` by the cost model; every valid one is
// added to `candidates`. None when no slice count is valid: then, if not even S = 1 is (the mesh
// cannot shard the layer), `reason` says why.
std::optional<LayerChoice> TuneLayer(const LayerProblems& lp, const Mesh& mesh,
                                     const Algorithm& meshslice, const CostModel& cost_model,
                                     int element_bytes, std::vector<TuneCandidate>& candidates,
                                     std::string& reason) {
  LayerChoice choice = lp.base;
  bool any = false;
  for (int s : SliceCandidates(lp.layer, lp.base.stationary, mesh)) {
    absl::Status ok = absl::OkStatus();
    for (const GemmProblem& g : lp.gemms) {
      ok = meshslice.Check(g, mesh, s);
      if (!ok.ok()) {
        if (s == 1) reason = absl::StrCat(g.label, ": ", ok.message());
        break;
      }
    }
    if (!ok.ok()) {
      if (s == 1) break;  // Not even shardable: the mesh is out.
      continue;
    }
    double t = 0;
    for (const GemmProblem& g : lp.gemms) {
      t += cost_model.MeshSliceTime(g, mesh, s, element_bytes).total_s;
    }
    candidates.push_back({mesh, lp.base.index, lp.base.name, s, t});
    if (!any || t < choice.estimate_s) {
      choice.slices = s;
      choice.estimate_s = t;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return choice;
}

// Phase 2 for one mesh: every layer tuned; invalid when a layer has no valid slice count.
MeshChoice TuneMesh(const Mesh& mesh, const std::vector<LayerProblems>& layers,
                    const Algorithm& meshslice, const CostModel& cost_model, int element_bytes,
                    std::vector<TuneCandidate>& candidates) {
  MeshChoice mc;
  mc.mesh = mesh;
  mc.valid = true;
  for (const LayerProblems& lp : layers) {
    std::optional<LayerChoice> choice =
        TuneLayer(lp, mesh, meshslice, cost_model, element_bytes, candidates, mc.reason);
    if (!choice) {
      mc.valid = false;
      break;
    }
    mc.estimate_s += choice->estimate_s;
    mc.layers.push_back(*choice);
  }
  if (!mc.valid) mc.layers.clear();
  return mc;
}

// Each valid mesh's strict estimate: its tuned layers under the cost model without the means
// (of concurrent collectives, of first and last steps) that decide near-ties.
void AddStrictEstimates(const std::vector<LayerProblems>& layers, const CostModel& cost_model,
                        int element_bytes, std::vector<MeshChoice>& meshes) {
  CostConstants strict_constants = cost_model.constants();
  strict_constants.mean_of_concurrent = false;
  strict_constants.mean_of_first_last = false;
  const CostModel strict(std::move(strict_constants));
  for (MeshChoice& mc : meshes) {
    if (!mc.valid) continue;
    for (size_t i = 0; i < mc.layers.size(); ++i) {  // A valid mesh has every layer, in order.
      for (const GemmProblem& g : layers[i].gemms) {
        mc.strict_estimate_s +=
            strict.MeshSliceTime(g, mc.mesh, mc.layers[i].slices, element_bytes).total_s;
      }
    }
  }
}

// The mesh of the lowest estimate, or among the meshes within kNearTie of it the one of the
// lowest strict estimate (banner); null when no mesh is valid.
const MeshChoice* BestMesh(const std::vector<MeshChoice>& meshes, bool& near_tie) {
  const MeshChoice* best = nullptr;
  for (const MeshChoice& mc : meshes) {
    if (mc.valid && (best == nullptr || mc.estimate_s < best->estimate_s)) best = &mc;
  }
  if (best == nullptr) return nullptr;
  const MeshChoice* lowest = best;
  for (const MeshChoice& mc : meshes) {
    if (mc.valid && mc.estimate_s <= lowest->estimate_s * (1 + kNearTie) &&
        mc.strict_estimate_s < best->strict_estimate_s) {
      best = &mc;
    }
  }
  near_tie = best != lowest;
  return best;
}

}  // namespace

absl::StatusOr<TuneResult> Autotune(const TuneProblem& problem, const CostModel& cost_model) {
  const std::vector<Mesh> meshes =
      problem.meshes.empty() ? MeshCandidates(problem.chips) : problem.meshes;
  if (meshes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--chips: %d has no autotuner mesh shape; the tuner needs chips = 4·C with C >= 4 "
        "(e.g. 16, 64, 256), or give --mesh RxC",
        problem.chips));
  }
  MESHSIM_ASSIGN_OR_RETURN(const std::vector<LayerProblems> layers, BlockLayerProblems(problem));
  // The plugin whose preconditions decide which (mesh, S) are valid.
  MESHSIM_ASSIGN_OR_RETURN(const AlgorithmInfo* info, FindAlgorithm("meshslice"));
  const std::unique_ptr<Algorithm> meshslice = info->make();

  TuneResult result;
  result.cost_model = cost_model.constants().name;
  for (const Mesh& mesh : meshes) {
    result.meshes.push_back(
        TuneMesh(mesh, layers, *meshslice, cost_model, problem.element_bytes, result.candidates));
  }
  if (std::none_of(result.meshes.begin(), result.meshes.end(),
                   [](const MeshChoice& mc) { return mc.valid; })) {
    return absl::InvalidArgumentError(
        absl::StrCat("tune: no candidate mesh can shard every FC layer; ",
                     meshes.front().ToString(), ": ", result.meshes.front().reason));
  }
  AddStrictEstimates(layers, cost_model, problem.element_bytes, result.meshes);
  const MeshChoice* best = BestMesh(result.meshes, result.near_tie);
  result.mesh = best->mesh;
  result.estimate_s = best->estimate_s;
  result.layers = best->layers;
  return result;
}

}  // namespace meshsim::algorithms
