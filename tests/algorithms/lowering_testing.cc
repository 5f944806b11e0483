#include "tests/algorithms/lowering_testing.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/dataflow.h"
#include "algorithms/registry.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/simulator.h"
#include "gtest/gtest.h"
#include "sim/machine.h"
#include "sim/options.h"

namespace meshsim::testing_util {

algorithms::GemmProblem Problem(algorithms::Dataflow d, int64_t m, int64_t n, int64_t k,
                                const std::string& label) {
  algorithms::GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.dataflow = d;
  p.label = label;
  return p;
}

std::vector<algorithms::FcLayer> Block(int64_t t, int64_t h) {
  return {{"qkv", 0, t, h, 3 * h, true},
          {"attn_out", 1, t, h, h, false},
          {"ffn_up", 2, t, h, 4 * h, true},
          {"ffn_down", 3, t, 4 * h, h, false}};
}

algorithms::GemmProblem Problem(const algorithms::FcLayer& layer, core::Pass pass) {
  return algorithms::FcProblem(layer, algorithms::AutoStationary(layer), pass);
}

core::OpGraph Lower(const std::string& name, const algorithms::GemmProblem& p,
                    const algorithms::Mesh& mesh, int slices, int element_bytes) {
  core::OpGraph g;
  auto info = algorithms::FindAlgorithm(name);
  if (!info.ok()) {
    ADD_FAILURE() << info.status();
    return g;
  }
  std::unique_ptr<algorithms::Algorithm> algo = (*info)->make();
  if (algo == nullptr) {
    ADD_FAILURE() << name << " has no implementation";
    return g;
  }
  absl::Status s = algo->Check(p, mesh, slices);
  if (!s.ok()) {
    ADD_FAILURE() << s;
    return g;
  }
  algorithms::LoweringContext ctx{g, mesh, element_bytes, slices,
                                  std::vector<core::OpId>(mesh.MachineChips())};
  s = algo->Lower(p, ctx);
  if (!s.ok()) ADD_FAILURE() << s;
  return g;
}

std::vector<core::OpId> OpsNamed(const core::OpGraph& g, const std::string& what) {
  std::vector<core::OpId> ids;
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (g.Label(core::OpId(i)) == what) ids.push_back(core::OpId(i));
  }
  return ids;
}

std::vector<core::OpId> FindAll(const core::OpGraph& g, const std::string& what, int slice,
                                int chip) {
  std::vector<core::OpId> found;
  for (core::OpId id : OpsNamed(g, what)) {
    if (slice != kAnySlice && g.op(id).tags.slice != slice) continue;
    for (core::ChipId c : g.ChipsOf(id)) {
      if (static_cast<int>(c.value()) == chip) found.push_back(id);
    }
  }
  return found;
}

core::OpId Find(const core::OpGraph& g, const std::string& what, int slice, int chip) {
  const std::vector<core::OpId> found = FindAll(g, what, slice, chip);
  EXPECT_EQ(found.size(), 1u) << what << " slice " << slice << " chip " << chip;
  return found.empty() ? core::OpId() : found[0];
}

std::vector<core::OpId> OpsOfKind(const core::OpGraph& g, core::OpKind kind,
                                  core::CollectiveKind coll) {
  std::vector<core::OpId> out;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const core::Op& op = g.op(core::OpId(i));
    if (op.kind == kind && op.collective == coll) out.push_back(core::OpId(i));
  }
  return out;
}

std::vector<core::OpId> SendRecvs(const core::OpGraph& g) {
  return OpsOfKind(g, core::OpKind::kCollective, core::CollectiveKind::kSendRecv);
}

std::vector<double> FlopsPerChip(const core::OpGraph& g, int chips) {
  std::vector<double> f(chips, 0);
  for (uint32_t i = 0; i < g.size(); ++i) {
    const core::Op& op = g.op(core::OpId(i));
    if (op.kind == core::OpKind::kGemm) f[op.chip.value()] += op.flops();
  }
  return f;
}

std::vector<double> ReceivedBytesPerChip(const core::OpGraph& g, int chips) {
  std::vector<double> r(chips, 0);
  for (uint32_t i = 0; i < g.size(); ++i) {
    const core::Op& op = g.op(core::OpId(i));
    if (op.kind == core::OpKind::kTransfer) {
      r[op.peer.value()] += op.bytes;
      continue;
    }
    if (op.kind != core::OpKind::kCollective) continue;
    const auto members = g.group(op.group);
    const double p = static_cast<double>(members.size());
    const double b = static_cast<double>(op.bytes);
    const int root =
        static_cast<int>(((op.root % members.size()) + members.size()) % members.size());
    for (size_t m = 0; m < members.size(); ++m) {
      double got = 0;
      switch (op.collective) {
        case core::CollectiveKind::kAllGather:
        case core::CollectiveKind::kReduceScatter:
          got = (p - 1) * b;
          break;
        case core::CollectiveKind::kAllReduce:
          got = 2 * (p - 1) * b / p;
          break;
        case core::CollectiveKind::kBroadcast:
          got = static_cast<int>(m) == root ? 0 : b;
          break;
        case core::CollectiveKind::kReduce:
          got =
              static_cast<int>(m) == (root + static_cast<int>(p) - 1) % static_cast<int>(p) ? 0 : b;
          break;
        case core::CollectiveKind::kSendRecv:
          got = p > 1 ? b : 0;
          break;
        case core::CollectiveKind::kAllToAll:
          got = (p - 1) * b / p;
          break;
        case core::CollectiveKind::kNone:
          break;
      }
      r[members[m].value()] += got;
    }
  }
  return r;
}

