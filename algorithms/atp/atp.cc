// ATP and Megatron-LM layer lowering; the sharding, the collectives and their volumes are
// tabulated in atp.h.
#include "algorithms/atp/atp.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "algorithms/atp/layer_lowering.h"
#include "algorithms/lowering_util.h"
#include "core/status_macros.h"

namespace meshsim::algorithms {
namespace {

using workloads::LayerOp;
using workloads::LayerOpKind;
using workloads::LayerTensor;

bool ColumnFirst(int fc_index) { return fc_index == 0 || fc_index == 2; }  // qkv, ffn_up

absl::Status CheckAtp(const char* name, const LayerProblem& p, const Mesh& mesh) {
  const workloads::LayerShape& s = p.shape;
  const int64_t d1 = mesh.rows, d2 = mesh.cols, c = p.chunks;
  const std::string m = mesh.ToString();
  const auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", name, what));
  };
  if (c < 1 || s.batch % c != 0) {
    return fail(absl::StrFormat(
        "--chunks: %d is not allowed; the chunk count must divide --batch %d (e.g. 1, 2, 4)", c,
        s.batch));
  }
  if (s.hidden % d1 != 0 || s.ffn_dim() % d1 != 0) {
    return fail(
        absl::StrFormat("--mesh: '%s' is not allowed; d1 = %d must divide hidden %d and "
                        "FFN %d",
                        m, d1, s.hidden, s.ffn_dim()));
  }
  if (s.hidden % d2 != 0) {
    return fail(absl::StrFormat("--mesh: '%s' is not allowed; d2 = %d must divide hidden %d", m, d2,
                                s.hidden));
  }
  if (s.heads % d1 != 0) {
    return fail(absl::StrFormat("--mesh: '%s' is not allowed; d1 = %d must divide heads %d", m, d1,
                                s.heads));
  }
  if ((s.heads / d1) % d2 != 0 && s.batch % d2 != 0) {
    return fail(absl::StrFormat(
        "--mesh: '%s' is not allowed; d2 = %d must divide heads/d1 = %d or --batch %d "
        "(the attention core is sharded over dimension 2 by heads or sequences)",
        m, d2, s.heads / d1, s.batch));
  }
  return absl::OkStatus();
}

class AtpLowering {
 public:
  // overlap_dw: §4.2, each dX AllReduce beside its dW GeMM (ATP); false: after it (Megatron-LM).
  // gathered: the blocks' outputs gathered whole between blocks (atp.h, "Activations").
  AtpLowering(const LayerProblem& p, LoweringContext& ctx, bool overlap_dw, bool gathered)
      : p_(p),
        overlap_dw_(overlap_dw),
        gathered_(gathered),
        ctx_(ctx),
        d1_(ctx.mesh.rows),
        d2_(ctx.mesh.cols),
        groups_(BuildRowColGroups(ctx.mesh, ctx.graph)),
        chain_(ctx) {}

  void Run() {
    const workloads::LayerShape& s = p_.shape;
    const int64_t e = s.element_bytes, t = s.tokens(), h = s.hidden;
    // The heads of one device: b·a/(d1·d2) (Check makes this whole).
    const int64_t local_heads = s.batch * s.heads / (d1_ * d2_);
    for (const LayerOp& op : workloads::LayerOps(s)) {
      if (!InPart(op, p_.part)) continue;
      switch (op.kind) {
        case LayerOpKind::kVector:
          chain_.Vector(LayerTags(ctx_.graph, op, "vector", 0), op, VectorBytes(op));
          break;
        case LayerOpKind::kAttention:
          chain_.Gemm(LayerTags(ctx_.graph, op, "gemm", 0), local_heads * op.m, op.n, op.k);
          break;
        case LayerOpKind::kFc:
          Fc(op, t);
          break;
      }
      // The gathers before attn_out (forward) and before qkv dX (backward): AllGather over
      // dimension 2 of the attention core's output, each device contributing its heads.
      if (op.name == "attn_context" && op.pass == core::Pass::kFwd) {
        AllGather(op, (t * h / d1_) / d2_ * e);
      }
      if (op.name == "attn_score" && op.pass == core::Pass::kBwdWeight) {
        AllGather(op, (t * 3 * h / d1_) / d2_ * e);
      }
    }
    chain_.Finish();
  }

 private:
  // Local bytes of an element-wise op: hidden tensors are [T × h/d2] (gathered: [T × h]), FFN ones
  // [T × f/d1], scores sharded over both dimensions.
  int64_t VectorBytes(const LayerOp& op) const {
    int64_t div = 1;
    if (op.tensor == LayerTensor::kHidden && !gathered_) div *= d2_;
    if (op.tensor == LayerTensor::kFfn) div *= d1_;
    if (op.tensor == LayerTensor::kScores) div *= d1_ * d2_;
    return op.bytes / div;
  }

