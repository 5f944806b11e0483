#include "cli/tune.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "algorithms/autotune/atp_tuner.h"
#include "algorithms/autotune/cost_model.h"
#include "algorithms/llm.h"
#include "boost/program_options.hpp"
#include "cli/report.h"
#include "core/did_you_mean.h"
#include "core/status_macros.h"
#include "sim/machine.h"
#include "sim/run.h"
#include "sim/tuning.h"
#include "workloads/transformer.h"

namespace meshsim::sim::cli {

namespace {

// `meshsim tune --help` after its first line (TuneUsage()).
constexpr char kUsageBody[] =
    "The MeshSlice LLM autotuner (ISCA'25 §3.2): phase 1 picks each FC layer's dataflow, phase 2\n"
    "the mesh shape and each layer's slice count S with the analytical cost model. --validate\n"
    "also simulates every candidate mesh (tuned S) and, on the chosen mesh, every candidate S of\n"
    "every layer, and prints estimate beside simulation. Run options describe the workload\n"
    "(--model/--hidden, --chips, --batch, --seq, --pass, --dataflow, --system, --set; --mesh RxC\n"
    "tunes S on that mesh only); not allowed: --workload other than llm, --algorithm other than\n"
    "meshslice, --slices, --out, --trace.\n\n"
    "meshsim tune --algorithm atp [run options] [--atp-bandwidth D1xD2:B1,B2[;...]]\n"
    "[--atp-matrix hierarchical|one-level|measured] [--validate] [--format table|json]\n\n"
    "ATP's mesh search (ATP §3.4-3.5, docs/atp.md): derives the hierarchical communication\n"
    "matrix of the system's topology over --chips chips, then for every DeviceMesh(d1, d2) the\n"
    "all-reduce bandwidths B'1, B'2 (Eq. 3), B1, B2 (Eq. 4) and T_comm (Eq. 2) of the model's\n"
    "L layers (--model, --batch, default 4, --seq), and picks the least T_comm. --mesh D1xD2\n"
    "evaluates that mesh only; --atp-bandwidth gives calibrated B1, B2 in GB/s per mesh (then\n"
    "only those meshes are candidates; B2 may be omitted when D2 = 1). --atp-matrix one-level\n"
    "reads the machine as one fully connected layer (B'1 = B'2 = the least group bandwidth, as\n"
    "ATP §5.3 reads IC3/IC4); --atp-matrix measured simulates every mesh's all-reduces over\n"
    "each dimension on the machine and uses those bandwidths (as §5.3 calibrated IC1); default\n"
    "hierarchical. --validate simulates one\n"
    "layer of each mesh (--workload layer --algorithm atp --mesh D1xD2). Not allowed with atp:\n"
    "--workload other than layer, --slices, --out, --trace, --placement, --cost-model.\n\n";

std::string TuneUsage() {
  return absl::StrCat("usage: meshsim tune [run options] [--cost-model ", CostModelChoices(),
                      "] [--validate] [--format table|json]\n\n", kUsageBody);
}

// The options `tune` takes itself, parsed with the run options by one parser.
struct TuneArgs {
  std::string cost_model = "simulation-fitted";
  bool cost_model_given = false;
  std::string format = "table";
  bool validate = false;
  RawOptions raw;                          // The run options.
  bool atp = false;                        // --algorithm atp: ATP's mesh search.
  std::vector<std::string> atp_bandwidth;  // --atp-bandwidth values, in order.
  std::string atp_matrix;                  // --atp-matrix, "" when not given.
};

}  // namespace

std::string CostModelChoices(const std::string& separator) {
  return absl::StrJoin(algorithms::CostModel::Names(), separator);
}

boost::program_options::options_description TuneDescription() {
  namespace po = boost::program_options;
  po::options_description own("Options of `meshsim tune`");
  // clang-format off
  own.add_options()
      ("cost-model", po::value<std::string>(),
       absl::StrCat(CostModelChoices(", "), " (default simulation-fitted)").c_str())
      ("validate", po::bool_switch(), "also simulate every candidate and print both")
      ("atp-bandwidth", po::value<std::vector<std::string>>()->composing(),
       "--algorithm atp: calibrated all-reduce bandwidths D1xD2:B1,B2 in GB/s (repeatable)")
      ("atp-matrix", po::value<std::string>(),
       "--algorithm atp: hierarchical (the matrix derived from the topology, default), "
       "one-level (one fully connected layer, B'1 = B'2 = GroupBW: ATP §5.3's reading of IC3/IC4), "
       "measured (every mesh's B1, B2 simulated on the machine: §5.3's calibration of IC1)");
  // clang-format on
  return own;
}

namespace {

absl::StatusOr<TuneArgs> ParseTuneArgs(const std::vector<std::string>& args) {
  const boost::program_options::options_description own = TuneDescription();
  TuneArgs t;
  MESHSIM_ASSIGN_OR_RETURN(t.raw, ParseRunArgs(args, "tune", &own));
  for (const auto& [key, value] : t.raw.own) {
    if (key == "cost-model") {
      t.cost_model = value;
      t.cost_model_given = true;
    }
    if (key == "validate") t.validate = true;
    if (key == "atp-bandwidth") t.atp_bandwidth.push_back(value);
    if (key == "atp-matrix") t.atp_matrix = value;
  }
  // --algorithm atp selects ATP's search; any other value stays a run option.
  for (const auto& [key, value] : t.raw.values) {
    if (key == "algorithm" && value == "atp") t.atp = true;
  }
  // --format is a run option (table, json, csv); tune prints no CSV.
  for (const auto& [key, value] : t.raw.values) {
    if (key == "format") t.format = value;
  }
  std::erase_if(t.raw.values, [](const auto& kv) { return kv.first == "format"; });
  if (t.format != "table" && t.format != "json") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--format: '%s' is not allowed; allowed: table, json%s", t.format,
                        core::DidYouMean(t.format, {"table", "json"})));
  }
  if (!t.atp && !t.atp_bandwidth.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--atp-bandwidth: '%s' is not allowed without --algorithm atp", t.atp_bandwidth[0]));
  }
  if (!t.atp && !t.atp_matrix.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--atp-matrix: '%s' is not allowed without --algorithm atp", t.atp_matrix));
  }
  if (t.atp && t.cost_model_given) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--cost-model: '%s' is not allowed with --algorithm atp (MeshSlice's cost models; ATP "
        "uses Eq. 2-4)",
        t.cost_model));
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
          "--algorithm: '%s' is not allowed with tune; the autotuner tunes meshslice (or atp)",
          value));
    }
    if (key == "slices" || key == "out" || key == "trace") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s: '%s' is not allowed with tune (the tuner chooses S; it writes no files)", key,
          value));
    }
  }
  return absl::OkStatus();
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
    r.fold = true;
    err << "simulating mesh " << mesh.ToString() << ", S " << absl::StrJoin(slices, ",")
        << " ...\n";
    MESHSIM_ASSIGN_OR_RETURN(const formats::RunRecord rec, SimulateWithLayerSlices(r, slices));
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
      << ", \"estimate_s\": " << JsonNumber(r.estimate_s)
      << ", \"near_tie\": " << (r.near_tie ? "true" : "false") << ", \"meshes\": [";
  bool first = true;
  for (const algorithms::MeshChoice& mc : r.meshes) {
    if (!mc.valid) continue;
    out << (first ? "" : ", ") << "{\"mesh\": " << JsonString(mc.mesh.ToString())
        << ", \"slices\": [" << absl::StrJoin(SlicesOf(mc.layers), ", ") << "]"
        << ", \"estimate_s\": " << JsonNumber(mc.estimate_s)
        << ", \"strict_estimate_s\": " << JsonNumber(mc.strict_estimate_s) << "}";
    first = false;
  }
  out << "], \"layers\": [";
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
  out << absl::StrFormat("\n%-8s %-14s %12s %10s %10s\n", "mesh", "S per layer", "estimate_ms",
                         "est_util", "strict_ms");
  for (const algorithms::MeshChoice& mc : r.meshes) {
    if (!mc.valid) {
      out << absl::StrFormat("%-8s not valid: %s\n", mc.mesh.ToString(), mc.reason);
      continue;
    }
    const char* mark = !SameMesh(mc.mesh, r.mesh) ? ""
                       : r.near_tie               ? "  <- chosen (near-tie: smallest strict_ms)"
                                                  : "  <- chosen";
    out << absl::StrFormat("%-8s %-14s %12s %10s %10s%s\n", mc.mesh.ToString(),
                           absl::StrJoin(SlicesOf(mc.layers), ","), Ms(mc.estimate_s),
                           Pct(Utilization(flops, o, mc.estimate_s)), Ms(mc.strict_estimate_s),
                           mark);
  }
  out << absl::StrFormat(
      "(strict_ms: the same S with the max of concurrent collectives; it picks among meshes "
      "within %g%% of the best estimate)\n",
      algorithms::kNearTie * 100);
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

