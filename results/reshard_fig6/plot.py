#!/usr/bin/python3
"""Figure 6 plot: fig6.csv → fig6.png (200 dpi) + fig6.svg, grouped bars per Table 2 case."""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.hashsalt"] = "meshsim"  # Reproducible SVG ids.

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_reshard as mrs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = os.path.basename(HERE).replace("reshard_", "")  # fig6 / fig8
METHODS = {
    "fig6": [("Send/Recv", "#1f77b4"), ("Alpa", "#ff7f0e"), ("Ours", "#d62728"),
             ("Signal", "#7f7f7f")],
    "fig8": [("Naive", "#9467bd"), ("Load balance only", "#2ca02c"), ("Ours", "#d62728")],
}[NAME]
TITLE = {
    "fig6": "Figure 6 (meshsim, p3.8xlarge): Table 2 cases, (1024,1024,512) fp16",
    "fig8": "Figure 8 (meshsim, p3.8xlarge): load-balance ablation, broadcast, Table 2 cases",
}[NAME]


def main():
    rows = mrs.read_csv(os.path.join(HERE, f"{NAME}.csv"))
    fig, ax = plt.subplots(figsize=(11, 3.8))
    width = 0.8 / len(METHODS)
    for k, (method, color) in enumerate(METHODS):
        xs, ys = [], []
        for case in range(1, 10):
            r = [r for r in rows if int(r["case"]) == case and r["method"] == method]
            if r:
                xs.append(case + (k - (len(METHODS) - 1) / 2) * width)
                ys.append(float(r[0]["time_s"]))
        ax.bar(xs, ys, width, color=color, label=method)
    ax.set_xticks(range(1, 10))
    ax.set_xticklabels([f"case{c}" for c in range(1, 10)])
    ax.set_ylabel("time (s)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(METHODS))
    ax.set_title(TITLE, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, f"{NAME}.png"), dpi=200)
    fig.savefig(os.path.join(HERE, f"{NAME}.svg"), metadata={"Date": None})


if __name__ == "__main__":
    main()
