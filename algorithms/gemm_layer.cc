#include "algorithms/gemm_layer.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "algorithms/atp/layer_lowering.h"
#include "algorithms/dataflow.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

using workloads::LayerOp;
using workloads::LayerOpKind;

class GemmLayer : public LayerAlgorithm {
 public:
  GemmLayer(std::unique_ptr<Algorithm> gemm, std::string name, std::vector<int> layer_slices,
            int slices, std::optional<Stationary> stationary)
      : gemm_(std::move(gemm)),
        name_(std::move(name)),
        layer_slices_(std::move(layer_slices)),
        slices_(slices),
        stationary_(stationary) {}

  absl::Status Check(const LayerProblem& p, const Mesh& mesh) const override {
    const workloads::LayerShape& s = p.shape;
    if (p.chunks > 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --chunks: %d is not allowed; chunking is ATP's (use 1)", name_, p.chunks));
    }
    if (s.batch % mesh.rows != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --mesh: '%s' is not allowed with --batch %d; R = %d must divide the sequences "
          "(each mesh row holds whole sequences)",
          name_, mesh.ToString(), s.batch, mesh.rows));
    }
    if (s.heads % mesh.cols != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: --mesh: '%s' is not allowed; C = %d must divide the %d heads", name_,
                          mesh.ToString(), mesh.cols, s.heads));
    }
    for (const LayerOp& op : workloads::LayerOps(s)) {
      if (op.kind != LayerOpKind::kFc || !InPart(op, p.part)) continue;
      const GemmProblem g = Problem(op, s);
      MESHSIM_RETURN_IF_ERROR(Prefixed(g, gemm_->Check(g, mesh, Slices(g))));
    }
    return absl::OkStatus();
  }

  absl::Status Lower(const LayerProblem& p, LoweringContext& ctx) const override {
    MESHSIM_RETURN_IF_ERROR(Check(p, ctx.mesh));
    const workloads::LayerShape& s = p.shape;
    const int64_t chips = ctx.mesh.chips();
    const int64_t local_heads = (s.batch / ctx.mesh.rows) * (s.heads / ctx.mesh.cols);
    const int saved = ctx.slices;
    // As LowerProblems: each FC GeMM may move its early operands (a weight) while the op before
    // it — another GeMM, or an element-wise op — runs.
    // The first op's early operands wait for the frontier: nothing before this call is known.
    std::vector<core::OpId> start_of_previous = ctx.frontier;
    for (const LayerOp& op : workloads::LayerOps(s)) {
      if (!InPart(op, p.part)) continue;
      ctx.NextProblem(start_of_previous);
      if (op.kind == LayerOpKind::kFc) {
        const GemmProblem g = Problem(op, s);
        ctx.slices = Slices(g);
        MESHSIM_RETURN_IF_ERROR(Prefixed(g, gemm_->Lower(g, ctx)));
        continue;
      }
      const bool vector = op.kind == LayerOpKind::kVector;
      const core::OpTags tags = LayerTags(ctx.graph, op, vector ? "vector" : "gemm", -1);
      for (int c = 0; c < chips; ++c) {
        const core::ChipId chip = ctx.mesh.Chip(c);
        core::Op o = vector ? VectorOp(chip, op, op.bytes / chips)
                            : core::Op::Gemm(chip, local_heads * op.m, op.n, op.k);
        o.tags = tags;
        ctx.SetFrontier(chip, ctx.graph.Add(o, ctx.After(chip)));
      }
    }
    ctx.slices = saved;
    ctx.prior_frontier.clear();
    ctx.compute_ready.clear();
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> BoundarySpec(const Mesh&) const override {
    return std::string("S0RS1");
  }

 private:
  GemmProblem Problem(const LayerOp& op, const workloads::LayerShape& s) const {
    const FcLayer layer{op.name,  op.fc_index, s.tokens(),
                        op.fc_in, op.fc_out,   op.fc_index == 0 || op.fc_index == 2};
    GemmProblem g = FcProblem(layer, stationary_.value_or(AutoStationary(layer)), op.pass);
    g.label = op.label();
    if (!layer_slices_.empty()) g.slices = layer_slices_[op.fc_index];
    return g;
  }
  int Slices(const GemmProblem& g) const { return g.slices > 0 ? g.slices : slices_; }
  absl::Status Prefixed(const GemmProblem& g, const absl::Status& s) const {
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrFormat("%s: %s", g.label, s.message()));
  }

  std::unique_ptr<Algorithm> gemm_;
  std::string name_;
  std::vector<int> layer_slices_;
  int slices_;
  std::optional<Stationary> stationary_;
};

}  // namespace

std::unique_ptr<LayerAlgorithm> MakeGemmLayer(std::unique_ptr<Algorithm> gemm, std::string name,
                                              std::vector<int> layer_slices, int slices,
                                              std::optional<Stationary> stationary) {
  return std::make_unique<GemmLayer>(std::move(gemm), std::move(name), std::move(layer_slices),
                                     slices, stationary);
}

}  // namespace meshsim::algorithms
