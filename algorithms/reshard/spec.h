// Cross-mesh resharding, part 1: sharding specs and unit communication tasks (Zhuang et al.,
// "On Optimizing the Communication of Model Parallelism", MLSys'23, §2.2 and §3).
//
// A sharding spec says, per tensor dimension i, which mesh axes split it (GSPMD/Alpa notation,
// the paper's Table 2): "R" (replicated), "S0" (split over mesh rows), "S1" (over mesh columns),
// "S01" (over both, row-major: shard index r·C + c). "S1S0R" is a rank-3 spec. A mesh axis may
// split at most one tensor dimension.
//
// Shards and padding. A dimension of extent n split into k shards uses shards of ⌈n/k⌉ elements
// (the tensor is padded to k·⌈n/k⌉, as the paper pads case 6): shard j covers
// [j·⌈n/k⌉, min((j+1)·⌈n/k⌉, n)). Only real (unpadded) elements are transferred.
//
// Unit tasks (§2.2). The source slices (distinct shards on the sender mesh) partition the tensor,
// and so do the destination slices. For every pair (source slice a, destination slice b) with a
// non-empty intersection a ∩ b, one unit task moves that box:
//   senders   = every sender device holding slice a   (candidates; replicas when R),
//   receivers = every receiver device needing slice b,
//   bytes     = |a ∩ b| · element_bytes.
// The boxes are disjoint and cover the tensor, so Σ bytes = |D| · element_bytes: the lower
// bound of §2.2 on what crosses between the meshes. Example, Table 2 case 4 (RS01R → S01RR on
// 2×4 meshes, (1024, 1024, 512)): 8 × 8 = 64 tasks of 1024·1024·512/64 elements, one sender and
// one receiver each.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(ShardingSpec s, ParseSpec("RS01R", 3));
//   MESHSIM_ASSIGN_OR_RETURN(auto tasks, UnitTasks(problem));
#ifndef MESHSIM_ALGORITHMS_RESHARD_SPEC_H_
#define MESHSIM_ALGORITHMS_RESHARD_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/mesh.h"
#include "core/ids.h"

namespace meshsim::algorithms::reshard {

// How one tensor dimension is laid out on the mesh.
enum class DimSharding { kReplicated, kRows, kCols, kBoth };  // R, S0, S1, S01

struct ShardingSpec {
  std::vector<DimSharding> dims;
  std::string ToString() const;  // "RS01R"
};

// Parses `text` (tokens R, S0, S1, S01; case-sensitive) for a tensor of rank `rank`.
// InvalidArgument, one line naming the spec: unknown token, rank mismatch, a mesh axis used twice.
absl::StatusOr<ShardingSpec> ParseSpec(const std::string& text, int rank);

// A half-open interval of one dimension.
struct Interval {
  int64_t lo = 0, hi = 0;
  int64_t size() const { return hi > lo ? hi - lo : 0; }
};

// One placed mesh with a spec: which box of the tensor each device holds.
struct ShardedTensor {
  Mesh mesh;
  ShardingSpec spec;
};

struct ReshardProblem {
  std::vector<int64_t> shape;  // Tensor extents, rank ≥ 1.
  int element_bytes = 2;
  ShardedTensor src, dst;
};

// One unit communication task (§2.2): a box of the tensor, the sender devices that hold it and
// the receiver devices that need it (both in ascending chip order).
struct UnitTask {
  std::vector<Interval> box;
  int64_t bytes = 0;
  std::vector<core::ChipId> senders;
  std::vector<core::ChipId> receivers;
};

// Number of shards of `d` on `mesh` (1, R, C or R·C) and the shard index of local device
// (r, c) along it.
int NumShards(DimSharding d, const Mesh& mesh);
int ShardIndex(DimSharding d, const Mesh& mesh, int r, int c);
// Shard j of n elements in k shards, padded to k·⌈n/k⌉ (may be empty for the last shards).
Interval ShardInterval(int64_t n, int k, int j);

// InvalidArgument (one line) when the spec ranks differ from the shape's, a dimension is
// non-positive or the meshes share a chip (§2.2: Mesh_A ∩ Mesh_B = ∅).
absl::Status CheckProblem(const ReshardProblem& p);

// The unit tasks of `p`, ordered by (source slice, destination slice) in row-major mesh order
// of their first holders. Cost O(S·D·rank) for S source and D destination slices, plus the
// device lists. Requires CheckProblem(p).ok().
std::vector<UnitTask> UnitTasks(const ReshardProblem& p);

}  // namespace meshsim::algorithms::reshard

#endif  // MESHSIM_ALGORITHMS_RESHARD_SPEC_H_
