#include "algorithms/autotune/atp_tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace meshsim::algorithms {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Route look-ups as plain link indices, with the links' bandwidths.
class Router {
 public:
  explicit Router(const network::Topology& t) : t_(t) {
    for (const network::Link& l : t.links()) bandwidth_.push_back(l.bandwidth_bytes_per_s);
  }
  std::vector<int> Route(int a, int b, uint64_t hash,
                         network::RingDir dir = network::RingDir::kForward) const {
    std::vector<int> out;
    for (core::LinkId l : t_.Route(core::ChipId(a), core::ChipId(b), hash, dir)) {
      out.push_back(static_cast<int>(l.value()));
    }
    return out;
  }
  double Bottleneck(int a, int b) const {
    double bw = kInf;
    for (int l : Route(a, b, 0)) bw = std::min(bw, bandwidth_[l]);
    return bw;
  }
  const std::vector<double>& bandwidth() const { return bandwidth_; }
  const network::Topology& topology() const { return t_; }

 private:
  const network::Topology& t_;
  std::vector<double> bandwidth_;
};

// Hashes tried per flow when routing offers equal-cost paths: enough to see every combination
// of the few ECMP choices between two GPUs of multi-NIC hosts over a fat-tree.
constexpr int kPathChoices = 32;

// Σ max-min rates of the flows src[i] → dst[i]. Where routing offers equal-cost paths (ECMP on
// multi-NIC hosts, fat-trees), a flow is split into one subflow per distinct route of
// kPathChoices hashes, each a max-min flow of its own: the aggregate is what the paths can carry
// together, not what one unlucky hash collision leaves. Grids and rings route by dimension
// order, which ignores the hash; there a flow takes both ring directions' routes, which differ
// only across a torus dimension of length 2 joined twice (torus.length2_links = 2: the + and the
// − port), so such a pair's flow is split over its two links.
double Aggregate(const Router& r, const std::vector<std::pair<int, int>>& pairs) {
  const std::string& family = r.topology().name();
  const bool one_path =
      family == "torus2d" || family == "torus3d" || family == "mesh2d" || family == "ring";
  std::vector<std::vector<int>> flows;
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::set<std::vector<int>> routes;
    if (one_path) {
      routes.insert(r.Route(pairs[i].first, pairs[i].second, 0, network::RingDir::kForward));
      routes.insert(r.Route(pairs[i].first, pairs[i].second, 0, network::RingDir::kBackward));
    }
    for (int h = 0; h < (one_path ? 0 : kPathChoices); ++h) {
      routes.insert(r.Route(pairs[i].first, pairs[i].second, i * kPathChoices + h));
    }
    flows.insert(flows.end(), routes.begin(), routes.end());
  }
  const std::vector<double> rates = MaxMinRates(flows, r.bandwidth());
  return std::accumulate(rates.begin(), rates.end(), 0.0);
}

struct Split {
  int rank_chips = 1;  // 1 = the block's ranks are its chips (no further layer).
  std::string name, rule;
};

// Rule 1: hosts of k > 1 consecutive chips each.
Split SplitByHosts(const network::Topology& t, int n) {
  const int h0 = t.HostOf(core::ChipId(0));
  int k = 1;
  while (k < n && t.HostOf(core::ChipId(k)) == h0) ++k;
  if (k <= 1 || k >= n || n % k != 0) return {};
  for (int c = 0; c < n; ++c) {
    const bool first_of_run = c % k == 0;
    if (first_of_run && c > 0 && t.HostOf(core::ChipId(c)) == t.HostOf(core::ChipId(c - 1))) {
      return {};
    }
    if (!first_of_run && t.HostOf(core::ChipId(c)) != t.HostOf(core::ChipId(c - 1))) return {};
  }
  return {k, "hosts", "hosts"};
}

// Rule 2: the leading slices of a row-major grid sub-box.
Split SplitByGrid(const network::Topology& t, int chips, int n) {
  const std::string& family = t.name();
  if (family != "torus2d" && family != "torus3d" && family != "mesh2d") return {};
  const std::vector<int>& dims = t.dims();
  if (dims.empty() || chips != t.num_chips()) return {};
  const int m = static_cast<int>(dims.size());
  std::vector<int64_t> suffix(m + 1, 1);  // suffix[j] = D_j ⋯ D_{m−1}.
  for (int j = m - 1; j >= 0; --j) suffix[j] = suffix[j + 1] * dims[j];
  int j = 0;
  while (j < m && suffix[j] != n) ++j;
  while (j < m - 1 && suffix[j + 1] == n) ++j;  // Extents of 1 split nothing.
  if (j >= m - 1) return {};
  const int k = static_cast<int>(suffix[j + 1]);
  const bool rings = k == dims[m - 1];
  const bool torus = family != "mesh2d";
  return {k, rings ? (torus ? "rings" : "rows") : "planes", "grid"};
}