std::map<std::string, int> OpCounts(const core::OpGraph& g) {
  std::map<std::string, int> counts;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const core::Op& op = g.op(core::OpId(i));
    ++counts[op.kind == core::OpKind::kCollective ? core::ToString(op.collective)
                                                  : core::ToString(op.kind)];
  }
  return counts;
}

int Count(const std::map<std::string, int>& counts, const std::string& name) {
  auto it = counts.find(name);
  return it == counts.end() ? 0 : it->second;
}

bool DirectlyDependsOn(const core::OpGraph& g, core::OpId op, core::OpId dep) {
  const auto deps = g.deps(op);
  return std::find(deps.begin(), deps.end(), dep) != deps.end();
}

bool DependsOn(const core::OpGraph& g, core::OpId op, core::OpId dep) {
  std::vector<bool> seen(g.size(), false);
  std::vector<core::OpId> stack = {op};
  while (!stack.empty()) {
    const core::OpId x = stack.back();
    stack.pop_back();
    if (x == dep) return true;
    for (core::OpId d : g.deps(x)) {
      if (d >= dep && !seen[d.value()]) {
        seen[d.value()] = true;
        stack.push_back(d);
      }
    }
  }
  return false;
}

std::vector<bool> Ancestors(const core::OpGraph& g, core::OpId id) {
  std::vector<bool> mark(g.size(), false);
  mark[id.value()] = true;
  for (int64_t i = id.value(); i >= 0; --i) {
    if (!mark[i]) continue;
    for (core::OpId d : g.deps(core::OpId(static_cast<uint32_t>(i)))) mark[d.value()] = true;
  }
  mark[id.value()] = false;
  return mark;
}

void ExpectFollowsFrontier(const core::OpGraph& g, const std::vector<core::OpId>& before,
                           uint32_t first) {
  for (uint32_t i = first; i < g.size(); ++i) {
    for (core::ChipId c : g.ChipsOf(core::OpId(i))) {
      EXPECT_TRUE(DependsOn(g, core::OpId(i), before[c.value()]))
          << "op " << i << " " << g.Label(core::OpId(i)) << " on chip " << c
          << " skips the frontier";
    }
  }
}

void ExpectFrontierCovers(const core::OpGraph& g, const std::vector<core::OpId>& frontier,
                          uint32_t first) {
  for (size_t c = 0; c < frontier.size(); ++c) {
    ASSERT_TRUE(frontier[c].valid()) << "chip " << c;
    ASSERT_GE(frontier[c].value(), first) << "chip " << c;
    // Ancestors of the frontier from `first` on (a chain to an op ≥ first stays ≥ first).
    std::vector<bool> anc(g.size(), false);
    std::vector<core::OpId> stack = {frontier[c]};
    anc[frontier[c].value()] = true;
    while (!stack.empty()) {
      const core::OpId x = stack.back();
      stack.pop_back();
      for (core::OpId d : g.deps(x)) {
        if (d.value() >= first && !anc[d.value()]) anc[d.value()] = true, stack.push_back(d);
      }
    }
    for (uint32_t i = first; i < g.size(); ++i) {
      for (core::ChipId x : g.ChipsOf(core::OpId(i))) {
        if (x.value() == c) {
          EXPECT_TRUE(anc[i]) << "op " << i << " " << g.Label(core::OpId(i)) << " ends after chip "
                              << c << "'s frontier";
        }
      }
    }
  }
}

namespace {

// The plugin `name`, or a fatal failure.
void MakeAlgorithm(const std::string& name, std::unique_ptr<algorithms::Algorithm>& algo) {
  auto info = algorithms::FindAlgorithm(name);
  ASSERT_TRUE(info.ok()) << info.status();
  algo = (*info)->make();
  ASSERT_NE(algo, nullptr) << name;
}

}  // namespace

