#!/usr/bin/env python3
"""Where a 2D GeMM algorithm's time goes, GeMM by GeMM, and the most a Wang that follows MeshSlice
§4.2 can reach: the data of the "Wang against §4.2" section of README.md.

    python3 wang_trace.py RUN.h5 [RUN.h5 ...]   # print: archives of `meshsim run --out`
    python3 wang_trace.py --bound               # print the §4.2 upper bound, closed form
    python3 wang_trace.py --csv                 # out/wang_*.h5 → wang_trace.csv, wang_bound.csv,
                                                #   wang_bound_gemms.csv (committed; table.py
                                                #   writes the README section from them)

run.sh makes the archives (RUNS below: GPT-3 and Megatron-NLG on 256 chips, 32x8: Wang S = 8 and
S = 4, Collective, MeshSlice autotuned); plot.py calls `write_csvs` when they are there.

Breakdown: for every distributed GeMM of the block, its share of the run (from the previous
GeMM's end to its own), the time chip 0's cores compute in it, and the rest — exposed — split by
the communication ops running on chip 0 at that moment (by the op's last name part: ag_b,
sendrecv_a, rds_c, ...; the whole name, e.g. qkv.bwd-data.ag_b, for an op of another GeMM, such
as Collective's prefetch of the next GeMM's weight; "x+y" when both run, "idle" when none).

Bound: per GeMM, §4.2's Wang leaves one collective (prologue AllGather or epilogue
ReduceScatter) not overlapped and decomposes the other into P − 1 SendRecv steps. Its time is at
least max(blocking + compute, (P − 1)·step) — the SendRecv ring may even run entirely beside the
prologue — for the better of the two choices of the decomposed direction. The constants are the
reference cost model's simulation-fitted set (reference/meshslice-calibration.md): AllGather
t_launch + (n − 1)·(s/60 GB/s + t_step), ReduceScatter the same at 50 GB/s, t_launch = 100 µs,
t_step = 6 µs; a SendRecv step of halves both ways s/(2·38.801 GB/s) + t_step + t_launch (or
meshsim's s/(2·30 GB/s) + 105 µs, `sendrecv = meshsim`); compute at 272 TFLOPS (the peak) and
at 249 TFLOPS (the fitted rate). Utilization = 72·T·H² / (256 · 272 TFLOPS · time).
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

PEAK = 272e12
FITTED = 249e12
EB = 2  # bf16
MESHES = [(4, 64), (8, 32), (16, 16), (32, 8), (64, 4)]
DETAIL_MESH = (32, 8)  # wang_bound_gemms.csv: the GeMM-by-GeMM bound on this mesh
MODELS = {"gpt3": 12288, "megatron-nlg": 20480}
CHIPS, BATCH, SEQ = 256, 128, 2048
# The reference's collective constants (AllGather / ReduceScatter bandwidth, t_launch, t_step).
AG_BW, RDS_BW, T_LAUNCH, T_STEP = 60e9, 50e9, 100e-6, 6e-6
# A SendRecv step of halves both ways: s / (2 × bandwidth) + fixed.
SENDRECV = {"reference": (38.801e9, T_LAUNCH + T_STEP), "meshsim": (30e9, 105e-6)}
# The archives run.sh writes into out/: (file stem, algorithm, meshsim run options).
RUNS = [(f"wang_{m}_{tag}", alg, opts)
        for m in MODELS
        for tag, alg, opts in (("wang", "wang", f"--model {m} --chips 256 --mesh 32x8 "
                                                "--algorithm wang --slices 8"),
                               ("wang_s4", "wang", f"--model {m} --chips 256 --mesh 32x8 "
                                                   "--algorithm wang --slices 4"),
                               ("collective", "collective", f"--model {m} --chips 256 --mesh 32x8 "
                                                            "--algorithm collective"),
                               ("meshslice", "meshslice", f"--model {m} --chips 256"))]
TRACE_CSV, BOUND_CSV, BOUND_GEMMS_CSV = "wang_trace.csv", "wang_bound.csv", "wang_bound_gemms.csv"
LAYERS = ["qkv", "attn_out", "ffn_up", "ffn_down"]


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


def gemm_dataflow(label, layer_dataflows):
    """A GeMM's dataflow from its layer's forward one: bwd-data swaps os and ls, bwd-weight is
    rs (MeshSlice Table 1)."""
    layer, pas = label.split(".")
    df = layer_dataflows[LAYERS.index(layer)]
    if pas == "fwd":
        return df
    if pas == "bwd-data":
        return {"os": "ls", "ls": "os"}[df]
    return "rs"


def operand_ring(df, operand, r, c):
    """The ring length of the collective that moves `operand` (a, b or c of C = A·B) in a 2D
    GeMM of dataflow `df` on an r x c mesh: os gathers A over the c chips of a row and B over
    the r of a column; ls gathers B over r and reduce-scatters C over c; rs gathers A over c and
    reduce-scatters C over r."""
    return {"os": {"a": c, "b": r}, "ls": {"b": r, "c": c}, "rs": {"a": c, "c": r}}[df][operand]


def _short(name, label):
    """An op's name within GeMM `label`'s share: its last part (ag_b, sendrecv_a, ...) when it is
    that GeMM's own, else the whole name (e.g. the next GeMM's prefetched qkv.bwd-data.ag_b)."""
    return name[len(label) + 1:] if name.startswith(label + ".") else name


def breakdown(path, chip=0):
    """One archive's run: its configuration and, per GeMM, share / compute / exposed (ps) and the
    exposed time by the set of communication ops running (a Counter)."""
    plotenv.ensure("h5py")
    import h5py  # noqa: E402

    with h5py.File(path, "r") as f:
        g = f["runs"][list(f["runs"])[0]]
        names = [x.decode() if isinstance(x, bytes) else x for x in g["names"][:]]
        cfg = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g["config"].attrs.items()}
        t = g["timeline"][:]
        gemms = g["gemms"][:]
        metrics = dict(g["metrics"].attrs)
    kinds = h5py.check_enum_dtype(t.dtype["op_kind"])
    rows = t[(t["chip"] == chip) & (t["phase"] == 0)]
    comp = _union([[r["start_ps"], r["end_ps"]] for r in rows if r["op_kind"] == kinds["gemm"]])
    comm = [(names[r["name"]] if r["name"] >= 0 else "?", r["start_ps"], r["end_ps"])
            for r in rows if r["op_kind"] in (kinds["collective"], kinds["transfer"])]
    dataflows = str(cfg.get("dataflow")).split(",")
    out = {"path": path, "model": cfg.get("model"), "algorithm": cfg["algorithm"],
           "mesh": cfg["mesh"], "slices": str(cfg.get("slices", "")), "dataflows": dataflows,
           "flop_utilization": float(metrics["flop_utilization"]),
           "makespan_ps": round(float(metrics["makespan_s"]) * 1e12), "gemms": []}
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
                act = sorted({_short(n, label) for n, x, y in comm if x < b and y > a})
                by["+".join(act) if act else "idle"] += b - a
        sendrecv = sorted(n.split(".")[-1][len("sendrecv_"):] for n in names
                          if n.startswith(label + ".sendrecv_"))
        out["gemms"].append({"gemm": label, "dataflow": gemm_dataflow(label, dataflows),
                             "share": int(row["share_ps"]),
                             "compute": sum(e - s for s, e in busy), "by": by,
                             "decomposed": sendrecv[0] if sendrecv else ""})
    return out


def print_breakdown(run):
    print(f"{os.path.basename(run['path'])}: {run['algorithm']} on {run['mesh']}, dataflows "
          f"{','.join(run['dataflows'])}, S {run['slices'] or '-'}: "
          f"{run['flop_utilization'] * 100:.2f}% (chip 0; ms)")
    print("| GeMM | share | compute | exposed | exposed while running |\n|---|---:|---:|---:|---|")
    share = compute = 0
    for g in run["gemms"]:
        desc = ", ".join(f"{k} {v / 1e9:.3f}" for k, v in g["by"].most_common() if v > 1e6)
        print(f"| {g['gemm']} | {g['share'] / 1e9:.3f} | {g['compute'] / 1e9:.3f} | "
              f"{(g['share'] - g['compute']) / 1e9:.3f} | {desc} |")
        share += g["share"]
        compute += g["compute"]
    print(f"| total | {share / 1e9:.3f} | {compute / 1e9:.3f} | {(share - compute) / 1e9:.3f} | |\n")


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
    bw = AG_BW if kind == "ag" else RDS_BW
    return T_LAUNCH + (n - 1) * (elems * EB / bw + T_STEP)


def _shard(model, label, df, operand, r, c):
    h = MODELS[model]
    for lab, d, m, n, k in _gemms(BATCH * SEQ, h):
        if lab == label:
            pairs = zip(_collectives(d, m, n, k, r, c), {"os": "ab", "ls": "bc", "rs": "ac"}[d])
            return next(elems * EB for (_, _, elems), op in pairs if op == operand)
    raise ValueError(label)


def block_bound(h, r, c, flops, sr_bw, sr_fixed, detail=None):
    total = 0.0
    for label, df, m, n, k in _gemms(BATCH * SEQ, h):
        comp = 2 * m * n * k / (r * c) / flops
        pair = _collectives(df, m, n, k, r, c)
        best = None
        for dec, blk in ((pair[0], pair[1]), (pair[1], pair[0])):
            ring = (dec[1] - 1) * (dec[2] * EB / (2 * sr_bw) + sr_fixed)
            t = max(_ring(*blk) + comp, ring)
            if best is None or t < best[0]:
                best = (t, blk, _ring(*blk), ring, comp, dec)
        total += best[0]
        if detail is not None:
            detail.append((label,) + best)
    return total


def work_s(h):
    """One block's FLOPs per chip at the peak rate, seconds."""
    return 72 * BATCH * SEQ * h * h / CHIPS / PEAK


