// 2D / 2.5D TP: SUMMA per FC GeMM on each depth slice; see tp2d.h.
#include "algorithms/atp/tp2d.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "algorithms/atp/layer_lowering.h"
#include "algorithms/dataflow.h"
#include "algorithms/gemm2d/summa.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

using workloads::LayerOp;
using workloads::LayerOpKind;

constexpr char kName[] = "tp2d";

// The SUMMA problem of FC op `op` on one slice of `tokens` tokens.
GemmProblem FcGemm(const LayerOp& op, int64_t tokens) {
  const FcLayer layer{op.name,  op.fc_index, tokens,
                      op.fc_in, op.fc_out,   op.fc_index == 0 || op.fc_index == 2};
  GemmProblem p = FcProblem(layer, Stationary::kY, op.pass);
  p.label = op.label();
  return p;
}

// Depth slice k of `mesh` (q × d·q) as a placed q×q mesh.
absl::StatusOr<Mesh> Slice(const Mesh& mesh, int k) {
  const int q = mesh.rows;
  std::vector<core::ChipId> chips;
  for (int i = 0; i < q; ++i) {
    for (int j = 0; j < q; ++j) chips.push_back(mesh.At(i, k * q + j));
  }
  return Mesh::Placed(q, q, std::move(chips));
}

class Tp2d : public LayerAlgorithm {
 public:
  Tp2d() : summa_(MakeSumma()) {}

