// Whether the rings a run's collectives take are rings of the machine.
//
// A ring collective of a mesh row or column sends each chip's data to its ring neighbour. On a
// torus (or a ring) whose extents match the mesh, ring neighbours are one link apart and the
// ring's transfers take disjoint links; a mesh laid over a torus of another shape (a pipeline
// stage on 4 rows of a 16x16 torus, a mesh strided by --placement) has neighbours several hops
// apart, and the transfers of one ring, and of neighbouring rings, then share links: the run is
// still exact for that machine, but rarely the machine that was meant. RingWarnings says so,
// once per run, with the --topology/--dims that give each mesh its own torus when there is one.
//
// Only ring, torus2d and torus3d are checked: mesh2d has no wraparound by design, and switched
// topologies (fat-trees, GPU hosts, graphviz) have no rings to match.
#ifndef MESHSIM_SIM_RING_CHECK_H_
#define MESHSIM_SIM_RING_CHECK_H_

#include <string>
#include <vector>

#include "algorithms/mesh.h"
#include "network/topology.h"

namespace meshsim::sim {

// The largest hop count between ring neighbours of `mesh`'s row rings (`rows` = true) or
// column rings, routed on `topology`; 0 when the rings have a single member.
// Cost: O(mesh chips · dims).
int WorstRingHops(const network::Topology& topology, const algorithms::Mesh& mesh, bool rows);

// One line when the row rings (if `rows`) or column rings (if `cols`) of some of `meshes` (the
// meshes the run's collectives ring over, Workload::Rings) are not rings of `topology`: the
// first such mesh, how many hops apart ring neighbours are, how many meshes are alike, and the
// --topology/--dims that give each mesh its own torus when the meshes tile the machine in chip
// order. Empty when every ring is one of the machine's or the topology is not checked.
std::string RingWarning(const network::Topology& topology,
                        const std::vector<algorithms::Mesh>& meshes, bool rows = true,
                        bool cols = true);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_RING_CHECK_H_
