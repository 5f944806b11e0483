// The logical R×C device mesh that algorithms work on, placed on physical chips, and its
// communication groups.
//
// A mesh position (r, c) has the local index r·C + c (row-major). Its physical chip is
// placement[r·C + c]; an empty placement means chip r·C + c, which matches the physical
// numbering of torus2d and mesh2d topologies, so a row group's ring uses that row's links.
// A placement may name any distinct chips of the machine in any order (a pipeline stage on
// chips 8..15, a mesh strided over hosts). Plugins address chips only through the mesh
// (Chip, At, Row, Col, All) and index their own per-position arrays by the local index (Local).
//
// Example:
//   Mesh mesh{4, 8};
//   std::vector<core::ChipId> row2 = mesh.Row(2);   // chips 16..23, ring order by column
//   std::vector<core::ChipId> all = mesh.All();     // snake order: every hop is a neighbour
//   MESHSIM_ASSIGN_OR_RETURN(Mesh stage, Mesh::Placed(2, 4, {8, 9, 10, 11, 12, 13, 14, 15}));
//   stage.At(1, 0);                                 // chip 12
#ifndef MESHSIM_ALGORITHMS_MESH_H_
#define MESHSIM_ALGORITHMS_MESH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ids.h"

namespace meshsim::algorithms {

struct Mesh {
  constexpr Mesh() = default;
  constexpr Mesh(int rows, int cols) : rows(rows), cols(cols) {}

  int rows = 1;
  int cols = 1;
  std::vector<core::ChipId> placement;  // Empty, or rows·cols distinct physical chips (set by
                                        // Placed, which also indexes them).

  int chips() const { return rows * cols; }
  bool placed() const { return !placement.empty(); }
  // The physical chip at local index `local` (0 ≤ local < chips()).
  core::ChipId Chip(int local) const {
    return placement.empty() ? core::ChipId(local) : placement[local];
  }
  core::ChipId At(int r, int c) const { return Chip(r * cols + c); }
  // The local index of physical chip `chip`, which must be in the mesh (fatal otherwise).
  int Local(core::ChipId chip) const;
  // Whether physical chip `chip` is one of the mesh's.
  bool Contains(core::ChipId chip) const;
  // One more than the largest physical chip id: how many chips the machine needs at least.
  int MachineChips() const;
  std::vector<core::ChipId> Row(int r) const;  // Columns 0..C−1 of row r.
  std::vector<core::ChipId> Col(int c) const;  // Rows 0..R−1 of column c.
  // Every chip in boustrophedon order (row 0 left→right, row 1 right→left, …), so consecutive
  // chips are mesh neighbours; on a torus with even R the last chip neighbours the first.
  std::vector<core::ChipId> All() const;
  std::string ToString() const;  // "4x8"

  // The most-square mesh for `chips`: R ≤ C, R the largest divisor of chips ≤ √chips.
  static Mesh Squarest(int chips);
  // rows×cols placed on `chips` (row-major). InvalidArgument, naming --placement, unless there
  // are exactly rows·cols distinct chips, each valid.
  static absl::StatusOr<Mesh> Placed(int rows, int cols, std::vector<core::ChipId> chips);

 private:
  std::vector<int> local_of_;  // By physical chip id up to the largest placed: local index, or −1.
};

// The groups a collective micro-benchmark runs on: "row" (one per row), "col" (one per
// column) or "all" (one group of every chip). InvalidArgument for another name.
absl::StatusOr<std::vector<std::vector<core::ChipId>>> MeshGroups(const Mesh& mesh,
                                                                  const std::string& group);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_MESH_H_
