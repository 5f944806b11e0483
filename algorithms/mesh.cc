#include "algorithms/mesh.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/check.h"

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

int Mesh::Local(core::ChipId chip) const {
  if (placement.empty()) {
    MESHSIM_CHECK(chip.valid() && static_cast<int>(chip.value()) < chips())
        << "chip " << chip << " is not in mesh " << ToString();
    return static_cast<int>(chip.value());
  }
  MESHSIM_CHECK(chip.valid() && chip.value() < local_of_.size() && local_of_[chip.value()] >= 0)
      << "chip " << chip << " is not in the placed mesh " << ToString();
  return local_of_[chip.value()];
}

bool Mesh::Contains(core::ChipId chip) const {
  if (!chip.valid()) return false;
  if (placement.empty()) return static_cast<int>(chip.value()) < chips();
  return chip.value() < local_of_.size() && local_of_[chip.value()] >= 0;
}

int Mesh::MachineChips() const {
  if (placement.empty()) return chips();
  return static_cast<int>(local_of_.size());
}

absl::StatusOr<Mesh> Mesh::Placed(int rows, int cols, std::vector<core::ChipId> chips) {
  if (rows < 1 || cols < 1 || int64_t{rows} * cols != static_cast<int64_t>(chips.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--placement: %d chips is not allowed for mesh %dx%d; it must name R*C = %d chips",
        chips.size(), rows, cols, int64_t{rows} * cols));
  }
  Mesh mesh{rows, cols};
  uint32_t top = 0;
  for (core::ChipId c : chips) {
    if (!c.valid()) {
      return absl::InvalidArgumentError("--placement: an invalid chip id is not allowed");
    }
    top = std::max(top, c.value());
  }
  mesh.local_of_.assign(size_t{top} + 1, -1);
  for (size_t i = 0; i < chips.size(); ++i) {
    int& slot = mesh.local_of_[chips[i].value()];
    if (slot >= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--placement: chip %d appears twice; every chip of the mesh must be distinct",
          chips[i].value()));
    }
    slot = static_cast<int>(i);
  }
  mesh.placement = std::move(chips);
  return mesh;
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