// Rule 3: runs of chips joined by the block's fastest routes.
Split SplitByCluster(const Router& r, int n) {
  if (n < 3) return {};
  std::vector<std::vector<double>> bw(n, std::vector<double>(n, 0));
  double fastest = 0;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      bw[a][b] = r.Bottleneck(a, b);
      fastest = std::max(fastest, bw[a][b]);
    }
  }
  // Union-find over the fastest pairs (both directions).
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  const auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (bw[a][b] >= fastest * (1 - 1e-9) && bw[b][a] >= fastest * (1 - 1e-9)) {
        parent[find(a)] = find(b);
      }
    }
  }
  int k = 1;
  while (k < n && find(k) == find(0)) ++k;
  if (k <= 1 || k >= n || n % k != 0) return {};
  for (int c = 0; c < n; ++c) {
    const int head = c - c % k;
    if (find(c) != find(head)) return {};
    if (c % k == 0 && c > 0 && find(c) == find(c - 1)) return {};
  }
  // Name the groups after the class of the fastest link.
  std::string cls = "link";
  const std::vector<int> route = r.Route(0, 1, 0);
  if (!route.empty()) cls = network::ToString(r.topology().links()[route.front()].cls);
  return {k, absl::StrCat(cls, " groups"), "cluster"};
}

std::string LeafName(const std::string& parent_rule) {
  if (parent_rule == "hosts") return "devices in a host";
  if (parent_rule == "grid") return "devices in a ring";
  if (parent_rule == "cluster") return "devices in a group";
  return "devices";
}

bool Close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

absl::StatusOr<Mesh> ParseMesh(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, 'x');
  int r = 0, c = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &r) || !absl::SimpleAtoi(parts[1], &c) ||
      r < 1 || c < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--atp-bandwidth: mesh '%s' is not allowed; allowed: D1xD2 with D1, D2 ≥ 1 (e.g. 2x4)",
        text));
  }
  return Mesh{r, c};
}

}  // namespace

const char* ToString(AtpMatrix m) {
  switch (m) {
    case AtpMatrix::kOneLevel:
      return "one-level";
    case AtpMatrix::kMeasured:
      return "measured";
    default:
      return "hierarchical";
  }
}

absl::StatusOr<AtpMatrix> ParseAtpMatrix(const std::string& text) {
  for (AtpMatrix m : {AtpMatrix::kHierarchical, AtpMatrix::kOneLevel, AtpMatrix::kMeasured}) {
    if (text == ToString(m)) return m;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--atp-matrix: '%s' is not allowed; allowed: hierarchical (the matrix derived from the "
      "topology, default), one-level (one fully connected layer, ATP §5.3's reading), measured "
      "(every mesh's all-reduce bandwidths simulated on the machine, §5.3's calibration)",
      text));
}

std::pair<int, int> CommMatrix::Locate(int layer, int chip) const {
  const CommLayer& l = layers[layer];
  const int parent_chips = l.ranks * l.rank_chips;
  return {chip / parent_chips, (chip % parent_chips) / l.rank_chips};
}

bool CommMatrix::Uniform() const {
  for (const CommLayer& l : layers) {
    for (const CommBlock& p : l.parents) {
      for (int a = 0; a < l.ranks; ++a) {
        if (!Close(p.group[a], l.parents[0].group[a])) return false;
        for (int b = 0; b < l.ranks; ++b) {
          if (!Close(p.p2p[a][b], l.parents[0].p2p[a][b])) return false;
        }
      }
    }
  }
  return true;
}

