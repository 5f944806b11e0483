#include "sim/tune.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "algorithms/llm.h"
#include "core/status_macros.h"
#include "sim/report.h"
#include "sim/run.h"
#include "workloads/transformer.h"

namespace meshsim::sim {

namespace {

constexpr char kUsage[] =
    "usage: meshsim tune [run options] [--cost-model simulation-fitted|tpuv4-measured] "
    "[--validate] [--format table|json]\n\n"
    "The MeshSlice LLM autotuner (ISCA'25 §3.2): phase 1 picks each FC layer's dataflow, phase 2\n"
    "the mesh shape and each layer's slice count S with the analytical cost model. --validate\n"
    "also simulates every candidate mesh (tuned S) and, on the chosen mesh, every candidate S of\n"
    "every layer, and prints estimate beside simulation. Run options describe the workload\n"
    "(--model/--hidden, --chips, --batch, --seq, --pass, --dataflow, --system, --set; --mesh RxC\n"
    "tunes S on that mesh only); not allowed: --workload other than llm, --algorithm other than\n"
    "meshslice, --slices, --out, --trace.\n\n";

// The options `tune` takes itself; the rest go to ParseRunArgs.
struct TuneArgs {
  std::string cost_model = "simulation-fitted";
  std::string format = "table";
  bool validate = false;
  std::vector<std::string> run_args;
};

absl::StatusOr<TuneArgs> SplitTuneArgs(const std::vector<std::string>& args) {
  TuneArgs t;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool matched = false;
    const std::pair<const char*, std::string*> own[] = {{"cost-model", &t.cost_model},
                                                        {"format", &t.format}};
    for (const auto& [key, value] : own) {
      const std::string flag = absl::StrCat("--", key);
      if (a == flag) {
        if (i + 1 >= args.size()) {
          return absl::InvalidArgumentError(absl::StrCat(flag, ": missing value"));
        }
        *value = args[++i];
        matched = true;
      } else if (a.rfind(flag + "=", 0) == 0) {
        *value = a.substr(flag.size() + 1);
        matched = true;
      }
    }
    if (matched) continue;
    if (a == "--validate") {
      t.validate = true;
      continue;
    }
    t.run_args.push_back(a);
  }
  if (t.format != "table" && t.format != "json") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--format: '%s' is not allowed; allowed: table, json", t.format));
  }
  return t;
}

// Run options that make no sense for `tune`.
absl::Status CheckTuneRunOptions(const RawOptions& raw) {
  for (const auto& [key, value] : raw.values) {
    if (key == "workload" && value != "llm") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--workload: '%s' is not allowed with tune; the autotuner tunes --workload llm", value));
    }
    if (key == "algorithm" && value != "meshslice") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--algorithm: '%s' is not allowed with tune; the autotuner tunes meshslice", value));
    }
    if (key == "slices" || key == "out" || key == "trace") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s: '%s' is not allowed with tune (the tuner chooses S; it writes no files)", key,
          value));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<workloads::ModelShape> ModelOf(const RunOptions& o) {
  if (o.model == "custom") return workloads::CustomModel(o.hidden, o.heads, o.ffn, o.layers);
  return workloads::FindModel(o.model);
}

// Σ 2·M·N·K over the block's GeMMs of the run's pass.
absl::StatusOr<double> BlockFlops(const RunOptions& o, const workloads::ModelShape& model) {
  algorithms::BlockPlan plan;
  plan.model = model;
  plan.batch = o.batch;
  plan.seq = o.seq;
  plan.pass = o.pass;
  plan.dataflow = o.dataflow;
  MESHSIM_ASSIGN_OR_RETURN(const std::vector<algorithms::GemmProblem> gemms,
                           algorithms::BlockProblems(plan));
  double flops = 0;
  for (const algorithms::GemmProblem& g : gemms) {
    flops += 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  }
  return flops;
}

bool SameMesh(const algorithms::Mesh& a, const algorithms::Mesh& b) {
  return a.rows == b.rows && a.cols == b.cols;
}

