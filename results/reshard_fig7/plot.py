#!/usr/bin/env python3
"""Figure 7 plot: fig7.csv → fig7.png (200 dpi) + fig7.svg. Top: aggregate TFLOPS per case and
method (legend below the panels, clear of the bars). Bottom: the two ratios the paper states,
paper beside meshsim."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plotenv  # noqa: E402  (first: re-executes under /usr/bin/python3 without matplotlib)
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Send/Recv", "#1f77b4"), ("Alpa", "#ff7f0e"), ("Broadcast", "#2ca02c"),
           ("Ours", "#d62728"), ("Signal", "#7f7f7f")]
# The paper's numbers, Zhuang et al. MLSys'23 §5.2 (the text of Figure 7; the bars are not given
# as numbers): "Ours shows a 1.1x speedup" over Alpa on GPT, "a 1.5x speedup compared to Alpa" on
# the U-Transformer, and "reaches more than 97% of the upper bound performance in all cases".
from table import PAPER_OURS_OVER_ALPA, PAPER_OURS_OF_SIGNAL  # noqa: E402  (the paper, one place)
PAPER_STYLE = {"color": "#cccccc", "hatch": "//", "edgecolor": "gray"}

if __name__ == "__main__":
    plt = plotenv.pyplot()
    rows = mrs.read_csv(plotenv.require(__file__, "fig7.csv"))
    groups = []
    for r in rows:
        if (r["case"], r["dp_op_pp"]) not in groups:
            groups.append((r["case"], r["dp_op_pp"]))
    tf = {(r["case"], r["dp_op_pp"], r["method"]): float(r["tflops"]) for r in rows}
    fig = plt.figure(figsize=(3.0 * len(groups), 7.2))
    grid = fig.add_gridspec(2, len(groups), height_ratios=[1.0, 0.9], hspace=0.55, wspace=0.3)
    top = [fig.add_subplot(grid[0, i]) for i in range(len(groups))]
    for ax, (case, cfg) in zip(top, groups):
        for k, (method, color) in enumerate(METHODS):
            if (case, cfg, method) in tf:
                ax.bar(k, tf[(case, cfg, method)], 0.75, color=color,
                       label=method if ax is top[0] else None)
        ax.set_xticks([])
        ax.set_title(f"{case} {cfg}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    top[0].set_ylabel("aggregate TFLOPS (8 GPUs)")
    # Below the top row, outside every panel: no bar is hidden.
    top[0].legend(loc="upper left", bbox_to_anchor=(0.0, -0.04), ncol=len(METHODS), fontsize=8,
                  frameon=False)

    labels = [f"{case.replace('U-Trans case1', 'U-Trans').replace('case', 'case ')}\n{cfg}"
              for case, cfg in groups]
    xs = range(len(groups))
    w = 0.38
    ax_a = fig.add_subplot(grid[1, : len(groups) // 2])
    ax_s = fig.add_subplot(grid[1, len(groups) // 2:])
    ours_alpa = [tf[g + ("Ours",)] / tf[g + ("Alpa",)] for g in groups]
    paper_alpa = [PAPER_OURS_OVER_ALPA["GPT" if c.startswith("GPT") else "U-Trans"]
                  for c, _ in groups]
    ax_a.bar([x - w / 2 for x in xs], paper_alpa, w, label="paper (§5.2 text)", **PAPER_STYLE)
    ax_a.bar([x + w / 2 for x in xs], ours_alpa, w, color="#d62728", label="meshsim")
    for x, p, m in zip(xs, paper_alpa, ours_alpa):
        ax_a.text(x - w / 2, p + 0.02, f"≈{p:.1f}×", ha="center", fontsize=7)
        ax_a.text(x + w / 2, m + 0.02, f"{m:.2f}×", ha="center", fontsize=7)
    ax_a.set_ylim(0, 2.1)
    ax_a.set_ylabel("Ours / Alpa (throughput)")
    ax_a.set_title("Ours over Alpa: paper vs meshsim", fontsize=9)
    ours_signal = [100 * tf[g + ("Ours",)] / tf[g + ("Signal",)] for g in groups]
    ax_s.bar(list(xs), ours_signal, 2 * w, color="#d62728", label="meshsim")
    for x, m in zip(xs, ours_signal):
        ax_s.text(x, m + 0.3, f"{m:.1f}%", ha="center", fontsize=7)
    ax_s.axhline(100 * PAPER_OURS_OF_SIGNAL, color="gray", ls="--",
                 label="paper: > 97% in all cases (§5.2)")
    ax_s.set_ylim(90, 104.5)
    ax_s.set_ylabel("Ours / Signal (%)")
    ax_s.set_title("Ours as a share of the upper bound (Signal)", fontsize=9)
    for ax in (ax_a, ax_s):
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", ncol=2)
    fig.suptitle("Figure 7 (meshsim, p3.8xlarge, 2 stages): end-to-end throughput", fontsize=10)
    fig.savefig(os.path.join(HERE, "fig7.png"), dpi=200, bbox_inches="tight")
    fig.savefig(os.path.join(HERE, "fig7.svg"), metadata={"Date": None}, bbox_inches="tight")

import table  # noqa: E402,E305  (the README's tables and verdicts, from the same CSV)
table.main()
