#include "algorithms/lowering_util.h"

namespace meshsim::algorithms {

RowColGroups BuildRowColGroups(const Mesh& mesh, core::OpGraph& graph) {
  RowColGroups g;
  g.row_members.resize(mesh.rows);
  g.row.resize(mesh.rows);
  for (int i = 0; i < mesh.rows; ++i) {
    g.row_members[i] = mesh.Row(i);
    g.row[i] = graph.AddGroup(g.row_members[i]);
  }
  g.col_members.resize(mesh.cols);
  g.col.resize(mesh.cols);
  for (int j = 0; j < mesh.cols; ++j) {
    g.col_members[j] = mesh.Col(j);
    g.col[j] = graph.AddGroup(g.col_members[j]);
  }
  return g;
}

core::OpTags KindTags(LoweringContext& ctx, const GemmProblem& p, const std::string& what) {
  core::Op op;
  ctx.Tag(op, p, what);
  return op.tags;
}

core::Op SendRecvOp(core::GroupId group, int64_t bytes, int shift, int directions) {
  core::Op op = core::Op::Collective(core::CollectiveKind::kSendRecv, group, bytes);
  op.root = shift;
  op.directions = static_cast<uint8_t>(directions);
  return op;
}

core::Op AccumulateOp(core::ChipId chip, int64_t bytes) {
  return core::Op::Copy(chip, bytes + bytes / 2);
}

void AppendAfter(const LoweringContext& ctx, core::ChipId chip, std::vector<core::OpId>& deps) {
  const std::vector<core::OpId> after = ctx.After(chip);
  deps.insert(deps.end(), after.begin(), after.end());
}

void AppendAfter(const LoweringContext& ctx, const std::vector<core::ChipId>& members,
                 std::vector<core::OpId>& deps) {
  const std::vector<core::OpId> after = ctx.After(members);
  deps.insert(deps.end(), after.begin(), after.end());
}

core::OpId EndOfChip(LoweringContext& ctx, core::ChipId chip, const std::vector<core::OpId>& last,
                     const GemmProblem& p) {
  if (last.size() == 1) return last[0];
  return ctx.Join(chip, last, p);
}

}  // namespace meshsim::algorithms
