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

LayerChain::LayerChain(LoweringContext& ctx)
    : ctx_(ctx),
      front_(ctx.mesh.chips()),
      last_compute_(ctx.mesh.chips()),
      side_(ctx.mesh.chips()),
      join_name_(ctx.graph.Intern("layer.join")) {}

std::vector<core::OpId> LayerChain::Deps(int local) const {
  if (!front_[local].empty()) return front_[local];
  return ctx_.After(ctx_.mesh.Chip(local));
}

void LayerChain::Extend(int local, core::OpId id) { front_[local].assign(1, id); }

void LayerChain::Gemm(const core::OpTags& tags, int64_t m, int64_t n, int64_t k, bool side) {
  for (int c = 0; c < ctx_.mesh.chips(); ++c) {
    core::Op g = core::Op::Gemm(ctx_.mesh.Chip(c), m, n, k);
    g.tags = tags;
    if (side) {
      // dW after its dX GeMM (§4.2), not after dX's AllReduce.
      const core::OpId after = last_compute_[c];
      side_[c].push_back(after.valid() ? ctx_.graph.Add(g, {after}) : ctx_.graph.Add(g, Deps(c)));
      continue;
    }
    const core::OpId id = ctx_.graph.Add(g, Deps(c));
    Extend(c, id);
    last_compute_[c] = id;
  }
}

void LayerChain::Vector(const core::OpTags& tags, const workloads::LayerOp& op, int64_t bytes) {
  for (int c = 0; c < ctx_.mesh.chips(); ++c) {
    core::Op v = VectorOp(ctx_.mesh.Chip(c), op, bytes);
    v.tags = tags;
    const core::OpId id = ctx_.graph.Add(v, Deps(c));
    Extend(c, id);
    last_compute_[c] = id;
  }
}

void LayerChain::Collective(const core::OpTags& tags, core::CollectiveKind kind,
                            const std::vector<core::GroupId>& groups,
                            const std::vector<std::vector<core::ChipId>>& members, int64_t bytes) {
  std::vector<core::OpId> deps;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (members[g].size() < 2) continue;
    deps.clear();
    for (core::ChipId chip : members[g]) {
      for (core::OpId d : Deps(ctx_.mesh.Local(chip))) deps.push_back(d);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    core::Op op = core::Op::Collective(kind, groups[g], bytes);
    op.tags = tags;
    const core::OpId id = ctx_.graph.Add(op, deps);
    for (core::ChipId chip : members[g]) Extend(ctx_.mesh.Local(chip), id);
  }
}

void LayerChain::Chunked(int chunks, const std::function<void(int)>& body) {
  const std::vector<std::vector<core::OpId>> start = front_;
  std::vector<std::vector<core::OpId>> ends(front_.size());
  for (int k = 0; k < chunks; ++k) {
    front_ = start;
    body(k);
    for (size_t c = 0; c < front_.size(); ++c) {
      ends[c].insert(ends[c].end(), front_[c].begin(), front_[c].end());
    }
  }
  for (std::vector<core::OpId>& e : ends) {
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
  }
  front_ = std::move(ends);
}

void LayerChain::Finish() {
  for (int c = 0; c < ctx_.mesh.chips(); ++c) {
    std::vector<core::OpId> ends = side_[c];
    ends.insert(ends.end(), front_[c].begin(), front_[c].end());
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