// ---- ATP's mesh search (--algorithm atp) ----

// Run options that make no sense for ATP's search.
absl::Status CheckAtpRunOptions(const RawOptions& raw) {
  for (const auto& [key, value] : raw.values) {
    if (key == "workload" && value != "layer") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--workload: '%s' is not allowed with tune --algorithm atp; ATP tunes --workload layer",
          value));
    }
    if (key == "algorithm" && value != "atp") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--algorithm: '%s' is not allowed twice; tune takes one of meshslice, atp", value));
    }
    if (key == "slices" || key == "out" || key == "trace" || key == "placement") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s: '%s' is not allowed with tune --algorithm atp (the search covers chips "
          "0..N-1 and writes no files)",
          key, value));
    }
  }
  return absl::OkStatus();
}

struct AtpRow {
  algorithms::AtpMeshEstimate estimate;
  double simulated_s = -1;  // One layer, --validate only.
  bool chosen = false, simulated_best = false;
};

std::string Gbps(double bytes_per_s) {
  return bytes_per_s > 0 ? absl::StrFormat("%.2f", bytes_per_s / 1e9) : "-";
}

std::string LayerList(const std::vector<int>& layers) {
  if (layers.empty()) return "-";
  std::vector<int> one_based;
  for (int l : layers) one_based.push_back(l + 1);
  return absl::StrJoin(one_based, ",");
}

