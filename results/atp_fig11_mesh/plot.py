#!/usr/bin/env python3
"""ATP Figure 11: out/sweep.h5 (8 GPUs: IC1 as run, IC2, IC3), out/ib16.h5 (16 GPUs, IC4),
out/ic1_ring_bridge.h5 (IC1, bridge fitted to the 8-GPU ring) → atp_fig11_mesh.{png,svg,csv}
(committed) and out/table.md; out/gathered.h5 and out/ib16_gathered.h5 (the authors' benchmark's
activation layout) → atp_fig11_gathered.csv. TFLOPS per GPU of ATP-i = ATP on DeviceMesh(N/i, i)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_results as mr  # noqa: E402

PANELS = [("a100-pcie-shm", "IC1 PCIe via host (calibrated)", 8),
          ("a100-pcie-shm/ring", "IC1, bridge fitted to 8-GPU ring", 8),
          ("a100-nvlink2", "IC2 NVLink pairs", 8),
          ("dgx-a100", "IC3 NVSwitch", 8),
          ("a100-ib", "IC4 InfiniBand", 16)]
MODELS = ["atp-m1", "atp-m2", "atp-m3", "atp-m4"]
ATP_I = [1, 2, 4, 8]
COLORS = {1: "#1f77b4", 2: "#ff7f0e", 4: "#2ca02c", 8: "#9467bd"}
# The paper's optimal ATP-i (§5.3, Figure 11).
# The paper's best ATP-i per interconnect (§5.3), one place: table.py.
from table import PAPER_BEST, PAPER_BEST_I  # noqa: E402


def mesh_of(chips, i):
    return f"{chips // i}x{i}"


def main():
    here = mr.here(__file__)
    mr.require(__file__, "out/sweep.h5",
               "out/ib16.h5",
               "out/ic1_ring_bridge.h5",
               "out/gathered.h5",
               "out/ib16_gathered.h5")  # else: what to run first, exit 2
    out = mr.here(__file__, "out")
    rows = mr.read_summary(os.path.join(out, "sweep.h5"), config_keys=["system"])
    rows += mr.read_summary(os.path.join(out, "ib16.h5"), config_keys=["system"])
    for r in mr.read_summary(os.path.join(out, "ic1_ring_bridge.h5"), config_keys=["system"]):
        r["system"] += "/ring"
        rows.append(r)
    by = {(r["system"], r["model"], r["mesh"]): r["tflops_per_gpu"] for r in rows}

    table, csv_rows = [], []
    for key, label, chips in PANELS:
        for model in MODELS:
            t = [by[(key, model, mesh_of(chips, i))] for i in ATP_I]
            best = ATP_I[max(range(len(t)), key=lambda k: t[k])]
            table.append([f"{label} ({chips})", model.replace("atp-", "").upper()]
                         + [f"{x:.2f}" for x in t] + [f"ATP-{best}", PAPER_BEST[key]])
            csv_rows.append([key, chips, model] + [f"{x:.3f}" for x in t])
    text = ("# ATP Figure 11 in meshsim: TFLOPS per GPU of ATP-i = DeviceMesh(N/i, i)\n\n"
            + mr.markdown_table(["interconnect (GPUs)", "model"] + [f"ATP-{i}" for i in ATP_I]
                                + ["meshsim best", "paper best"], table, "llrrrrll"))
    mr.write_text(os.path.join(out, "table.md"), text)
    mr.write_csv(os.path.join(here, "atp_fig11_mesh.csv"),
                 ["interconnect", "gpus", "model"] + [f"atp{i}_tflops" for i in ATP_I], csv_rows)

    # The same meshes with the authors' benchmark's activation layout (gathered*.ini).
    g = mr.read_summary(os.path.join(out, "gathered.h5"), config_keys=["system"])
    g += mr.read_summary(os.path.join(out, "ib16_gathered.h5"), config_keys=["system"])
    gby = {(r["system"], r["model"], r["mesh"]): r["tflops_per_gpu"] for r in g}
    g_rows = [[key, chips, model] + [f"{gby[(key, model, mesh_of(chips, i))]:.3f}" for i in ATP_I]
              for key, _, chips in PANELS if "/" not in key for model in MODELS]
    mr.write_csv(os.path.join(here, "atp_fig11_gathered.csv"),
                 ["interconnect", "gpus", "model"] + [f"atp{i}_tflops" for i in ATP_I], g_rows)

    plt = mr.setup_matplotlib()
    fig, axes = plt.subplots(1, len(PANELS), figsize=(20, 3.9), squeeze=False)
    fig.subplots_adjust(wspace=0.3)
    width = 0.8 / len(ATP_I)
    for ax, (key, label, chips) in zip(axes[0], PANELS):
        for k, i in enumerate(ATP_I):
            xs = [m_i + (k - (len(ATP_I) - 1) / 2) * width for m_i in range(len(MODELS))]
            ys = [by[(key, m, mesh_of(chips, i))] for m in MODELS]
            ax.bar(xs, ys, width, color=COLORS[i], label=f"ATP-{i} ({mesh_of(chips, i)})")
            p_i, p_models = PAPER_BEST_I[key]
            if i == p_i:
                px = [x for x, m in zip(xs, MODELS) if m in p_models]
                py = [y for y, m in zip(ys, MODELS) if m in p_models]
                ax.plot(px, py, ls="none", marker="v", color="black", ms=6,
                        label=f"paper's best (§5.3): ATP-{p_i}", markeredgewidth=0,
                        transform=ax.transData)
        ax.set_xticks(range(len(MODELS)))
        ax.set_xticklabels([m.replace("atp-", "").upper() for m in MODELS])
        ax.set_title(f"{label}, {chips} GPUs", fontsize=9)
        ax.set_ylabel("TFLOPS per GPU")
        ax.set_ylim(0, 1.55 * max(by[(key, m, mesh_of(chips, i))] for m in MODELS for i in ATP_I))
        ax.legend(fontsize=7, loc="upper left")  # in the headroom above the bars
    fig.suptitle("ATP Figure 11 in meshsim: ATP-i = DeviceMesh(N/i, i), one layer (fwd + bwd), "
                 "batch 4, seq 2048, no chunking", fontsize=10)
    mr.save_figure(fig, os.path.join(here, "atp_fig11_mesh"))


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
