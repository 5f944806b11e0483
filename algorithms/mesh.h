// The logical R×C mesh of chips that 2D algorithms work on, and its communication groups.
//
// Chip r·C + c sits at row r, column c (row-major), matching the physical numbering of torus2d
// and mesh2d topologies, so a row group's ring uses that row's links.
//
// Example:
//   Mesh mesh{4, 8};
//   std::vector<core::ChipId> row2 = mesh.Row(2);   // chips 16..23, ring order by column
//   std::vector<core::ChipId> all = mesh.All();     // snake order: every hop is a neighbour
#ifndef MESHSIM_ALGORITHMS_MESH_H_
#define MESHSIM_ALGORITHMS_MESH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ids.h"

namespace meshsim::algorithms {

struct Mesh {
  int rows = 1;
  int cols = 1;

  int chips() const { return rows * cols; }
  core::ChipId At(int r, int c) const { return core::ChipId(r * cols + c); }
  std::vector<core::ChipId> Row(int r) const;  // Columns 0..C−1 of row r.
  std::vector<core::ChipId> Col(int c) const;  // Rows 0..R−1 of column c.
  // Every chip in boustrophedon order (row 0 left→right, row 1 right→left, …), so consecutive
  // chips are mesh neighbours; on a torus with even R the last chip neighbours the first.
  std::vector<core::ChipId> All() const;
  std::string ToString() const;  // "4x8"

  // The most-square mesh for `chips`: R ≤ C, R the largest divisor of chips ≤ √chips.
  static Mesh Squarest(int chips);
};

// The groups a collective micro-benchmark runs on: "row" (one per row), "col" (one per
// column) or "all" (one group of every chip). InvalidArgument for another name.
absl::StatusOr<std::vector<std::vector<core::ChipId>>> MeshGroups(const Mesh& mesh,
                                                                  const std::string& group);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_MESH_H_