void PrintAtpMatrixTable(const algorithms::CommMatrix& m, std::ostream& out) {
  out << (m.reading == algorithms::AtpMatrix::kOneLevel
              ? "communication matrix read as one fully connected level (--atp-matrix one-level: "
                "B'1 = B'2 = the least group bandwidth; GB/s, one direction):\n"
              : "hierarchical communication matrix (GB/s, one direction; ATP's NVLink figures add "
                "both directions):\n");
  const bool uniform = m.Uniform();
  for (size_t j = 0; j < m.layers.size(); ++j) {
    const algorithms::CommLayer& l = m.layers[j];
    out << absl::StrFormat("layer %d: %s: %d ranks of %d chip%s (rule %s), %d parent%s%s\n", j + 1,
                           l.name, l.ranks, l.rank_chips, l.rank_chips == 1 ? "" : "s", l.rule,
                           l.parents.size(), l.parents.size() == 1 ? "" : "s",
                           l.parents.size() > 1 ? (uniform ? ", all alike; the first shown"
                                                           : ", not alike; the first shown")
                                                : "");
    const algorithms::CommBlock& b = l.parents.front();
    if (l.ranks > 16) {
      double lo = 1e300, hi = 0;
      for (int a = 0; a < l.ranks; ++a) {
        for (int c = 0; c < l.ranks; ++c) {
          if (a == c) continue;
          lo = std::min(lo, b.p2p[a][c]);
          hi = std::max(hi, b.p2p[a][c]);
        }
      }
      const auto [glo, ghi] = std::minmax_element(b.group.begin(), b.group.end());
      out << absl::StrFormat("  P2P %s .. %s, group %s .. %s (%d ranks: matrix not printed)\n",
                             Gbps(lo), Gbps(hi), Gbps(*glo), Gbps(*ghi), l.ranks);
      continue;
    }
    out << "  P2P   ";
    for (int c = 0; c < l.ranks; ++c) out << absl::StrFormat("%8s", absl::StrCat("r", c));
    out << absl::StrFormat("%9s\n", "group");
    for (int a = 0; a < l.ranks; ++a) {
      out << absl::StrFormat("  %-6s", absl::StrCat("r", a));
      for (int c = 0; c < l.ranks; ++c) {
        out << absl::StrFormat("%8s", a == c ? "-" : Gbps(b.p2p[a][c]));
      }
      out << absl::StrFormat("%9s\n", Gbps(b.group[a]));
    }
  }
}

