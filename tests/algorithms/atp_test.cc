// Layer plugins (algorithms/atp/): atp, megatron, tp2d. Lowering tests inspect the op graph of
// one whole layer; the simulated cases run `--workload layer` through sim::Simulate.
#include "algorithms/atp/atp.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/atp/tp2d.h"
#include "algorithms/layer_algorithm.h"
#include "algorithms/mesh.h"
#include "core/op_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "tests/algorithms/lowering_testing.h"
#include "tests/cli/cli_testing.h"
#include "workloads/layer.h"

namespace meshsim::algorithms {
namespace {

using ::testing::HasSubstr;
using testing_util::DependsOn;
using testing_util::DirectlyDependsOn;
using testing_util::Find;
using testing_util::FlopsPerChip;

// b = 4, s = 64, h = 256, a = 16, f = 4h, fp16: T = 256 tokens.
workloads::LayerShape SmallShape() { return {4, 64, 256, 16, 0, 2}; }

core::OpGraph LowerWith(const LayerAlgorithm& algo, const LayerProblem& p, const Mesh& mesh) {
  core::OpGraph g;
  const absl::Status s = LowerLayer(p, algo, mesh, g);
  EXPECT_TRUE(s.ok()) << s;
  return g;
}

std::vector<core::ChipId> Members(const core::OpGraph& g, core::OpId id) {
  const auto span = g.group(g.op(id).group);
  return {span.begin(), span.end()};
}

// Collective volumes in elements per group, keyed by (dimension, pass): a collective on a mesh
// row is dimension 2, on a mesh column dimension 1 (atp.h). Fails the test for another group.
struct Volumes {
  std::map<std::pair<int, core::Pass>, std::map<int, int64_t>> allreduce;  // [dim, pass][group]
  std::map<std::pair<int, core::Pass>, std::map<int, int64_t>> allgather;  // shard elements
};

Volumes CollectiveVolumes(const core::OpGraph& g, const Mesh& mesh, int element_bytes) {
  Volumes v;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const core::Op& op = g.op(core::OpId(i));
    if (op.kind != core::OpKind::kCollective) continue;
    const std::vector<core::ChipId> members = Members(g, core::OpId(i));
    int dim = 0, index = -1;
    for (int r = 0; r < mesh.rows; ++r) {
      if (members == mesh.Row(r)) dim = 2, index = r;
    }
    for (int c = 0; c < mesh.cols; ++c) {
      if (members == mesh.Col(c)) dim = 1, index = c;
    }
    EXPECT_NE(dim, 0) << "collective " << g.Label(core::OpId(i)) << " on a group that is neither "
                      << "a mesh row nor a mesh column";
    auto& table = op.collective == core::CollectiveKind::kAllReduce ? v.allreduce : v.allgather;
    EXPECT_TRUE(op.collective == core::CollectiveKind::kAllReduce ||
                op.collective == core::CollectiveKind::kAllGather);
    table[{dim, op.tags.pass}][index] += op.bytes / element_bytes;
  }
  return v;
}

class AtpVolumes : public testing::TestWithParam<std::pair<int, int>> {};

TEST_P(AtpVolumes, PerDimensionAllReduceVolumesAreTheClosedForms) {
  const auto [d1, d2] = GetParam();
  const workloads::LayerShape s = SmallShape();
  const int64_t t = s.tokens(), h = s.hidden;
  // A placed mesh with scrambled chips: the plugin must name chips through the mesh.
  std::vector<core::ChipId> chips;
  for (int c = d1 * d2 - 1; c >= 0; --c) chips.push_back(core::ChipId((c * 5) % (d1 * d2)));
  const absl::StatusOr<Mesh> mesh = Mesh::Placed(d1, d2, chips);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  for (int chunks : {1, 2}) {
    SCOPED_TRACE(chunks);
    const core::OpGraph g = LowerWith(*MakeAtp(), {s, chunks}, *mesh);
    const Volumes v = CollectiveVolumes(g, *mesh, s.element_bytes);
    const auto expect_each = [](const std::map<int, int64_t>& per_group, int groups, int64_t want,
                                const char* what) {
      if (want == 0 || groups == 0) {
        EXPECT_TRUE(per_group.empty()) << what;
        return;
      }
      EXPECT_EQ(per_group.size(), size_t(groups)) << what;
      for (const auto& [group, elems] : per_group) EXPECT_EQ(elems, want) << what << " " << group;
    };
    const int rows = d2 > 1 ? d1 : 0, cols = d1 > 1 ? d2 : 0;  // Groups of one chip: no ops.
    // Forward: f1 + f3 on dimension 2 = 3Th/d1 + 4Th/d1 = 7·T·h/d1 per row group; f2 + f4 on
    // dimension 1 = 2·T·h/d2 per column group.
    expect_each(v.allreduce.count({2, core::Pass::kFwd}) ? v.allreduce.at({2, core::Pass::kFwd})
                                                         : std::map<int, int64_t>{},
                rows, 7 * t * h / d1, "fwd dim 2");
    expect_each(v.allreduce.count({1, core::Pass::kFwd}) ? v.allreduce.at({1, core::Pass::kFwd})
                                                         : std::map<int, int64_t>{},
                cols, 2 * t * h / d2, "fwd dim 1");
    // Backward dX: ffn_down + attn_out on dimension 2 = 4Th/d1 + Th/d1 = 5·T·h/d1; ffn_up + qkv
    // on dimension 1 = 2·T·h/d2.
    expect_each(v.allreduce.count({2, core::Pass::kBwdData})
                    ? v.allreduce.at({2, core::Pass::kBwdData})
                    : std::map<int, int64_t>{},
                rows, 5 * t * h / d1, "bwd dim 2");
    expect_each(v.allreduce.count({1, core::Pass::kBwdData})
                    ? v.allreduce.at({1, core::Pass::kBwdData})
                    : std::map<int, int64_t>{},
                cols, 2 * t * h / d2, "bwd dim 1");
    // No gradient AllReduce: dW is local.
    EXPECT_EQ(v.allreduce.count({1, core::Pass::kBwdWeight}) +
                  v.allreduce.count({2, core::Pass::kBwdWeight}),
              0u);
    // Gathers on dimension 2: forward ctx, T·h/(d1·d2) per device; backward dQKV, 3·T·h/(d1·d2).
    expect_each(v.allgather.count({2, core::Pass::kFwd}) ? v.allgather.at({2, core::Pass::kFwd})
                                                         : std::map<int, int64_t>{},
                rows, t * h / (d1 * d2), "fwd gather");
    expect_each(v.allgather.count({2, core::Pass::kBwdWeight})
                    ? v.allgather.at({2, core::Pass::kBwdWeight})
                    : std::map<int, int64_t>{},
                rows, 3 * t * h / (d1 * d2), "bwd gather");
    EXPECT_EQ(
        v.allgather.count({1, core::Pass::kFwd}) + v.allgather.count({1, core::Pass::kBwdWeight}),
        0u);

    // Every chip computes 1/(d1·d2) of the layer's GeMM flops, which sum to Megatron's formula.
    const std::vector<double> flops = FlopsPerChip(g, mesh->MachineChips());
    double total = 0;
    for (double f : flops) {
      EXPECT_DOUBLE_EQ(f, workloads::LayerFlops(s.batch, s.seq, s.hidden) / (d1 * d2));
      total += f;
    }
    EXPECT_DOUBLE_EQ(total, workloads::LayerFlops(s.batch, s.seq, s.hidden));
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, AtpVolumes,
                         testing::Values(std::pair{2, 2}, std::pair{2, 4}, std::pair{4, 2},
                                         std::pair{8, 1}, std::pair{1, 8}, std::pair{4, 4}));

TEST(AtpTest, GroupsAreMeshColumnsForDimensionOneAndRowsForDimensionTwo) {
  const Mesh mesh{2, 4};
  const core::OpGraph g = LowerWith(*MakeAtp(), {SmallShape(), 1}, mesh);
  // f1 (qkv forward) on the 2 rows of 4 chips; f2 (attn_out forward) on the 4 columns of 2.
  const std::vector<core::OpId> f1 = testing_util::OpsNamed(g, "qkv.fwd.allreduce");
  const std::vector<core::OpId> f2 = testing_util::OpsNamed(g, "attn_out.fwd.allreduce");
  ASSERT_EQ(f1.size(), 2u);
  ASSERT_EQ(f2.size(), 4u);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(Members(g, f1[i]), mesh.Row(i));
  for (int j = 0; j < 4; ++j) EXPECT_EQ(Members(g, f2[j]), mesh.Col(j));
  // Bytes per chip: f1 = T·3h/d1·e, f2 = T·h/d2·e.
  EXPECT_EQ(g.op(f1[0]).bytes, 256 * 3 * 256 / 2 * 2);
  EXPECT_EQ(g.op(f2[0]).bytes, 256 * 256 / 4 * 2);
}

TEST(AtpTest, AttentionSplitsBySequencesWhenDimensionTwoDoesNotDivideTheHeads) {
  // a = 8 on DeviceMesh(8, 2): one head per device row, so dimension 2 splits the 4 sequences.
  const workloads::LayerShape s{4, 64, 256, 8, 0, 2};
  const Mesh mesh{8, 2};
  const core::OpGraph g = LowerWith(*MakeAtp(), {s, 1}, mesh);
  // b·a/(d1·d2) = 2 per-head GeMMs of s×s×d per device, as one kGemm of (2·s)×s×d.
  const core::Op& score = g.op(Find(g, "attn_score.fwd.gemm", 0, 5));
  EXPECT_EQ(score.m, 2 * 64);
  EXPECT_EQ(score.n, 64);
  EXPECT_EQ(score.k, 32);
  for (double f : FlopsPerChip(g, 16)) EXPECT_DOUBLE_EQ(f, workloads::LayerFlops(4, 64, 256) / 16);
  // Chunks split only the linear layers (§4.2), so 4 chunks (one sequence each) still shard the
  // attention core by the batch's 4 sequences.
  ASSERT_TRUE(MakeAtp()->Check({s, 4}, mesh).ok());
  const core::OpGraph four = LowerWith(*MakeAtp(), {s, 4}, mesh);
  EXPECT_EQ(four.op(Find(four, "attn_score.fwd.gemm", 0, 5)).m, 2 * 64);
}

TEST(AtpTest, WeightGradientFollowsItsDataGradientNotItsAllReduce) {
  const Mesh mesh{2, 2};
  const core::OpGraph g = LowerWith(*MakeAtp(), {SmallShape(), 1}, mesh);
  for (const std::string layer : {"qkv", "attn_out", "ffn_up", "ffn_down"}) {
    SCOPED_TRACE(layer);
    const core::OpId dx = Find(g, layer + ".bwd_data.gemm", 0, 0);
    const core::OpId ar = Find(g, layer + ".bwd_data.allreduce", 0, 0);
    const core::OpId dw = Find(g, layer + ".bwd_weight.gemm", 0, 0);
    EXPECT_TRUE(DirectlyDependsOn(g, dw, dx));
    EXPECT_TRUE(DirectlyDependsOn(g, ar, dx));
    EXPECT_FALSE(DependsOn(g, dw, ar));  // So the AllReduce overlaps the dW GeMM (§4.2).
  }
}

TEST(AtpTest, ChunksSplitTheForwardLinearLayersOnly) {
  // §4.1-4.2: a forward FC layer runs in c chunks (GeMM of T/c tokens, then its AllReduce of 1/c
  // of the bytes) and the next op waits for every chunk; attention, element-wise ops, gathers
  // and the whole backward pass run once, as with one chunk.
  const Mesh mesh{2, 4};
  const workloads::LayerShape s = SmallShape();
  const int64_t t = s.tokens();
  const core::OpGraph one = LowerWith(*MakeAtp(), {s, 1}, mesh);
  const auto ars = [](const core::OpGraph& g, core::Pass pass) {
    std::vector<core::OpId> out;
    for (core::OpId id :
         testing_util::OpsOfKind(g, core::OpKind::kCollective, core::CollectiveKind::kAllReduce)) {
      if (g.op(id).tags.pass == pass) out.push_back(id);
    }
    return out;
  };
  ASSERT_EQ(ars(one, core::Pass::kFwd).size(), 2u + 4u + 2u + 4u);  // f1..f4 on 2 rows / 4 columns
  for (int c : {2, 4}) {
    SCOPED_TRACE(c);
    const core::OpGraph g = LowerWith(*MakeAtp(), {s, c}, mesh);
    // Forward: each AllReduce of one chunk becomes c of 1/c the bytes, chunk by chunk.
    const std::vector<core::OpId> fwd1 = ars(one, core::Pass::kFwd), fwd = ars(g, core::Pass::kFwd);
    ASSERT_EQ(fwd.size(), c * fwd1.size());
    for (const std::string layer : {"qkv", "attn_out", "ffn_up", "ffn_down"}) {
      const std::vector<core::OpId> whole =
          testing_util::FindAll(one, layer + ".fwd.allreduce", testing_util::kAnySlice, 0);
      ASSERT_EQ(whole.size(), 1u);
      for (int k = 0; k < c; ++k) {
        EXPECT_EQ(g.op(Find(g, layer + ".fwd.allreduce", k, 0)).bytes * c, one.op(whole[0]).bytes);
        EXPECT_EQ(g.op(Find(g, layer + ".fwd.gemm", k, 0)).m, t / c);
      }
      // Chunk k+1's GeMM does not wait for chunk k's AllReduce...
      EXPECT_FALSE(DependsOn(g, Find(g, layer + ".fwd.gemm", 1, 0),
                             Find(g, layer + ".fwd.allreduce", 0, 0)));
    }
    // ... and the op after the layer waits for every chunk's.
    for (int k = 0; k < c; ++k) {
      EXPECT_TRUE(DirectlyDependsOn(g, Find(g, "attn_score.fwd.gemm", 0, 0),
                                    Find(g, "qkv.fwd.allreduce", k, 0)));
    }
    // Backward: the same AllReduces and dW GeMMs (k = T) as one chunk.
    const std::vector<core::OpId> bwd1 = ars(one, core::Pass::kBwdData),
                                  bwd = ars(g, core::Pass::kBwdData);
    ASSERT_EQ(bwd.size(), bwd1.size());
    for (size_t i = 0; i < bwd.size(); ++i) EXPECT_EQ(g.op(bwd[i]).bytes, one.op(bwd1[i]).bytes);
    EXPECT_EQ(g.op(Find(g, "ffn_down.bwd_weight.gemm", 0, 0)).k, t);
    EXPECT_EQ(g.op(Find(g, "ffn_down.bwd_data.gemm", 0, 0)).m, t);
    // The same flops per chip, and every other op as with one chunk.
    EXPECT_EQ(FlopsPerChip(g, 8), FlopsPerChip(one, 8));
    const size_t fc_fwd_ops = fwd1.size() + 4 * 8;  // the AllReduces and 4 FC GeMMs per chip
    EXPECT_EQ(g.size(), one.size() + (c - 1) * fc_fwd_ops);
  }
}

TEST(AtpTest, GatheredActivationsAllGatherEachBlocksOutputAndLayerNormGradient) {
  // activations=gathered (the authors' benchmark): after attn_out and ffn_down forward, and after
  // the ffn_up and qkv dX AllReduces, an AllGather over dimension 2 (each device T·h/d2); the
  // LayerNorms and residual adds on the whole [T × h].
  const workloads::LayerShape s = SmallShape();
  const int64_t t = s.tokens(), h = s.hidden, e = s.element_bytes;
  const Mesh mesh{2, 4};
  const core::OpGraph sharded = LowerWith(*MakeAtp(1, false), {s, 1}, mesh);
  const core::OpGraph gathered = LowerWith(*MakeAtp(1, true), {s, 1}, mesh);
  for (const char* name : {"attn_out.fwd.allgather", "ffn_down.fwd.allgather",
                           "ffn_up.bwd_data.allgather", "qkv.bwd_data.allgather"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(testing_util::OpsNamed(sharded, name).empty());
    const std::vector<core::OpId> ags = testing_util::OpsNamed(gathered, name);
    ASSERT_EQ(ags.size(), 2u);  // one per mesh row (dimension 2)
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(Members(gathered, ags[r]), mesh.Row(r));
      EXPECT_EQ(gathered.op(ags[r]).bytes, t * h / 4 * e);
    }
  }
  // The gather follows its AllReduce; the LayerNorm follows the gather.
  EXPECT_TRUE(DependsOn(gathered, Find(gathered, "ln2.fwd.vector", 0, 0),
                        Find(gathered, "attn_out.fwd.allgather", 0, 0)));
  EXPECT_TRUE(DirectlyDependsOn(gathered, Find(gathered, "ffn_up.bwd_data.allgather", 0, 0),
                                Find(gathered, "ffn_up.bwd_data.allreduce", 0, 0)));
  EXPECT_TRUE(DirectlyDependsOn(gathered, Find(gathered, "ln2.bwd.vector", 0, 0),
                                Find(gathered, "ffn_up.bwd_data.allgather", 0, 0)));
  EXPECT_EQ(gathered.op(Find(gathered, "ln1.fwd.vector", 0, 0)).bytes,
            4 * sharded.op(Find(sharded, "ln1.fwd.vector", 0, 0)).bytes);
  EXPECT_EQ(*MakeAtp(1, true)->BoundarySpec(mesh), "RRR");
  // With d2 = 1 there is nothing to gather: the same graph.
  const Mesh column{8, 1};
  EXPECT_EQ(LowerWith(*MakeAtp(1, true), {s, 1}, column).size(),
            LowerWith(*MakeAtp(1, false), {s, 1}, column).size());
}

TEST(AtpTest, FrontierCoversTheLayerAndSequencesTheNext) {
  const Mesh mesh{2, 4};
  const workloads::LayerShape s = SmallShape();
  core::OpGraph g;
  LoweringContext ctx{g, mesh, 2, 0, std::vector<core::OpId>(mesh.MachineChips())};
  ASSERT_TRUE(MakeAtp()->Lower({s, 2}, ctx).ok());
  testing_util::ExpectFrontierCovers(g, ctx.frontier, 0);
  const std::vector<core::OpId> before = ctx.frontier;
  const uint32_t first = static_cast<uint32_t>(g.size());
  ASSERT_TRUE(MakeAtp()->Lower({s, 2}, ctx).ok());
  testing_util::ExpectFollowsFrontier(g, before, first);
  testing_util::ExpectFrontierCovers(g, ctx.frontier, first);
}

TEST(AtpTest, MegatronIsAtpOnAnNx1MeshWithEachDxAllReduceAfterItsDw) {
  const Mesh mesh{8, 1};
  const workloads::LayerShape s = SmallShape();
  for (int chunks : {1, 2}) {
    SCOPED_TRACE(chunks);
    const core::OpGraph atp = LowerWith(*MakeAtp(), {s, chunks}, mesh);
    const core::OpGraph meg = LowerWith(*MakeMegatron(), {s, chunks}, mesh);
    // The same ops: kinds, chips, shapes, bytes, labels and groups, counted per label (ATP's
    // side dW GeMMs also need a join at the layer's end).
    const auto ops = [](const core::OpGraph& g) {
      std::map<std::string, std::vector<std::tuple<int, uint32_t, int64_t, int64_t, int64_t,
                                                   int64_t, std::vector<core::ChipId>>>>
          by_label;
      for (uint32_t i = 0; i < g.size(); ++i) {
        const core::Op& o = g.op(core::OpId(i));
        if (g.Label(core::OpId(i)) == "layer.join") continue;
        by_label[g.Label(core::OpId(i))].emplace_back(
            int(o.kind), o.chip.value(), o.bytes, o.m, o.n, o.k,
            o.kind == core::OpKind::kCollective ? Members(g, core::OpId(i))
                                                : std::vector<core::ChipId>{});
      }
      for (auto& [label, v] : by_label) std::sort(v.begin(), v.end());
      return by_label;
    };
    EXPECT_EQ(ops(atp), ops(meg));
    // Backward: ATP's dX AllReduce runs beside dW (§4.2); Megatron-LM v2.6's after it. (On N×1
    // only the column-first layers' dX is all-reduced, over dimension 1.)
    for (const std::string layer : {"qkv", "ffn_up"}) {
      SCOPED_TRACE(layer);
      EXPECT_FALSE(DependsOn(atp, Find(atp, layer + ".bwd_data.allreduce", 0, 0),
                             Find(atp, layer + ".bwd_weight.gemm", 0, 0)));
      EXPECT_TRUE(DirectlyDependsOn(meg, Find(meg, layer + ".bwd_data.allreduce", 0, 0),
                                    Find(meg, layer + ".bwd_weight.gemm", 0, 0)));
      EXPECT_TRUE(DirectlyDependsOn(meg, Find(meg, layer + ".bwd_weight.gemm", 0, 0),
                                    Find(meg, layer + ".bwd_data.gemm", 0, 0)));
    }
  }
  // A pipeline that delays dW (LayerPart::kBackwardData, then kBackwardWeight) gets each dX
  // AllReduce right after dX, where the next layer's backward needs it, and none with dW.
  const core::OpGraph data = LowerWith(*MakeMegatron(), {s, 1, LayerPart::kBackwardData}, mesh);
  const core::OpGraph weight = LowerWith(*MakeMegatron(), {s, 1, LayerPart::kBackwardWeight}, mesh);
  for (const std::string layer : {"qkv", "ffn_up"}) {
    EXPECT_TRUE(DirectlyDependsOn(data, Find(data, layer + ".bwd_data.allreduce", 0, 0),
                                  Find(data, layer + ".bwd_data.gemm", 0, 0)));
  }
  EXPECT_TRUE(
      testing_util::OpsOfKind(weight, core::OpKind::kCollective, core::CollectiveKind::kAllReduce)
          .empty());
  // Megatron-LM: two AllReduces of T·h over all 8 chips forward (f2, f4), two backward.
  const core::OpGraph meg = LowerWith(*MakeMegatron(), {s, 1}, mesh);
  const std::vector<core::OpId> ars =
      testing_util::OpsOfKind(meg, core::OpKind::kCollective, core::CollectiveKind::kAllReduce);
  ASSERT_EQ(ars.size(), 4u);
  for (core::OpId id : ars) {
    EXPECT_EQ(meg.op(id).bytes, s.tokens() * s.hidden * 2);
    EXPECT_EQ(Members(meg, id).size(), 8u);
  }
  EXPECT_TRUE(
      testing_util::OpsOfKind(meg, core::OpKind::kCollective, core::CollectiveKind::kAllGather)
          .empty());
}

TEST(AtpTest, PreconditionsAreOneLineErrors) {
  const workloads::LayerShape s{4, 64, 256, 8, 0, 2};  // h = 256, a = 8, b = 4
  const auto error = [](const LayerAlgorithm& algo, const LayerProblem& p, const Mesh& mesh) {
    const absl::Status st = algo.Check(p, mesh);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << mesh.ToString();
    EXPECT_EQ(std::string(st.message()).find('\n'), std::string::npos);
    return std::string(st.message());
  };
  EXPECT_THAT(error(*MakeAtp(), {s, 3}, Mesh{2, 2}), HasSubstr("--chunks: 3"));
  EXPECT_THAT(error(*MakeAtp(), {s, 1}, Mesh{16, 1}), HasSubstr("divide heads 8"));
  EXPECT_THAT(error(*MakeAtp(), {s, 1}, Mesh{3, 1}), HasSubstr("d1 = 3 must divide hidden 256"));
  EXPECT_THAT(error(*MakeAtp(), {s, 1}, Mesh{1, 3}), HasSubstr("d2 = 3 must divide hidden 256"));
  // a/d1 = 1 head per device row and 4 sequences: d2 = 8 divides neither.
  EXPECT_THAT(error(*MakeAtp(), {s, 1}, Mesh{8, 8}), HasSubstr("heads/d1 = 1"));
  EXPECT_THAT(error(*MakeMegatron(), {s, 1}, Mesh{2, 4}), HasSubstr("--mesh 8x1"));
  EXPECT_THAT(error(*MakeTp2d(), {s, 1}, Mesh{4, 2}), HasSubstr("q x (d*q)"));
  EXPECT_THAT(error(*MakeTp2d(), {s, 2}, Mesh{2, 2}), HasSubstr("--chunks: 2"));
  EXPECT_THAT(error(*MakeTp2d(), {{2, 64, 256, 8, 0, 2}, 1}, Mesh{2, 4}), HasSubstr("--batch: 2"));
  EXPECT_TRUE(MakeAtp()->Check({s, 4}, Mesh{2, 4}).ok());
}

TEST(Tp2dTest, SummaPerFcGemmLocalAttentionAndDepthAllReduces) {
  const workloads::LayerShape s = SmallShape();
  const Mesh mesh{2, 4};  // 2.5D: depth 2 of 2×2
  const core::OpGraph g = LowerWith(*MakeTp2d(), {s, 1}, mesh);
  const std::vector<double> flops = FlopsPerChip(g, 8);
  for (double f : flops) EXPECT_DOUBLE_EQ(f, workloads::LayerFlops(4, 64, 256) / 8);
  // dW blocks all-reduced across the depth: 4 FC layers × q² = 4 groups of {(i, j), (i, j + 2)}.
  const std::vector<core::OpId> depth =
      testing_util::OpsOfKind(g, core::OpKind::kCollective, core::CollectiveKind::kAllReduce);
  ASSERT_EQ(depth.size(), 16u);
  EXPECT_EQ(Members(g, depth[0]), (std::vector<core::ChipId>{mesh.At(0, 0), mesh.At(0, 2)}));
  // ffn_down dW block (f/q × h/q)·e, the first depth AllReduce in backward order.
  EXPECT_EQ(g.op(depth[0]).bytes, (1024 / 2) * (256 / 2) * 2);
  // SUMMA broadcasts stay inside a depth slice.
  for (core::OpId id :
       testing_util::OpsOfKind(g, core::OpKind::kCollective, core::CollectiveKind::kBroadcast)) {
    const std::vector<core::ChipId> m = Members(g, id);
    const int slice = mesh.Local(m[0]) % 4 / 2;
    for (core::ChipId c : m) EXPECT_EQ(mesh.Local(c) % 4 / 2, slice);
  }
  // 2D on 4×4: no depth AllReduce.
  const core::OpGraph g2 = LowerWith(*MakeTp2d(), {s, 1}, Mesh{4, 4});
  EXPECT_TRUE(
      testing_util::OpsOfKind(g2, core::OpKind::kCollective, core::CollectiveKind::kAllReduce)
          .empty());
}

TEST(Tp2dTest, FrontierCoversTheLayerAndSequencesTheNext) {
  const Mesh mesh{2, 4};
  core::OpGraph g;
  LoweringContext ctx{g, mesh, 2, 0, std::vector<core::OpId>(mesh.MachineChips())};
  ASSERT_TRUE(MakeTp2d()->Lower({SmallShape(), 1}, ctx).ok());
  testing_util::ExpectFrontierCovers(g, ctx.frontier, 0);
  const std::vector<core::OpId> before = ctx.frontier;
  const uint32_t first = static_cast<uint32_t>(g.size());
  ASSERT_TRUE(MakeTp2d()->Lower({SmallShape(), 1}, ctx).ok());
  testing_util::ExpectFollowsFrontier(g, before, first);
  testing_util::ExpectFrontierCovers(g, ctx.frontier, first);
}

// --- Simulated: `--workload layer` end to end ---

absl::StatusOr<formats::RunRecord> RunLayer(
    std::vector<std::pair<std::string, std::string>> values) {
  sim::RawOptions raw;
  raw.values = std::move(values);
  raw.values.emplace_back("workload", "layer");
  absl::StatusOr<sim::RunOptions> o = sim::ResolveRunOptions(raw);
  if (!o.ok()) return o.status();
  return sim::Simulate(*o);
}

TEST(AtpSimTest, LayerRunsOnThePapersInterconnects) {
  for (const auto& [system, chips, algorithm, mesh] :
       {std::tuple{"dgx-a100", "8", "atp", "auto"}, std::tuple{"a100-pcie", "8", "atp", "2x4"},
        std::tuple{"a100-ib", "16", "megatron", "auto"},
        std::tuple{"dgx-a100", "8", "tp2d", "auto"}}) {
    SCOPED_TRACE(std::string(system) + " " + algorithm);
    absl::StatusOr<formats::RunRecord> r = RunLayer({{"system", system},
                                                     {"chips", chips},
                                                     {"algorithm", algorithm},
                                                     {"mesh", mesh},
                                                     {"model", "atp-m1"}});
    ASSERT_TRUE(r.ok()) << r.status();
    const double tflops = r->Metric("tflops_per_gpu");
    // Positive and below the chip's peak: LayerFlops / (chips · makespan).
    EXPECT_GT(tflops, 0.5);
    EXPECT_LT(tflops * 1e12, r->Metric("chip_peak_flops_per_s"));
    EXPECT_DOUBLE_EQ(r->Metric("layer_flops"), workloads::LayerFlops(4, 2048, 2048));
    EXPECT_NEAR(tflops,
                r->Metric("layer_flops") / (std::stoi(chips) * r->Metric("makespan_s")) / 1e12,
                1e-9);
  }
}

TEST(AtpSimTest, MeshAutoIsTheAtpSearchsChoiceForAtpOnly) {
  // --mesh auto: atp takes AtpSearch's mesh on the run's matrix (docs/atp.md's table: 4x2 on
  // IC3 8 GPUs, since ATP-1 = 4 − 4/8 = 3.5 Δ > ATP-2 = 2 + 10/8 = 3.25 Δ; 4x4 on IC4 16 GPUs;
  // 8x2 on nvl-switch 16); megatron stays N×1 and tp2d q×(d·q) whatever the machine.
  const auto mesh = [](const char* system, const char* chips, const char* algorithm) {
    sim::RawOptions raw;
    raw.values = {{"workload", "layer"},    {"system", system}, {"chips", chips},
                  {"algorithm", algorithm}, {"mesh", "auto"},   {"model", "atp-m2"}};
    absl::StatusOr<sim::RunOptions> o = sim::ResolveRunOptions(raw);
    if (!o.ok()) return std::string(o.status().message());
    absl::StatusOr<Mesh> m = sim::ResolveLayerMesh(*o);
    return m.ok() ? m->ToString() : std::string(m.status().message());
  };
  EXPECT_EQ(mesh("dgx-a100", "8", "atp"), "4x2");
  EXPECT_EQ(mesh("a100-ib", "16", "atp"), "4x4");
  EXPECT_EQ(mesh("nvl-switch", "16", "atp"), "8x2");
  EXPECT_EQ(mesh("dgx-a100", "8", "megatron"), "8x1");
  EXPECT_EQ(mesh("a100-ib", "16", "megatron"), "16x1");
  EXPECT_EQ(mesh("dgx-a100", "8", "tp2d"), "2x4");
  EXPECT_EQ(mesh("a100-ib", "16", "tp2d"), "4x4");
  // The run records the resolved mesh.
  const sim::testing_cli::Result r =
      sim::testing_cli::Cli({"run", "--workload", "layer", "--system", "a100-ib", "--chips", "16",
                             "--model", "atp-m1", "--algorithm", "atp", "--format", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"mesh\": \"4x4\""));
}

TEST(AtpSimTest, MeasuredMatrixSearchesOnSimulatedBandwidths) {
  // --param matrix=measured: the run's --mesh auto searches on bandwidths simulated on the
  // machine (AtpTuneCli.MeasuredBandwidthsOnIc1AreSection53s has them): on IC1 as the paper ran
  // it (a100-pcie-shm) a 2D mesh, where the derived matrix keeps Megatron's 8x1.
  const auto mesh = [](const std::string& matrix) {
    sim::RawOptions raw;
    raw.values = {
        {"workload", "layer"}, {"system", "a100-pcie-shm"}, {"chips", "8"},    {"algorithm", "atp"},
        {"mesh", "auto"},      {"model", "atp-m2"},         {"matrix", matrix}};
    absl::StatusOr<sim::RunOptions> o = sim::ResolveRunOptions(raw);
    if (!o.ok()) return std::string(o.status().message());
    absl::StatusOr<Mesh> m = sim::ResolveLayerMesh(*o);
    return m.ok() ? m->ToString() : std::string(m.status().message());
  };
  EXPECT_EQ(mesh("hierarchical"), "8x1");
  EXPECT_EQ(mesh("measured"), "4x2");
  // Read only where a search runs: not with a mesh given, not by megatron.
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--algorithm", "atp", "--mesh", "2x4"}, "does not apply with --mesh D1xD2"},
           {{"--algorithm", "megatron"}, "does not apply to --algorithm megatron"}}) {
    std::vector<std::string> cmd = {"run",      "--workload",    "layer",
                                    "--system", "a100-pcie-shm", "--chips",
                                    "8",        "--param",       "matrix=measured"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    const sim::testing_cli::Result r = sim::testing_cli::Cli(cmd);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(says));
  }
}

