#include "algorithms/mesh.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace meshsim::algorithms {

std::vector<core::ChipId> Mesh::Row(int r) const {
  std::vector<core::ChipId> v;
  for (int c = 0; c < cols; ++c) v.push_back(At(r, c));
  return v;
}

std::vector<core::ChipId> Mesh::Col(int c) const {
  std::vector<core::ChipId> v;
  for (int r = 0; r < rows; ++r) v.push_back(At(r, c));
  return v;
}

std::vector<core::ChipId> Mesh::All() const {
  std::vector<core::ChipId> v;
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < cols; ++i) v.push_back(At(r, r % 2 == 0 ? i : cols - 1 - i));
  }
  return v;
}

std::string Mesh::ToString() const { return absl::StrCat(rows, "x", cols); }

Mesh Mesh::Squarest(int chips) {
  int r = 1;
  for (int d = 1; static_cast<int64_t>(d) * d <= chips; ++d) {
    if (chips % d == 0) r = d;
  }
  return Mesh{r, chips / r};
}

absl::StatusOr<std::vector<std::vector<core::ChipId>>> MeshGroups(const Mesh& mesh,
                                                                  const std::string& group) {
  std::vector<std::vector<core::ChipId>> groups;
  if (group == "row") {
    for (int r = 0; r < mesh.rows; ++r) groups.push_back(mesh.Row(r));
  } else if (group == "col") {
    for (int c = 0; c < mesh.cols; ++c) groups.push_back(mesh.Col(c));
  } else if (group == "all") {
    groups.push_back(mesh.All());
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("--group: '%s' is not allowed; allowed: row, col, all", group));
  }
  return groups;
}

}  // namespace meshsim::algorithms
