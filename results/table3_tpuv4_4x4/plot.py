#!/usr/bin/env python3
"""Table 3 (4x4 TPUv4 without AG/RdS overlap): out/sweep.h5 + out/tune_<model>.json →
table3_tpuv4_4x4.{png,svg,csv} (committed), out/table.md."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_results as mr  # noqa: E402

# Paper Table 3 and §5.3, one place: table.py (which writes the README's tables from the CSV).
from table import PAPER, PAPER_OVERLAP_SPEEDUP, PAPER_MESHSLICE_OVERHEAD  # noqa: E402
SLICE, SIMULATED = "tpuv4-slice", "tpuv4"  # the real slice's preset; the paper's simulated TPUv4
SYSTEM_LABELS = {SLICE: "meshsim, tpuv4-slice", SIMULATED: "meshsim, tpuv4 (before)"}
# The TPUv4-measured cost-model constants (../shared/reference/meshslice-calibration.md): per op,
# t_launch, t_step and bandwidth on mesh axis 0 / 1; compute 242·1024⁴ FLOP/s.
MEASURED = {"allgather": (13e-6, 5e-6, (27.472e9, 79.751e9)),
            "reducescatter": (26e-6, 5e-6, (37.506e9, 63.167e9))}
MEASURED_FLOPS = 242.0 * 1024 ** 4


def measured_cost_model(path):
    """Collective on tpuv4-slice runs every op of chip 0 one after the other (no overlap), so its
    makespan is the sum of its ops. Re-prices each op with the TPUv4-measured cost model: a ring
    collective on axis k of 4 chips, t_launch + 3·(s/bw_k + t_step), shard s = bytes sent / 3; a
    GeMM, flops / 242·1024⁴. The axis is the one whose simulated closed form, t_launch +
    3·(t_sync + latency + s/link_k [+ 3s/hbm for a ReduceScatter]), gives the op's duration.
    Returns (simulated and re-priced (comm, GeMM) seconds, flops)."""
    with mr.h5py.File(path, "r") as f:
        g = f["runs"][list(f["runs"])[0]]
        cfg = {k: float(v) for k, v in g["config"].attrs.items()
               if k.startswith(("link.", "comm.t_", "hbm.bandwidth"))}
        flops = float(g["metrics"].attrs["flops"])
        t = g["timeline"][:]
        enum = {c: {v: k for k, v in mr.h5py.check_enum_dtype(t.dtype[c]).items()}
                for c in ("op_kind", "phase", "collective")}
    ops = {}
    for row in t:
        if row["chip"] != 0 or enum["phase"][row["phase"]] != "op":
            continue
        o = ops.setdefault(int(row["op"]), {"kind": enum["op_kind"][row["op_kind"]],
                                            "coll": enum["collective"][row["collective"]],
                                            "start": row["start_ps"], "end": row["end_ps"],
                                            "bytes": 0, "flops": 0})
        o["start"], o["end"] = min(o["start"], row["start_ps"]), max(o["end"], row["end_ps"])
        o["bytes"] += int(row["bytes"])
        o["flops"] += int(row["flops"])  # One row per core.
    sim, cm = [0.0, 0.0], [0.0, 0.0]
    for o in ops.values():
        d = (o["end"] - o["start"]) * 1e-12
        if o["kind"] == "collective":
            s = o["bytes"] / 3
            reduce = 3 * s / cfg["hbm.bandwidth"] if o["coll"] == "reducescatter" else 0
            axis = min((0, 1), key=lambda k: abs(d - cfg["comm.t_launch"] - 3 * (
                cfg["comm.t_sync"] + cfg["link.latency"] + s / cfg[f"link.bandwidth_axis{k}"] +
                reduce)))
            launch, step, bw = MEASURED[o["coll"]]
            sim[0] += d
            cm[0] += launch + 3 * (s / bw[axis] + step)
        elif o["kind"] == "gemm":
            sim[1] += d
            cm[1] += o["flops"] / MEASURED_FLOPS
    return sim, cm, flops


def main():
    mr.require(__file__, "out/sweep.h5",
               "out/batch.h5",
               "out/tune_gpt3.json",
               "out/tune_megatron-nlg.json",
               "out/collective_gpt3.h5",
               "out/collective_megatron-nlg.h5")  # else: what to run first, exit 2
    out = mr.here(__file__, "out")
    rows = mr.read_summary(os.path.join(out, "sweep.h5"))
    auto = {}  # the runs' resolved S for "auto" comes back as the per-layer list
    r = {}
    for x in rows:
        s = str(x["slices"])
        if x["algorithm"] != "meshslice" and s == "":
            s = "auto"  # Collective: S does not apply (the summary leaves it empty).
        if x["algorithm"] == "meshslice" and s not in ("4", "8"):
            s = "auto"
            auto[x["model"]] = str(x["slices"])
        # Overlap 0: synchronous collectives (concurrent 0, the table) or concurrent ones (key 2);
        # overlap 1 ("Overlap (sim.)") only runs with concurrent collectives.
        ov, conc = int(x["comm.collective_overlap"]), int(x["comm.concurrent_collectives"])
        mode = ov if ov == 1 else (0 if conc == 0 else 2)
        r[(x["system"], x["model"], x["algorithm"], s, mode)] = x
    est = {}
    for m in mr.MODELS:
        with open(os.path.join(out, f"tune_{m}.json")) as f:
            t = json.load(f)
        flops = r[(SLICE, m, "collective", "auto", 0)]["flops"]
        peak = r[(SLICE, m, "collective", "auto", 0)]["chip_peak_flops_per_s"]
        est[m] = (flops / (16 * peak * t["estimate_s"]),
                  ",".join(str(layer["slices"]) for layer in t["layers"]))

    u = lambda y, m, a, s, o: r[(y, m, a, s, o)]["flop_utilization"]  # noqa: E731
    t = lambda y, m, a, s, o: r[(y, m, a, s, o)]["makespan_s"]  # noqa: E731

    def ours(y, m):  # the table's five columns on system y
        return [u(y, m, "collective", "auto", 0), u(y, m, "wang", "4", 0),
                u(y, m, "meshslice", "auto", 0), u(y, m, "meshslice", "auto", 1), est[m][0]]

    def extra_time(y, m, s, o):  # MeshSlice's time over Collective's, as "+x.y%"
        return f"{100 * (t(y, m, 'meshslice', s, o) / t(y, m, 'collective', 'auto', o) - 1):+.1f}%"

    main_rows, extra, claims = [], [], []
    def speedup(y, m):  # MeshSlice Overlap (sim.) over synchronous Collective
        return u(y, m, "meshslice", "auto", 1) / u(y, m, "collective", "auto", 0) - 1

    for m in mr.MODELS:
        p = PAPER[m]
        main_rows.append([mr.MODELS[m], "paper (real TPUv4 4x4)", mr.pct(p[0]), mr.pct(p[1]),
                          mr.pct(p[2]), "—", mr.pct(p[3])])
        for y in (SLICE, SIMULATED):
            main_rows.append([mr.MODELS[m], SYSTEM_LABELS[y]] + [mr.pct(v) for v in ours(y, m)])
        for y in (SLICE, SIMULATED):
            for s in ("auto", "4", "8"):
                extra.append([mr.MODELS[m], y, auto[m] if s == "auto" else s,
                              mr.pct(u(y, m, "meshslice", s, 0)),
                              mr.pct(u(y, m, "meshslice", s, 2)),
                              mr.pct(u(y, m, "meshslice", s, 1)), extra_time(y, m, s, 0),
                              extra_time(y, m, s, 2)])
            extra.append([mr.MODELS[m], y, "Collective", mr.pct(u(y, m, "collective", "auto", 0)),
                          mr.pct(u(y, m, "collective", "auto", 2)),
                          mr.pct(u(y, m, "collective", "auto", 1)), "", ""])
            extra.append([mr.MODELS[m], y, "Wang (S = 4)", mr.pct(u(y, m, "wang", "4", 0)),
                          mr.pct(u(y, m, "wang", "4", 2)), mr.pct(u(y, m, "wang", "4", 1)), "", ""])
        col = {y: u(y, m, "collective", "auto", 0) for y in (SLICE, SIMULATED)}
        claims.append([f"{mr.MODELS[m]}: MeshSlice (no overlap) extra time over Collective",
                       f"≈{100 * PAPER_MESHSLICE_OVERHEAD:.1f}% (both models)",
                       f"{extra_time(SLICE, m, 'auto', 0)} (S={auto[m]}); "
                       f"{extra_time(SLICE, m, '4', 0)} (S=4); synchronous collectives "
                       f"[tpuv4: {extra_time(SIMULATED, m, 'auto', 0)}; "
                       f"{extra_time(SIMULATED, m, '4', 0)}]"])
        claims.append([f"{mr.MODELS[m]}: MeshSlice Overlap speed-up over Collective",
                       f"{100 * PAPER_OVERLAP_SPEEDUP[m]:.1f}% (estimate)",
                       f"{100 * speedup(SLICE, m):.1f}% "
                       f"(simulated), {100 * (est[m][0] / col[SLICE] - 1):.1f}% (tpuv4-measured "
                       f"estimate / simulated Collective) "
                       f"[tpuv4: {100 * speedup(SIMULATED, m):.1f}%, "
                       f"{100 * (est[m][0] / col[SIMULATED] - 1):.1f}%]"])
        claims.append([f"{mr.MODELS[m]}: Wang vs Collective",
                       f"{100 * (p[1] / p[0] - 1):+.1f}% (Jax serialises most of Wang's SendRecvs)",
                       f"{100 * (u(SLICE, m, 'wang', '4', 0) / col[SLICE] - 1):+.1f}% (SendRecv "
                       f"overlapped) [tpuv4: "
                       f"{100 * (u(SIMULATED, m, 'wang', '4', 0) / col[SIMULATED] - 1):+.1f}%]"])
    check = []
    for m in mr.MODELS:
        sim, cm, flops = measured_cost_model(os.path.join(out, f"collective_{m}.h5"))
        util = lambda parts: flops / (16 * 272e12 * sum(parts))  # noqa: E731
        check.append([mr.MODELS[m], f"{1e3 * sim[0]:.1f} ms", f"{1e3 * sim[1]:.1f} ms",
                      mr.pct(util(sim)), f"{1e3 * cm[0]:.1f} ms", f"{1e3 * cm[1]:.1f} ms",
                      mr.pct(util(cm)), mr.pct(PAPER[m][0])])
    batch = {}
    for x in mr.read_summary(os.path.join(out, "batch.h5")):
        s = str(x["slices"]) if x["algorithm"] == "meshslice" else ""
        if x["algorithm"] == "wang" and int(x["comm.sendrecv_overlap"]) == 0:
            s = "serial"
        batch[(x["model"], int(x["batch"]), x["algorithm"], s if s in ("4", "serial") else "")] = x
    batch_rows = []
    for m in mr.MODELS:
        for b in (8, 16, 32):
            bu = lambda a, s="": batch[(m, b, a, s)]["flop_utilization"]  # noqa: E731
            batch_rows.append([mr.MODELS[m], str(b), mr.pct(bu("collective")), mr.pct(bu("wang")),
                               mr.pct(bu("wang", "serial")), mr.pct(bu("meshslice")),
                               mr.pct(bu("meshslice", "4"))])

    md = ["# Table 3 — measured (generated by plot.py)\n",
          "4x4 mesh, 16 chips, batch 8, seq 2048. `tpuv4-slice`: the real slice's preset (one-way "
          "rings, `comm.collective_overlap=0`, `comm.concurrent_collectives=0`, per-axis links "
          "fitted to the measured AllGather rates); `tpuv4 (before)`: the simulated TPUv4 preset "
          "with `comm.ring_directions=1` and the same two settings. Synchronous collectives: one "
          "AllGather/ReduceScatter at a time per chip, none beside compute. MeshSlice S = the "
          "autotuner's per-layer choice (`--slices auto`). \"Overlap (sim.)\" = the same "
          "MeshSlice run with `comm.collective_overlap=1`; \"Overlap (Estim.)\" = `meshsim tune "
          "--cost-model tpuv4-measured` on 4x4 (S " + ", ".join(f"{mr.MODELS[m]} {est[m][1]}"
                                                              for m in mr.MODELS) + ").\n",
          mr.markdown_table(["LLM", "source", "Collective", "Wang", "MeshSlice",
                             "MeshSlice Overlap (sim.)", "MeshSlice Overlap (Estim.)"],
                            main_rows, "llrrrrr"),
          "\n## Without overlap (synchronous, or concurrent collectives) and with overlap\n",
          mr.markdown_table(["LLM", "system", "MeshSlice S / algorithm", "no overlap, synchronous",
                             "no overlap, concurrent collectives", "overlap",
                             "time vs Collective (synchronous)",
                             "time vs Collective (concurrent)"], extra, "lllrrrrr"),
          "\n## Stated numbers (tpuv4-slice; [the tpuv4 preset])\n",
          mr.markdown_table(["quantity", "paper", "meshsim"], claims, "lll"),
          "\n## Collective on tpuv4-slice, each op re-priced by the TPUv4-measured cost model\n",
          "Every op of Collective runs alone (no overlap), so the makespan is communication + "
          "GeMM. Re-priced: each AllGather/ReduceScatter at the measured constants of its op "
          "and axis, each GeMM at 242·1024⁴ FLOP/s (`measured_cost_model` in plot.py).\n",
          mr.markdown_table(["LLM", "meshsim comm", "meshsim GeMM", "meshsim", "cost-model comm",
                             "cost-model GeMM", "cost model (measured constants)", "paper"],
                            check, "lrrrrrrr"),
          "\n## Batch sensitivity (tpuv4-slice, synchronous collectives; the paper does not "
          "state Table 3's batch; the table uses 8)\n",
          mr.markdown_table(["LLM", "batch", "Collective", "Wang (S = 4)",
                             "Wang, SendRecv serialised", "MeshSlice (auto S)",
                             "MeshSlice (S = 4)"], batch_rows, "lrrrrrr")]
    mr.write_text(os.path.join(out, "table.md"), "\n".join(md))

    plt = mr.setup_matplotlib()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    cols = ["Collective", "Wang", "MeshSlice", "MeshSlice\nOverlap (sim.)",
            "MeshSlice\nOverlap (Estim.)"]
    w = 0.27
    for ax, m in zip(axes, mr.MODELS):
        paper = [PAPER[m][0], PAPER[m][1], PAPER[m][2], None, PAPER[m][3]]
        bars = [(SLICE, "#3b5b92", 0.0), (SIMULATED, "#9fb3d9", w)]
        for i, p in enumerate(paper):
            if p is not None:
                ax.bar(i - w, 100 * p, w, color="#cccccc", hatch="//", edgecolor="gray",
                       label="paper (real TPUv4)" if i == 0 else None)
                ax.text(i - w, 100 * p + 1, f"{100 * p:.1f}", ha="center", fontsize=7)
            else:
                ax.text(i - w, 1, "not in paper", rotation=90, ha="center", va="bottom",
                        fontsize=7, color="gray")
        for y, color, dx in bars:
            for i, o in enumerate(ours(y, m)):
                if i == 4 and y == SIMULATED:
                    continue  # the estimate does not depend on the simulated system
                ax.bar(i + dx, 100 * o, w, color=color, label=SYSTEM_LABELS[y] if i == 0 else None)
                ax.text(i + dx, 100 * o + 1, f"{100 * o:.1f}", ha="center", fontsize=7)
        ax.set_xticks(range(len(cols)))
        ax.set_xticklabels(cols, fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_title(f"{mr.MODELS[m]}, 4x4, no AG/RdS overlap, one-way rings")
        ax.set_xlabel("algorithm")
    axes[0].set_ylabel("FLOP utilization (%)")
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle("Table 3 (meshsim): 4x4 TPUv4 slice without AllGather/ReduceScatter overlap")
    fig.tight_layout()
    mr.save_figure(fig, mr.here(__file__, "table3_tpuv4_4x4"))
    csv_rows = []
    cm_util = {}
    for m in mr.MODELS:
        sim, cm, flops = measured_cost_model(os.path.join(out, f"collective_{m}.h5"))
        cm_util[m] = flops / (16 * 272e12 * sum(cm))
    for m in mr.MODELS:
        names = ["collective", "wang", "meshslice", "meshslice_overlap_sim",
                 "meshslice_overlap_estimate"]
        paper = [PAPER[m][0], PAPER[m][1], PAPER[m][2], "", PAPER[m][3]]
        slices = ["", "4", auto[m], auto[m], est[m][1]]
        for n, o, old, p, s in zip(names, ours(SLICE, m), ours(SIMULATED, m), paper, slices):
            csv_rows.append([m, n, f"{o:.4f}", f"{old:.4f}", p, s])
    # Added rows (after the table's five columns): the S / overlap sensitivity on both systems
    # (mode 0 synchronous, 2 concurrent collectives, 1 overlap), the TPUv4-measured cost model's
    # re-pricing of Collective, and batch.ini (tpuv4-slice only; the tpuv4 column is empty).
    for m in mr.MODELS:
        for name, a, s in (("collective", "collective", "auto"), ("wang", "wang", "4"),
                           ("meshslice", "meshslice", "auto"), ("meshslice_s4", "meshslice", "4"),
                           ("meshslice_s8", "meshslice", "8")):
            for suffix, mode in (("", 0), ("_concurrent", 2), ("_overlap", 1)):
                if (name, suffix) in (("collective", ""), ("wang", ""), ("meshslice", ""),
                                      ("meshslice", "_overlap")):
                    continue  # already among the five columns above
                sl = s if s != "auto" or a != "meshslice" else auto[m]
                csv_rows.append([m, name + suffix, f"{u(SLICE, m, a, s, mode):.4f}",
                                 f"{u(SIMULATED, m, a, s, mode):.4f}", "",
                                 sl if a != "collective" else ""])
        csv_rows.append([m, "collective_measured_cost_model", f"{cm_util[m]:.4f}", "", "", ""])
        for b in (8, 16, 32):
            for name, a, s in (("collective", "collective", ""), ("wang", "wang", ""),
                               ("wang_sendrecv_serial", "wang", "serial"),
                               ("meshslice", "meshslice", ""), ("meshslice_s4", "meshslice", "4")):
                csv_rows.append([m, f"batch{b}_{name}",
                                 f"{batch[(m, b, a, s)]['flop_utilization']:.4f}", "", "", ""])
    mr.write_csv(mr.here(__file__, "table3_tpuv4_4x4.csv"),
                 ["model", "column", "meshsim_utilization", "meshsim_tpuv4_utilization",
                  "paper_utilization", "slices"], csv_rows)


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
