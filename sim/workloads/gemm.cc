// --workload gemm: one GeMM C = A·B (--gemm M,N,K) — local on --chips 1, else distributed by
// the --algorithm GeMM plugin in the forward dataflow of --dataflow's stationary matrix (os when
// auto).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "algorithms/dataflow.h"
#include "algorithms/microbench.h"
#include "algorithms/registry.h"
#include "core/status_macros.h"
#include "sim/workload.h"
#include "sim/workloads/common.h"

namespace meshsim::sim {
namespace {

class Gemm : public Workload {
 public:
  absl::Status Validate(const RunOptions& o) const override {
    if (o.gemm_m > 0) return absl::OkStatus();
    return absl::InvalidArgumentError(
        "--gemm: required by --workload gemm (e.g. --gemm 8192,8192,8192)");
  }

  std::vector<TensorSize> Tensors(const RunOptions& o) const override {
    const double m = o.gemm_m, n = o.gemm_n, k = o.gemm_k, e = o.system.chip.element_bytes;
    return {{"matrix A = M x K", {"gemm"}, m * k * e},
            {"matrix B = K x N", {"gemm"}, k * n * e},
            {"matrix C = M x N", {"gemm"}, m * n * e}};
  }

  // One chip runs one local GeMM: no plugin, so none of its options.
  std::string NotRead(const std::string& key, const RunOptions& o) const override {
    if (o.chips > 1 || (key != "algorithm" && algorithms::AlgorithmsDeclaring(key).empty())) {
      return "";
    }
    return "does not apply to --workload gemm on --chips 1 (one local GeMM); it is read on more "
           "chips";
  }

  absl::StatusOr<algorithms::Mesh> LogicalMesh(const RunOptions& o,
                                               bool* one_dimensional) const override {
    *one_dimensional = false;
    if (o.chips > 1) {
      MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                               algorithms::FindAlgorithm(o.algorithm));
      *one_dimensional = info->one_dimensional;
    }
    return MeshOrDefault(o, *one_dimensional);
  }

  absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                     core::OpGraph& graph) const override {
    if (o.chips == 1) return algorithms::BuildLocalGemm(o.gemm_m, o.gemm_n, o.gemm_k, graph);
    MESHSIM_ASSIGN_OR_RETURN(const algorithms::AlgorithmInfo* info,
                             algorithms::FindAlgorithm(o.algorithm));
    MESHSIM_RETURN_IF_ERROR(workload_support::CheckAlgorithmFitsWorkload(o, *info));
    MESHSIM_ASSIGN_OR_RETURN(algorithms::Stationary s,
                             algorithms::ParseStationary(o.dataflow == "auto" ? "os" : o.dataflow));
    algorithms::GemmProblem p;
    p.m = o.gemm_m;
    p.n = o.gemm_n;
    p.k = o.gemm_k;
    p.dataflow = algorithms::FcProblem({}, s, core::Pass::kFwd).dataflow;
    p.label = "gemm";
    return workload_support::LowerGemmProblems(o, plan.mesh, {p}, graph);
  }

  std::string Describe(const RunOptions& o, const algorithms::Mesh& mesh) const override {
    return workload_support::DescribePluginRun(o, mesh);
  }

  absl::Status ResolveConfig(const RunOptions& o, const RunPlan& plan, const core::OpGraph& graph,
                             ResolvedValues& values) const override {
    values.dataflow = o.dataflow == "auto" ? "os" : o.dataflow;
    if (o.chips > 1) values.slices = workload_support::SlicesLowered(graph, plan, false);
    return absl::OkStatus();
  }
};

}  // namespace

const Workload& GemmWorkload() {
  static const Gemm w;
  return w;
}

}  // namespace meshsim::sim
