#include "core/op_graph.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/check.h"

namespace meshsim::core {

NameId StringTable::Intern(const std::string& s) {
  auto [it, inserted] = index_.try_emplace(s, NameId(static_cast<uint32_t>(strings_.size())));
  if (inserted) strings_.push_back(s);
  return it->second;
}

OpId OpGraph::Add(const Op& op, std::span<const OpId> deps) {
  const OpId id(static_cast<uint32_t>(ops_.size()));
  for (OpId d : deps) {
    MESHSIM_CHECK(d.valid() && d.value() < id.value())
        << "OpGraph::Add: dependency " << d << " does not exist yet (next id " << id << ")";
  }
  if (op.kind == OpKind::kCollective) {
    MESHSIM_CHECK(op.group.valid() && op.group.value() < groups_.size())
        << "OpGraph::Add: collective with unknown group " << op.group;
  } else {
    MESHSIM_CHECK(op.chip.valid()) << "OpGraph::Add: " << ToString(op.kind) << " op without chip";
    max_chip_ = std::max<int>(max_chip_, op.chip.value());
    if (op.kind == OpKind::kTransfer) {
      MESHSIM_CHECK(op.peer.valid()) << "OpGraph::Add: transfer without peer";
      max_chip_ = std::max<int>(max_chip_, op.peer.value());
    }
  }
  MESHSIM_CHECK(op.bytes >= 0 && op.m >= 0 && op.n >= 0 && op.k >= 0)
      << "OpGraph::Add: negative size in " << ToString(op.kind) << " op";
  ops_.push_back(op);
  deps_.append(deps.begin(), deps.end());
  dep_begin_.push_back(static_cast<uint32_t>(deps_.size()));
  return id;
}

absl::Status OpGraph::CheckSize() const {
  if (!full()) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrFormat("the op graph passes its budget of %d ops", max_ops_));
}

GroupId OpGraph::AddGroup(std::vector<ChipId> members, bool images) {
  MESHSIM_CHECK(!members.empty()) << "OpGraph::AddGroup: empty group";
  std::vector<uint32_t> key;
  key.reserve(members.size());
  for (ChipId c : members) {
    MESHSIM_CHECK(c.valid()) << "OpGraph::AddGroup: invalid chip";
    key.push_back(c.value());
  }
  std::vector<uint32_t> sorted = key;
  std::sort(sorted.begin(), sorted.end());
  const bool repeats = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  MESHSIM_CHECK(images || !repeats) << "OpGraph::AddGroup: chip listed twice";
  auto it = group_index_.find(key);
  if (it != group_index_.end()) return it->second;
  const GroupId id(static_cast<uint32_t>(groups_.size()));
  max_chip_ = std::max<int>(max_chip_, sorted.back());
  group_index_.emplace(std::move(key), id);
  groups_.push_back(std::move(members));
  has_images_.push_back(repeats);
  return id;
}

std::span<const ChipId> OpGraph::ChipsOf(OpId id) const {
  const Op& o = ops_[id.value()];
  if (o.kind == OpKind::kCollective) return groups_[o.group.value()];
  return {&o.chip, 1};
}

std::string OpGraph::Label(OpId id) const {
  const Op& o = ops_[id.value()];
  if (o.tags.name.valid()) return names_.Get(o.tags.name);
  if (o.kind == OpKind::kCollective) return ToString(o.collective);
  return ToString(o.kind);
}

}  // namespace meshsim::core
