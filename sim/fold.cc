#include "sim/fold.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "core/op.h"

namespace meshsim::sim {
namespace {

using core::ChipId;
using core::Op;
using core::OpId;
using core::OpKind;

constexpr uint32_t kNone = UINT32_MAX;

// Row-major coordinates of a torus.
class Torus {
 public:
  explicit Torus(std::span<const int> dims) : dims_(dims.begin(), dims.end()) {
    stride_.assign(dims_.size(), 1);
    for (int d = static_cast<int>(dims_.size()) - 2; d >= 0; --d) {
      stride_[d] = stride_[d + 1] * dims_[d + 1];
    }
    chips_ = dims_.empty() ? 0 : stride_[0] * dims_[0];
  }
  int rank() const { return static_cast<int>(dims_.size()); }
  const std::vector<int>& extents() const { return dims_; }
  int chips() const { return chips_; }
  int extent(int d) const { return dims_[d]; }
  int Coord(int chip, int d) const { return chip / stride_[d] % dims_[d]; }
  // `chip` moved by `by` along d, modulo the extent.
  int Shift(int chip, int d, int by) const {
    const int x = Coord(chip, d);
    return chip + (((x + by) % dims_[d] + dims_[d]) % dims_[d] - x) * stride_[d];
  }
  // The chip of the coordinates of `chip` taken modulo `periods`, numbered row-major over them.
  int Folded(int chip, std::span<const int> periods) const {
    int f = 0;
    for (int d = 0; d < rank(); ++d) f = f * periods[d] + Coord(chip, d) % periods[d];
    return f;
  }
  // `chip` with each coordinate taken modulo `periods` (a chip of the box, in this numbering).
  int InBox(int chip, std::span<const int> periods) const {
    int c = 0;
    for (int d = 0; d < rank(); ++d) c += Coord(chip, d) % periods[d] * stride_[d];
    return c;
  }