void PrintAtpTable(const RunOptions& o, const workloads::ModelShape& model,
                   const algorithms::AtpProblem& p, const algorithms::CommMatrix& m,
                   const std::vector<AtpRow>& rows, bool validate, std::ostream& out) {
  out << absl::StrFormat(
      "ATP mesh search (ATP §3.5): system %s, topology %s, %d chips, model %s (L %d, h %d), "
      "batch %d, seq %d, %d B/element%s\n\n",
      o.system_name, o.topology, m.chips, o.model, p.layers, p.hidden, p.batch, p.seq,
      p.element_bytes, p.rabenseifner ? "" : ", B = B'");
  PrintAtpMatrixTable(m, out);
  out << "\nper DeviceMesh(d1, d2): layers spanned, Eq. 3 B' and Eq. 4 B (GB/s), Eq. 2 T_comm "
         "(L layers; per layer)";
  if (validate) out << ", simulated one layer (fwd + bwd, with compute)";
  out << "\n";
  out << absl::StrFormat("%-7s %-7s %-7s %8s %8s %8s %8s %12s %12s", "mesh", "dim1", "dim2", "B'1",
                         "B'2", "B1", "B2", "t_comm_ms", "layer_ms");
  if (validate) out << absl::StrFormat(" %12s", "simulated_ms");
  out << "\n";
  for (const AtpRow& r : rows) {
    const algorithms::AtpMeshEstimate& e = r.estimate;
    std::vector<std::string> marks;
    if (r.chosen) marks.push_back("<- chosen");
    if (e.calibrated) marks.push_back("calibrated");
    if (r.simulated_best) marks.push_back("sim best");
    out << absl::StrFormat("%-7s %-7s %-7s %8s %8s %8s %8s %12.4f %12.4f", e.mesh.ToString(),
                           LayerList(e.layers1), LayerList(e.layers2), Gbps(e.b1_prime),
                           Gbps(e.b2_prime), Gbps(e.b1), Gbps(e.b2), e.t_comm_s * 1e3,
                           e.t_comm_s * 1e3 / p.layers);
    if (validate) out << absl::StrFormat(" %12.4f", r.simulated_s * 1e3);
    out << (marks.empty() ? "" : "  ") << absl::StrJoin(marks, ", ") << "\n";
  }
}

void PrintAtpJson(const algorithms::CommMatrix& m, const std::vector<AtpRow>& rows,
                  const algorithms::AtpResult& result, bool validate, std::ostream& out) {
  const auto list = [](const std::vector<int>& v) {
    std::vector<int> one_based;
    for (int l : v) one_based.push_back(l + 1);
    return absl::StrCat("[", absl::StrJoin(one_based, ", "), "]");
  };
  out << "{\"mesh\": " << JsonString(result.mesh.ToString())
      << ", \"t_comm_s\": " << JsonNumber(result.t_comm_s) << ", \"meshes\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const algorithms::AtpMeshEstimate& e = rows[i].estimate;
    out << (i ? ", " : "") << "{\"mesh\": " << JsonString(e.mesh.ToString())
        << ", \"layers1\": " << list(e.layers1) << ", \"layers2\": " << list(e.layers2)
        << ", \"b1_prime\": " << JsonNumber(e.b1_prime)
        << ", \"b2_prime\": " << JsonNumber(e.b2_prime) << ", \"b1\": " << JsonNumber(e.b1)
        << ", \"b2\": " << JsonNumber(e.b2)
        << ", \"calibrated\": " << (e.calibrated ? "true" : "false")
        << ", \"t_comm_s\": " << JsonNumber(e.t_comm_s)
        << ", \"chosen\": " << (rows[i].chosen ? "true" : "false");
    if (validate) out << ", \"simulated_s\": " << JsonNumber(rows[i].simulated_s);
    out << "}";
  }
  out << "], \"matrix\": {\"chips\": " << m.chips
      << ", \"reading\": " << JsonString(algorithms::ToString(m.reading)) << ", \"layers\": [";
  for (size_t j = 0; j < m.layers.size(); ++j) {
    const algorithms::CommLayer& l = m.layers[j];
    out << (j ? ", " : "") << "{\"name\": " << JsonString(l.name)
        << ", \"rule\": " << JsonString(l.rule) << ", \"ranks\": " << l.ranks
        << ", \"rank_chips\": " << l.rank_chips << ", \"parents\": [";
    for (size_t q = 0; q < l.parents.size(); ++q) {
      const algorithms::CommBlock& b = l.parents[q];
      out << (q ? ", " : "") << "{\"first_chip\": " << b.first_chip << ", \"p2p\": [";
      for (int a = 0; a < l.ranks; ++a) {
        std::vector<std::string> row;
        for (double v : b.p2p[a]) row.push_back(JsonNumber(v));
        out << (a ? ", " : "") << "[" << absl::StrJoin(row, ", ") << "]";
      }
      std::vector<std::string> group;
      for (double v : b.group) group.push_back(JsonNumber(v));
      out << "], \"group\": [" << absl::StrJoin(group, ", ") << "]}";
    }
    out << "]}";
  }
  out << "]}}\n";
}