std::vector<int> SlicesOf(const std::vector<algorithms::LayerChoice>& layers) {
  std::vector<int> s(layers.size(), 0);
  for (const algorithms::LayerChoice& l : layers) s[l.index] = l.slices;
  return s;
}

// One validation point: a configuration, its estimate and its simulated time.
struct Point {
  std::string kind;   // "mesh" or "slices".
  std::string layer;  // The varied layer (kind "slices").
  int layer_slices_varied = 0;
  algorithms::Mesh mesh;
  std::vector<int> slices;  // Per layer.
  double estimate_s = 0, simulated_s = 0;
  bool tuned = false, simulated_best = false;
};

// Marks the simulated optimum among points [begin, end) (first on ties).
void MarkSimulatedBest(std::vector<Point>& points, size_t begin, size_t end) {
  size_t best = begin;
  for (size_t i = begin; i < end; ++i) {
    if (points[i].simulated_s < points[best].simulated_s) best = i;
  }
  if (best < end) points[best].simulated_best = true;
}

absl::StatusOr<std::vector<Point>> Validate(const RunOptions& o,
                                            const algorithms::TuneResult& result,
                                            std::ostream& err) {
  RunOptions base = o;
  base.workload = "llm";
  base.algorithm = "meshslice";
  base.slices = 0;
  base.out.clear();
  base.trace.clear();
  std::map<std::pair<std::string, std::vector<int>>, double> cache;
  const auto simulate = [&](const algorithms::Mesh& mesh,
                            const std::vector<int>& slices) -> absl::StatusOr<double> {
    const auto key = std::make_pair(mesh.ToString(), slices);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    RunOptions r = base;
    r.mesh_rows = mesh.rows;
    r.mesh_cols = mesh.cols;
    r.keep_timeline = false;  // Only the makespan is read.
    err << "simulating mesh " << mesh.ToString() << ", S " << absl::StrJoin(slices, ",")
        << " ...\n";
    MESHSIM_ASSIGN_OR_RETURN(const RunRecord rec, SimulateWithLayerSlices(r, slices));
    const double t = rec.Metric("makespan_s");
    cache.emplace(key, t);
    return t;
  };

  std::vector<Point> points;
  // Figure 13: every valid mesh at its tuned S.
  for (const algorithms::MeshChoice& mc : result.meshes) {
    if (!mc.valid) continue;
    Point p;
    p.kind = "mesh";
    p.mesh = mc.mesh;
    p.slices = SlicesOf(mc.layers);
    p.estimate_s = mc.estimate_s;
    p.tuned = SameMesh(mc.mesh, result.mesh);
    MESHSIM_ASSIGN_OR_RETURN(p.simulated_s, simulate(p.mesh, p.slices));
    points.push_back(std::move(p));
  }
  MarkSimulatedBest(points, 0, points.size());
  // Figure 14: on the chosen mesh, each layer's candidate S, the others at their tuned S.
  const std::vector<int> tuned = result.LayerSlices();
  for (const algorithms::LayerChoice& layer : result.layers) {
    const size_t begin = points.size();
    for (const algorithms::TuneCandidate& c : result.candidates) {
      if (!SameMesh(c.mesh, result.mesh) || c.layer != layer.index) continue;
      Point p;
      p.kind = "slices";
      p.layer = layer.name;
      p.layer_slices_varied = c.slices;
      p.mesh = result.mesh;
      p.slices = tuned;
      p.slices[layer.index] = c.slices;
      p.estimate_s = result.estimate_s - layer.estimate_s + c.estimate_s;
      p.tuned = c.slices == layer.slices;
      MESHSIM_ASSIGN_OR_RETURN(p.simulated_s, simulate(p.mesh, p.slices));
      points.push_back(std::move(p));
    }
    MarkSimulatedBest(points, begin, points.size());
  }
  return points;
}

// FLOP utilization of one block taking `seconds`.
double Utilization(double flops, const RunOptions& o, double seconds) {
  const double capacity = static_cast<double>(o.chips) * o.system.chip.PeakFlops() * seconds;
  return capacity > 0 ? flops / capacity : 0;
}