void ExpectSequenced(const std::string& name, const algorithms::GemmProblem& p,
                     const algorithms::Mesh& mesh, int slices) {
  SCOPED_TRACE(name + " " + algorithms::ToString(p.dataflow) + " on " + mesh.ToString());
  std::unique_ptr<algorithms::Algorithm> algo;
  ASSERT_NO_FATAL_FAILURE(MakeAlgorithm(name, algo));
  core::OpGraph g;
  const int chips = mesh.chips();
  algorithms::LoweringContext ctx{g, mesh, 2, slices, std::vector<core::OpId>(chips)};
  for (int c = 0; c < chips; ++c) {
    ctx.frontier[c] = g.Add(core::Op::Delay(core::ChipId(c), core::Time::Zero()));
  }
  for (int round = 0; round < 2; ++round) {
    const std::vector<core::OpId> before = ctx.frontier;
    const uint32_t first = static_cast<uint32_t>(g.size());
    ASSERT_TRUE(algo->Lower(p, ctx).ok());
    ExpectFollowsFrontier(g, before, first);
    ASSERT_NO_FATAL_FAILURE(ExpectFrontierCovers(g, ctx.frontier, first));
  }
}

void ExpectChainedThroughFrontier(const std::string& name, const algorithms::GemmProblem& first,
                                  const algorithms::GemmProblem& second,
                                  const algorithms::Mesh& mesh, int slices) {
  SCOPED_TRACE(name + " " + algorithms::ToString(first.dataflow) + " on " + mesh.ToString());
  std::unique_ptr<algorithms::Algorithm> algo;
  ASSERT_NO_FATAL_FAILURE(MakeAlgorithm(name, algo));
  core::OpGraph g;
  algorithms::LoweringContext ctx{g, mesh, 2, slices, std::vector<core::OpId>(mesh.MachineChips())};
  ASSERT_TRUE(algo->Lower(first, ctx).ok());
  const std::vector<core::OpId> after_first = ctx.frontier;
  const uint32_t first_size = static_cast<uint32_t>(g.size());
  ASSERT_NO_FATAL_FAILURE(ExpectFrontierCovers(g, after_first, 0));
  ASSERT_TRUE(algo->Lower(second, ctx).ok());
  ExpectFollowsFrontier(g, after_first, first_size);
}

double Simulate(const core::OpGraph& g, const algorithms::Mesh& mesh,
                const std::vector<std::string>& overrides, const std::string& topology) {
  sim::RawOptions raw;
  raw.values = {{"chips", std::to_string(mesh.MachineChips())},
                {"mesh", mesh.ToString()},
                {"topology", topology},
                {"workload", "chain"}};
  if (mesh.placed()) {
    std::vector<int> placement;
    for (core::ChipId c : mesh.placement) placement.push_back(static_cast<int>(c.value()));
    raw.values.emplace_back("placement", sim::FormatPlacement(placement));
  }
  raw.sets = overrides;
  auto options = sim::ResolveRunOptions(raw);
  if (!options.ok()) {
    ADD_FAILURE() << options.status();
    return -1;
  }
  core::Simulator simulator;
  core::FairShare fs(simulator);
  auto machine = sim::BuildMachine(*options, mesh, fs);
  if (!machine.ok()) {
    ADD_FAILURE() << machine.status();
    return -1;
  }
  core::Executor exec(simulator, g);
  (*machine)->Attach(exec);
  absl::Status s = exec.Run();
  if (!s.ok()) {
    ADD_FAILURE() << s;
    return -1;
  }
  return exec.makespan().seconds();
}

double SimulateBlockingRing(int chips, core::CollectiveKind kind, int64_t bytes, int64_t m,
                            int64_t n, int64_t k) {
  core::OpGraph g;
  const algorithms::Mesh ring{1, chips};
  core::Op coll = core::Op::Collective(kind, g.AddGroup(ring.All()), bytes);
  coll.directions = 2;
  if (kind == core::CollectiveKind::kAllGather) {
    const core::OpId ag = g.Add(coll);
    for (int c = 0; c < chips; ++c) g.Add(core::Op::Gemm(core::ChipId(c), m, n, k), {ag});
  } else {
    std::vector<core::OpId> gemms;
    for (int c = 0; c < chips; ++c) {
      gemms.push_back(g.Add(core::Op::Gemm(core::ChipId(c), m, n, k)));
    }
    g.Add(coll, gemms);
  }
  return Simulate(g, ring, {}, "ring");
}

double RingCollectiveSeconds(double shard_bytes, double bw, int n) {
  return kTLaunch + (n - 1) * (shard_bytes / bw + kTStep);
}

double AllGatherSeconds(int n, double shard_bytes) {
  return RingCollectiveSeconds(shard_bytes, kBwAg, n);
}

double ReduceScatterSeconds(int n, double piece_bytes) {
  return RingCollectiveSeconds(piece_bytes, kBwRds, n);
}

double ComputeSeconds(double m, double n, double k) { return 2 * m * n * k / kFlops; }

double RingSendRecvSeconds(double bytes) { return bytes / (2 * 30e9) + kTStep + kTLaunch; }

}  // namespace meshsim::testing_util
