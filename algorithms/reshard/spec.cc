#include "algorithms/reshard/spec.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace meshsim::algorithms::reshard {

namespace {

absl::Status BadSpec(const std::string& text, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "sharding spec '%s': %s (per dimension one of R, S0, S1, S01, e.g. S0RR or RS01R)", text,
      why));
}

// The distinct slices of a sharded tensor: per slice (a tuple of shard indices) its box and
// its holders in chip order.
struct Slice {
  std::vector<Interval> box;
  std::vector<core::ChipId> holders;
};

std::vector<Slice> Slices(const ShardedTensor& t, const std::vector<int64_t>& shape) {
  std::map<std::vector<int>, size_t> index;
  std::vector<Slice> slices;
  for (int r = 0; r < t.mesh.rows; ++r) {
    for (int c = 0; c < t.mesh.cols; ++c) {
      std::vector<int> key;
      for (DimSharding d : t.spec.dims) key.push_back(ShardIndex(d, t.mesh, r, c));
      auto [it, inserted] = index.emplace(key, slices.size());
      if (inserted) {
        Slice s;
        for (size_t i = 0; i < shape.size(); ++i) {
          s.box.push_back(ShardInterval(shape[i], NumShards(t.spec.dims[i], t.mesh), key[i]));
        }
        slices.push_back(std::move(s));
      }
      slices[it->second].holders.push_back(t.mesh.At(r, c));
    }
  }
  for (Slice& s : slices) std::sort(s.holders.begin(), s.holders.end());
  return slices;
}

}  // namespace

std::string ShardingSpec::ToString() const {
  std::string out;
  for (DimSharding d : dims) {
    switch (d) {
      case DimSharding::kReplicated:
        out += "R";
        break;
      case DimSharding::kRows:
        out += "S0";
        break;
      case DimSharding::kCols:
        out += "S1";
        break;
      case DimSharding::kBoth:
        out += "S01";
        break;
    }
  }
  return out;
}

absl::StatusOr<ShardingSpec> ParseSpec(const std::string& text, int rank) {
  ShardingSpec spec;
  bool rows_used = false, cols_used = false;
  size_t i = 0;
  while (i < text.size()) {
    DimSharding d;
    if (text[i] == 'R') {
      d = DimSharding::kReplicated;
      i += 1;
    } else if (text.compare(i, 3, "S01") == 0) {
      d = DimSharding::kBoth;
      i += 3;
    } else if (text.compare(i, 2, "S0") == 0) {
      d = DimSharding::kRows;
      i += 2;
    } else if (text.compare(i, 2, "S1") == 0) {
      d = DimSharding::kCols;
      i += 2;
    } else {
      return BadSpec(text, absl::StrFormat("unknown token at '%s'", text.substr(i)));
    }
    const bool rows = d == DimSharding::kRows || d == DimSharding::kBoth;
    const bool cols = d == DimSharding::kCols || d == DimSharding::kBoth;
    if ((rows && rows_used) || (cols && cols_used)) {
      return BadSpec(text, absl::StrFormat("mesh axis %d shards two tensor dimensions",
                                           (rows && rows_used) ? 0 : 1));
    }
    rows_used |= rows;
    cols_used |= cols;
    spec.dims.push_back(d);
  }
  if (static_cast<int>(spec.dims.size()) != rank) {
    return BadSpec(text, absl::StrFormat("has %d dimensions but the tensor has rank %d",
                                         spec.dims.size(), rank));
  }
  return spec;
}

int NumShards(DimSharding d, const Mesh& mesh) {
  switch (d) {
    case DimSharding::kReplicated:
      return 1;
    case DimSharding::kRows:
      return mesh.rows;
    case DimSharding::kCols:
      return mesh.cols;
    case DimSharding::kBoth:
      return mesh.rows * mesh.cols;
  }
  return 1;
}

int ShardIndex(DimSharding d, const Mesh& mesh, int r, int c) {
  switch (d) {
    case DimSharding::kReplicated:
      return 0;
    case DimSharding::kRows:
      return r;
    case DimSharding::kCols:
      return c;
    case DimSharding::kBoth:
      return r * mesh.cols + c;
  }
  return 0;
}

Interval ShardInterval(int64_t n, int k, int j) {
  const int64_t step = (n + k - 1) / k;  // ⌈n/k⌉: the padded shard.
  return {std::min(n, j * step), std::min(n, (j + 1) * step)};
}

absl::Status CheckProblem(const ReshardProblem& p) {
  if (p.shape.empty()) return absl::InvalidArgumentError("--shape: the tensor needs rank >= 1");
  for (int64_t n : p.shape) {
    if (n < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--shape: extent %d is not allowed; extents must be >= 1", n));
    }
  }
  const std::pair<const char*, const ShardedTensor*> sides[] = {{"--src-spec", &p.src},
                                                                {"--dst-spec", &p.dst}};
  for (const auto& [name, t] : sides) {
    if (t->spec.dims.size() != p.shape.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: '%s' has %d dimensions but --shape has %d", name, t->spec.ToString(),
                          t->spec.dims.size(), p.shape.size()));
    }
  }
  if (p.element_bytes < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--dtype-bytes: %d is not allowed; must be >= 1", p.element_bytes));
  }
  for (int a = 0; a < p.src.mesh.chips(); ++a) {
    for (int b = 0; b < p.dst.mesh.chips(); ++b) {
      if (p.src.mesh.Chip(a) == p.dst.mesh.Chip(b)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--dst-placement: chip %d is in both meshes; the sender and receiver meshes must "
            "not overlap",
            p.src.mesh.Chip(a).value()));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<UnitTask> UnitTasks(const ReshardProblem& p) {
  const std::vector<Slice> src = Slices(p.src, p.shape);
  const std::vector<Slice> dst = Slices(p.dst, p.shape);
  std::vector<UnitTask> tasks;
  for (const Slice& a : src) {
    for (const Slice& b : dst) {
      UnitTask t;
      int64_t elements = 1;
      for (size_t i = 0; i < p.shape.size(); ++i) {
        const Interval x{std::max(a.box[i].lo, b.box[i].lo), std::min(a.box[i].hi, b.box[i].hi)};
        elements *= x.size();
        t.box.push_back(x);
      }
      if (elements == 0) continue;
      t.bytes = elements * p.element_bytes;
      t.senders = a.holders;
      t.receivers = b.holders;
      tasks.push_back(std::move(t));
    }
  }
  return tasks;
}

}  // namespace meshsim::algorithms::reshard