void PrintJson(const algorithms::TuneResult& r, const std::vector<Point>* points, double flops,
               const RunOptions& o, std::ostream& out) {
  out << "{\"mesh\": " << JsonString(r.mesh.ToString())
      << ", \"estimate_s\": " << JsonNumber(r.estimate_s) << ", \"layers\": [";
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const algorithms::LayerChoice& l = r.layers[i];
    out << (i ? ", " : "") << "{\"name\": " << JsonString(l.name)
        << ", \"dataflow\": " << JsonString(algorithms::ToString(l.stationary))
        << ", \"slices\": " << l.slices << "}";
  }
  out << "]";
  if (points != nullptr) {
    out << ", \"validation\": [";
    for (size_t i = 0; i < points->size(); ++i) {
      const Point& p = (*points)[i];
      out << (i ? ", " : "") << "{\"kind\": " << JsonString(p.kind)
          << ", \"mesh\": " << JsonString(p.mesh.ToString());
      if (p.kind == "slices") out << ", \"layer\": " << JsonString(p.layer);
      out << ", \"slices\": [" << absl::StrJoin(p.slices, ", ") << "]"
          << ", \"estimate_s\": " << JsonNumber(p.estimate_s)
          << ", \"simulated_s\": " << JsonNumber(p.simulated_s)
          << ", \"estimated_utilization\": " << JsonNumber(Utilization(flops, o, p.estimate_s))
          << ", \"simulated_utilization\": " << JsonNumber(Utilization(flops, o, p.simulated_s))
          << ", \"tuned\": " << (p.tuned ? "true" : "false")
          << ", \"simulated_best\": " << (p.simulated_best ? "true" : "false") << "}";
    }
    out << "]";
  }
  out << "}\n";
}

std::string Ms(double s) { return absl::StrFormat("%.3f", s * 1e3); }
std::string Pct(double u) { return absl::StrFormat("%.1f%%", u * 100); }

void PrintTable(const algorithms::TuneResult& r, const std::vector<Point>* points, double flops,
                const RunOptions& o, std::ostream& out) {
  out << absl::StrFormat(
      "MeshSlice autotuner: model %s, %d chips, batch %d, seq %d, pass %s, cost model %s\n",
      o.model, o.chips, o.batch, o.seq, o.pass, r.cost_model);
  out << absl::StrFormat(
      "chosen mesh %s: estimate %s ms per block (FC layers), est. FLOP utilization %s\n\n",
      r.mesh.ToString(), Ms(r.estimate_s), Pct(Utilization(flops, o, r.estimate_s)));
  out << absl::StrFormat("%-10s %-8s %4s %12s\n", "layer", "dataflow", "S", "estimate_ms");
  for (const algorithms::LayerChoice& l : r.layers) {
    out << absl::StrFormat("%-10s %-8s %4d %12s\n", l.name, algorithms::ToString(l.stationary),
                           l.slices, Ms(l.estimate_s));
  }
  out << absl::StrFormat("\n%-8s %-14s %12s %10s\n", "mesh", "S per layer", "estimate_ms",
                         "est_util");
  for (const algorithms::MeshChoice& mc : r.meshes) {
    if (!mc.valid) {
      out << absl::StrFormat("%-8s not valid: %s\n", mc.mesh.ToString(), mc.reason);
      continue;
    }
    out << absl::StrFormat("%-8s %-14s %12s %10s%s\n", mc.mesh.ToString(),
                           absl::StrJoin(SlicesOf(mc.layers), ","), Ms(mc.estimate_s),
                           Pct(Utilization(flops, o, mc.estimate_s)),
                           SameMesh(mc.mesh, r.mesh) ? "  <- chosen" : "");
  }
  if (points == nullptr) return;
  out << "\nvalidation: cost-model estimate vs simulation (one block, FC layers; utilization of "
         "the simulated system's peak)\n";
  out << absl::StrFormat("%-6s %-8s %-9s %-12s %12s %12s %9s %9s %8s  %s\n", "kind", "mesh",
                         "layer", "S", "estimate_ms", "simulated_ms", "est_util", "sim_util",
                         "sim/est", "marks");
  for (const Point& p : *points) {
    std::vector<std::string> marks;
    if (p.tuned) marks.push_back("tuned");
    if (p.simulated_best) marks.push_back("sim best");
    out << absl::StrFormat(
        "%-6s %-8s %-9s %-12s %12s %12s %9s %9s %8.3f  %s\n", p.kind, p.mesh.ToString(),
        p.kind == "slices" ? p.layer : "-",
        p.kind == "slices" ? absl::StrCat(p.layer_slices_varied) : absl::StrJoin(p.slices, ","),
        Ms(p.estimate_s), Ms(p.simulated_s), Pct(Utilization(flops, o, p.estimate_s)),
        Pct(Utilization(flops, o, p.simulated_s)), p.simulated_s / p.estimate_s,
        absl::StrJoin(marks, ", "));
  }
  // Does the model's choice match the simulated optimum, per group?
  out << "\n";
  const auto verdict = [&](const std::string& what, const std::string& kind,
                           const std::string& layer) {
    const Point *tuned = nullptr, *best = nullptr;
    for (const Point& p : *points) {
      if (p.kind != kind || p.layer != layer) continue;
      if (p.tuned) tuned = &p;
      if (p.simulated_best) best = &p;
    }
    if (tuned == nullptr || best == nullptr) return;
    const std::string choice =
        kind == "mesh" ? tuned->mesh.ToString() : absl::StrCat("S=", tuned->layer_slices_varied);
    const std::string sim =
        kind == "mesh" ? best->mesh.ToString() : absl::StrCat("S=", best->layer_slices_varied);
    out << absl::StrFormat(
        "%-18s model picks %-6s simulated optimum %-6s %s\n", what, choice, sim,
        tuned == best ? "(agree)"
                      : absl::StrFormat("(differ: tuned choice %.1f%% slower)",
                                        (tuned->simulated_s / best->simulated_s - 1) * 100));
  };
  verdict("mesh shape:", "mesh", "");
  for (const algorithms::LayerChoice& l : r.layers) {
    verdict(absl::StrCat("S of ", l.name, ":"), "slices", l.name);
  }
}

}  // namespace