std::vector<double> MaxMinRates(const std::vector<std::vector<int>>& flows,
                                const std::vector<double>& bandwidth) {
  std::vector<double> rate(flows.size(), 0), remaining = bandwidth;
  std::vector<bool> frozen(flows.size(), false);
  for (size_t f = 0; f < flows.size(); ++f) frozen[f] = flows[f].empty();
  std::vector<int> count(bandwidth.size(), 0);
  while (true) {
    std::fill(count.begin(), count.end(), 0);
    bool any = false;
    for (size_t f = 0; f < flows.size(); ++f) {
      if (frozen[f]) continue;
      any = true;
      for (int l : flows[f]) ++count[l];
    }
    if (!any) break;
    double step = kInf;
    for (size_t l = 0; l < count.size(); ++l) {
      if (count[l] > 0) step = std::min(step, remaining[l] / count[l]);
    }
    std::vector<bool> saturated(count.size(), false);
    for (size_t l = 0; l < count.size(); ++l) {
      if (count[l] == 0) continue;
      if (remaining[l] / count[l] <= step * (1 + 1e-12)) {
        saturated[l] = true;
        remaining[l] = 0;
      } else {
        remaining[l] -= step * count[l];
      }
    }
    for (size_t f = 0; f < flows.size(); ++f) {
      if (frozen[f]) continue;
      rate[f] += step;
      for (int l : flows[f]) {
        if (saturated[l]) frozen[f] = true;
      }
    }
  }
  return rate;
}

absl::StatusOr<CommMatrix> BuildCommMatrix(const network::Topology& topology, int chips,
                                           AtpMatrix reading) {
  if (chips < 1 || chips > topology.num_chips()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--chips: %d is not allowed for the ATP matrix; allowed: 1..%d (the "
                        "topology's chips)",
                        chips, topology.num_chips()));
  }
  const Router router(topology);
  CommMatrix m;
  m.chips = chips;
  m.reading = reading;
  // The splits are found on the first block of each level and hold for all of them (the
  // families build every host, ring and NVLink group alike).
  int n = chips;
  std::string parent_rule;
  if (reading == AtpMatrix::kOneLevel) {
    CommLayer layer;
    layer.name = "devices (one fully connected level)";
    layer.rule = "one-level";
    layer.ranks = chips;
    layer.rank_chips = 1;
    m.layers.push_back(std::move(layer));
  }
  while (reading == AtpMatrix::kHierarchical || reading == AtpMatrix::kMeasured) {
    Split s = SplitByHosts(topology, n);
    if (s.rank_chips <= 1) s = SplitByGrid(topology, chips, n);
    if (s.rank_chips <= 1) s = SplitByCluster(router, n);
    CommLayer layer;
    if (s.rank_chips <= 1) {
      layer.name = LeafName(parent_rule);
      layer.rule = "devices";
      layer.ranks = n;
      layer.rank_chips = 1;
      m.layers.push_back(std::move(layer));
      break;
    }
    layer.name = s.name;
    layer.rule = s.rule;
    layer.ranks = n / s.rank_chips;
    layer.rank_chips = s.rank_chips;
    m.layers.push_back(std::move(layer));
    parent_rule = s.rule;
    n = s.rank_chips;
  }

  for (CommLayer& layer : m.layers) {
    const int parent_chips = layer.ranks * layer.rank_chips;
    const int k = layer.rank_chips;
    for (int first = 0; first < chips; first += parent_chips) {
      CommBlock block;
      block.first_chip = first;
      block.p2p.assign(layer.ranks, std::vector<double>(layer.ranks, 0));
      block.group.assign(layer.ranks, 0);
      for (int a = 0; a < layer.ranks; ++a) {
        std::vector<std::pair<int, int>> to_rest;
        for (int b = 0; b < layer.ranks; ++b) {
          if (a == b) continue;
          std::vector<std::pair<int, int>> pairs;
          for (int i = 0; i < k; ++i) pairs.emplace_back(first + a * k + i, first + b * k + i);
          block.p2p[a][b] = Aggregate(router, pairs);
          to_rest.insert(to_rest.end(), pairs.begin(), pairs.end());
        }
        block.group[a] = Aggregate(router, to_rest);
      }
      layer.parents.push_back(std::move(block));
    }
  }
  return m;
}