absl::Status AtpTune(const TuneArgs& targs, std::ostream& out, std::ostream& err) {
  RawOptions raw = targs.raw;
  std::erase_if(raw.values, [](const auto& kv) { return kv.first == "algorithm"; });
  MESHSIM_RETURN_IF_ERROR(CheckAtpRunOptions(raw));
  // Resolved as the layer runs that --validate simulates (batch 4 unless given, as in ATP §5).
  std::erase_if(raw.values, [](const auto& kv) { return kv.first == "workload"; });
  raw.values.emplace_back("workload", "layer");
  raw.values.emplace_back("algorithm", "atp");
  MESHSIM_ASSIGN_OR_RETURN(const RunOptions o, ResolveRunOptions(raw));
  MESHSIM_ASSIGN_OR_RETURN(const workloads::ModelShape model, RunModel(o));

  MESHSIM_ASSIGN_OR_RETURN(algorithms::AtpProblem p, MakeAtpProblem(o));
  for (const std::string& text : targs.atp_bandwidth) {
    MESHSIM_RETURN_IF_ERROR(algorithms::ParseAtpCalibration(text, p.calibrated));
  }
  algorithms::AtpMatrix reading = algorithms::AtpMatrix::kHierarchical;
  if (!targs.atp_matrix.empty()) {
    MESHSIM_ASSIGN_OR_RETURN(reading, algorithms::ParseAtpMatrix(targs.atp_matrix));
  }
  if (reading == algorithms::AtpMatrix::kMeasured) {
    if (!targs.atp_bandwidth.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--atp-bandwidth: '%s' is not allowed with --atp-matrix measured, which measures "
          "every mesh's bandwidths itself",
          targs.atp_bandwidth[0]));
    }
    MESHSIM_RETURN_IF_ERROR(MeasureAtpBandwidths(o, p));
  }
  // The physical machine is built once, as a run with --mesh auto builds it (torus2d: the
  // most-square extents), and every candidate mesh is laid over it.
  MESHSIM_ASSIGN_OR_RETURN(const network::Topology topology, BuildTopology(o));
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::CommMatrix matrix,
                           algorithms::BuildCommMatrix(topology, o.mesh_chips(), reading));
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::AtpResult result, algorithms::AtpSearch(matrix, p));

  std::vector<AtpRow> rows;
  for (const algorithms::AtpMeshEstimate& e : result.meshes) {
    AtpRow r;
    r.estimate = e;
    r.chosen = e.mesh.rows == result.mesh.rows && e.mesh.cols == result.mesh.cols;
    rows.push_back(std::move(r));
  }
  if (targs.validate) {
    AtpRow* best = nullptr;
    for (AtpRow& row : rows) {
      RunOptions r = o;
      r.mesh_rows = row.estimate.mesh.rows;
      r.mesh_cols = row.estimate.mesh.cols;
      if (o.topology == "torus2d" || o.topology == "mesh2d") {
        // An unplaced mesh over every chip would reshape the grid to the mesh's extents; the
        // identity placement keeps the machine the matrix describes.
        r.placement.resize(o.chips);
        std::iota(r.placement.begin(), r.placement.end(), 0);
      }
      err << "simulating one layer on mesh " << row.estimate.mesh.ToString() << " ...\n";
      MESHSIM_ASSIGN_OR_RETURN(const formats::RunRecord rec, Simulate(r));
      row.simulated_s = rec.Metric("makespan_s");
      if (best == nullptr || row.simulated_s < best->simulated_s) best = &row;
    }
    if (best != nullptr) best->simulated_best = true;
  }
  if (targs.format == "json") {
    PrintAtpJson(matrix, rows, result, targs.validate, out);
  } else {
    PrintAtpTable(o, model, p, matrix, rows, targs.validate, out);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Tune(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  MESHSIM_ASSIGN_OR_RETURN(const TuneArgs targs, ParseTuneArgs(args));
  const RawOptions& raw = targs.raw;
  if (raw.help) {
    out << TuneUsage() << RunHelp();
    return absl::OkStatus();
  }
  if (targs.atp) return AtpTune(targs, out, err);
  MESHSIM_ASSIGN_OR_RETURN(const algorithms::CostModel* cost_model,
                           algorithms::CostModel::Find(targs.cost_model));
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

}  // namespace meshsim::sim::cli
