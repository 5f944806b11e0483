// Plain-data operations: what an algorithm plugin emits and the executor runs.
//
// An `Op` says *what* happens (a GeMM of m×n×k on a chip, a collective of `bytes` per chip on a
// group, a transfer to a peer, a fixed delay) and carries tags (layer, pass, slice, name) that
// flow into the timeline. It says nothing about *how long* it takes: the runner registered for
// its kind (accel/ for compute and HBM, network/ for transfers and collectives, core/ for
// delays) decides that by simulating the machine. Ops are cheap to copy (64 bytes + tags).
//
// Example:
//   Op g = Op::Gemm(ChipId{0}, 4096, 4096, 4096);
//   g.tags.layer = 3; g.tags.pass = Pass::kFwd;
#ifndef MESHSIM_CORE_OP_H_
#define MESHSIM_CORE_OP_H_

#include <cstdint>
#include <string>

#include "core/ids.h"
#include "core/time.h"

namespace meshsim::core {

enum class OpKind : uint8_t {
  kDelay,       // A fixed duration on one chip; no resources used.
  kGemm,        // C[m×n] += A[m×k]·B[k×n] on one chip (accel/).
  kCopy,        // A local HBM→HBM copy of `bytes` on one chip (accel/).
  kVector,      // An element-wise pass over `bytes` on one chip's vector unit (accel/).
  kTransfer,    // `bytes` from `chip` to `peer` over the network (network/).
  kCollective,  // A collective of kind `collective` on `group` (network/).
};
inline constexpr int kNumOpKinds = 6;

// Op::unit of a kVector op: the kind of kernel, for the stack's memory efficiencies.
inline constexpr uint16_t kVectorPointwise = 0;  // Element-wise: GeLU, dropout, adds, casts.
inline constexpr uint16_t kVectorReduction = 1;  // Row reductions: softmax, LayerNorm.

enum class CollectiveKind : uint8_t {
  kNone,
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kBroadcast,
  kReduce,
  kSendRecv,
  kAllToAll,
};

// Training pass of a GeMM, as in MeshSlice Table 1.
enum class Pass : uint8_t { kNone, kFwd, kBwdData, kBwdWeight };

const char* ToString(OpKind kind);
const char* ToString(CollectiveKind kind);
const char* ToString(Pass pass);

struct OpTags {
  NameId name;         // Interned label, e.g. "qkv.fwd.gemm"; invalid = derived from kind.
  int32_t layer = -1;  // FC layer index within the block; -1 = none.
  int32_t slice = -1;  // MeshSlice slice / unrolled iteration; -1 = none.
  Pass pass = Pass::kNone;
  int16_t stage = -1;       // Pipeline stage (algorithms/pipeline/); -1 = none.
  int16_t microbatch = -1;  // Pipeline microbatch; -1 = none.
  uint8_t task = 0;         // Pipeline task the op belongs to: 0 none, 1 forward, 2 backward.
};

struct Op {
  OpKind kind = OpKind::kDelay;
  CollectiveKind collective = CollectiveKind::kNone;
  uint16_t unit = 0;       // Runner-defined unit hint: core index, NIC port, ...
  ChipId chip;             // Place of a per-chip op; source of a kTransfer.
  GroupId group;           // Place of a kCollective (ordered chips, see OpGraph::AddGroup).
  ChipId peer;             // Destination of a kTransfer.
  int32_t root = 0;        // Root position in the group (Broadcast/Reduce); shift for SendRecv.
  uint8_t directions = 0;  // Ring directions of a collective: 1, 2, or 0 = the system default
                           // (SendRecv: 2 = half the buffer to each neighbour).
  int64_t bytes = 0;  // Payload: per chip for collectives (see CLI.md --bytes), total otherwise.
  int64_t m = 0, n = 0, k = 0;  // GeMM shape; a kDelay's duration in ps is `m` (duration()).
  OpTags tags;

  static Op Delay(ChipId chip, Time duration);
  static Op Gemm(ChipId chip, int64_t m, int64_t n, int64_t k);
  static Op Copy(ChipId chip, int64_t bytes);
  static Op Transfer(ChipId from, ChipId to, int64_t bytes);
  static Op Collective(CollectiveKind kind, GroupId group, int64_t bytes);

  // A kDelay's duration. It lives in `m` (a delay has no GeMM shape): at 10⁸ ops a field of
  // its own would cost 0.8 GB.
  Time duration() const { return Time::Picoseconds(m); }

  // 2·m·n·k for a GeMM, 0 otherwise.
  double flops() const {
    return kind == OpKind::kGemm ? 2.0 * double(m) * double(n) * double(k) : 0.0;
  }
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_OP_H_