TEST(AtpSimTest, CommunicationTimeOnAnNvlinkSwitchIsFigure12sClosedForm) {
  // ATP §5.4, Figure 12: on one fully connected layer (IC5, nvl-switch: G = GroupBW = 450 GB/s
  // per GPU and direction) Eq. 2 with Eq. 4's Rabenseifner bandwidths B = d/(2(d−1))·G gives
  //   T_comm = Δ·(14·d2 + 4·d1 − 18)/(d1·d2),   Δ = 2·L·b·s·h·e / G.
  // Simulated: one atp-m2 layer (L = 1, b = 4, s = 2048, h = 4096, e = 2) with launch, sync and
  // link latency set to 0 (the formula has none) and compute made negligible (MXU clock, cores,
  // HBM and vector rates raised), so the makespan is the layer's all-reduces back to back; the
  // switch's AllReduce is halving-doubling, which moves Rabenseifner's 2(d−1)/d·bytes per member.
  // comm.transfer_s (per chip, the collectives' bandwidth phases) and the makespan both within 2%.
  const double delta = 2.0 * 1 * 4 * 2048 * 4096 * 2 / 450e9;
  for (const auto& [chips, d1, d2] :
       {std::tuple{16, 16, 1}, std::tuple{16, 8, 2}, std::tuple{16, 4, 4}, std::tuple{16, 2, 8},
        std::tuple{32, 8, 4}}) {
    const std::string mesh = std::to_string(d1) + "x" + std::to_string(d2);
    SCOPED_TRACE(mesh);
    sim::RawOptions raw;
    raw.values = {{"workload", "layer"}, {"system", "nvl-switch"}, {"chips", std::to_string(chips)},
                  {"algorithm", "atp"},  {"mesh", mesh},           {"model", "atp-m2"},
                  {"stack", "ideal"}};
    raw.sets = {"comm.t_launch=0",    "comm.t_sync=0",         "link.latency=0",
                "core.clock_hz=1e11", "chip.cores=1024",       "hbm.bandwidth=1e16",
                "l2.bandwidth=1e16",  "core.vector_flops=1e15"};
    absl::StatusOr<sim::RunOptions> o = sim::ResolveRunOptions(raw);
    ASSERT_TRUE(o.ok()) << o.status();
    absl::StatusOr<formats::RunRecord> r = sim::Simulate(*o);
    ASSERT_TRUE(r.ok()) << r.status();
    const double closed_form = delta * (14.0 * d2 + 4.0 * d1 - 18) / (d1 * d2);
    EXPECT_NEAR(r->Metric("comm.transfer_s"), closed_form, 0.02 * closed_form);
    EXPECT_NEAR(r->Metric("makespan_s"), closed_form, 0.02 * closed_form);
  }
}

