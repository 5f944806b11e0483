// Folding: a run whose chips do the same thing at the same time, simulated once per class of
// equivalent chips (issue 22, "simulate what is identical once").
//
// On a torus every translation is a symmetry of the machine: chip x ↦ x + v (coordinates mod
// the extents) maps links to links of the same bandwidth and latency and HBMs to HBMs. When the
// op graph is symmetric under the same translations — the op on chip x + v is the op on chip x
// with the same size, its dependencies are the translates of the other's, and its collectives
// run over the translated rings — then a deterministic simulation gives the translated op the
// same start and finish times (the fair-share solver sees congruent resources with the same
// flows; nothing in the simulation depends on a chip's coordinates). Folding simulates only the
// chips of one period box: per dimension of even extent n ≥ 4 the period is 2 (chips x and
// x + 2 are equivalent), otherwise the whole extent. A 256×16 torus folds to 2×2 chips.
//
// Exactness. FoldTorusGraph proves the symmetry on the graph it is given, by the generators of
// the translations (+period along each folded dimension): every op must have a translate with
// equal fields and translated dependencies. Anything else — a collective that is not a ring over
// a whole torus line, a Broadcast's root, a point-to-point transfer, ops that differ from chip to
// chip — refuses the fold (`why` says what) and the run is simulated whole. The folded graph:
//   - keeps the ops of the box's chips, and the collectives over the lines through the box;
//   - replaces a dependency on an op outside by one on its representative (its translate in the
//     box), which finishes at the same time;
//   - runs each collective over its whole line, but with every member named by its
//     representative chip: chip x of a 256-chip ring is box chip x mod 2, so the group lists
//     each box chip 128 times (OpGraph::AddGroup's `images`). The network (NetworkModel) then
//     moves the flows of the first member of each box chip only, sized and stepped for the whole
//     ring; the rest are their images. A ring step's flow from member k to k + 1 lands on the
//     representative of k + 1, over the representative of the link k → k + 1 — the folded torus
//     keeps both links of each extent-2 pair (torus.length2_links = 2), as the real one has a +
//     and a − link per chip.
// Results: the makespan, every op's finish time (so the fingerprint: sim/run.cc sums each op's
// term at its representative's finish) and the per-chip averages are those of the whole run;
// totals (flops) scale with the chips a box chip stands for. A run that keeps its timeline gets
// the whole run's rows (ExpandRows), counter samples and resources (sim/run.cc, ExpandTables).
// Tests: tests/sim/fold_test.cc runs scenarios folded and whole, with and without timelines.
#ifndef MESHSIM_SIM_FOLD_H_
#define MESHSIM_SIM_FOLD_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "core/timeline.h"

namespace meshsim::sim {

struct FoldedGraph {
  std::vector<int> dims;     // The torus's extents.
  std::vector<int> periods;  // Per torus dimension: the folded extent.
  int chips = 0;             // Π periods: the chips simulated.
  int real_chips = 0;        // Π extents.
  core::OpGraph graph;       // Ops of the box; chips renumbered row-major over `periods`.
  // By op id of the whole graph: the id in `graph` of its representative.
  std::vector<uint32_t> representative;
  // By chip of the whole torus: the box chip it folds onto (its id in `graph`).
  std::vector<uint32_t> box_chip;
};

// The preimages of a map onto [0, targets): those of target t are items[begin[t] ..
// begin[t + 1]), in increasing order (a counting sort). Folding's inverse maps: the ops a box op
// represents, the resources of the whole machine a box resource stands for.
struct Preimages {
  std::vector<uint32_t> begin;
  std::vector<uint32_t> items;
  std::span<const uint32_t> of(uint32_t t) const {
    return std::span<const uint32_t>(items).subspan(begin[t], begin[t + 1] - begin[t]);
  }
};
Preimages PreimagesOf(std::span<const uint32_t> map, size_t targets);

// The whole run's rows from the folded run's `rows`: a row of a box op on box chip b stands for
// the same row of every op that op represents, on each of that op's chips (its chip, a
// transfer's peer, a collective's members) that folds onto b. The rows of one instant come in
// another order than a whole run's. nullopt when there would be more than `max_rows`.
std::optional<core::TimelineRows> ExpandRows(const core::OpGraph& graph, const FoldedGraph& folded,
                                             std::span<const core::TimelineRow> rows,
                                             size_t max_rows);

// The periods FoldTorusGraph would fold `dims` by (2 for even extents ≥ 4, else the extent).
std::vector<int> FoldPeriods(std::span<const int> dims);

// `graph` (chips numbered row-major over the torus extents `dims`) folded, or nullopt with the
// reason in `why` when it is not symmetric under the translations by the periods, or when the
// periods fold nothing.
std::optional<FoldedGraph> FoldTorusGraph(const core::OpGraph& graph, std::span<const int> dims,
                                          std::string* why);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_FOLD_H_