def bound(sendrecv):
    sr_bw, sr_fixed = SENDRECV[sendrecv]
    print("| model | " + " | ".join(f"{r}x{c}" for r, c in MESHES) + " |")
    print("|---|" + "---:|" * len(MESHES))
    for model, h in MODELS.items():
        cells = []
        for r, c in MESHES:
            u = [work_s(h) / block_bound(h, r, c, f, sr_bw, sr_fixed) * 100 for f in (PEAK, FITTED)]
            cells.append(f"{u[0]:.1f}% / {u[1]:.1f}%")
        print(f"| {model} | " + " | ".join(cells) + " |")
    print(f"\n(compute at {PEAK / 1e12:g} / {FITTED / 1e12:g} TFLOPS; SendRecv: {sendrecv})\n")
    for model, h in MODELS.items():
        detail = []
        total = block_bound(h, *DETAIL_MESH, FITTED, sr_bw, sr_fixed, detail)
        print(f"{model} on {DETAIL_MESH[0]}x{DETAIL_MESH[1]}, compute at "
              f"{FITTED / 1e12:g} TFLOPS (ms):")
        print("| GeMM | compute | blocking | its time | ring | bound |")
        print("|---|---:|---|---:|---:|---:|")
        for label, t, blk, tb, ring, comp, _ in detail:
            print(f"| {label} | {comp * 1e3:.3f} | {'AG' if blk[0] == 'ag' else 'RdS'} over "
                  f"{blk[1]} | {tb * 1e3:.3f} | {ring * 1e3:.3f} | {t * 1e3:.3f} |")
        print(f"| total | | | | | {total * 1e3:.2f} |\n")