const algorithms::CostModel& RunCostModel() { return algorithms::CostModel::SimulationFitted(); }

absl::StatusOr<algorithms::TuneProblem> MakeTuneProblem(const RunOptions& o) {
  algorithms::TuneProblem p;
  MESHSIM_ASSIGN_OR_RETURN(p.model, ModelOf(o));
  p.batch = o.batch;
  p.seq = o.seq;
  p.chips = o.mesh_chips();
  p.pass = o.pass;
  p.dataflow = o.dataflow;
  p.element_bytes = o.system.chip.element_bytes;
  if (o.mesh_rows > 0) p.meshes = {algorithms::Mesh{o.mesh_rows, o.mesh_cols}};
  return p;
}

absl::Status Tune(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  MESHSIM_ASSIGN_OR_RETURN(const TuneArgs targs, SplitTuneArgs(args));
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::CostModel* cost_model,
                           algorithms::CostModel::Find(targs.cost_model));
  MESHSIM_ASSIGN_OR_RETURN(const RawOptions raw, ParseRunArgs(targs.run_args, "tune"));
  if (raw.help) {
    out << kUsage << RunHelp();
    return absl::OkStatus();
  }
  MESHSIM_RETURN_IF_ERROR(CheckTuneRunOptions(raw));
  MESHSIM_ASSIGN_OR_RETURN(const RunOptions o, ResolveRunOptions(raw));
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::TuneProblem problem, MakeTuneProblem(o));
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::TuneResult result,
                           algorithms::Autotune(problem, *cost_model));
  MESHSIM_ASSIGN_OR_RETURN(const double flops, BlockFlops(o, problem.model));

  std::vector<Point> points;
  if (targs.validate) {
    MESHSIM_ASSIGN_OR_RETURN(points, Validate(o, result, err));
  }
  const std::vector<Point>* pts = targs.validate ? &points : nullptr;
  if (targs.format == "json") {
    PrintJson(result, pts, flops, o, out);
  } else {
    PrintTable(result, pts, flops, o, out);
  }
  return absl::OkStatus();
}

}  // namespace meshsim::sim