 private:
  std::vector<int> dims_, stride_;
  int chips_ = 0;
};

// The label the run's GeMM table groups a name's rows by (MetricsAccumulator: the part before
// the last '.', "qkv.fwd" of "qkv.fwd.gemm"), or "" for none.
std::string_view LabelOf(const core::OpGraph& graph, core::NameId name) {
  if (!name.valid()) return {};
  const std::string& s = graph.names().Get(name);
  const size_t dot = s.rfind('.');
  return dot == std::string::npos || dot == 0 ? std::string_view()
                                              : std::string_view(s).substr(0, dot);
}

// Whether two ops do the same work (all but their place: chip, group) under the same labels.
// A folded run's rows carry its representatives' names: names may differ only where no GeMM
// shares their label (`gemm_labels`), so that no row of the GeMM table moves (a resharding's
// transfers are named after their tasks, which differ from chip to chip).
bool SameWork(const core::OpGraph& graph, const absl::flat_hash_set<std::string_view>& gemm_labels,
              const Op& a, const Op& b) {
  const bool same_name =
      a.tags.name == b.tags.name || (!gemm_labels.contains(LabelOf(graph, a.tags.name)) &&
                                     !gemm_labels.contains(LabelOf(graph, b.tags.name)));
  return a.kind == b.kind && a.collective == b.collective && a.unit == b.unit && a.root == b.root &&
         a.directions == b.directions && a.bytes == b.bytes && a.m == b.m && a.n == b.n &&
         a.k == b.k && same_name && a.tags.layer == b.tags.layer && a.tags.slice == b.tags.slice &&
         a.tags.pass == b.tags.pass && a.tags.stage == b.tags.stage &&
         a.tags.microbatch == b.tags.microbatch && a.tags.task == b.tags.task;
}

// A collective's place: a whole line of the torus along `dim` in one direction, named by its
// member with coordinate 0 along `dim` (`anchor`), or a single chip (dim −1). The same key for
// every rotation of the ring: a ring step moves the same flows whichever member is first.
struct Line {
  int dim = -1;
  int dir = 0;
  int anchor = 0;
  int64_t Key(int chips) const {
    return (int64_t{dim} + 1) * 2 * chips + int64_t{dir > 0} * chips + anchor;
  }
};

std::optional<Line> LineOf(const Torus& t, std::span<const ChipId> members) {
  const int p = static_cast<int>(members.size());
  Line line;
  const int m0 = static_cast<int>(members[0].value());
  if (p == 1) {
    line.anchor = m0;
    return line;
  }
  const int m1 = static_cast<int>(members[1].value());
  for (int d = 0; d < t.rank(); ++d) {
    if (t.Coord(m0, d) != t.Coord(m1, d)) {
      if (line.dim >= 0) return std::nullopt;  // Differs in two dimensions.
      line.dim = d;
    }
  }
  if (line.dim < 0 || t.extent(line.dim) != p) return std::nullopt;
  const int n = t.extent(line.dim);
  const int step = ((t.Coord(m1, line.dim) - t.Coord(m0, line.dim)) % n + n) % n;
  if (step != 1 && step != n - 1) return std::nullopt;
  const int by = step == 1 ? 1 : -1;
  for (int k = 0; k + 1 < p; ++k) {
    if (static_cast<int>(members[k + 1].value()) !=
        t.Shift(static_cast<int>(members[k].value()), line.dim, by)) {
      return std::nullopt;
    }
  }
  line.dir = by;
  line.anchor = t.Shift(m0, line.dim, -t.Coord(m0, line.dim));
  return line;
}

}  // namespace

std::vector<int> FoldPeriods(std::span<const int> dims) {
  std::vector<int> periods;
  for (int n : dims) periods.push_back(n >= 4 && n % 2 == 0 ? 2 : n);
  return periods;
}

namespace {

// FoldTorusGraph with the given periods. On a refusal, `*unfold` is a dimension whose period
// caused it (folding the others may still work), or −1.
std::optional<FoldedGraph> FoldWithPeriods(const core::OpGraph& graph, const Torus& t,
                                           const std::vector<int>& periods, std::string* why,
                                           int* unfold) {
  *unfold = -1;
  const auto refuse = [why](std::string reason) -> std::optional<FoldedGraph> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const auto refuse_dim = [&](int d, std::string reason) {
    *unfold = d;
    return refuse(std::move(reason));
  };
  int box = 1;
  for (int f : periods) box *= f;
  const size_t n = graph.size();
  const int chips = t.chips();

  // The first folded dimension along which chips a and b differ, or −1.
  const auto folded_difference = [&](int a, int b) {
    for (int d = 0; d < t.rank(); ++d) {
      if (periods[d] != t.extent(d) && t.Coord(a, d) != t.Coord(b, d)) return d;
    }
    return -1;
  };
  int crossed = -1;  // Set by key_of_group's refusal: the folded dimension a group crosses.

  // Each collective's place. A whole line along a folded dimension (its members fold onto
  // repeated box chips) must be a ring collective (the network moves one member's flows for all
  // its images); its key is the line's, whatever member the ring starts at. Any other group must
  // lie in the unfolded dimensions (its members share their folded coordinates, so its routes
  // are the folded machine's); it is any list of chips, keyed by itself (−1 − its id), and its
  // translates must be groups of the graph with the translated members in the same order (a
  // Broadcast's root is a position in that order).
  std::vector<int64_t> place_key(graph.num_groups(), 0);
  std::vector<char> place_known(graph.num_groups(), 0);
  std::vector<Line> lines(graph.num_groups());
  absl::flat_hash_map<std::vector<uint32_t>, uint32_t> group_of;  // Non-line groups.
  std::vector<uint32_t> list_key;
  const auto key_of_group = [&](uint32_t g) -> std::optional<int64_t> {
    if (place_known[g]) return place_key[g];
    const auto members = graph.group(core::GroupId(g));
    if (std::optional<Line> line = LineOf(t, members);
        line.has_value() && line->dim >= 0 && periods[line->dim] != t.extent(line->dim)) {
      // A ring against the dimension's direction would take the − links that the folded
      // torus's ring steps (routed forward: + links) do not: refused rather than mirrored.
      if (line->dir < 0) {
        crossed = line->dim;
        return std::nullopt;
      }
      lines[g] = *line;
      place_key[g] = line->Key(chips);
    } else {
      // Routes between its members must stay off the folded dimensions, as a transfer's.
      for (ChipId c : members) {
        crossed =
            folded_difference(static_cast<int>(c.value()), static_cast<int>(members[0].value()));
        if (crossed >= 0) return std::nullopt;
      }
      lines[g].dim = -2;  // Not a line along a folded dimension.
      place_key[g] = -1 - int64_t{g};
      list_key.clear();
      for (ChipId c : members) list_key.push_back(c.value());
      group_of.emplace(list_key, g);
    }
    place_known[g] = 1;
    return place_key[g];
  };

  // Each op's place and its index among the ops of that place (program order). A transfer's
  // place is its sender.
  std::vector<std::vector<uint32_t>> chip_ops(chips);
  absl::flat_hash_map<int64_t, std::vector<uint32_t>> group_ops;
  std::vector<uint32_t> seq(n);
  for (uint32_t i = 0; i < n; ++i) {
    const Op& op = graph.op(OpId(i));
    switch (op.kind) {
      case OpKind::kTransfer:
        // Its route is the folded machine's only if it crosses no folded dimension.
        if (const int d = folded_difference(static_cast<int>(op.chip.value()),
                                            static_cast<int>(op.peer.value()));
            d >= 0) {
          return refuse_dim(d, "a transfer crosses a folded dimension");
        }
        [[fallthrough]];
      case OpKind::kDelay:
      case OpKind::kGemm:
      case OpKind::kCopy:
      case OpKind::kVector: {
        auto& list = chip_ops[op.chip.value()];
        seq[i] = static_cast<uint32_t>(list.size());
        list.push_back(i);
        break;
      }
      case OpKind::kCollective: {
        const std::optional<int64_t> key = key_of_group(op.group.value());
        if (!key.has_value()) {
          return refuse_dim(
              crossed,
              "a collective's group crosses a folded dimension but is not a whole torus line");
        }
        const bool ring = op.collective == core::CollectiveKind::kAllGather ||
                          op.collective == core::CollectiveKind::kReduceScatter ||
                          op.collective == core::CollectiveKind::kAllReduce;
        if (*key >= 0 && !ring) {
          return refuse_dim(lines[op.group.value()].dim,
                            absl::StrFormat("a %s is not the same on every member of a folded line",
                                            core::ToString(op.collective)));
        }
        auto& list = group_ops[*key];
        seq[i] = static_cast<uint32_t>(list.size());
        list.push_back(i);
        break;
      }
    }
  }

  // The place key of group g moved by `by` along d, or nullopt.
  const auto moved_key = [&](uint32_t g, int d, int by) -> std::optional<int64_t> {
    if (lines[g].dim >= -1) {
      Line line = lines[g];
      if (line.dim != d) line.anchor = t.Shift(line.anchor, d, by);
      return line.Key(chips);
    }
    list_key.clear();
    for (ChipId c : graph.group(core::GroupId(g))) {
      list_key.push_back(static_cast<uint32_t>(t.Shift(static_cast<int>(c.value()), d, by)));
    }
    const auto it = group_of.find(list_key);
    if (it == group_of.end()) return std::nullopt;
    return -1 - int64_t{it->second};
  };
  // The op that `i`'s place moved by `by` along d holds at i's index, or kNone.
  const auto moved = [&](uint32_t i, int d, int by) -> uint32_t {
    const Op& op = graph.op(OpId(i));
    const std::vector<uint32_t>* list;
    if (op.kind == OpKind::kCollective) {
      const std::optional<int64_t> key = moved_key(op.group.value(), d, by);
      if (!key.has_value()) return kNone;
      const auto it = group_ops.find(*key);
      if (it == group_ops.end()) return kNone;
      list = &it->second;
    } else {
      list = &chip_ops[t.Shift(static_cast<int>(op.chip.value()), d, by)];
    }
    if (seq[i] >= list->size()) return kNone;
    const uint32_t j = (*list)[seq[i]];
    if (op.kind == OpKind::kTransfer &&
        graph.op(OpId(j)).peer.value() !=
            static_cast<uint32_t>(t.Shift(static_cast<int>(op.peer.value()), d, by))) {
      return kNone;
    }
    return j;
  };

  // The symmetry, by the generators: each op's translate does the same work after the
  // translates of its dependencies.
  absl::flat_hash_set<std::string_view> gemm_labels;
  for (uint32_t i = 0; i < n; ++i) {
    const Op& op = graph.op(OpId(i));
    if (op.flops() > 0) gemm_labels.insert(LabelOf(graph, op.tags.name));
  }
  std::vector<uint32_t> a, b;
  for (int d = 0; d < t.rank(); ++d) {
    if (periods[d] == t.extent(d)) continue;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t j = moved(i, d, periods[d]);
      if (j == kNone || !SameWork(graph, gemm_labels, graph.op(OpId(i)), graph.op(OpId(j)))) {
        return refuse_dim(
            d, absl::StrFormat("op %d has no equal on the chips %d apart along dimension %d", i,
                               periods[d], d));
      }
      a.clear();
      b.clear();
      for (OpId dep : graph.deps(OpId(i))) a.push_back(moved(dep.value(), d, periods[d]));
      for (OpId dep : graph.deps(OpId(j))) b.push_back(dep.value());
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
      b.erase(std::unique(b.begin(), b.end()), b.end());
      if (a != b) {
        return refuse_dim(
            d, absl::StrFormat(
                   "op %d and its equal %d apart along dimension %d wait for different ops", i,
                   periods[d], d));
      }
    }
  }