# ---- the committed CSVs -----------------------------------------------------------------------

def _ms(ps):
    return f"{ps / 1e9:.4f}"


def write_trace_csv(runs, path):
    rows = []
    for run in runs:
        r, c = (int(x) for x in run["mesh"].split("x"))
        for g in run["gemms"]:
            split = "; ".join(f"{k} {_ms(v)}" for k, v in
                              sorted(g["by"].items(), key=lambda kv: (-kv[1], kv[0]))
                              if round(v / 1e5) > 0)
            dec = g["decomposed"]
            ring = operand_ring(g["dataflow"], dec, r, c) if dec else ""
            shard = _shard(run["model"], g["gemm"], g["dataflow"], dec, r, c) if dec else ""
            rows.append([run["model"], run["algorithm"], run["mesh"], run["slices"],
                         f"{run['flop_utilization']:.6f}", _ms(run["makespan_ps"]), g["gemm"],
                         g["dataflow"], dec, ring, shard, _ms(g["share"]), _ms(g["compute"]),
                         _ms(g["share"] - g["compute"]), split])
    plotenv.write_rows(path, ["model", "algorithm", "mesh", "slices", "flop_utilization", "makespan_ms",
                      "gemm", "dataflow", "decomposed", "ring_chips", "ring_shard_bytes",
                      "share_ms", "compute_ms", "exposed_ms", "exposed_while"], rows)


def _wang_runs(runs):
    """meshsim's Wang per model: the S = 8 run (the fig09 setting on 32x8)."""
    return {run["model"]: run for run in runs if run["algorithm"] == "wang" and run["slices"] == "8"}


