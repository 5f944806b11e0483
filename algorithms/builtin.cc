// The one list of built-in algorithm plugins. Adding a plugin = one entry here (docs/plugins.md).
#include "algorithms/atp/atp.h"
#include "algorithms/atp/tp2d.h"
#include "algorithms/examples/example.h"
#include "algorithms/gemm2d/cannon.h"
#include "algorithms/gemm2d/collective.h"
#include "algorithms/gemm2d/meshslice.h"
#include "algorithms/gemm2d/summa.h"
#include "algorithms/gemm2d/wang.h"
#include "algorithms/registry.h"
#include "algorithms/tp1d/fsdp.h"
#include "algorithms/tp1d/tp1d.h"

namespace meshsim::algorithms {

const std::vector<AlgorithmInfo>& Algorithms() {
  static const auto* list = new std::vector<AlgorithmInfo>{
      {"meshslice",
       "MeshSlice (ISCA'25 §3.1, Fig. 5): slices the shards into S sub-shards; partial "
       "AllGather/ReduceScatter in both directions, software pipelined with the partial GeMMs",
       {{"slices",
         "S, the slice count: S·8 must divide every sliced local dimension (auto = the "
         "largest of 4, 2, 1 that does)"},
        {"dataflow", "os, ls or rs (Table 1)"}},
       false,
       MakeMeshSlice},
      {"collective",
       "Collective 2D GeMM (Fig. 2b): one AllGather/ReduceScatter per direction and one GeMM; "
       "no overlap",
       {{"dataflow", "os, ls or rs"}},
       false,
       MakeCollective},
      {"wang",
       "Wang et al.: one direction's collective decomposed into bidirectional SendRecv steps "
       "overlapped with partial GeMMs, the other direction a blocking collective",
       {{"slices",
         "unrolled iterations S (auto = P, the decomposed ring's length); S must divide P"},
        {"dataflow", "os, ls, rs"}},
       false,
       MakeWang},
      {"summa",
       "SUMMA (Fig. 2a): per iteration a pipelined broadcast (and reduce) along rows and columns, "
       "loop unrolled to S iterations",
       {{"slices", "iterations S (auto = lcm(R, C)); S must divide K, N or M (os, ls, rs)"},
        {"dataflow", "os, ls, rs"}},
       false,
       MakeSumma},
      {"cannon",
       "Cannon: initial skew, then SendRecv shifts overlapped with partial GeMMs; square meshes "
       "only",
       {{"dataflow", "os, ls, rs"}},
       false,
       MakeCannon},
      {"tp1d",
       "1D tensor parallelism (sequence-parallel Megatron) on a ring of every chip, collectives "
       "decomposed into SendRecv steps overlapped with partial GeMMs (Wang-style)",
       {{"slices",
         "unrolled iterations S: must divide the chip count (auto = P); merges P/S step "
         "GeMMs, the SendRecv steps stay P-1"}},
       true,
       MakeTp1d},
      {"fsdp",
       "Fully-sharded data parallelism on a ring of every chip: weights gathered (and gradients "
       "reduce-scattered) by SendRecv steps overlapped with partial GeMMs",
       {{"slices", "unrolled iterations S: must divide the chip count (auto = P)"}},
       true,
       MakeFsdp},
      {"example",
       "The example plugin of docs/plugins.md: AllGather both inputs, then one GeMM (OS only)",
       {},
       false,
       MakeExample},
      // Layer plugins (--workload layer): one whole transformer layer, forward and backward.
      {"atp",
       "ATP (adaptive 2D TP, Fig. 6) on DeviceMesh(d1, d2) = --mesh d1xd2 [layer]: QKV/FFN-up "
       "column-first (AllReduce over mesh rows), attn-out/FFN-down row-first (over mesh "
       "columns), attention sharded over both; dX AllReduce overlaps dW",
       {{"mesh",
         "d1xd2: d1 | hidden, FFN and heads; d2 | hidden and d2 | heads/d1 or batch/chunks"},
        {"chunks",
         "1, 2, 4: the batch split into chunks whose GeMMs overlap the previous "
         "chunk's AllReduce (§4.1); must divide --batch"}},
       false,
       nullptr,
       MakeAtp},
      {"megatron",
       "Megatron-LM 1D TP [layer]: exactly atp on DeviceMesh(N, 1) (two AllReduces of T*h "
       "forward, two backward, over all chips)",
       {{"mesh", "Nx1 or auto"}, {"chunks", "as atp"}},
       false,
       nullptr,
       MakeMegatron},
      {"tp2d",
       "2D/2.5D TP (Optimus/Tesseract) [layer]: every FC GeMM as SUMMA on q x q, attention "
       "local; depth d slices side by side (batch split, dW AllReduce across depth)",
       {{"mesh",
         "q x (d*q): 4x4 = 2D on 16 chips, 2x4 = 2.5D depth 2 on 8 (auto picks the "
         "largest q with q*q | chips)"},
        {"chunks", "1 only"}},
       false,
       nullptr,
       MakeTp2d},
  };
  return *list;
}

}  // namespace meshsim::algorithms
