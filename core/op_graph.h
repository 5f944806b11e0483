// OpGraph: the plain-data program an algorithm plugin builds and the executor runs.
//
// Ops are appended with the ids of ops they depend on; `Add` accepts only ids that already exist,
// so the graph is acyclic by construction and id order is a topological order. Groups are
// ordered chip lists (ring order for collectives), interned so that every row collective of a
// mesh shares one group id. Names are interned strings used as op labels.
//
// Example:
//   OpGraph g;
//   GroupId row0 = g.AddGroup({ChipId{0}, ChipId{1}});
//   OpId a = g.Add(Op::Gemm(ChipId{0}, 128, 128, 128));
//   OpId b = g.Add(Op::Gemm(ChipId{1}, 128, 128, 128));
//   OpId ag = g.Add(Op::Collective(CollectiveKind::kAllGather, row0, 1 << 20), {a, b});
//
// Cost: Add is amortised O(#deps); lookups are O(1). Memory: sizeof(Op) + 4 bytes per dep.
//
// Op budget. A lowering whose op count grows as P² (tp1d's ReduceScatter accumulates) would
// exhaust memory long before it finished; `set_max_ops` bounds the graph. Add never fails: a
// builder checks `full()` in the loops that grow the graph and stops, and returns CheckSize().
//   g.set_max_ops(1000);
//   for (...) { if (g.full()) return g.CheckSize(); g.Add(...); }
#ifndef MESHSIM_CORE_OP_GRAPH_H_
#define MESHSIM_CORE_OP_GRAPH_H_

#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/ids.h"
#include "core/large_vector.h"
#include "core/op.h"

namespace meshsim::core {

// Interned strings with stable ids.
class StringTable {
 public:
  NameId Intern(const std::string& s);
  const std::string& Get(NameId id) const { return strings_[id.value()]; }
  const std::vector<std::string>& all() const { return strings_; }
  size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  absl::flat_hash_map<std::string, NameId> index_;
};

class OpGraph {
 public:
  // Appends `op`, which runs after every op in `deps`. Fatal if a dep id does not exist yet, if
  // a per-chip op has no chip, or a collective's group is unknown (plugin bugs, not user input).
  OpId Add(const Op& op, std::span<const OpId> deps);
  OpId Add(const Op& op, std::initializer_list<OpId> deps = {}) {
    return Add(op, std::span<const OpId>(deps.begin(), deps.size()));
  }

  // Interns an ordered chip group (>= 1 chip, no repeats). Same members, same order → same id.
  // With `images`, a chip may be listed more than once: a folded graph's ring (sim/fold.h), whose
  // members are named by their representative chips; a repeated chip stands for an image of its
  // first listing, which the network does not simulate again.
  GroupId AddGroup(std::vector<ChipId> members, bool images = false);

  NameId Intern(const std::string& name) { return names_.Intern(name); }

  size_t size() const { return ops_.size(); }

  // The op budget (0 = none, the default). A builder may overshoot it by what it adds between
  // two checks of full().
  void set_max_ops(size_t max_ops) { max_ops_ = max_ops; }
  size_t max_ops() const { return max_ops_; }
  // Whether the graph holds more ops than the budget allows.
  bool full() const { return max_ops_ != 0 && ops_.size() > max_ops_; }
  // ResourceExhausted "the op graph passes its budget of N ops" when full(), else OK. The
  // caller (sim/) turns it into a message naming the options that sized the graph.
  absl::Status CheckSize() const;
  size_t num_deps() const { return deps_.size(); }
  const Op& op(OpId id) const { return ops_[id.value()]; }
  // Tags label ops for reports and do not change the program, so they may be set after Add
  // (a pipeline tags each stage's ops with stage and microbatch once a plugin has lowered them).
  OpTags& mutable_tags(OpId id) { return ops_[id.value()].tags; }
  std::span<const OpId> deps(OpId id) const {
    return {deps_.data() + dep_begin_[id.value()], deps_.data() + dep_begin_[id.value() + 1]};
  }
  std::span<const ChipId> group(GroupId id) const { return groups_[id.value()]; }
  // Whether the group lists images (AddGroup's `images` with a repeated chip).
  bool has_images(GroupId id) const { return has_images_[id.value()]; }
  size_t num_groups() const { return groups_.size(); }
  const StringTable& names() const { return names_; }

  // The chips an op occupies: its chip, or its group's members (a transfer: its source).
  std::span<const ChipId> ChipsOf(OpId id) const;

  // Label of an op: its interned name, or its kind ("gemm", "allgather", ...).
  std::string Label(OpId id) const;

  // 1 + the largest chip id any op or group mentions; 0 for an empty graph.
  int num_chips() const { return max_chip_ + 1; }

 private:
  // Millions at thousands of chips: grown without copies (core/large_vector.h), so a graph's
  // peak memory is its size, not twice it while a vector doubles.
  LargeVector<Op> ops_;
  LargeVector<uint32_t> dep_begin_ = {0};
  LargeVector<OpId> deps_;
  std::vector<std::vector<ChipId>> groups_;
  std::vector<bool> has_images_;  // By group.
  absl::flat_hash_map<std::vector<uint32_t>, GroupId> group_index_;
  StringTable names_;
  int max_chip_ = -1;
  size_t max_ops_ = 0;
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_OP_GRAPH_H_