  absl::Status Check(const LayerProblem& p, const Mesh& mesh) const override {
    const workloads::LayerShape& s = p.shape;
    const int q = mesh.rows;
    if (mesh.cols % q != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --mesh: '%s' is not allowed; use q x (d*q): d depth slices of q x q (e.g. 2x4 "
          "for 8 chips, 4x4 for 16)",
          kName, mesh.ToString()));
    }
    const int depth = mesh.cols / q;
    if (p.chunks > 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: --chunks: %d is not allowed; tp2d has no chunk-based overlap; use 1",
                          kName, p.chunks));
    }
    if (s.batch % (int64_t{depth} * q) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --batch: %d is not allowed with --mesh %s; depth*q = %d must divide it (each "
          "chip row holds whole sequences)",
          kName, s.batch, mesh.ToString(), depth * q));
    }
    if (s.heads % q != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: --mesh: '%s' is not allowed; q = %d must divide heads %d", kName,
                          mesh.ToString(), q, s.heads));
    }
    const Mesh square{q, q};
    for (const LayerOp& op : workloads::LayerOps(s)) {
      if (op.kind != LayerOpKind::kFc) continue;
      const GemmProblem g = FcGemm(op, s.tokens() / depth);
      if (absl::Status st = summa_->Check(g, square, 0); !st.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %s: %s", kName, g.label, st.message()));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Lower(const LayerProblem& p, LoweringContext& ctx) const override {
    MESHSIM_RETURN_IF_ERROR(Check(p, ctx.mesh));
    const workloads::LayerShape& s = p.shape;
    const int q = ctx.mesh.rows, depth = ctx.mesh.cols / q;
    const int64_t e = s.element_bytes, div = int64_t{depth} * q * q;
    const int64_t local_heads = s.batch * s.heads / div;
    std::vector<LoweringContext> slices;
    for (int k = 0; k < depth; ++k) {
      MESHSIM_ASSIGN_OR_RETURN(Mesh sub, Slice(ctx.mesh, k));
      slices.push_back(
          LoweringContext{ctx.graph, std::move(sub), ctx.element_bytes, 0, ctx.frontier});
    }
    std::vector<std::vector<core::OpId>> side(ctx.mesh.chips());  // Depth AllReduces per chip.
    for (const LayerOp& op : workloads::LayerOps(s)) {
      if (!InPart(op, p.part)) continue;
      const core::OpTags gemm = LayerTags(ctx.graph, op, "gemm", -1);
      const core::OpTags vector = LayerTags(ctx.graph, op, "vector", -1);
      for (LoweringContext& sc : slices) {
        if (op.kind == LayerOpKind::kFc) {
          MESHSIM_RETURN_IF_ERROR(summa_->Lower(FcGemm(op, s.tokens() / depth), sc));
          continue;
        }
        for (int c = 0; c < sc.mesh.chips(); ++c) {
          const core::ChipId chip = sc.mesh.Chip(c);
          core::Op o = op.kind == LayerOpKind::kVector
                           ? VectorOp(chip, op, op.bytes / div)
                           : core::Op::Gemm(chip, local_heads * op.m, op.n, op.k);
          o.tags = op.kind == LayerOpKind::kVector ? vector : gemm;
          sc.SetFrontier(chip, ctx.graph.Add(o, sc.After(chip)));
        }
      }
      if (depth > 1 && op.kind == LayerOpKind::kFc && op.pass == core::Pass::kBwdWeight) {
        const core::OpTags ar = LayerTags(ctx.graph, op, "depth_allreduce", -1);
        const int64_t bytes = (op.fc_in / q) * (op.fc_out / q) * e;
        for (int i = 0; i < q; ++i) {
          for (int j = 0; j < q; ++j) {
            std::vector<core::ChipId> members;
            std::vector<core::OpId> deps;
            for (int k = 0; k < depth; ++k) {
              members.push_back(ctx.mesh.At(i, k * q + j));
              for (core::OpId d : slices[k].After(members.back())) deps.push_back(d);
            }
            core::Op o = core::Op::Collective(core::CollectiveKind::kAllReduce,
                                              ctx.graph.AddGroup(members), bytes);
            o.tags = ar;
            const core::OpId id = ctx.graph.Add(o, deps);
            for (core::ChipId m : members) side[ctx.mesh.Local(m)].push_back(id);
          }
        }
      }
    }
    const core::NameId join_name = ctx.graph.Intern("layer.join");
    for (int k = 0; k < depth; ++k) {
      for (int c = 0; c < slices[k].mesh.chips(); ++c) {
        const core::ChipId chip = slices[k].mesh.Chip(c);
        std::vector<core::OpId> ends = side[ctx.mesh.Local(chip)];
        for (core::OpId d : slices[k].After(chip)) ends.push_back(d);
        if (ends.size() == 1) {
          ctx.SetFrontier(chip, ends[0]);
        } else if (!ends.empty()) {
          core::Op join = core::Op::Delay(chip, core::Time::Zero());
          join.tags.name = join_name;
          ctx.SetFrontier(chip, ctx.graph.Add(join, ends));
        }
      }
    }
    return absl::OkStatus();
  }

  // On a q×q mesh (depth 1) SUMMA's activations X[T × h] are split by tokens over mesh rows
  // (whole sequences, Check) and by hidden over mesh columns. A 2.5D mesh splits tokens over
  // rows and depth slices, which no spec of the q × d·q mesh names.
  absl::StatusOr<std::string> BoundarySpec(const Mesh& mesh) const override {
    if (mesh.cols != mesh.rows) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: --mesh: '%s' is not allowed in a pipeline stage; the 2.5D layout (tokens over "
          "rows and depth slices) has no sharding spec; use a square mesh",
          kName, mesh.ToString()));
    }
    return std::string("S0RS1");
  }

 private:
  std::unique_ptr<Algorithm> summa_;
};

}  // namespace

std::unique_ptr<LayerAlgorithm> MakeTp2d() { return std::make_unique<Tp2d>(); }

AlgorithmInfo Tp2dPlugin() {
  return {
      .name = "tp2d",
      .description =
          "2D/2.5D TP (Optimus/Tesseract) [layer]: every FC GeMM as SUMMA on q x q, attention "
          "local; depth d slices side by side (batch split, dW AllReduce across depth)",
      .params = {{.key = "chunks",
                  .type = core::ParamType::kInt,
                  .description = "no chunk-based overlap: 1 only",
                  .default_value = "1",
                  .min = 1,
                  .max = 1,
                  .choices = {"1"}}},
      .make_layer = MakeTp2d,
      .mesh =
          "q x (d*q): 4x4 = 2D on 16 chips, 2x4 = 2.5D depth 2 on 8 (auto picks the largest q "
          "with q*q | chips)",
  };
}

}  // namespace meshsim::algorithms
