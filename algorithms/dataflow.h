// MeshSlice Table 1: the 2D GeMM each training pass of an FC layer Y = X·W runs, per choice of
// stationary matrix, and the autotuner's phase-1 rule that picks the choice (paper §3.2.1).
//
//   stationary  forward            backward-data       backward-weight
//   Y (os)      Y  = OS(X, W)      X' = LS(Y', W)      W'  = RS(X, Y')
//   X (ls)      Y  = LS(X, Wᵀ)     X' = OS(Y', Wᵀ)     W'ᵀ = RS(Y', X)
//   W (rs)      Y  = RS(Xᵀ, W)     X'ᵀ = LS(W, Y')     W'  = OS(Xᵀ, Y')
//
// With X: T×I, W: I×O, Y: T×O, the (M, N, K) of each cell follow from the dataflow's shapes
// (algorithm.h): e.g. Y-stationary gives (T, O, I), (T, I, O), (I, O, T) — the reference table.
//
// Example:
//   Stationary s = AutoStationary(layer);          // qkv → kY
//   GemmProblem p = FcProblem(layer, s, core::Pass::kBwdData);
#ifndef MESHSIM_ALGORITHMS_DATAFLOW_H_
#define MESHSIM_ALGORITHMS_DATAFLOW_H_

#include <string>

#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"

namespace meshsim::algorithms {

enum class Stationary { kY, kX, kW };
const char* ToString(Stationary s);  // "os" (Y), "ls" (X), "rs" (W): the forward dataflow.

// "os" → kY, "ls" → kX, "rs" → kW (CLI.md --dataflow); InvalidArgument otherwise.
absl::StatusOr<Stationary> ParseStationary(const std::string& name);

// Phase 1 (reference "Autotuner rules"): keep the largest matrix stationary — Y if O > I and
// T ≥ I; else X if I ≥ O and T ≥ O; else W.
Stationary AutoStationary(const FcLayer& layer);

// The GeMM of `pass` (fwd, bwd-data, bwd-weight) of `layer` under stationary choice `s`.
GemmProblem FcProblem(const FcLayer& layer, Stationary s, core::Pass pass);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_DATAFLOW_H_
