#!/usr/bin/env python3
"""Figure 7 plot: fig7.csv → fig7.png (200 dpi) + fig7.svg, aggregate TFLOPS per case and method."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plotenv  # noqa: E402,F401  (first: re-executes under /usr/bin/python3 without matplotlib)
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Send/Recv", "#1f77b4"), ("Alpa", "#ff7f0e"), ("Broadcast", "#2ca02c"),
           ("Ours", "#d62728"), ("Signal", "#7f7f7f")]

if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "meshsim"  # Reproducible SVG ids.
    rows = mrs.read_csv(plotenv.require(__file__, "fig7.csv"))
    groups = []
    for r in rows:
        if (r["case"], r["dp_op_pp"]) not in groups:
            groups.append((r["case"], r["dp_op_pp"]))
    fig, axes = plt.subplots(1, len(groups), figsize=(3.0 * len(groups), 3.6))
    for ax, (case, cfg) in zip(axes, groups):
        for k, (method, color) in enumerate(METHODS):
            r = [r for r in rows if (r["case"], r["dp_op_pp"], r["method"]) == (case, cfg, method)]
            if r:
                ax.bar(k, float(r[0]["tflops"]), 0.75, color=color, label=method)
        ax.set_xticks([])
        ax.set_title(f"{case} {cfg}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("aggregate TFLOPS (8 GPUs)")
    axes[0].legend(fontsize=7, loc="lower left")
    fig.suptitle("Figure 7 (meshsim, p3.8xlarge, 2 stages): end-to-end throughput", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "fig7.png"), dpi=200)
    fig.savefig(os.path.join(HERE, "fig7.svg"), metadata={"Date": None})
