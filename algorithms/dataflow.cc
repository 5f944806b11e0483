#include "algorithms/dataflow.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace meshsim::algorithms {

const char* ToString(Stationary s) {
  switch (s) {
    case Stationary::kY:
      return "os";
    case Stationary::kX:
      return "ls";
    case Stationary::kW:
      return "rs";
  }
  return "?";
}

absl::StatusOr<Stationary> ParseStationary(const std::string& name) {
  if (name == "os") return Stationary::kY;
  if (name == "ls") return Stationary::kX;
  if (name == "rs") return Stationary::kW;
  return absl::InvalidArgumentError(
      absl::StrFormat("--dataflow: '%s' is not allowed; allowed: auto, os, ls, rs", name));
}

Stationary AutoStationary(const FcLayer& l) {
  if (l.out > l.in && l.tokens >= l.in) return Stationary::kY;
  if (l.in >= l.out && l.tokens >= l.out) return Stationary::kX;
  return Stationary::kW;
}

GemmProblem FcProblem(const FcLayer& l, Stationary s, core::Pass pass) {
  const int64_t t = l.tokens, i = l.in, o = l.out;
  // Table 1 cell → (dataflow, M, N, K). The shapes follow algorithm.h: OS A·B with A: M×K;
  // LS A·Bᵀ with A: M×K, B: N×K; RS Aᵀ·B with A: K×M, B: K×N.
  struct Cell {
    Dataflow dataflow;
    int64_t m, n, k;
  };
  Cell c{};
  switch (s) {
    case Stationary::kY:
      if (pass == core::Pass::kFwd) c = {Dataflow::kOS, t, o, i};        // OS(X, W)
      if (pass == core::Pass::kBwdData) c = {Dataflow::kLS, t, i, o};    // LS(Y', W)
      if (pass == core::Pass::kBwdWeight) c = {Dataflow::kRS, i, o, t};  // RS(X, Y')
      break;
    case Stationary::kX:
      if (pass == core::Pass::kFwd) c = {Dataflow::kLS, t, o, i};        // LS(X, Wᵀ)
      if (pass == core::Pass::kBwdData) c = {Dataflow::kOS, t, i, o};    // OS(Y', Wᵀ)
      if (pass == core::Pass::kBwdWeight) c = {Dataflow::kRS, o, i, t};  // RS(Y', X)
      break;
    case Stationary::kW:
      if (pass == core::Pass::kFwd) c = {Dataflow::kRS, t, o, i};        // RS(Xᵀ, W)
      if (pass == core::Pass::kBwdData) c = {Dataflow::kLS, i, t, o};    // LS(W, Y')
      if (pass == core::Pass::kBwdWeight) c = {Dataflow::kOS, i, o, t};  // OS(Xᵀ, Y')
      break;
  }
  GemmProblem p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.dataflow = c.dataflow;
  p.pass = pass;
  p.layer = l;
  p.label = absl::StrCat(l.name, ".", core::ToString(pass));
  // Early operands, for BlockProblems' order (forward layers in order; then per layer, last
  // first, backward-data followed by backward-weight): the weight in any pass (the B operand,
  // except W-stationary backward-data, whose A is W); in backward-weight both operands, because
  // the previous problem — the same layer's backward-data — already had Y' (and X is kept from
  // the forward pass).
  const bool w_is_a = s == Stationary::kW && pass == core::Pass::kBwdData;
  if (pass == core::Pass::kBwdWeight) {
    p.a_early = p.b_early = true;
  } else {
    p.a_early = w_is_a;
    p.b_early = !w_is_a;
  }
  return p;
}

}  // namespace meshsim::algorithms
