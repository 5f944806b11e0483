// Adaptive Tensor Parallelism (ATP, §3.2–3.3, Figure 6; §4.1–4.2) and Megatron-LM 1D TP as
// layer plugins (layer_algorithm.h): one whole transformer layer on DeviceMesh(d1, d2).
//
// Mesh. `--mesh d1xd2`: device (i, j) = mesh.At(i, j), i < d1, j < d2. "Dimension 1" groups are
// the mesh columns (Mesh::Col(j): d1 devices, fixed j), "dimension 2" groups the mesh rows
// (Mesh::Row(i): d2 devices, fixed i). Megatron-LM = ATP on DeviceMesh(N, 1): one dimension-1
// group of all N chips; its dimension-2 groups have one chip and emit nothing.
//
// Sharding (T = b·s tokens, h hidden, f FFN, a heads). Activations between blocks are
// [Replicate, Shard(1)]: device (i, j) holds X[T × h/d2] (block j). FC layers Y = X·W:
//   column-first (qkv, ffn_up)    W [Shard(1), Shard(0)]: W[h/d2 × O/d1]  (rows j, columns i)
//       local X[T×h/d2]·W → partial Y[T × O/d1], summed over dimension 2 (j).
//   row-first (attn_out, ffn_down) W [Shard(0), Shard(1)]: W[I/d1 × h/d2]  (rows i, columns j)
//       local X[T×I/d1]·W → partial Y[T × h/d2], summed over dimension 1 (i).
// Forward, per device (each an AllReduce, "f1".."f4" of Figure 6, bytes = elements·e per chip):
//   ln1           [T × h/d2]                        local
//   qkv           T × 3h/d1 × h/d2      f1 = AllReduce dim 2 of T·3h/d1
//   scatter       local slice over dim 2 (no op): of the a/d1 heads of device row i, device j
//                 takes (a/d1)/d2 heads, or b/d2 sequences when d2 does not divide a/d1
//   attn_score    (b·a/(d1·d2)) × [s×s×d]  as one kGemm (b·a·s/(d1·d2)) × s × d
//   softmax       b·a·s²/(d1·d2) elements           local
//   attn_context  (b·a/(d1·d2)) × [s×d×s]
//   gather        AllGather dim 2, each device contributing T·h/(d1·d2)  → ctx[T × h/d1]
//   attn_out      T × h/d2 × h/d1       f2 = AllReduce dim 1 of T·h/d2
//   residual1, ln2 on [T × h/d2]
//   ffn_up        T × f/d1 × h/d2       f3 = AllReduce dim 2 of T·f/d1
//   gelu          [T × f/d1]                        local (replicated over dim 2)
//   ffn_down      T × h/d2 × f/d1       f4 = AllReduce dim 1 of T·h/d2
//   residual2     [T × h/d2]
// Totals (f = 4h): dimension 2 carries 3Th/d1 + 4Th/d1 = 7·T·h/d1 all-reduced elements, dimension
// 1 carries 2·T·h/d2, plus the gather's T·h/d1 (gathered size) on dimension 2.
// Backward (the conjugates, derived from the shardings): dY of a column-first layer is
// [T × O/d1] replicated over dimension 2, so dX = dY·Wᵀ = [T×O/d1]·[O/d1 × h/d2] is a partial sum
// over dimension 1; dY of a row-first layer is [T × h/d2] replicated over dimension 1, so dX =
// [T×h/d2]·[h/d2 × I/d1] is a partial sum over dimension 2. dW = Xᵀ·dY is local for every layer
// (weights are sharded, not replicated: no gradient AllReduce).
//   ffn_down dX   T × f/d1 × h/d2       AllReduce dim 2 of T·f/d1;   dW  f/d1 × h/d2 × T
//   gelu, then ffn_up dX  T × h/d2 × f/d1  AllReduce dim 1 of T·h/d2; dW  h/d2 × f/d1 × T
//   ln2, residual2, attn_out dX T × h/d1 × h/d2  AllReduce dim 2 of T·h/d1;  dW h/d1 × h/d2 × T
//   slice of dCtx (no op), attention backward (dP, dV, softmax, dQ, dK) on the local heads
//   gather of dQKV: AllGather dim 2, each device contributing T·3h/(d1·d2)  → [T × 3h/d1]
//   qkv dX        T × h/d2 × 3h/d1      AllReduce dim 1 of T·h/d2;   dW  h/d2 × 3h/d1 × T
//   ln1, residual1
// Backward totals (f = 4h): dimension 2: 4Th/d1 + Th/d1 = 5·T·h/d1; dimension 1: 2·T·h/d2; plus
// the dQKV gather (3·T·h/d1 gathered) on dimension 2. Megatron (d2 = 1): two AllReduces of T·h
// forward (f2, f4) and two backward (ffn_up and qkv dX) over all chips, as in Megatron-LM.
// Every dW GeMM depends on its dX GeMM (not on dX's AllReduce), so the AllReduce overlaps it
// (§4.2: dX, its AllReduce, then dW). Megatron-LM has no such overlap: in v2.6 (August 2021, the
// version the ATP paper ran, §5.1) the dX AllReduce is the autograd backward of
// copy_to_tensor_model_parallel_region (megatron/mpu/mappings.py), which runs after F.linear's
// backward has computed dX and dW; so MakeMegatron chains dX, dW, then the AllReduce. (Its
// asynchronous all-reduce beside dW came in September 2021.)
//
// Chunks (§4.1, --chunks c, c | b): "for linear layers, the chunk-based technique is used to
// overlap computation and communication in the forward pass" (§4.2). Each forward FC layer runs
// as c GeMMs of b/c sequences (T/c tokens), each followed by its AllReduce of 1/c of the bytes,
// emitted GeMM, AllReduce, GeMM, …, so chunk k+1's GeMM overlaps chunk k's AllReduce; the
// layer's next op waits for all c AllReduces. Everything else (attention, element-wise ops, the
// gathers, the whole backward pass, whose overlap is dX's AllReduce beside dW) runs unchunked.
// The ATP authors' benchmark (example/aten_transformer_atp.py of github.com/Shenggan/atp,
// --chunk-size) does the same. Op tags: slice = chunk index (0 for unchunked ops), layer = FC
// index (−1 otherwise), pass; names "<op>.<pass>.<gemm|vector|allreduce|allgather>" (e.g.
// "qkv.fwd.allreduce").
//
// Activations (`--param activations`). sharded (default): as above, §3.3's [Replicate, Shard(1)]
// between blocks. gathered: as the ATP authors' benchmark runs it (example/aten_transformer_atp.py
// of github.com/Shenggan/atp: gather_tensor over dimension 2 after attn_out and ffn_down and after
// the ffn_up and qkv dX AllReduces), each block's output and each LayerNorm's input gradient are
// all-gathered over dimension 2 (T·h/d2 per device), and the LayerNorms and residual adds run on
// the whole [T × h]; the layer's input and output are then replicated. d2 = 1 is the same either
// way.
//
// Ignored: LayerNorm statistics (a 2·T-element AllReduce over dimension 2 per LayerNorm), biases,
// dropout (workloads/layer.h).
//
// Preconditions (Check): d1 divides h and f (hence 3h); d2 divides h; d1 divides a; d2 divides
// a/d1 or b; c divides b. Megatron: the mesh is N×1.
//
// Example:
//   std::unique_ptr<LayerAlgorithm> atp = MakeAtp();
//   LayerProblem p{.shape = {.batch = 4, .seq = 2048, .hidden = 4096, .heads = 32}, .chunks = 2};
//   MESHSIM_RETURN_IF_ERROR(LowerLayer(p, *atp, Mesh{2, 4}, graph));
#ifndef MESHSIM_ALGORITHMS_ATP_ATP_H_
#define MESHSIM_ALGORITHMS_ATP_ATP_H_

#include <memory>

#include "algorithms/layer_algorithm.h"

namespace meshsim::algorithms {

// `chunks`: the chunk count of a LayerProblem whose own is 0 (the `chunks` parameter).
// DeviceMesh(R, C) = --mesh RxC; `gathered`: `--param activations=gathered` (above).
std::unique_ptr<LayerAlgorithm> MakeAtp(int chunks = 1, bool gathered = false);
// ATP on an N×1 mesh only, each dX AllReduce after its dW GeMM.
std::unique_ptr<LayerAlgorithm> MakeMegatron(int chunks = 1);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_ATP_ATP_H_
