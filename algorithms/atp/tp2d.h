// 2D / 2.5D tensor parallelism (Optimus, Xu et al. 2021; Tesseract, Wang et al. 2022; as in
// ColossalAI, the baseline of ATP §5.1) as a layer plugin (layer_algorithm.h).
//
// Mesh. `--mesh qx(d·q)`: d depth slices of q×q chips side by side; slice k is the q×q sub-mesh
// of columns [k·q, (k+1)·q) (placed: chip (i, j) of slice k = mesh.At(i, k·q + j)). d = 1 is
// Optimus' 2D TP (e.g. 4x4 for 16 GPUs); d = 2 on 2x4 is Tesseract's 2.5D with depth 2 for 8
// GPUs. The batch is split over the depth: slice k runs b/d sequences.
//
// Sharding (per slice, T' = b·s/d tokens): every activation [T' × H] and every weight [I × O] is
// blocked q×q; chip (i, j) holds block (i, j). Each FC GeMM is SUMMA (gemm2d/summa.cc, q
// iterations of pipelined row/column broadcasts or reduces) on the slice's q×q mesh, the passes in
// MeshSlice Table 1's Y-stationary cells:
//   forward      Y = X·W      kOS  m = T', n = O, k = I
//   backward dX  dX = dY·Wᵀ   kLS  m = T', n = I, k = O
//   backward dW  dW = Xᵀ·dY   kRS  m = I,  n = O, k = T'
// Weights are replicated across the depth (Tesseract), so each dW block is all-reduced across the
// d slices: AllReduce of (I/q)·(O/q)·e bytes on the d chips {At(i, k·q + j) : k}, overlapping the
// rest of the backward pass (nothing waits for it but the layer's end).
// The attention core is local: chip (i, j) holds the QKV output block (i, j) = b/(d·q) whole
// sequences × a/q whole heads, so it runs b·a/(d·q²) per-head GeMMs (one kGemm, as in
// layer_algorithm.h). Element-wise ops run on the local blocks: bytes/(d·q²).
//
// Ops per slice and layer: 12 SUMMA lowerings (q broadcasts per row and column each), the
// attention GeMMs and the vector ops per chip, plus 4·q² depth AllReduces when d > 1.
//
// Not modelled: Tesseract's exact 2.5D block layout of the activations over [q, q, d] (we split
// whole sequences over the depth, which moves the same bytes per slice); chunk-based overlap
// (--chunks must be 1); LayerNorm statistics' row reductions (as for atp, see atp.h).
//
// Preconditions (Check): C = d·q is a multiple of R = q; --chunks 1; d·q divides b; q divides the
// heads; each FC GeMM passes SUMMA's divisibility checks on q×q (q divides T', h, 3h, f).
//
// Example:
//   MESHSIM_RETURN_IF_ERROR(LowerLayer(p, *MakeTp2d(), Mesh{2, 4}, graph));  // 2.5D, depth 2
#ifndef MESHSIM_ALGORITHMS_ATP_TP2D_H_
#define MESHSIM_ALGORITHMS_ATP_TP2D_H_

#include <memory>

#include "algorithms/layer_algorithm.h"

namespace meshsim::algorithms {

std::unique_ptr<LayerAlgorithm> MakeTp2d();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_ATP_TP2D_H_
