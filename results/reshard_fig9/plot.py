#!/usr/bin/env python3
"""Figure 9 plot: fig9.csv → fig9.png (200 dpi) + fig9.svg, aggregate TFLOPS per microbatch count."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plotenv  # noqa: E402,F401  (first: re-executes under /usr/bin/python3 without matplotlib)
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Broadcast", "#2ca02c"), ("Overlap", "#1f77b4"), ("Eager-1F1B", "#d62728"),
           ("Eager-1F1B + delay-dw", "#ff9896")]

if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "meshsim"  # Reproducible SVG ids.
    rows = mrs.read_csv(plotenv.require(__file__, "fig9.csv"))
    counts = sorted({int(r["microbatches"]) for r in rows})
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(METHODS)
    for k, (method, color) in enumerate(METHODS):
        xs, ys = [], []
        for i, m in enumerate(counts):
            r = [r for r in rows if int(r["microbatches"]) == m and r["method"] == method]
            if r:
                xs.append(i + (k - (len(METHODS) - 1) / 2) * width)
                ys.append(float(r[0]["tflops"]))
        ax.bar(xs, ys, width, color=color, label=method)
    ax.set_xticks(range(len(counts)))
    ax.set_xticklabels([f"{m} microbatches\n(batch {32 * m})" for m in counts], fontsize=8)
    ax.set_ylabel("aggregate TFLOPS (8 GPUs)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Figure 9 (meshsim, p3.8xlarge): overlap ablation, U-Transformer, broadcast",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "fig9.png"), dpi=200)
    fig.savefig(os.path.join(HERE, "fig9.svg"), metadata={"Date": None})
