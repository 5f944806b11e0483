#!/usr/bin/env python3
"""ATP Figure 10: out/ic1.h5 (IC1 as run), out/sweep.h5 (8 GPUs: IC1 peer-to-peer, IC2, IC3), out/ib16.h5
(16 GPUs, IC4) and out/ic1_ring_bridge.h5 (IC1, bridge fitted to the 8-GPU ring) →
atp_fig10_sota.{png,svg,csv} (committed) and out/table.md. TFLOPS per GPU of Megatron-LM, 2D/2.5D
TP and ATP on the mesh of its own search (--mesh auto).
The "IC4 under the paper's one-level reading" table's data: out/ic4_*.json (run.sh: `meshsim tune
--validate`) → ic4_one_level.csv (ic4_one_level.py); without those files the committed CSV is kept."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_results as mr  # noqa: E402

# (key, label, GPUs); the key is the system, or system + "/ring" for ic1_ring_bridge.ini.
PANELS = [("a100-pcie-shm", "IC1 PCIe via host (calibrated)", 8),
          ("a100-pcie-shm/ring", "IC1, bridge fitted to 8-GPU ring", 8),
          ("a100-nvlink2", "IC2 NVLink pairs", 8),
          ("dgx-a100", "IC3 NVSwitch", 8),
          ("a100-ib", "IC4 InfiniBand", 16)]
TABLE_ONLY = [("a100-pcie", "IC1 peer-to-peer PCIe (reference)", 8)]
MODELS = ["atp-m1", "atp-m2", "atp-m3", "atp-m4"]
ALGS = [("megatron", "Megatron-LM"), ("tp2d", "2D/2.5D"), ("atp", "ATP (searched mesh)")]
COLORS = {"megatron": "#1f77b4", "tp2d": "#7f7f7f", "atp": "#d62728"}
# The paper's statements (§5.1; Figure 10's bars are not given as numbers).
PAPER = {
    "a100-pcie-shm": "ATP +37% to +64% over Megatron (DeviceMesh(2,4)); 2D/2.5D beats ATP only on M1",
    "a100-pcie-shm/ring": "(as above)",
    "a100-pcie": "(the paper did not run peer-to-peer PCIe)",
    "a100-nvlink2": "ATP up to ~+10% (DeviceMesh(8,1), better overlap); 2D/2.5D far below",
    "dgx-a100": "ATP up to ~+10% (DeviceMesh(8,1), better overlap); 2D/2.5D far below",
    "a100-ib": "ATP +4% for the larger models (DeviceMesh(8,2)); 2D far below",
}

# The paper's numbers drawn beside meshsim's (Table 3 baselines, §5.1's gains), one place:
from table import PAPER_ATP_TFLOPS, PAPER_GAIN  # noqa: E402
import atp_paper  # noqa: E402


def main():
    here = mr.here(__file__)
    mr.require(__file__, "out/sweep.h5", "out/ic1.h5",
               "out/ib16.h5",
               "out/ic1_ring_bridge.h5")  # else: what to run first, exit 2
    out = mr.here(__file__, "out")
    rows = mr.read_summary(os.path.join(out, "sweep.h5"), config_keys=["system", "mesh"])
    rows += mr.read_summary(os.path.join(out, "ic1.h5"), config_keys=["system", "mesh"])
    rows += mr.read_summary(os.path.join(out, "ib16.h5"), config_keys=["system", "mesh"])
    for r in mr.read_summary(os.path.join(out, "ic1_ring_bridge.h5"), config_keys=["system", "mesh"]):
        r["system"] += "/ring"
        rows.append(r)
    best = mr.best_by(rows, ["system", "model", "algorithm"], metric="tflops_per_gpu")

    table, csv_rows = [], []
    for key, label, chips in PANELS + TABLE_ONLY:
        for model in MODELS:
            r = {a: best[(key, model, a)] for a, _ in ALGS}
            meg, tp2d, atp = (r[a]["tflops_per_gpu"] for a in ("megatron", "tp2d", "atp"))
            table.append([f"{label} ({chips})", model.replace("atp-", "").upper(), f"{meg:.2f}",
                          f"{tp2d:.2f} ({r['tp2d']['mesh']})", f"{atp:.2f} ({r['atp']['mesh']})",
                          f"{100 * (atp / meg - 1):+.1f}%"])
            csv_rows.append([key, chips, model, f"{meg:.3f}", f"{tp2d:.3f}", r["tp2d"]["mesh"],
                             f"{atp:.3f}", r["atp"]["mesh"]])
    text = ("# ATP Figure 10 in meshsim: TFLOPS per GPU (1e12 flop/s), one layer fwd + bwd\n\n"
            + mr.markdown_table(["interconnect (GPUs)", "model", "Megatron-LM", "2D/2.5D (mesh)",
                                 "ATP (searched mesh)", "ATP vs Megatron"], table, "llrrrr")
            + "\n## The paper's statements\n\n"
            + mr.markdown_table(["interconnect", "paper (§5.1)"],
                                [[k, PAPER[k]] for k, _, _ in PANELS + TABLE_ONLY], "ll"))
    mr.write_text(os.path.join(out, "table.md"), text)
    mr.write_csv(os.path.join(here, "atp_fig10_sota.csv"),
                 ["interconnect", "gpus", "model", "megatron_tflops", "tp2d_tflops", "tp2d_mesh",
                  "atp_tflops", "atp_mesh"], csv_rows)

    plt = mr.setup_matplotlib()
    fig, axes = plt.subplots(1, len(PANELS), figsize=(20, 3.9), squeeze=False)
    fig.subplots_adjust(wspace=0.35)
    slots = len(ALGS) + 1  # the last: the paper's ATP (Table 3)
    width = 0.8 / slots
    for ax, (key, label, chips) in zip(axes[0], PANELS):
        paper = PAPER_ATP_TFLOPS.get(key, {})
        px = [m_i + (len(ALGS) - (slots - 1) / 2) * width for m_i, m in enumerate(MODELS)
              if m in paper]
        py = [atp_paper.in_1e12(paper[m]) for m in MODELS if m in paper]
        ax.bar(px, py, width, color="#cccccc", hatch="//", edgecolor="gray",
               label="paper: ATP (its Table 3, in 1e12 flop/s)")
        for x, y in zip(px, py):
            ax.annotate(f"{y:.1f}", (x, y), ha="center", va="bottom", fontsize=6, color="dimgray")
        for a_i, (alg, name) in enumerate(ALGS):
            xs = [m_i + (a_i - (slots - 1) / 2) * width for m_i in range(len(MODELS))]
            ys = [best[(key, m, alg)]["tflops_per_gpu"] for m in MODELS]
            ax.bar(xs, ys, width, label=name, color=COLORS[alg])
            if alg == "atp":
                for x, m, y in zip(xs, MODELS, ys):
                    meg = best[(key, m, "megatron")]["tflops_per_gpu"]
                    ax.annotate(f"{best[(key, m, alg)]['mesh']}\n{100 * (y / meg - 1):+.0f}%",
                                (x, y), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(MODELS)))
        ax.set_xticklabels([m.replace("atp-", "").upper() for m in MODELS])
        ax.set_title(f"{label}, {chips} GPUs\npaper (§5.1): ATP {PAPER_GAIN[key]} over Megatron",
                     fontsize=8.5)
        ax.set_ylabel("TFLOPS per GPU (1e12 flop/s)")
        ax.margins(y=0.18)
    axes[0, 0].legend(fontsize=8, loc="upper left")
    fig.suptitle("ATP Figure 10 in meshsim: one layer (fwd + bwd), batch 4, seq 2048; "
                 "labels: ATP's searched mesh and its gain over Megatron-LM", fontsize=10, y=1.06)
    mr.save_figure(fig, os.path.join(here, "atp_fig10_sota"))
    ic4_csv()


def ic4_csv():
    """ic4_one_level.csv from out/ic4_*.json when run.sh made them; else the committed one
    (table.py reads only that)."""
    import ic4_one_level
    if all(os.path.exists(p) for p in ic4_one_level.archives()):
        ic4_one_level.write_csv()
        return
    mr.require(__file__, ic4_one_level.CSV)
    print("plot.py: no out/ic4_*.json (run.sh makes them); kept the committed "
          f"{ic4_one_level.CSV}")


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