AtpPrimeBandwidths PrimeBandwidths(const CommMatrix& matrix, int d1, int d2) {
  AtpPrimeBandwidths out;
  if (matrix.reading == AtpMatrix::kOneLevel) {
    // One fully connected layer: B'1 = B'2 = GroupBW, the least Group(a) over the chips.
    const std::vector<double>& group = matrix.layers.front().parents.front().group;
    const double group_bw = group.empty() ? 0 : *std::min_element(group.begin(), group.end());
    if (d1 > 1) {
      out.b1_prime = group_bw;
      out.layers1 = {0};
    }
    if (d2 > 1) {
      out.b2_prime = group_bw;
      out.layers2 = {0};
    }
    return out;
  }
  for (int dim = 1; dim <= 2; ++dim) {
    const int d = dim == 1 ? d1 : d2;
    if (d <= 1) continue;
    // The dimension's groups: mesh rows (dim 2) or columns (dim 1), as chip lists.
    std::vector<std::vector<int>> groups;
    if (dim == 2) {
      for (int i = 0; i < d1; ++i) {
        groups.emplace_back();
        for (int j = 0; j < d2; ++j) groups.back().push_back(i * d2 + j);
      }
    } else {
      for (int j = 0; j < d2; ++j) {
        groups.emplace_back();
        for (int i = 0; i < d1; ++i) groups.back().push_back(i * d2 + j);
      }
    }
    double best = kInf;
    std::vector<int>& spanned = dim == 1 ? out.layers1 : out.layers2;
    for (int l = 0; l < static_cast<int>(matrix.layers.size()); ++l) {
      const CommLayer& layer = matrix.layers[l];
      // Per group: parent → the ranks it touches there.
      std::vector<std::map<int, std::set<int>>> touched(groups.size());
      for (size_t g = 0; g < groups.size(); ++g) {
        for (int chip : groups[g]) {
          const auto [p, r] = matrix.Locate(l, chip);
          touched[g][p].insert(r);
        }
      }
      std::map<std::pair<int, int>, int> share;  // (parent, rank) → spanning groups there.
      for (const auto& t : touched) {
        for (const auto& [p, ranks] : t) {
          if (ranks.size() < 2) continue;
          for (int r : ranks) ++share[{p, r}];
        }
      }
      bool spans = false;
      for (const auto& t : touched) {
        for (const auto& [p, ranks] : t) {
          if (ranks.size() < 2) continue;
          spans = true;
          const CommBlock& block = layer.parents[p];
          for (int a : ranks) {
            double peers = 0;
            for (int b : ranks) {
              if (b != a) peers += block.p2p[a][b];
            }
            const double usable = std::min(block.group[a], peers);
            best = std::min(best, usable / share[{p, a}]);
          }
        }
      }
      if (spans) spanned.push_back(l);
    }
    (dim == 1 ? out.b1_prime : out.b2_prime) = best == kInf ? 0 : best;
  }
  return out;
}

double RabenseifnerBandwidth(int d, double b_prime) {
  if (d <= 1) return 0;
  return static_cast<double>(d) / (2.0 * (d - 1)) * b_prime;
}

void CommTime(const AtpProblem& p, AtpMeshEstimate& e) {
  const int d1 = e.mesh.rows, d2 = e.mesh.cols;
  const double base = 2.0 * static_cast<double>(p.layers) * static_cast<double>(p.batch) *
                      static_cast<double>(p.seq) * p.element_bytes;
  const double h = static_cast<double>(p.hidden);
  e.t_dim2_s = d2 > 1 ? base * 7 * h / (d1 * e.b2) : 0;
  e.t_dim1_s = d1 > 1 ? base * 2 * h / (d2 * e.b1) : 0;
  e.t_comm_s = e.t_dim2_s + e.t_dim1_s;
}

const AtpMeshEstimate* AtpResult::Find(const Mesh& mesh) const {
  for (const AtpMeshEstimate& e : meshes) {
    if (e.mesh.rows == mesh.rows && e.mesh.cols == mesh.cols) return &e;
  }
  return nullptr;
}

