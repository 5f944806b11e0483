#!/usr/bin/env python3
"""Where a GPT-3 175B training step's time goes on a TPU v4-like pod (run.py's runs): pod.csv from
out/pod_<chips>.json, and pod.png / pod.svg — per run, the average chip's step split into its
FLOPs at the chip's peak rate, the rest of its compute time (GeMMs below peak, vector work), its
communication that no compute hides, and the time it computes nothing and waits (pipeline
bubble, transfers from other stages). Then table.py writes the README's tables."""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

HEADERS = ["chips", "stages", "dp", "mesh", "step_time_s", "tflops_per_chip", "flop_utilization",
           "peak_compute_s", "compute_s", "exposed_comm_s", "idle_s", "events", "ops",
           "simulated_chips", "command"]


def main():
    runs = []  # (chips, path) of every out/pod_<chips>.json
    for path in glob.glob(plotenv.here(__file__, "out", "pod_*.json")):
        m = re.search(r"pod_(\d+)\.json$", path)
        if m:
            runs.append((int(m.group(1)), path))
    table = []
    for _, path in sorted(runs):
        with open(path) as f:
            r = json.load(f)
        cfg = r["config"]
        chips, step = r["chips"], r["step_time_s"]
        peak_s = r["flop_utilization"] * r["makespan_s"]  # flops / (chips x peak rate)
        compute, exposed = r["compute_s"], r["comm"]["exposed_s"]
        table.append([chips, cfg["stages"], cfg["dp"], cfg["mesh"], f"{step:.4f}",
                      f"{r['tflops_per_gpu']:.2f}", f"{r['flop_utilization']:.4f}",
                      f"{peak_s:.4f}", f"{compute:.4f}", f"{exposed:.4f}",
                      f"{max(0.0, step - compute - exposed):.4f}", int(r["events"]), int(r["ops"]),
                      int(r.get("simulated_chips", chips)), r["command"]])
    if not table:
        plotenv.require(__file__, "out/pod_512.json")  # Exits with the run hint.
    plotenv.write_rows(plotenv.here(__file__, "pod.csv"), HEADERS, table)
    draw(table)
    plotenv.load_module(plotenv.here(__file__, "table.py"), "pod_table").main()


def draw(table):
    plt = plotenv.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    parts = [("FLOPs at peak", "#4c72b0"), ("other compute time", "#9ab3d5"),
             ("exposed communication", "#dd8452"), ("idle: bubble and waits", "#cccccc")]
    labels = []
    for i, row in enumerate(table):
        step, peak, compute, exposed, idle = (float(row[k]) for k in (4, 7, 8, 9, 10))
        left = 0.0
        for (name, color), width in zip(parts, [peak, compute - peak, exposed, idle]):
            ax.barh(i, width, left=left, color=color, label=name if i == 0 else None)
            left += width
        labels.append(f"{row[0]} chips\n{row[1]} stages × DP {row[2]}")
    ax.set_yticks(range(len(table)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("seconds of one training step (average chip)")
    ax.set_title("GPT-3 175B on a TPU v4-like pod: where the step's time goes", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=4, fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(plotenv.here(__file__, "pod.png"), dpi=200, bbox_inches="tight")
    fig.savefig(plotenv.here(__file__, "pod.svg"), metadata={"Date": None}, bbox_inches="tight")
    print("wrote results/scale_pod/pod.png, pod.svg, pod.csv")


if __name__ == "__main__":
    main()
