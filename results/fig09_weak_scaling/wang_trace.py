#!/usr/bin/env python3
"""Where a 2D GeMM algorithm's time goes, GeMM by GeMM, and the most a Wang that follows MeshSlice
§4.2 can reach: the "Wang against §4.2" section of README.md.

    python3 wang_trace.py RUN.h5 [RUN.h5 ...]   # archives of `meshsim run --out` (timeline kept)
    python3 wang_trace.py --bound               # the §4.2 upper bound, closed form, no archive

Breakdown: for every distributed GeMM of the block, its share of the run (from the previous
GeMM's end to its own), the time chip 0's cores compute in it, and the rest — exposed — split by
the communication ops running on chip 0 at that moment (by the op's last name part: ag_b,
sendrecv_a, rds_c, ...; "x+y" when both run, "idle" when none).

Bound: per GeMM, §4.2's Wang leaves one collective (prologue AllGather or epilogue
ReduceScatter) not overlapped and decomposes the other into P − 1 SendRecv steps. Its time is at
least max(blocking + compute, (P − 1)·step) — the SendRecv ring may even run entirely beside the
prologue — for the better of the two choices of the decomposed direction. The constants are the
reference cost model's simulation-fitted set (reference/meshslice-calibration.md): AllGather
t_launch + (n − 1)·(s/60 GB/s + t_step), ReduceScatter the same at 50 GB/s, t_launch = 100 µs,
t_step = 6 µs; a SendRecv step of halves both ways s/(2·38.801 GB/s) + t_step + t_launch (or
meshsim's s/(2·30 GB/s) + 105 µs with --meshsim-sendrecv); compute at 272 TFLOPS (the peak) and
at 249 TFLOPS (the fitted rate). Utilization = 72·T·H² / (256 · 272 TFLOPS · time).
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

PEAK = 272e12
EB = 2  # bf16
MESHES = [(4, 64), (8, 32), (16, 16), (32, 8), (64, 4)]
MODELS = {"gpt3": 12288, "megatron-nlg": 20480}
CHIPS, BATCH, SEQ = 256, 128, 2048


def _union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def _clip(iv, lo, hi):
    return [[max(s, lo), min(e, hi)] for s, e in iv if min(e, hi) > max(s, lo)]


def breakdown(path, chip=0):
    plotenv.ensure("h5py")
    import h5py  # noqa: E402

    with h5py.File(path, "r") as f:
        g = f["runs"][list(f["runs"])[0]]
        names = [x.decode() if isinstance(x, bytes) else x for x in g["names"][:]]
        cfg = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g["config"].attrs.items()}
        t = g["timeline"][:]
        gemms = g["gemms"][:]
        util = g["metrics"].attrs["flop_utilization"]
    kinds = h5py.check_enum_dtype(t.dtype["op_kind"])
    rows = t[(t["chip"] == chip) & (t["phase"] == 0)]
    comp = _union([[r["start_ps"], r["end_ps"]] for r in rows if r["op_kind"] == kinds["gemm"]])
    comm = [(names[r["name"]].split(".")[-1] if r["name"] >= 0 else "?", r["start_ps"], r["end_ps"])
            for r in rows if r["op_kind"] in (kinds["collective"], kinds["transfer"])]
    print(f"{os.path.basename(path)}: {cfg['algorithm']} on {cfg['mesh']}, dataflows "
          f"{cfg.get('dataflow')}, S {cfg.get('slices', '-')}: {util * 100:.2f}% (chip {chip}; ms)")
    print("| GeMM | share | compute | exposed | exposed while running |\n|---|---:|---:|---:|---|")
    tot = collections.Counter()
    for row in gemms:
        label = row["label"].decode() if isinstance(row["label"], bytes) else row["label"]
        hi = int(row["end_ps"])
        lo = hi - int(row["share_ps"])
        busy = _clip(comp, lo, hi)
        gaps, cur = [], lo
        for s, e in busy:
            if s > cur:
                gaps.append((cur, s))
            cur = max(cur, e)
        if hi > cur:
            gaps.append((cur, hi))
        by = collections.Counter()
        for s, e in gaps:
            cuts = sorted({s, e} | {x for _, a, b in comm for x in (a, b) if s < x < e})
            for a, b in zip(cuts, cuts[1:]):
                act = sorted({n for n, x, y in comm if x < b and y > a})
                by["+".join(act) if act else "idle"] += b - a
        computed = sum(e - s for s, e in busy)
        share = int(row["share_ps"])
        tot["share"] += share
        tot["compute"] += computed
        desc = ", ".join(f"{k} {v / 1e9:.3f}" for k, v in by.most_common() if v > 1e6)
        print(f"| {label} | {share / 1e9:.3f} | {computed / 1e9:.3f} | "
              f"{(share - computed) / 1e9:.3f} | {desc} |")
    print(f"| total | {tot['share'] / 1e9:.3f} | {tot['compute'] / 1e9:.3f} | "
          f"{(tot['share'] - tot['compute']) / 1e9:.3f} | |\n")


def _gemms(t, h):
    """The block's 12 GeMMs (label, dataflow, M, N, K) with the autotuner's phase-1 dataflows
    (qkv and ffn_up Y-stationary, attn_out and ffn_down X-stationary: MeshSlice Table 1)."""
    out = []
    for name, i, o, st in (("qkv", h, 3 * h, "os"), ("attn_out", h, h, "ls"),
                           ("ffn_up", h, 4 * h, "os"), ("ffn_down", 4 * h, h, "ls")):
        if st == "os":
            out += [(name + ".fwd", "os", t, o, i), (name + ".bwd-data", "ls", t, i, o),
                    (name + ".bwd-weight", "rs", i, o, t)]
        else:
            out += [(name + ".fwd", "ls", t, o, i), (name + ".bwd-data", "os", t, i, o),
                    (name + ".bwd-weight", "rs", o, i, t)]
    return out


def _collectives(df, m, n, k, r, c):
    """The GeMM's two collectives, one per mesh direction: (kind, ring length, elements per
    chip)."""
    if df == "os":
        return [("ag", c, m // r * k // c), ("ag", r, k // r * n // c)]
    if df == "ls":
        return [("ag", r, n // r * k // c), ("rds", c, m // r * n // c)]
    return [("ag", c, k // r * m // c), ("rds", r, m // r * n // c)]


def _ring(kind, n, elems):
    bw = 60e9 if kind == "ag" else 50e9
    return 100e-6 + (n - 1) * (elems * EB / bw + 6e-6)


def block_bound(h, r, c, flops, sr_bw, sr_fixed, detail=None):
    total = 0.0
    for label, df, m, n, k in _gemms(BATCH * SEQ, h):
        comp = 2 * m * n * k / (r * c) / flops
        pair = _collectives(df, m, n, k, r, c)
        best = None
        for dec, blk in ((pair[0], pair[1]), (pair[1], pair[0])):
            ring = (dec[1] - 1) * (dec[2] * EB / sr_bw + sr_fixed)
            t = max(_ring(*blk) + comp, ring)
            if best is None or t < best[0]:
                best = (t, blk, _ring(*blk), ring, comp)
        total += best[0]
        if detail is not None:
            detail.append((label,) + best)
    return total


def bound(meshsim_sendrecv):
    sr_bw, sr_fixed = (2 * 30e9, 105e-6) if meshsim_sendrecv else (2 * 38.801e9, 106e-6)
    print("| model | " + " | ".join(f"{r}x{c}" for r, c in MESHES) + " |")
    print("|---|" + "---:|" * len(MESHES))
    for model, h in MODELS.items():
        work = 72 * BATCH * SEQ * h * h / CHIPS / PEAK  # seconds at peak
        cells = []
        for r, c in MESHES:
            u = [work / block_bound(h, r, c, f, sr_bw, sr_fixed) * 100 for f in (272e12, 249e12)]
            cells.append(f"{u[0]:.1f}% / {u[1]:.1f}%")
        print(f"| {model} | " + " | ".join(cells) + " |")
    print("\n(compute at 272 / 249 TFLOPS)\n")
    for model, h in MODELS.items():
        detail = []
        total = block_bound(h, 32, 8, 249e12, sr_bw, sr_fixed, detail)
        print(f"{model} on 32x8, compute at 249 TFLOPS (ms):")
        print("| GeMM | compute | blocking | its time | ring | bound |")
        print("|---|---:|---|---:|---:|---:|")
        for label, t, blk, tb, ring, comp in detail:
            print(f"| {label} | {comp * 1e3:.3f} | {'AG' if blk[0] == 'ag' else 'RdS'} over "
                  f"{blk[1]} | {tb * 1e3:.3f} | {ring * 1e3:.3f} | {t * 1e3:.3f} |")
        print(f"| total | | | | | {total * 1e3:.2f} |\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archives", nargs="*", help="archives of meshsim run --out")
    ap.add_argument("--bound", action="store_true", help="print the §4.2 upper bound")
    ap.add_argument("--meshsim-sendrecv", action="store_true",
                    help="with --bound: meshsim's SendRecv step instead of the reference's")
    ap.add_argument("--chip", type=int, default=0)
    a = ap.parse_args()
    if not a.archives and not a.bound:
        ap.error("give archives, --bound, or both")
    for path in a.archives:
        breakdown(path, a.chip)
    if a.bound:
        bound(a.meshsim_sendrecv)


if __name__ == "__main__":
    main()
