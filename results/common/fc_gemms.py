"""The FC-layer GeMMs of one transformer block at 256 chips (MeshSlice §5.1.4, Figure 11) and
how a block run's GeMMs map onto them. Shared by fig11_gemm_shapes (both readings) and
table2_dataflow's link-rate sensitivity (the in-step reading at each link rate).

    cells()            [(model, label, dataflow, 'M,N,K', counted_by_paper)]
    block_cells(p, b)  {(model, cell label, algorithm): (utilization, run)} from block runs
    speedups(util, c)  MeshSlice's mean speed-up over Collective and Wang
"""
import meshsim_results as mr

T = 262144  # batch 128 x seq 2048 (weak scaling at 256 chips)


def cells():
    """[(model, label, dataflow, 'M,N,K', counted_by_paper)] in fig11's experiment.ini order.
    (T, H, H) occurs in two dataflows; its second (attn_out.bwd-data) is not among the paper's
    8 distinct shapes per model, so it is not counted."""
    out = []
    for model, h in (("gpt3", 12288), ("megatron-nlg", 20480)):
        for label, df, mnk, counted in [
                ("qkv.fwd", "os", (T, 3 * h, h), True),
                ("qkv.bwd-data", "ls", (T, h, 3 * h), True),
                ("qkv.bwd-weight", "rs", (h, 3 * h, T), True),
                ("attn_out.fwd", "ls", (T, h, h), True),
                ("attn_out.bwd-data", "os", (T, h, h), False),  # same (M, N, K) as attn_out.fwd
                ("attn_out.bwd-weight", "rs", (h, h, T), True),
                ("ffn_up.fwd", "os", (T, 4 * h, h), True),
                ("ffn_up.bwd-data", "ls", (T, h, 4 * h), True),
                ("ffn.bwd-weight", "rs", (h, 4 * h, T), True)]:
            out.append((model, label, df, ",".join(str(x) for x in mnk), counted))
    return out


# Block GeMM labels (algorithms/llm.cc) → the cell of cells() they are: GeMMs of the same
# (M, N, K) and dataflow pool into one cell (ffn_up.fwd and ffn_down.bwd-data, ...).
BLOCK_CELL = {
    "qkv.fwd": "qkv.fwd", "qkv.bwd-data": "qkv.bwd-data", "qkv.bwd-weight": "qkv.bwd-weight",
    "attn_out.fwd": "attn_out.fwd", "attn_out.bwd-data": "attn_out.bwd-data",
    "attn_out.bwd-weight": "attn_out.bwd-weight",
    "ffn_up.fwd": "ffn_up.fwd", "ffn_down.bwd-data": "ffn_up.fwd",
    "ffn_up.bwd-data": "ffn_up.bwd-data", "ffn_down.fwd": "ffn_up.bwd-data",
    "ffn_up.bwd-weight": "ffn.bwd-weight", "ffn_down.bwd-weight": "ffn.bwd-weight",
}


def block_cells(path, best):
    """{(model, cell label, algorithm): (utilization, best block run)} from the block runs
    `best[(model, algorithm)]` in the archive `path`: each cell's flops over its GeMMs' shares of
    the block (Σ flops / (chips × peak × Σ share))."""
    out = {}
    for (model, alg), r in best.items():
        flops, share = {}, {}
        for g in mr.read_gemms(path, r["run"]):
            cell = BLOCK_CELL[g["label"]]
            flops[cell] = flops.get(cell, 0) + g["flops"]
            share[cell] = share.get(cell, 0) + g["share_s"]
        peak = r["chips"] * r["chip_peak_flops_per_s"]
        for cell in flops:
            out[(model, cell, alg)] = (flops[cell] / (peak * share[cell]), r)
    return out


def speedups(util, counted):
    """Mean MeshSlice speed-up over Collective and Wang: over the counted cells, and all cells.
    `util(c, alg)` → utilization; `counted` → [(cell, counted_by_paper)]."""
    res = {}
    for base in ("collective", "wang"):
        sp = [(util(c, "meshslice") / util(c, base) - 1, k) for c, k in counted]
        res[base] = (sum(x for x, k in sp if k) / sum(1 for _, k in sp if k),
                     sum(x for x, _ in sp) / len(sp))
    return res