TEST(AtpSimTest, HostStagedPcieReproducesTheMeasuredAllReduceBandwidthsOfDeviceMesh2x4) {
  // a100-pcie-shm (docs/calibration.md) against ATP §5.3's measured B2 = 4.95 GB/s (4 GPUs in a
  // socket: (4/6)·pcie.bandwidth) and B1 = 1.20 GB/s (4 cross-socket pairs at once:
  // socket.bandwidth/4) on DeviceMesh(2, 4); algorithm bandwidth = 64 MiB / makespan, within 2%
  // (launch, sync and hop latency cost ≈1%); one 8-GPU ring (DeviceMesh(8, 1)): the measured
  // B1 = 0.97 GB/s, one cross-socket stream at socket.stream_bandwidth: 16/14 · 0.8488.
  const auto algbw = [](const char* mesh, const char* group) {
    sim::RawOptions raw;
    raw.values = {{"workload", "collective"},
                  {"collective", "allreduce"},
                  {"system", "a100-pcie-shm"},
                  {"chips", "8"},
                  {"mesh", mesh},
                  {"group", group},
                  {"bytes", "64MiB"}};
    absl::StatusOr<sim::RunOptions> o = sim::ResolveRunOptions(raw);
    EXPECT_TRUE(o.ok()) << o.status();
    if (!o.ok()) return 0.0;
    absl::StatusOr<formats::RunRecord> r = sim::Simulate(*o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? 64.0 * (1 << 20) / r->Metric("makespan_s") / 1e9 : 0.0;
  };
  EXPECT_NEAR(algbw("2x4", "row"), 4.95, 0.02 * 4.95);
  EXPECT_NEAR(algbw("2x4", "col"), 1.20, 0.02 * 1.20);
  EXPECT_NEAR(algbw("8x1", "col"), 0.97, 0.02 * 0.97);
}

TEST(AtpSimTest, TwoChunksExposeLessCommunicationOnInfiniBand) {
  // a100-ib, 16 GPUs, M2, DeviceMesh(4, 4). Measured: exposed 19.00 ms (chunks 1) vs 18.68 ms
  // (chunks 2); makespan 23.32 vs 23.06 ms (only the forward linear layers are chunked).
  const auto run = [](const char* chunks) {
    absl::StatusOr<formats::RunRecord> r = RunLayer({{"system", "a100-ib"},
                                                     {"chips", "16"},
                                                     {"algorithm", "atp"},
                                                     {"mesh", "4x4"},
                                                     {"model", "atp-m2"},
                                                     {"chunks", chunks}});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::pair{r->Metric("comm.exposed_s"), r->Metric("makespan_s")}
                  : std::pair{0.0, 0.0};
  };
  const auto [exposed1, makespan1] = run("1");
  const auto [exposed2, makespan2] = run("2");
  EXPECT_LT(exposed2, exposed1);
  EXPECT_LT(makespan2, makespan1);
}

TEST(AtpSimTest, DeterministicFingerprint) {
  const auto fingerprint = [] {
    absl::StatusOr<formats::RunRecord> r = RunLayer({{"system", "dgx-a100"},
                                                     {"chips", "8"},
                                                     {"algorithm", "atp"},
                                                     {"mesh", "4x2"},
                                                     {"model", "atp-m1"},
                                                     {"chunks", "2"}});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? sim::Fingerprint(*r) : 0;
  };
  const uint64_t a = fingerprint();
  EXPECT_NE(a, 0u);
  EXPECT_EQ(a, fingerprint());
}

TEST(AtpSimTest, WorkloadAndAlgorithmMustMatch) {
  const auto error = [](std::vector<std::pair<std::string, std::string>> values) {
    sim::RawOptions raw;
    raw.values = std::move(values);
    absl::StatusOr<sim::RunOptions> o = sim::ResolveRunOptions(raw);
    if (!o.ok()) return std::string(o.status().message());
    const absl::Status s = sim::CheckRun(*o);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  // 2D GeMM plugins run a layer (gemm_layer.h); the 1D ones do not.
  EXPECT_THAT(error({{"workload", "layer"}, {"algorithm", "tp1d"}, {"chips", "8"}}),
              HasSubstr("--algorithm: 'tp1d' is not allowed with --workload layer"));
  EXPECT_THAT(error({{"workload", "llm"}, {"algorithm", "atp"}, {"chips", "8"}}),
              HasSubstr("'atp' is a layer plugin"));
  EXPECT_THAT(error({{"workload", "layer"},
                     {"algorithm", "atp"},
                     {"chips", "8"},
                     {"batch", "2"},
                     {"chunks", "4"}}),
              HasSubstr("--chunks: '4' is not allowed; the chunk count must divide --batch 2"));
  EXPECT_THAT(error({{"workload", "layer"}, {"algorithm", "atp"}, {"pass", "fwd"}}),
              HasSubstr("--pass: 'fwd' is not allowed"));
}

TEST(AtpSimTest, CommandLineRunPrintsTflopsPerGpuAndRejectsMismatches) {
  using sim::testing_cli::Cli;
  const sim::testing_cli::Result ok =
      Cli({"run", "--workload", "layer", "--system", "a100-ib", "--chips", "16", "--model",
           "atp-m1", "--algorithm", "atp", "--mesh", "4x4", "--chunks", "2", "--format", "json"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("\"tflops_per_gpu\": "));
  EXPECT_THAT(ok.out, HasSubstr("\"chunks\": 2"));
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"run", "--workload", "layer", "--algorithm", "fsdp", "--chips",
                                 "8"},
        std::vector<std::string>{"run", "--workload", "llm", "--algorithm", "megatron", "--chips",
                                 "8"},
        std::vector<std::string>{"run", "--workload", "layer", "--algorithm", "atp", "--chips", "8",
                                 "--chunks", "8"},
        std::vector<std::string>{"run", "--workload", "layer", "--algorithm", "atp", "--chips", "6",
                                 "--mesh", "6x1", "--model", "atp-m1"}}) {
    const sim::testing_cli::Result r = Cli(bad);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace meshsim::algorithms