def write_bound_csvs(runs, folder):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from table import PAPER_MESHSLICE_256, PAPER_VS_WANG_256  # the paper's numbers, one place
    wang = _wang_runs(runs)
    rows, detail_rows = [], []
    for model, h in MODELS.items():
        implied = PAPER_MESHSLICE_256[model] / (1 + PAPER_VS_WANG_256[model])
        for sendrecv, (sr_bw, sr_fixed) in SENDRECV.items():
            for flops in (PEAK, FITTED):
                for r, c in MESHES:
                    detail = []
                    t = block_bound(h, r, c, flops, sr_bw, sr_fixed, detail)
                    rows.append([model, f"{r}x{c}", sendrecv, f"{flops / 1e12:g}",
                                 f"{sum(d[5] for d in detail) * 1e3:.4f}", f"{t * 1e3:.4f}",
                                 f"{work_s(h) / t:.6f}", f"{implied:.6f}",
                                 f"{wang[model]['flop_utilization']:.6f}", wang[model]["mesh"],
                                 f"{AG_BW / 1e9:g}", f"{RDS_BW / 1e9:g}", f"{T_LAUNCH * 1e6:g}",
                                 f"{T_STEP * 1e6:g}", f"{sr_bw / 1e9:g}", f"{sr_fixed * 1e6:g}",
                                 f"{work_s(h) * 1e3:.4f}"])
                    if (r, c) != DETAIL_MESH:
                        continue
                    for label, tt, blk, tb, ring, comp, dec in detail:
                        detail_rows.append([model, f"{r}x{c}", sendrecv, f"{flops / 1e12:g}", label,
                                            f"{comp * 1e3:.4f}", blk[0], blk[1],
                                            f"{tb * 1e3:.4f}", dec[1], f"{ring * 1e3:.4f}",
                                            f"{tt * 1e3:.4f}"])
    plotenv.write_rows(os.path.join(folder, BOUND_CSV),
               ["model", "mesh", "sendrecv", "tflops", "compute_ms", "bound_ms",
                "flop_utilization_bound", "paper_wang_implied", "meshsim_wang",
                "meshsim_wang_mesh", "ag_GBps", "rds_GBps", "launch_us", "step_us",
                "sendrecv_GBps", "sendrecv_step_fixed_us", "work_at_peak_ms"], rows)
    plotenv.write_rows(os.path.join(folder, BOUND_GEMMS_CSV),
               ["model", "mesh", "sendrecv", "tflops", "gemm", "compute_ms", "blocking",
                "blocking_ring", "blocking_ms", "decomposed_ring", "ring_ms", "bound_ms"],
               detail_rows)


def archives(folder):
    return [os.path.join(folder, "out", stem + ".h5") for stem, _, _ in RUNS]


def write_csvs(folder=None):
    """out/wang_*.h5 (run.sh) → the three committed CSVs beside this script."""
    folder = folder or os.path.dirname(os.path.abspath(__file__))
    runs = [breakdown(p) for p in archives(folder)]
    for run, (stem, alg, _) in zip(runs, RUNS):
        assert run["algorithm"] == alg, (stem, run["algorithm"])
    write_trace_csv(runs, os.path.join(folder, TRACE_CSV))
    write_bound_csvs(runs, folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archives", nargs="*", help="archives of meshsim run --out")
    ap.add_argument("--bound", action="store_true", help="print the §4.2 upper bound")
    ap.add_argument("--meshsim-sendrecv", action="store_true",
                    help="with --bound: meshsim's SendRecv step instead of the reference's")
    ap.add_argument("--csv", action="store_true",
                    help="write wang_trace.csv, wang_bound.csv, wang_bound_gemms.csv from "
                         "out/wang_*.h5 (run.sh)")
    ap.add_argument("--list-runs", action="store_true",
                    help="print run.sh's runs, one 'stem|meshsim run options' a line")
    ap.add_argument("--chip", type=int, default=0)
    a = ap.parse_args()
    if a.list_runs:
        for stem, _, opts in RUNS:
            print(f"{stem}|{opts}")
        return
    if not a.archives and not a.bound and not a.csv:
        ap.error("give archives, --bound, --csv, --list-runs, or several")
    if a.csv:
        plotenv.require(__file__, *(os.path.relpath(p, plotenv.here(__file__))
                                    for p in archives(plotenv.here(__file__))))
        write_csvs()
    for path in a.archives:
        print_breakdown(breakdown(path, a.chip))
    if a.bound:
        bound("meshsim" if a.meshsim_sendrecv else "reference")


if __name__ == "__main__":
    main()
