#!/usr/bin/env python3
"""Figure 6 plot: fig6.csv → fig6.png (200 dpi) + fig6.svg. Top: time per Table 2 case and
method. Bottom: Ours' speed-up over Alpa per case, beside what the paper states for it."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plotenv  # noqa: E402  (first: re-executes under /usr/bin/python3 without matplotlib)
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Send/Recv", "#1f77b4"), ("Alpa", "#ff7f0e"), ("Ours", "#d62728"), ("Signal", "#7f7f7f")]
# The paper's numbers (§5.1.2) live in table.py's PAPER, with the README's verdicts.
from table import PAPER  # noqa: E402

if __name__ == "__main__":
    plt = plotenv.pyplot()
    rows = mrs.read_csv(plotenv.require(__file__, "fig6.csv"))
    t = {(int(r["case"]), r["method"]): float(r["time_s"]) for r in rows}
    fig, (ax, ax_s) = plt.subplots(2, 1, figsize=(11, 7.0), height_ratios=[1.0, 0.9])
    mrs.draw_cases(ax, rows, METHODS,
                   "Figure 6 (meshsim, p3.8xlarge): Table 2 cases, (1024,1024,512) fp16")
    w = 0.38
    cases = range(1, 10)
    for c in cases:
        lo, hi = PAPER[c]
        ax_s.bar(c - w / 2, hi - lo if hi > lo else 0.06, w, bottom=lo if hi > lo else lo - 0.03,
                 color="#cccccc", hatch="//", edgecolor="gray",
                 label="paper (§5.1.2 text: ≈ 1×, up to 2.5×, 3–10×)" if c == 1 else None)
        ax_s.text(c - w / 2, hi + 0.1, "≈1×" if hi == lo else f"{lo:g}–{hi:g}×" if lo > 1
                  else f"≤{hi:g}×", ha="center", fontsize=7)
        m = t[(c, "Alpa")] / t[(c, "Ours")]
        ax_s.bar(c + w / 2, m, w, color="#d62728", label="meshsim" if c == 1 else None)
        ax_s.text(c + w / 2, m + 0.1, f"{m:.2f}×", ha="center", fontsize=7)
    ax_s.set_xticks(list(cases))
    ax_s.set_xticklabels([f"case{c}" for c in cases])
    ax_s.set_ylabel("Alpa time / Ours time")
    ax_s.set_ylim(0, 11)
    ax_s.grid(axis="y", alpha=0.3)
    ax_s.legend(fontsize=8, loc="upper center")  # over cases 5-7, clear of the 3-10x spans
    ax_s.set_title("Ours' speed-up over Alpa: paper vs meshsim", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "fig6.png"), dpi=200)
    fig.savefig(os.path.join(HERE, "fig6.svg"), metadata={"Date": None})
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