  // Representatives: the translate whose place is in the box (for a group that is not a line:
  // whose first member is).
  const auto representative = [&](uint32_t i) -> uint32_t {
    const Op& op = graph.op(OpId(i));
    if (op.kind != OpKind::kCollective) {
      return chip_ops[t.InBox(static_cast<int>(op.chip.value()), periods)][seq[i]];
    }
    const uint32_t g = op.group.value();
    if (lines[g].dim >= -1) {
      Line line = lines[g];
      line.anchor = t.InBox(line.anchor, periods);
      return group_ops.at(line.Key(chips))[seq[i]];
    }
    const int first = static_cast<int>(graph.group(op.group)[0].value());
    list_key.clear();
    for (ChipId c : graph.group(op.group)) {
      int moved_chip = static_cast<int>(c.value());
      for (int d = 0; d < t.rank(); ++d) {
        moved_chip = t.Shift(moved_chip, d, t.Coord(first, d) % periods[d] - t.Coord(first, d));
      }
      list_key.push_back(static_cast<uint32_t>(moved_chip));
    }
    return group_ops.at(-1 - int64_t{group_of.at(list_key)})[seq[i]];
  };
  FoldedGraph out;
  out.dims.assign(t.extents().begin(), t.extents().end());
  out.periods = periods;
  out.box_chip.resize(chips);
  for (int c = 0; c < chips; ++c) out.box_chip[c] = static_cast<uint32_t>(t.Folded(c, periods));
  out.chips = box;
  out.real_chips = chips;
  for (const std::string& name : graph.names().all()) out.graph.Intern(name);
  std::vector<uint32_t> new_id(n, kNone);
  std::vector<OpId> deps;
  std::vector<ChipId> members;
  for (uint32_t i = 0; i < n; ++i) {
    if (representative(i) != i) continue;
    Op op = graph.op(OpId(i));
    if (op.kind == OpKind::kCollective) {
      members.clear();
      for (ChipId c : graph.group(op.group)) {
        members.push_back(ChipId(t.Folded(static_cast<int>(c.value()), periods)));
      }
      op.group = out.graph.AddGroup(members, /*images=*/true);
    } else {
      op.chip = ChipId(t.Folded(static_cast<int>(op.chip.value()), periods));
      if (op.kind == OpKind::kTransfer) {
        op.peer = ChipId(t.Folded(static_cast<int>(op.peer.value()), periods));
      }
    }
    deps.clear();
    for (OpId dep : graph.deps(OpId(i))) {
      const uint32_t r = new_id[representative(dep.value())];
      if (r == kNone) {
        return refuse(absl::StrFormat(
            "op %d waits for an op whose representative in the box comes after it", i));
      }
      deps.push_back(OpId(r));
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    new_id[i] = static_cast<uint32_t>(out.graph.size());
    out.graph.Add(op, deps);
  }
  out.representative.resize(n);
  for (uint32_t i = 0; i < n; ++i) out.representative[i] = new_id[representative(i)];
  return out;
}

}  // namespace

std::optional<FoldedGraph> FoldTorusGraph(const core::OpGraph& graph, std::span<const int> dims,
                                          std::string* why) {
  const Torus t(dims);
  if (t.chips() == 0 || graph.num_chips() > t.chips()) {
    if (why != nullptr) *why = "ops name chips outside the torus";
    return std::nullopt;
  }
  // Fold every dimension that can be; where a dimension's translation is no symmetry (a
  // pipeline's stages along it, a transfer across it), leave it whole and try the others.
  std::vector<int> periods = FoldPeriods(dims);
  for (bool tried = false;; tried = true) {
    int box = 1;
    for (int f : periods) box *= f;
    if (box == t.chips()) {
      if (why != nullptr && !tried) *why = "no dimension folds";
      return std::nullopt;
    }
    int unfold = -1;
    std::optional<FoldedGraph> folded = FoldWithPeriods(graph, t, periods, why, &unfold);
    if (folded.has_value() || unfold < 0) return folded;
    periods[unfold] = t.extent(unfold);
  }
}

}  // namespace meshsim::sim