absl::StatusOr<AtpResult> AtpSearch(const CommMatrix& matrix, const AtpProblem& problem) {
  const std::pair<const char*, int64_t> sizes[] = {{"layers", problem.layers},
                                                   {"batch", problem.batch},
                                                   {"seq", problem.seq},
                                                   {"hidden", problem.hidden},
                                                   {"element bytes", problem.element_bytes}};
  for (const auto& [key, value] : sizes) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("atp: %s = %d is not allowed; must be ≥ 1", key, value));
    }
  }
  const int n = matrix.chips;
  std::vector<Mesh> candidates;
  if (!problem.calibrated.empty()) {
    for (const auto& [key, cal] : problem.calibrated) {
      auto mesh = ParseMesh(key);
      if (!mesh.ok()) return mesh.status();
      candidates.push_back(*mesh);
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Mesh& a, const Mesh& b) { return a.rows > b.rows; });
  } else if (!problem.meshes.empty()) {
    candidates = problem.meshes;
  } else {
    for (int d1 = n; d1 >= 1; --d1) {
      if (n % d1 == 0) candidates.push_back(Mesh{d1, n / d1});
    }
  }
  AtpResult result;
  for (const Mesh& mesh : candidates) {
    if (mesh.chips() != n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s is not allowed for %d chips; allowed: D1xD2 with D1·D2 = %d",
          problem.calibrated.empty() ? "--mesh" : "--atp-bandwidth", mesh.ToString(), n, n));
    }
    AtpMeshEstimate e;
    e.mesh = Mesh{mesh.rows, mesh.cols};
    const AtpPrimeBandwidths prime = PrimeBandwidths(matrix, mesh.rows, mesh.cols);
    e.layers1 = prime.layers1;
    e.layers2 = prime.layers2;
    if (auto it = problem.calibrated.find(mesh.ToString()); it != problem.calibrated.end()) {
      const AtpCalibration& cal = it->second;
      if ((mesh.rows > 1 && !(cal.b1_bytes_per_s > 0)) ||
          (mesh.cols > 1 && !(cal.b2_bytes_per_s > 0))) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--atp-bandwidth: %s needs B1 (D1 > 1) and B2 (D2 > 1) > 0; allowed: %s:B1,B2 in "
            "GB/s",
            mesh.ToString(), mesh.ToString()));
      }
      e.calibrated = true;
      e.b1 = mesh.rows > 1 ? cal.b1_bytes_per_s : 0;
      e.b2 = mesh.cols > 1 ? cal.b2_bytes_per_s : 0;
    } else {
      e.b1_prime = prime.b1_prime;
      e.b2_prime = prime.b2_prime;
      if (problem.rabenseifner) {
        e.b1 = RabenseifnerBandwidth(mesh.rows, e.b1_prime);
        e.b2 = RabenseifnerBandwidth(mesh.cols, e.b2_prime);
      } else {
        e.b1 = mesh.rows > 1 ? e.b1_prime : 0;
        e.b2 = mesh.cols > 1 ? e.b2_prime : 0;
      }
    }
    CommTime(problem, e);
    result.meshes.push_back(std::move(e));
  }
  const AtpMeshEstimate* best = nullptr;
  for (const AtpMeshEstimate& e : result.meshes) {
    if (best == nullptr || e.t_comm_s < best->t_comm_s * (1 - 1e-12)) best = &e;
  }
  if (best == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--chips: %d gives no candidate mesh; allowed: ≥ 1", n));
  }
  result.mesh = best->mesh;
  result.t_comm_s = best->t_comm_s;
  return result;
}

absl::Status ParseAtpCalibration(const std::string& text,
                                 std::map<std::string, AtpCalibration>& out) {
  for (absl::string_view entry : absl::StrSplit(text, ';', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const std::vector<std::string> parts = absl::StrSplit(entry, ':');
    const auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--atp-bandwidth: '%s' is not allowed (%s); allowed: D1xD2:B1,B2 in GB/s, e.g. "
          "2x4:1.20,4.95;8x1:0.97",
          std::string(entry), why));
    };
    if (parts.size() != 2) return bad("expected one ':'");
    auto mesh = ParseMesh(parts[0]);
    if (!mesh.ok()) return mesh.status();
    const std::vector<std::string> values = absl::StrSplit(parts[1], ',');
    if (values.empty() || values.size() > 2) return bad("expected B1 or B1,B2");
    double b[2] = {0, 0};
    for (size_t i = 0; i < values.size(); ++i) {
      // A dimension of size 1 has no all-reduce: its bandwidth may be given as '-'.
      const int d = i == 0 ? mesh->rows : mesh->cols;
      if (d == 1 && values[i] == "-") continue;
      if (!absl::SimpleAtod(values[i], &b[i]) || !(b[i] > 0) || !std::isfinite(b[i])) {
        return bad(absl::StrCat("bandwidth '", values[i], "' must be > 0 and finite"));
      }
    }
    if (mesh->cols > 1 && values.size() < 2) return bad("D2 > 1 needs B2");
    out[mesh->ToString()] = AtpCalibration{b[0] * 1e9, b[1] * 1e9};
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(
        "--atp-bandwidth: '' is not allowed; allowed: D1xD2:B1,B2 in GB/s, e.g. 2x4:1.20,4.95");
  }
  return absl::OkStatus();
}

}  // namespace meshsim::algorithms