  // A linear layer on T tokens. Forward in chunks (§4.1): chunk k's GeMM of T/c tokens, then its
  // AllReduce, while chunk k+1's GeMM runs; the layer's next op waits for every chunk's
  // AllReduce. Backward whole: dX, then (§4.2) its AllReduce beside the dW GeMM; without that
  // overlap (Megatron-LM) dX and dW, then the AllReduce (AfterDx).
  void Fc(const LayerOp& op, int64_t t) {
    const bool col = ColumnFirst(op.fc_index);
    const int64_t in = op.fc_in / (col ? d2_ : d1_), out = op.fc_out / (col ? d1_ : d2_);
    const int64_t e = p_.shape.element_bytes;
    switch (op.pass) {
      case core::Pass::kFwd: {
        const int c = p_.chunks;
        chain_.Chunked(c, [&](int k) {
          chain_.Gemm(LayerTags(ctx_.graph, op, "gemm", k), t / c, out, in);
          // Column-first: partial over dimension 2 (rows); row-first: over dimension 1 (columns).
          AllReduce(op, k, col ? 2 : 1, t / c * out * e);
        });
        // A row-first layer ends a block: its output [T × h/d2], gathered whole.
        if (gathered_ && !col) AllGather(op, t * out * e);
        break;
      }
      case core::Pass::kBwdData:
        chain_.Gemm(LayerTags(ctx_.graph, op, "gemm", 0), t, in, out);
        if (overlap_dw_) AllReduce(op, 0, col ? 1 : 2, t * in * e);  // beside dW (§4.2)
        // A pipeline may delay dW to a later part: then what follows dX comes right here.
        if (!WithPass(op, core::Pass::kBwdWeight)) AfterDx(op, t);
        break;
      case core::Pass::kBwdWeight:
        chain_.Gemm(LayerTags(ctx_.graph, op, "gemm", 0), in, out, t, /*side=*/overlap_dw_);
        if (WithPass(op, core::Pass::kBwdData)) AfterDx(AsPass(op, core::Pass::kBwdData), t);
        break;
      case core::Pass::kNone:
        break;
    }
  }

  // What follows a linear layer's dX once its dW is lowered (LayerOps puts dW right after dX),
  // tagged as dX's: its AllReduce where it was not issued beside dW (Megatron-LM), and with
  // gathered activations a column-first layer's dX [T × h/d2] gathered for the LayerNorm.
  void AfterDx(const LayerOp& dx, int64_t t) {
    const bool col = ColumnFirst(dx.fc_index);
    const int64_t in = dx.fc_in / (col ? d2_ : d1_), e = p_.shape.element_bytes;
    if (!overlap_dw_) AllReduce(dx, 0, col ? 1 : 2, t * in * e);
    if (gathered_ && col) AllGather(dx, t * in * e);
  }

  static LayerOp AsPass(LayerOp op, core::Pass pass) {
    op.pass = pass;
    return op;
  }
  // Whether this lowering's part holds `op` of pass `pass` (the dX or dW of the same layer).
  bool WithPass(const LayerOp& op, core::Pass pass) const {
    return InPart(AsPass(op, pass), p_.part);
  }

  void AllReduce(const LayerOp& op, int k, int dim, int64_t bytes) {
    chain_.Collective(LayerTags(ctx_.graph, op, "allreduce", k), core::CollectiveKind::kAllReduce,
                      dim == 1 ? groups_.col : groups_.row,
                      dim == 1 ? groups_.col_members : groups_.row_members, bytes);
  }

  void AllGather(const LayerOp& op, int64_t shard_bytes) {
    chain_.Collective(LayerTags(ctx_.graph, op, "allgather", 0), core::CollectiveKind::kAllGather,
                      groups_.row, groups_.row_members, shard_bytes);
  }

  const LayerProblem& p_;
  const bool overlap_dw_, gathered_;
  LoweringContext& ctx_;
  const int64_t d1_, d2_;
  const RowColGroups groups_;
  LayerChain chain_;
};

// The problem with its chunk count: the problem's, else the plugin's `chunks` parameter.
LayerProblem WithChunks(const LayerProblem& p, int chunks) {
  LayerProblem q = p;
  if (q.chunks == 0) q.chunks = chunks;
  return q;
}

class Atp : public LayerAlgorithm {
 public:
  Atp(int chunks, bool gathered) : chunks_(chunks), gathered_(gathered) {}
  absl::Status Check(const LayerProblem& p, const Mesh& mesh) const override {
    return CheckAtp("atp", WithChunks(p, chunks_), mesh);
  }
  absl::Status Lower(const LayerProblem& p, LoweringContext& ctx) const override {
    MESHSIM_RETURN_IF_ERROR(Check(p, ctx.mesh));
    const LayerProblem q = WithChunks(p, chunks_);
    AtpLowering(q, ctx, /*overlap_dw=*/true, gathered_).Run();
    return absl::OkStatus();
  }
  // Between layers every device (i, j) holds X[T × h/d2]: hidden split over mesh columns
  // (gathered: the whole X).
  absl::StatusOr<std::string> BoundarySpec(const Mesh& mesh) const override {
    return std::string(mesh.cols > 1 && !gathered_ ? "RRS1" : "RRR");
  }