namespace meshsim::sim {

Preimages PreimagesOf(std::span<const uint32_t> map, size_t targets) {
  Preimages p;
  p.begin.assign(targets + 1, 0);
  for (uint32_t t : map) ++p.begin[t + 1];
  for (size_t t = 0; t < targets; ++t) p.begin[t + 1] += p.begin[t];
  p.items.resize(map.size());
  std::vector<uint32_t> next(p.begin.begin(), p.begin.end() - 1);
  for (uint32_t i = 0; i < map.size(); ++i) p.items[next[map[i]]++] = i;
  return p;
}

std::optional<core::TimelineRows> ExpandRows(const core::OpGraph& graph, const FoldedGraph& folded,
                                             std::span<const core::TimelineRow> rows,
                                             size_t max_rows) {
  const Preimages represented = PreimagesOf(folded.representative, folded.graph.size());

  core::TimelineRows out;
  for (const core::TimelineRow& row : rows) {
    if (out.size() > max_rows) return std::nullopt;
    for (const uint32_t represented_op : represented.of(row.op.value())) {
      const OpId u(represented_op);
      const Op& op = graph.op(u);
      if (!row.chip.valid()) {  // A row of no chip: once per op.
        core::TimelineRow copy = row;
        copy.op = u;
        copy.name = op.tags.name;
        out.push_back(copy);
        continue;
      }
      const auto emit = [&](ChipId c) {
        if (folded.box_chip[c.value()] != row.chip.value()) return;
        core::TimelineRow copy = row;
        copy.op = u;
        copy.chip = c;
        copy.name = op.tags.name;  // Names no GeMM label shares may differ from image to image.
        out.push_back(copy);
      };
      if (op.kind == OpKind::kCollective) {
        for (ChipId c : graph.group(op.group)) emit(c);
      } else {
        emit(op.chip);
        if (op.kind == OpKind::kTransfer) emit(op.peer);
      }
    }
  }
  if (out.size() > max_rows) return std::nullopt;
  return out;
}

}  // namespace meshsim::sim
