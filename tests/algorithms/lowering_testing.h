// Test helpers for algorithm plugins, shared by tests/algorithms/*_test.cc: build problems, lower
// them, inspect a lowered OpGraph without running it (ops by label, kind, slice and chip; op
// counts, per-chip flops and received bytes; dependencies and the frontier contract of
// algorithms/algorithm.h), run it on a small simulated machine, and the terms of the reference
// cost model the simulated cases are compared with.
//
// Example:
//   const core::OpGraph g = Lower("summa", Problem(Dataflow::kOS, 256, 256, 1024, "p"), mesh, 4);
//   const core::OpId gemm = Find(g, "p.gemm", /*slice=*/1, /*chip=*/0);
//   EXPECT_TRUE(DirectlyDependsOn(g, gemm, Find(g, "p.bcast_a", 1, 0)));
//   ExpectSequenced("summa", Problem(Dataflow::kLS, 256, 512, 1024, "p"), Mesh{2, 4}, 2);
#ifndef MESHSIM_TESTS_ALGORITHMS_LOWERING_TESTING_H_
#define MESHSIM_TESTS_ALGORITHMS_LOWERING_TESTING_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "algorithms/mesh.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/op_graph.h"

namespace meshsim::testing_util {

// --- Problems ---

// Every MeshSlice dataflow: kOS, kLS, kRS.
inline constexpr algorithms::Dataflow kDataflows[] = {
    algorithms::Dataflow::kOS, algorithms::Dataflow::kLS, algorithms::Dataflow::kRS};

// The small meshes 2D lowering tests sweep: square, wide, tall and the 4×4 of the simulated cases.
// `const`, not `constexpr`: Mesh holds std::vectors, and GCC 12 does not accept their constexpr
// destruction once -fsanitize=address,undefined instruments it ("not a constant expression").
inline const algorithms::Mesh kSmallMeshes[] = {{2, 2}, {2, 4}, {4, 2}, {4, 4}};

// The passes of an FC layer in training order.
inline constexpr core::Pass kPasses[] = {core::Pass::kFwd, core::Pass::kBwdData,
                                         core::Pass::kBwdWeight};

// A stand-alone GeMM (no FcLayer, pass kNone) C[M×N] in dataflow `d`. Its ops are named
// "<label>.<what>" (e.g. "p.gemm"), or "<what>" when `label` is empty.
algorithms::GemmProblem Problem(algorithms::Dataflow d, int64_t m, int64_t n, int64_t k,
                                const std::string& label = "");

// One transformer block's FC layers for T = `t` tokens and hidden size H = `h` (FFN 4H):
// qkv (I = H, O = 3H) and ffn_up (H, 4H) column-parallel, attn_out (H, H) and ffn_down (4H, H)
// row-parallel, at indices 0..3.
std::vector<algorithms::FcLayer> Block(int64_t t, int64_t h);

// The problem the LLM workload gives a plugin for `pass` of `layer`: the autotuner's MeshSlice
// Table 1 cell (FcProblem with AutoStationary), labelled "<layer>.<pass>".
algorithms::GemmProblem Problem(const algorithms::FcLayer& layer, core::Pass pass);

// --- Lowering ---

// Lowers `p` with algorithm `name` on `mesh` (S = `slices`) into a fresh graph. Fails the test
// (ADD_FAILURE) and returns an empty graph if Check or Lower fails.
core::OpGraph Lower(const std::string& name, const algorithms::GemmProblem& p,
                    const algorithms::Mesh& mesh, int slices, int element_bytes = 2);

// --- Finding ops ---

// Ops labelled `what` ("p.gemm", "ag_a", …; see Problem), in id order.
std::vector<core::OpId> OpsNamed(const core::OpGraph& g, const std::string& what);

// The `slice` of FindAll and Find that matches every slice tag.
inline constexpr int kAnySlice = std::numeric_limits<int>::min();

// Ops labelled `what` with slice tag `slice` (kAnySlice: any) whose chips include `chip`, in id
// order.
std::vector<core::OpId> FindAll(const core::OpGraph& g, const std::string& what, int slice,
                                int chip);

// The op FindAll(g, what, slice, chip) finds; fails the test (EXPECT) unless it finds exactly
// one, and then returns the first found, or an invalid id.
core::OpId Find(const core::OpGraph& g, const std::string& what, int slice, int chip);

// Ops of `kind` with collective kind `coll` (kNone for all but kCollective ops), in id order.
std::vector<core::OpId> OpsOfKind(const core::OpGraph& g, core::OpKind kind,
                                  core::CollectiveKind coll = core::CollectiveKind::kNone);

// The SendRecv collectives, in id order.
std::vector<core::OpId> SendRecvs(const core::OpGraph& g);

// --- Op counts, flops and bytes ---

// Number of ops per (kind, collective) name: "gemm", "copy", "allgather", "sendrecv", ...
std::map<std::string, int> OpCounts(const core::OpGraph& g);

// counts[name], 0 when absent.
int Count(const std::map<std::string, int>& counts, const std::string& name);

// Σ GeMM flops per chip.
std::vector<double> FlopsPerChip(const core::OpGraph& g, int chips);

// Bytes each chip receives over the network, by collective semantics: AllGather of shard s on
// P chips → (P−1)·s per member; ReduceScatter of piece s → (P−1)·s; AllReduce of b → 2(P−1)·b/P;
// Broadcast/Reduce of b → b per receiving member; SendRecv of b → b (both halves together);
// AllToAll of b → (P−1)·b/P; Transfer of b → b at the destination.
std::vector<double> ReceivedBytesPerChip(const core::OpGraph& g, int chips);

// --- Dependencies (op ids are a topological order) ---

// Whether `dep` is in the dependency list of `op`.
bool DirectlyDependsOn(const core::OpGraph& g, core::OpId op, core::OpId dep);

// Whether `op` is `dep` or depends on it through any chain.
bool DependsOn(const core::OpGraph& g, core::OpId op, core::OpId dep);

// ancestors[i]: op i precedes `id` through dependencies (`id` itself excluded). One reverse
// sweep over the ids up to `id`.
std::vector<bool> Ancestors(const core::OpGraph& g, core::OpId id);

// --- The frontier contract of algorithms/algorithm.h ---

// Every op with id ≥ `first` depends, for each chip c it touches, on before[c].
void ExpectFollowsFrontier(const core::OpGraph& g, const std::vector<core::OpId>& before,
                           uint32_t first);

// For every chip c: frontier[c] is a valid op with id ≥ `first` (else a fatal failure) that is,
// or depends on, every op with id ≥ `first` that touches c.
void ExpectFrontierCovers(const core::OpGraph& g, const std::vector<core::OpId>& frontier,
                          uint32_t first);

// `p` lowered twice back to back with algorithm `name` (S = `slices`) through one context, behind
// a zero-length start op per chip: each round's ops follow the frontier before the round
// (ExpectFollowsFrontier) and the frontier after it covers them (ExpectFrontierCovers).
void ExpectSequenced(const std::string& name, const algorithms::GemmProblem& p,
                     const algorithms::Mesh& mesh, int slices);

// `first` then `second` lowered with algorithm `name` (S = `slices`) through one context whose
// frontier starts empty (no constraint): the frontier after `first` covers all of its ops
// (ExpectFrontierCovers) and every op of `second` follows it (ExpectFollowsFrontier).
void ExpectChainedThroughFrontier(const std::string& name, const algorithms::GemmProblem& first,
                                  const algorithms::GemmProblem& second,
                                  const algorithms::Mesh& mesh, int slices);

// --- Simulation ---

// Runs the graph on the mesh's machine (MachineChips() tpuv4 chips, the mesh placed as it is)
// as a torus2d of `mesh` (or `topology`), with
// `overrides` as --set KEY=VALUE strings; returns the makespan in seconds (−1 on failure).
double Simulate(const core::OpGraph& g, const algorithms::Mesh& mesh,
                const std::vector<std::string>& overrides = {},
                const std::string& topology = "torus2d");

// Seconds of one blocking ring collective of `kind` (AllGather or ReduceScatter, both ring
// directions) of `bytes` per chip plus one (m, n, k) GeMM per chip on a `ring` of P = `chips`
// tpuv4 chips: every GeMM after the AllGather, or the ReduceScatter after every GeMM — the
// same traffic as a decomposed ring schedule, without overlap.
double SimulateBlockingRing(int chips, core::CollectiveKind kind, int64_t bytes, int64_t m,
                            int64_t n, int64_t k);

// --- The reference cost model (reference/meshslice-calibration.md) ---

// Simulation-fitted constants.
inline constexpr double kTLaunch = 100e-6;  // Launch of a collective or SendRecv.
inline constexpr double kTStep = 6e-6;      // One ring step: t_sync 5 µs + latency 1 µs.
inline constexpr double kBwAg = 60e9;       // AllGather bandwidth.
inline constexpr double kBwRds = 50e9;      // ReduceScatter bandwidth.
// SendRecv bandwidth on axis 0 (within a mesh column) and axis 1 (within a mesh row).
inline constexpr double kBwSrCol = 38.801e9, kBwSrRow = 35.224e9;
inline constexpr double kFlops = 249e12;  // GeMM rate of a chip.

// A ring collective on n chips moving `shard_bytes` per step at `bw`:
// t_launch + (n−1)·(shard/bw + t_step).
double RingCollectiveSeconds(double shard_bytes, double bw, int n);
// RingCollectiveSeconds at kBwAg and kBwRds.
double AllGatherSeconds(int n, double shard_bytes);
double ReduceScatterSeconds(int n, double piece_bytes);
// An (m, n, k) GeMM at kFlops: 2·m·n·k / kFlops.
double ComputeSeconds(double m, double n, double k);
// One step of Wang et al.'s model on a ring of tpuv4 chips (two links of 30 GB/s per
// direction): a bidirectional SendRecv of `bytes`, bytes/(2·30 GB/s) + t_step + t_launch.
double RingSendRecvSeconds(double bytes);

}  // namespace meshsim::testing_util

#endif  // MESHSIM_TESTS_ALGORITHMS_LOWERING_TESTING_H_