 private:
  const int chunks_;
  const bool gathered_;
};

// Megatron-LM = ATP on DeviceMesh(N, 1) without §4.2's overlap: the same lowering, restricted to
// N×1 meshes, with each dX AllReduce after its dW GeMM (atp.h).
class Megatron : public LayerAlgorithm {
 public:
  explicit Megatron(int chunks) : chunks_(chunks) {}
  absl::Status Check(const LayerProblem& p, const Mesh& mesh) const override {
    if (mesh.cols != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "megatron: --mesh: '%s' is not allowed; Megatron-LM runs on DeviceMesh(N, 1): use "
          "--mesh %dx1 or auto",
          mesh.ToString(), mesh.chips()));
    }
    return CheckAtp("megatron", WithChunks(p, chunks_), mesh);
  }
  absl::Status Lower(const LayerProblem& p, LoweringContext& ctx) const override {
    MESHSIM_RETURN_IF_ERROR(Check(p, ctx.mesh));
    const LayerProblem q = WithChunks(p, chunks_);
    AtpLowering(q, ctx, /*overlap_dw=*/false, /*gathered=*/false).Run();
    return absl::OkStatus();
  }
  // Megatron-LM replicates the activations between layers on every tensor-parallel rank.
  absl::StatusOr<std::string> BoundarySpec(const Mesh&) const override {
    return std::string("RRR");
  }

 private:
  const int chunks_;
};

// ATP's one parameter (§4.1): Check also requires that it divide the batch.
core::ParamSpec ChunksParam(std::string description) {
  return {.key = "chunks",
          .type = core::ParamType::kInt,
          .description = std::move(description),
          .default_value = "1",
          .min = 1,
          .max = 4,
          .choices = {"1", "2", "4"}};
}

}  // namespace

std::unique_ptr<LayerAlgorithm> MakeAtp(int chunks, bool gathered) {
  return std::make_unique<Atp>(chunks, gathered);
}
std::unique_ptr<LayerAlgorithm> MakeMegatron(int chunks) {
  return std::make_unique<Megatron>(chunks);
}

AlgorithmInfo AtpPlugin() {
  return {
      .name = "atp",
      .description =
          "ATP (adaptive 2D TP, Fig. 6) on DeviceMesh(d1, d2) = --mesh d1xd2 [layer]: QKV/FFN-up "
          "column-first (AllReduce over mesh rows), attn-out/FFN-down row-first (over mesh "
          "columns), attention sharded over both; dX AllReduce overlaps dW",
      .params = {ChunksParam("forward linear layers run the batch in chunks, each chunk's GeMM "
                             "beside the previous chunk's AllReduce (§4.1); must divide --batch"),
                 {.key = "matrix",
                  .type = core::ParamType::kEnum,
                  .description =
                      "--workload layer, --mesh auto: how ATP's search (Eq. 2) gets each mesh's "
                      "all-reduce bandwidths: hierarchical (Eq. 3-4 on the matrix derived from "
                      "the topology), one-level (one fully connected layer, §5.3's reading of "
                      "IC3/IC4), measured (simulated on the machine, §5.3's calibration of IC1)",
                  .default_value = "hierarchical",
                  .choices = {"hierarchical", "one-level", "measured"}},
                 {.key = "activations",
                  .type = core::ParamType::kEnum,
                  .description =
                      "between blocks: sharded (§3.3: [Replicate, Shard(1)], the hidden split "
                      "over dimension 2) or gathered (as the authors' benchmark runs it: each "
                      "block's output and each LayerNorm's input gradient all-gathered over "
                      "dimension 2, LayerNorms and residual adds on the whole hidden)",
                  .default_value = "sharded",
                  .choices = {"sharded", "gathered"}}},
      .make_layer =
          [](const core::ParamValues& p) {
            return MakeAtp(int(p.Int("chunks")), p.Enum("activations") == "gathered");
          },
      .mesh = "d1xd2: d1 | hidden, FFN and heads; d2 | hidden and d2 | heads/d1 or batch",
  };
}

AlgorithmInfo MegatronPlugin() {
  return {
      .name = "megatron",
      .description =
          "Megatron-LM 1D TP (v2.6, the ATP paper's baseline) [layer]: atp on DeviceMesh(N, 1) "
          "(two AllReduces of T*h forward, two backward, over all chips) with each dX AllReduce "
          "after its dW GeMM, as its autograd runs it",
      .params = {ChunksParam("as atp")},
      .make_layer = [](const core::ParamValues& p) { return MakeMegatron(int(p.Int("chunks"))); },
      .mesh = "Nx1 or auto",
  };
}

}  // namespace meshsim::algorithms
