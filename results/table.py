#!/usr/bin/env python3
"""results/README.md's "Items" table, generated from the items' committed CSVs: every headline
number (paper → meshsim) is computed here, with the paper's numbers taken from each item's
table.py (its one place for them). results/check_readmes.sh runs this after the items'
table.py."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "common"))
import plotenv  # noqa: E402

pct, num, ratio = plotenv.pct, plotenv.num, plotenv.ratio


def item(name):
    """An item's table.py as a module (they are all called `table`)."""
    spec = importlib.util.spec_from_file_location(f"table_{name}", os.path.join(HERE, name,
                                                                                "table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def csv(name, path):
    return plotenv.read_csv(os.path.join(HERE, name, path))


def rng(vals, digits=1, sign=True, unit="%"):
    a, b = num(min(vals), digits, sign, unit), num(max(vals), digits, sign, unit)
    return a if a == b else f"{a} to {b}"


def fig09():
    t = item("fig09_weak_scaling")
    b = {(r["model"], int(r["chips"]), r["algorithm"]): r for r in csv("fig09_weak_scaling",
                                                                       "fig09_weak_scaling.csv")}
    u = lambda m, n, a: float(b[(m, n, a)]["flop_utilization"])  # noqa: E731
    s = lambda m, n, a: float(b[(m, n, a)]["makespan_s"])  # noqa: E731
    ms = ", ".join(f"{pct(t.PAPER_MESHSLICE_256[m])} → {pct(u(m, 256, 'meshslice'))}"
                   for m in t.MODELS)
    w = ", ".join(f"{t.MODELS[m]} {pct(t.PAPER_VS_WANG_256[m])} → "
                  f"{pct(s(m, 256, 'wang') / s(m, 256, 'meshslice') - 1)}" for m in t.MODELS)
    pts = [(m, n) for m in t.MODELS for n in t.CHIPS]
    fast = sum(all(u(m, n, "meshslice") >= u(m, n, a) for a in t.ALGS[2:] if (m, n, a) in b)
               for m, n in pts)
    return (f"MeshSlice at 256: {ms}; over Wang {w}; fastest at {fast} of {len(pts)} points "
            "(autotuned)")


def fig10():
    rows = csv("fig10_comm_breakdown", "fig10_comm_breakdown.csv")
    d = {(r["model"], r["algorithm"]): r for r in rows}
    parts = ["launch", "transfer", "sync"]
    tot = lambda m, a: sum(float(d[(m, a)][f"{p}_s"]) for p in parts) / float(d[(m, a)]["compute_s"])  # noqa: E501,E731
    models = sorted({r["model"] for r in rows}, key=["gpt3", "megatron-nlg"].index)
    least = all(min((a for mm, a in d if mm == m), key=lambda a: tot(m, a)) == "collective"
                for m in models)
    extra = {m: {p: float(d[(m, "meshslice")][f"{p}_s"]) / float(d[(m, "meshslice")]["compute_s"])
                 - float(d[(m, "collective")][f"{p}_s"]) / float(d[(m, "collective")]["compute_s"])
                 for p in parts} for m in models}
    big = {max(parts, key=extra[m].get) for m in models}
    summa = {max(parts, key=lambda p: float(d[(m, 'summa')][f"{p}_s"])) for m in models}
    return (f"Collective least communication: {'yes' if least else 'no'}; MeshSlice's extra over "
            f"Collective mostly {', '.join(sorted(big))} (paper: sync); SUMMA's bar "
            f"{', '.join(sorted(summa))}-dominated (paper: sync); verdicts in its README")


def fig11():
    t = item("fig11_gemm_shapes")
    out = []
    for name in ("fig11_gemm_shapes.csv", "fig11_gemm_shapes_in_block.csv"):
        r = {(x["model"], x["gemm"], x["algorithm"]): x for x in csv("fig11_gemm_shapes", name)}
        cells = sorted({(m, g) for m, g, _ in r if r[(m, g, "meshslice")]["counted_by_paper"] == "1"})
        u = lambda c, a: float(r[c + (a,)]["flop_utilization"])  # noqa: E731
        sp = {b: sum(u(c, "meshslice") / u(c, b) - 1 for c in cells) / len(cells)
              for b in ("collective", "wang")}
        fast = sum(all(u(c, "meshslice") >= u(c, a) for a in t.ALGS) for c in cells)
        out.append((sp, fast, len(cells)))
    (a, fa, n), (s, fs, _) = out
    return ("read two ways, each GeMM alone and each GeMM's share of the training step: "
            f"MeshSlice's average speed-up over Collective {pct(t.PAPER_AVG['collective'])} → "
            f"{pct(a['collective'])} alone, {pct(s['collective'])} in the step; over Wang "
            f"{pct(t.PAPER_AVG['wang'])} → {pct(a['wang'])} alone, {pct(s['wang'])} in the step; "
            f"fastest on {fa} / {fs} of {n}")


def fig12():
    b = {(r["model"], int(r["chips"]), r["algorithm"]): float(r["flop_utilization"])
         for r in csv("fig12_strong_scaling", "fig12_strong_scaling.csv")}
    names = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
    lead = lambda m, n: b[(m, n, "meshslice")] / max(b[(m, n, "collective")], b[(m, n, "wang")]) - 1  # noqa: E731,E501
    return ("no numbers in the paper; MeshSlice's lead over the better of Collective and Wang, 16 → "
            "256 chips: " + ", ".join(f"{names[m]} {pct(lead(m, 16), 0, True)} → "
                                      f"{pct(lead(m, 256), 0, True)}" for m in names) +
            f" (GPT-3 at 256: MeshSlice {pct(b[('gpt3', 256, 'meshslice')])}, Collective "
            f"{pct(b[('gpt3', 256, 'collective')])})")


def table2():
    t = item("table2_dataflow")
    r = {(x["model"], x["dataflow"]): float(x["flop_utilization"])
         for x in csv("table2_dataflow", "table2_dataflow.csv")}
    return ("optimized " + ", ".join(f"{pct(t.PAPER[m][1])} → {pct(r[(m, 'auto')])}"
                                     for m in t.MODELS) + "; speed-up " +
            ", ".join(f"{t.MODELS[m]} {pct(t.PAPER[m][2])} → "
                      f"{pct(r[(m, 'auto')] / r[(m, 'os')] - 1)}" for m in t.MODELS))


def fig13():
    t = item("fig13_fig14_cost_model")
    rows = t.load()
    mesh = [r for r in rows if r["figure_kind"] == "mesh"]
    ok_mesh = all(r["simulated_best"] == "1" for r in mesh if r["tuned"] == "1")
    layers = {(r["model"], r["varied_layer"]) for r in rows if r["figure_kind"] == "slices"}
    ok_s = sum(any(r["tuned"] == "1" and r["simulated_best"] == "1" for r in rows
                   if (r["model"], r["varied_layer"]) == k and r["figure_kind"] == "slices")
               for k in layers)
    g = [r for r in mesh if r["model"] == "gpt3"]
    bw = max(r["simulated_s"] for r in g) / min(r["simulated_s"] for r in g)
    return (f"optimal mesh found for both models: {'yes' if ok_mesh else 'no'} (paper: yes); S: "
            f"{ok_s} of {len(layers)} layers optimal; GPT-3 best/worst mesh "
            f"{t.PAPER_MESH_SPEEDUP_GPT3:g}× → {ratio(bw)}")


def table3():
    t = item("table3_tpuv4_4x4")
    u = {(r["model"], r["column"]): r for r in csv("table3_tpuv4_4x4", "table3_tpuv4_4x4.csv")}
    v = lambda m, c, k="meshsim_utilization": float(u[(m, c)][k])  # noqa: E731
    ms = list(t.MODELS)
    return (f"`tpuv4-slice`: Collective " + ", ".join(
        f"{pct(t.PAPER[m][0])} → {pct(v(m, 'collective'))}" for m in ms) + " (`tpuv4`: " +
        ", ".join(pct(v(m, "collective", "meshsim_tpuv4_utilization")) for m in ms) +
        f"); MeshSlice's extra time over Collective ≈{pct(t.PAPER_MESHSLICE_OVERHEAD)} → " +
        " / ".join(pct(v(m, "collective") / v(m, "meshslice") - 1, sign=True) for m in ms) +
        " (tuned S; S = 4 in its README); Wang over Collective " +
        " / ".join(pct(t.PAPER[m][1] / t.PAPER[m][0] - 1, sign=True) for m in ms) + " → " +
        " / ".join(pct(v(m, "wang") / v(m, "collective") - 1, sign=True) for m in ms))


def atp10():
    t = item("atp_fig10_sota")
    d = {(r["interconnect"], r["model"]): r for r in csv("atp_fig10_sota", "atp_fig10_sota.csv")}
    g = lambda k: [100 * (float(d[(k, m)]["atp_tflops"]) / float(d[(k, m)]["megatron_tflops"]) - 1)  # noqa: E731,E501
                   for m in t.MODELS]
    return (f"IC1 ATP over Megatron {t.PAPER_GAIN['a100-pcie-shm']} → {rng(g('a100-pcie-shm'))} "
            f"(calibrated preset) or {rng(g('a100-pcie-shm/ring'))} (bridge fitted to the 8-GPU "
            f"ring); IC4 {t.PAPER_GAIN['a100-ib']} → {rng(g('a100-ib'))}")


def atp11():
    t = item("atp_fig11_mesh")
    rows = csv("atp_fig11_mesh", "atp_fig11_mesh.csv")
    f10 = {(r["interconnect"], r["model"]): r["atp_mesh"] for r in csv("atp_fig10_sota",
                                                                       "atp_fig10_sota.csv")}
    best = {}
    agree = True
    for r in rows:
        v = [float(r[f"atp{i}_tflops"]) for i in t.ATP_I]
        i = t.ATP_I[v.index(max(v))]
        best.setdefault(r["interconnect"], set()).add(i)
        agree &= int(f10[(r["interconnect"], r["model"])].split("x")[1]) == i
    keys = ["a100-pcie-shm", "a100-nvlink2", "dgx-a100", "a100-ib"]
    b = lambda k: "/".join(f"ATP-{i}" for i in sorted(best[k]))  # noqa: E731
    return ("paper best " + ", ".join(f"ATP-{t.PAPER_BEST_I[k][0]}" for k in keys) +
            " on IC1–IC4 → meshsim " + ", ".join(b(k) for k in keys) +
            f" (IC1 ring bridge: {b('a100-pcie-shm/ring')}); the search's mesh is the simulated "
            f"best on every IC: {'yes' if agree else 'no'}")


def atp12():
    rows = csv("atp_fig12_topologies", "atp_fig12_topologies.csv")
    sw = [float(r["sim_comm_delta"]) / float(r["closed_form_delta"]) - 1 for r in rows
          if r["system"] == "nvl-switch"]
    tor = [float(r["sim_transfer_delta"]) / float(r["closed_form_delta"]) for r in rows
           if r["system"] == "gpu-torus"]
    off = [x for x in tor if abs(x - 1) > 0.15]
    return (f"IC5 follows the closed form ({rng([100 * x for x in sw], 0)} from launch/sync/"
            f"latency); IC6 only for meshes aligned with the torus rings ({len(off)} of {len(tor)} "
            f"off by more than ±15%, {min(off):.1f}–{max(off):.1f}× its transfer)")


def atp3():
    rows = {(r["model"], r["ic"]): r for r in csv("atp_table3_overlap", "atp_table3_overlap.csv")}
    gain = lambda r, p, c: 100 * (float(r[f"{p}{c}"]) / float(r[f"{p}1"]) - 1)  # noqa: E731
    r = rows[("atp-m4", "IC4")]
    ic1 = [rows[k] for k in rows if k[1] == "IC1"]
    ic3 = [k[0].replace("atp-", "").upper() for k in rows if k[1] == "IC3"
           and float(rows[k]["chunks4_tflops"]) < float(rows[k]["chunks2_tflops"])]
    meshsim = lambda x, c: 100 * (float(x[f"chunks{c}_tflops"]) / float(x["chunks1_tflops"]) - 1)  # noqa: E731,E501
    return (f"IC4 M4 {num(gain(r, 'paper_chunks', 4), 1, True, '%')} → "
            f"{num(meshsim(r, 4), 1, True, '%')} at 4 chunks; IC1 "
            f"{rng([gain(x, 'paper_chunks', c) for x in ic1 for c in (2, 4)])} → "
            f"{rng([meshsim(x, c) for x in ic1 for c in (2, 4)])}; IC3 4 chunks slower than 2 on "
            f"{', '.join(ic3) or 'none'}, as in the paper")


def fig5():
    t = {(r["group"], int(r["receiver_gpus"]), r["strategy"]): float(r["time_s"])
         for r in csv("reshard_fig5", "fig5.csv")}
    t1 = t[("1 host", 1, "send-recv")]
    return (f"Send/Recv linear, broadcast flat ({pct(t[('1 host', 4, 'broadcast')] / t1 - 1, sign=True)}"
            f" on one host, {pct(t[('2 GPUs/host', 8, 'broadcast')] / t1 - 1, sign=True)} at 4 hosts: "
            "a pipelined chain, each hop at its own pace), "
            f"Alpa {ratio(t[('1 host', 3, 'local-allgather')] / t1, 1)} slower at 3 GPUs (uneven)")


def fig6():
    t = {(int(r["case"]), r["method"]): float(r["time_s"]) for r in csv("reshard_fig6", "fig6.csv")}
    sp = lambda c: t[(c, "Alpa")] / t[(c, "Ours")]  # noqa: E731
    return (f"Ours over Alpa on cases 3, 4, 9: 3–10× → {rng([sp(c) for c in (3, 4, 9)], 2, False, '×')}"
            f" (≤ 2× in a NIC-bound model); cases 7, 8: ≤ 2.5× → {ratio(sp(7))}, {ratio(sp(8))}")


def fig7():
    tf = {(r["case"], r["dp_op_pp"], r["method"]): float(r["tflops"])
          for r in csv("reshard_fig7", "fig7.csv")}
    g = sorted({(c, p) for c, p, _ in tf})
    r = lambda k, a, b: tf[k + (a,)] / tf[k + (b,)]  # noqa: E731
    gpt = [k for k in g if k[0].startswith("GPT")]
    ut = [k for k in g if not k[0].startswith("GPT")]
    t = item("reshard_fig7")
    return (f"Ours/Alpa GPT {t.PAPER_OURS_OVER_ALPA['GPT']:g}× → "
            f"{rng([r(k, 'Ours', 'Alpa') for k in gpt], 2, False, '×')}, U-Trans "
            f"{t.PAPER_OURS_OVER_ALPA['U-Trans']:g}× → "
            f"{rng([r(k, 'Ours', 'Alpa') for k in ut], 2, False, '×')}; Ours/Signal ≥ "
            f"{pct(t.PAPER_OURS_OF_SIGNAL, 0)} → "
            f"{rng([100 * r(k, 'Ours', 'Signal') for k in gpt], 1, False)} GPT, "
            f"{rng([100 * r(k, 'Ours', 'Signal') for k in ut], 1, False)} U-Trans")


def fig8():
    t = {(int(r["case"]), r["method"]): float(r["time_s"]) for r in csv("reshard_fig8", "fig8.csv")}
    cases = sorted({c for c, _ in t})
    eq = [c for c in cases if abs(t[(c, "Naive")] / t[(c, "Ours")] - 1) <= 0.01 and
          abs(t[(c, "Load balance only")] / t[(c, "Ours")] - 1) <= 0.01]
    fast = [c for c in cases if min(t[(c, "Naive")], t[(c, "Load balance only")]) / t[(c, "Ours")] > 1.05]
    sp = [min(t[(c, "Naive")], t[(c, "Load balance only")]) / t[(c, "Ours")] for c in fast]
    return (f"cases {', '.join(map(str, eq))} equal; case 2 naive "
            f"{ratio(t[(2, 'Naive')] / t[(2, 'Ours')])}; cases {', '.join(map(str, fast))} ours "
            f"{rng(sp, 2, False, '×')} faster than the faster baseline")


def fig9():
    t = item("reshard_fig9")
    tf = {(int(r["microbatches"]), r["method"]): float(r["tflops"])
          for r in csv("reshard_fig9", "fig9.csv")}
    ms = sorted({m for m, _ in tf})
    g = lambda m, a, b: 100 * (tf[(m, a)] / tf[(m, b)] - 1)  # noqa: E731
    typ = ms[1:]
    return (f"few microbatches ({ms[0]}) Overlap vs Eager: paper −{t.PAPER['few_overlap_slower']:g}%, "
            f"meshsim {num(-g(ms[0], 'Eager-1F1B', 'Overlap'), 1, True, '%')}; typical "
            f"({', '.join(map(str, typ))}): Overlap/Broadcast +{t.PAPER['overlap_over_bcast']:g}% → "
            f"{rng([g(m, 'Overlap', 'Broadcast') for m in typ], 0)}, Eager/Overlap "
            f"+{t.PAPER['eager_over_overlap']:g}% → {rng([g(m, 'Eager-1F1B', 'Overlap') for m in typ], 0)}"
            f" (total with delay-dw {rng([tf[(m, 'Eager-1F1B + delay-dw')] / tf[(m, 'Broadcast')] for m in typ], 2, False, '×')},"
            f" paper {t.PAPER_TOTAL:.2f}×)")


def e2e():
    rows = {(r["model"], r["workload"]): r for r in csv("meshslice_end_to_end", "end_to_end.csv")}
    names = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
    return ("MeshSlice over Wang with the non-FC layers: " + ", ".join(
        f"{names[m]} {rows[(m, 'layer')]['paper_pct']}% → {rows[(m, 'layer')]['speedup_pct']}%"
        for m in names) + " (FC layers alone: " + ", ".join(
        f"{rows[(m, 'llm')]['paper_pct']}% → {rows[(m, 'llm')]['speedup_pct']}%" for m in names) + ")")


def pod():
    rows = plotenv.read_csv(os.path.join(HERE, "scale_pod", "pod.csv"))
    return "; ".join(f"{r['chips']} chips: {float(r['step_time_s']):.2f} s step, "
                     f"{plotenv.pct(float(r['flop_utilization']))} FLOP utilization"
                     for r in rows)


HEADLINES = {"fig09_weak_scaling": fig09, "fig10_comm_breakdown": fig10, "fig11_gemm_shapes": fig11,
             "fig12_strong_scaling": fig12, "table2_dataflow": table2,
             "fig13_fig14_cost_model": fig13, "table3_tpuv4_4x4": table3,
             "atp_fig10_sota": atp10, "atp_fig11_mesh": atp11, "atp_fig12_topologies": atp12,
             "atp_table3_overlap": atp3, "reshard_fig5": fig5, "reshard_fig6": fig6,
             "reshard_fig7": fig7, "meshslice_end_to_end": e2e, "reshard_fig8": fig8,
             "reshard_fig9": fig9, "scale_pod": pod}
# (folder cell, paper, what); the headline column is computed.
ITEMS = [
    ('[`fig09_weak_scaling`](fig09_weak_scaling/README.md)',
     'Fig. 9',
     'FC-layer utilization, 16–256 chips, batch = chips/2, 7 algorithms on their best meshes'),
    ('[`fig10_comm_breakdown`](fig10_comm_breakdown/README.md)',
     'Fig. 10',
     'launch / transfer / sync relative to compute, 256 chips'),
    ('[`fig11_gemm_shapes`](fig11_gemm_shapes/README.md)',
     'Fig. 11',
     'the 16 FC GeMMs at 256 chips, 5 2D algorithms'),
    ('[`fig12_strong_scaling`](fig12_strong_scaling/README.md)',
     'Fig. 12',
     'batch 32, 16–256 chips'),
    ('[`table2_dataflow`](table2_dataflow/README.md)',
     'Table 2',
     'MeshSlice with `--dataflow os` vs `auto`, 256 chips'),
    ('[`fig13_fig14_cost_model`](fig13_fig14_cost_model/README.md)',
     'Figs. 13, 14',
     '`meshsim tune --validate`: estimate vs simulation over meshes and S'),
    ('[`table3_tpuv4_4x4`](table3_tpuv4_4x4/README.md)',
     'Table 3',
     '`tpuv4-slice` (the real slice: one-way rings, synchronous AG/RdS, per-axis links at the measured AllGather rates)'),
    ('[`atp_fig10_sota`](atp_fig10_sota/README.md)',
     'ATP Fig. 10',
     'one transformer layer, TFLOPS/GPU: Megatron-LM, 2D/2.5D TP, ATP on its searched mesh, IC1 (host-staged, calibrated; and the other calibration reading), IC2, IC3 (8 GPUs), IC4 (16)'),
    ('[`atp_fig11_mesh`](atp_fig11_mesh/README.md)',
     'ATP Fig. 11',
     'ATP-1/2/4/8 = DeviceMesh(N/i, i) per IC, M1–M4'),
    ('[`atp_fig12_topologies`](atp_fig12_topologies/README.md)',
     'ATP Fig. 12',
     'communication time per layer vs GPUs (8–64), ATP-1/2/4/OPT, IC5 `nvl-switch`, IC6 `gpu-torus`, beside Δ·(14d2 + 4d1 − 18)/(d1d2)'),
    ('[`atp_table3_overlap`](atp_table3_overlap/README.md)',
     'ATP Table 3',
     'ATP with 1, 2, 4 chunks, M2–M4, 8 GPUs on IC1–IC4'),
    ('[`reshard_fig5`](reshard_fig5/README.md)',
     'Resharding Fig. 5',
     '1 GiB from 1 GPU to 1–4 GPUs / 1–4 hosts, p3.8xlarge'),
    ('[`reshard_fig6`](reshard_fig6/README.md)',
     'Resharding Fig. 6',
     "Table 2's nine cases: Send/Recv, Alpa, Ours"),
    ('[`reshard_fig7`](reshard_fig7/README.md)',
     'Resharding Fig. 7',
     'end-to-end pipeline, 2 stages, p3.8xlarge: Send/Recv, Alpa, Broadcast, Ours (eager-1F1B + overlap + delay-dw), Signal; GPT (2,2,2), (4,1,2), U-Transformer (FP32)'),
    ('[`meshslice_end_to_end`](meshslice_end_to_end/README.md)',
     'MeshSlice §5.1.1 end-to-end',
     '256 chips, GPT-3 and Megatron-NLG: MeshSlice vs best Wang, FC layers only and whole layers'),
    ('[`reshard_fig8`](reshard_fig8/README.md)',
     'Resharding Fig. 8',
     'load-balance ablation: naive, load balance only, ours'),
    ('[`reshard_fig9`](reshard_fig9/README.md)',
     'Resharding Fig. 9',
     'overlap ablation, U-Transformer, 2–64 microbatches: Broadcast, Overlap, Eager-1F1B'),
    ('[`scale_pod`](scale_pod/README.md)',
     '— (issue 22)',
     'GPT-3 175B, one training step, 8 stages × DP × 8x8 MeshSlice slices of a torus3d, 512, 1024 and 8192 TPU v4-like chips: where the step goes, and the cost of simulating it (folded)'),
    ('`common/`',
     '—',
     "`plotenv.py`: interpreter re-exec, paths relative to each script, missing-data message, Markdown tables rewritten between README markers; `meshsim_results.py`: read a sweep's `/summary`, best run per group, shared figure code; `meshsim_reshard.py`, `meshsim_pipeline.py`: the resharding items' runs"),
    ('`demo/`',
     '—',
     'where `scripts/demo.sh` writes its archive and trace'),]


def main():
    rows = []
    for folder, paper, what, *_ in ITEMS:
        name = folder.split("`")[1].rstrip("/")
        f = HEADLINES.get(name)
        rows.append([folder, paper, what, f() if f else ""])
    plotenv.readme_table(os.path.join(HERE, "README.md"), "items",
                         ["folder", "paper", "what", "headline: paper → meshsim"], rows,
                         align="llll", note="Headline numbers: computed by `results/table.py` "
                         "from each item's committed CSV; each item's README has the verdicts, "
                         "with their tolerances.")


if __name__ == "__main__":
    main()
