#include "algorithms/atp/layer_lowering.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace meshsim::algorithms {

core::OpTags LayerTags(core::OpGraph& graph, const workloads::LayerOp& op, const std::string& what,
                       int chunk) {
  core::OpTags tags;
  tags.name = graph.Intern(absl::StrCat(op.label(), ".", what));
  tags.layer = op.fc_index;
  tags.pass = op.pass;
  tags.slice = chunk;
  return tags;
}

core::Op VectorOp(core::ChipId chip, const workloads::LayerOp& layer_op, int64_t bytes) {
  core::Op op;
  op.kind = core::OpKind::kVector;
  op.unit = layer_op.reduction ? core::kVectorReduction : core::kVectorPointwise;
  op.chip = chip;
  op.bytes = bytes;
  return op;
}

ChunkChains::ChunkChains(LoweringContext& ctx, int chunks)
    : ctx_(ctx),
      chunks_(chunks),
      cur_(chunks, std::vector<core::OpId>(ctx.mesh.chips())),
      last_compute_(chunks, std::vector<core::OpId>(ctx.mesh.chips())),
      side_(ctx.mesh.chips()),
      join_name_(ctx.graph.Intern("layer.join")) {}

std::vector<core::OpId> ChunkChains::Deps(int chunk, int local) const {
  if (cur_[chunk][local].valid()) return {cur_[chunk][local]};
  return ctx_.After(ctx_.mesh.Chip(local));
}

void ChunkChains::Gemm(int chunk, const core::OpTags& tags, int64_t m, int64_t n, int64_t k,
                       bool side) {
  for (int c = 0; c < ctx_.mesh.chips(); ++c) {
    core::Op g = core::Op::Gemm(ctx_.mesh.Chip(c), m, n, k);
    g.tags = tags;
    if (side) {
      // dW after its dX GeMM (§4.2), not after dX's AllReduce.
      const core::OpId after = last_compute_[chunk][c];
      side_[c].push_back(after.valid() ? ctx_.graph.Add(g, {after})
                                       : ctx_.graph.Add(g, Deps(chunk, c)));
      continue;
    }
    const core::OpId id = ctx_.graph.Add(g, Deps(chunk, c));
    cur_[chunk][c] = last_compute_[chunk][c] = id;
  }
}

void ChunkChains::Vector(int chunk, const core::OpTags& tags, const workloads::LayerOp& op,
                         int64_t bytes) {
  for (int c = 0; c < ctx_.mesh.chips(); ++c) {
    core::Op v = VectorOp(ctx_.mesh.Chip(c), op, bytes);
    v.tags = tags;
    const core::OpId id = ctx_.graph.Add(v, Deps(chunk, c));
    cur_[chunk][c] = last_compute_[chunk][c] = id;
  }
}

void ChunkChains::Collective(int chunk, const core::OpTags& tags, core::CollectiveKind kind,
                             const std::vector<core::GroupId>& groups,
                             const std::vector<std::vector<core::ChipId>>& members, int64_t bytes) {
  std::vector<core::OpId> deps;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (members[g].size() < 2) continue;
    deps.clear();
    for (core::ChipId chip : members[g]) {
      for (core::OpId d : Deps(chunk, ctx_.mesh.Local(chip))) deps.push_back(d);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    core::Op op = core::Op::Collective(kind, groups[g], bytes);
    op.tags = tags;
    const core::OpId id = ctx_.graph.Add(op, deps);
    for (core::ChipId chip : members[g]) cur_[chunk][ctx_.mesh.Local(chip)] = id;
  }
}

void ChunkChains::Finish() {
  for (int c = 0; c < ctx_.mesh.chips(); ++c) {
    std::vector<core::OpId> ends = side_[c];
    for (int k = 0; k < chunks_; ++k) {
      if (cur_[k][c].valid()) ends.push_back(cur_[k][c]);
    }
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    const core::ChipId chip = ctx_.mesh.Chip(c);
    if (ends.empty()) continue;
    if (ends.size() == 1) {
      ctx_.SetFrontier(chip, ends[0]);
      continue;
    }
    core::Op join = core::Op::Delay(chip, core::Time::Zero());
    join.tags.name = join_name_;
    ctx_.SetFrontier(chip, ctx_.graph.Add(join, ends));
  }
}

}  // namespace meshsim::algorithms
