#include "sim/ring_check.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/options.h"

namespace meshsim::sim {
namespace {

bool Checked(const network::Topology& t) {
  return t.name() == "ring" || t.name() == "torus2d" || t.name() == "torus3d";
}

// "torus2d 16x16", "ring of 8".
std::string Describe(const network::Topology& t) {
  if (t.dims().empty()) return absl::StrCat(t.name(), " of ", t.num_chips());
  return absl::StrCat(t.name(), " ", absl::StrJoin(t.dims(), "x"));
}

// The physical chips of `mesh`, as --placement writes them ("0-63").
std::string ChipsOf(const algorithms::Mesh& mesh) {
  std::vector<int> chips;
  for (int i = 0; i < mesh.chips(); ++i) chips.push_back(static_cast<int>(mesh.Chip(i).value()));
  return FormatPlacement(chips);
}

// When the meshes are alike and tile the machine in chip order (mesh k on chips k·n … (k+1)·n−1,
// row-major), the topology that makes each of them a torus of its own: the meshes along the
// first dimension, then the mesh's rows and columns (extents of 1 dropped). Empty otherwise.
std::string Suggestion(const network::Topology& t, const std::vector<algorithms::Mesh>& meshes) {
  const algorithms::Mesh& first = meshes.front();
  const int n = first.chips();
  if (static_cast<int64_t>(n) * static_cast<int64_t>(meshes.size()) != t.num_chips()) return "";
  for (size_t k = 0; k < meshes.size(); ++k) {
    const algorithms::Mesh& m = meshes[k];
    if (m.rows != first.rows || m.cols != first.cols) return "";
    for (int i = 0; i < n; ++i) {
      if (static_cast<int64_t>(m.Chip(i).value()) != static_cast<int64_t>(k) * n + i) return "";
    }
  }
  std::vector<int> dims;
  for (int extent : {static_cast<int>(meshes.size()), first.rows, first.cols}) {
    if (extent > 1) dims.push_back(extent);
  }
  if (dims.size() <= 1) return "--topology ring gives it its own ring";
  const std::string name = dims.size() == 2 ? "torus2d" : "torus3d";
  return absl::StrFormat("--topology %s --dims %s gives %s its own %s torus", name,
                         absl::StrJoin(dims, "x"), meshes.size() > 1 ? "each mesh" : "it",
                         first.ToString());
}

}  // namespace

int WorstRingHops(const network::Topology& topology, const algorithms::Mesh& mesh, bool rows) {
  const int rings = rows ? mesh.rows : mesh.cols;
  const int members = rows ? mesh.cols : mesh.rows;
  if (members < 2) return 0;
  int worst = 0;
  for (int ring = 0; ring < rings; ++ring) {
    for (int j = 0; j < members; ++j) {
      const int next = (j + 1) % members;
      const core::ChipId a = rows ? mesh.At(ring, j) : mesh.At(j, ring);
      const core::ChipId b = rows ? mesh.At(ring, next) : mesh.At(next, ring);
      worst = std::max(worst, topology.Hops(a, b));
    }
  }
  return worst;
}

std::string RingWarning(const network::Topology& topology,
                        const std::vector<algorithms::Mesh>& meshes, bool rows, bool cols) {
  if (!Checked(topology) || meshes.empty()) return "";
  int worst_row = 0, worst_col = 0, affected = 0;
  const algorithms::Mesh* first = nullptr;
  for (const algorithms::Mesh& m : meshes) {
    const int row_hops = rows ? WorstRingHops(topology, m, true) : 0;
    const int col_hops = cols ? WorstRingHops(topology, m, false) : 0;
    if (row_hops <= 1 && col_hops <= 1) continue;
    if (first == nullptr) first = &m;
    worst_row = std::max(worst_row, row_hops);
    worst_col = std::max(worst_col, col_hops);
    ++affected;
  }
  if (first == nullptr) return "";
  std::vector<std::string> kinds, hops;
  for (const auto& [kind, worst] : {std::pair{"row", worst_row}, std::pair{"column", worst_col}}) {
    if (worst <= 1) continue;
    kinds.push_back(kind);
    hops.push_back(absl::StrCat(worst));
  }
  std::string line = absl::StrFormat(
      "the %s rings of the %s mesh on chips %s are not rings of %s: ring neighbours are up to %s "
      "hops apart, so the rings' transfers share links",
      absl::StrJoin(kinds, " and "), first->ToString(), ChipsOf(*first), Describe(topology),
      absl::StrJoin(hops, " and "));
  if (meshes.size() > 1) {
    absl::StrAppendFormat(&line, " (%d of the run's %d meshes)", affected, meshes.size());
  }
  if (const std::string s = Suggestion(topology, meshes); !s.empty())
    absl::StrAppend(&line, "; ", s);
  return line;
}

}  // namespace meshsim::sim
