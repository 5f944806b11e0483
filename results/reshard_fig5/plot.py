#!/usr/bin/env python3
"""Figure 5 plot: fig5.csv → fig5.png (200 dpi) + fig5.svg."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402  (first: re-executes under /usr/bin/python3 without matplotlib)
import meshsim_reshard as mrs  # noqa: E402

plt = plotenv.pyplot()

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = {"send-recv": "Send/Recv", "local-allgather": "Alpa (local all-gather)",
          "global-allgather": "Alpa (global all-gather)", "broadcast": "Ours (broadcast)"}
STYLE = {"send-recv": ("#1f77b4", "o"), "local-allgather": ("#ff7f0e", "s"),
         "global-allgather": ("#bcbd22", "D"),
         "broadcast": ("#d62728", "^")}
# The paper's number (§5.1.1) lives in table.py's PAPER, with the README's verdicts.
from table import PAPER  # noqa: E402
PAPER_ONE_HOST_GROWTH = PAPER["one_host_growth"]


def main():
    rows = mrs.read_csv(plotenv.require(__file__, "fig5.csv"))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, group, xkey, xlabel in [(axes[0], "1 host", "receiver_gpus", "#GPUs (one host)"),
                                    (axes[1], "2 GPUs/host", "receiver_hosts",
                                     "#hosts (2 GPUs each)")]:
        for s, label in LABELS.items():
            pts = [(int(r[xkey]), float(r["time_s"])) for r in rows
                   if r["group"] == group and r["strategy"] == s]
            color, marker = STYLE[s]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color,
                    label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("time (s)")
        ax.set_xticks([1, 2, 3, 4])
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.set_title(f"1 GPU → {group}")
    one = {(s, int(r["receiver_gpus"])): float(r["time_s"]) for r in rows
           if r["group"] == "1 host" for s in [r["strategy"]]}
    growth = {s: one[(s, 4)] / one[(s, 1)] - 1 for s in ("broadcast", "local-allgather")}
    axes[0].text(0.55, 0.03, f"1 → 4 GPUs on one host:\n"
                 f"paper (§5.1.1): Ours, Alpa < {100 * PAPER_ONE_HOST_GROWTH:.0f}%\n"
                 f"meshsim: Ours +{100 * growth['broadcast']:.1f}%, "
                 f"Alpa +{100 * growth['local-allgather']:.1f}%",
                 transform=axes[0].transAxes, ha="center", va="bottom", fontsize=7,
                 bbox={"facecolor": "white", "edgecolor": "gray", "alpha": 0.9})
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle("Figure 5 (meshsim, p3.8xlarge): 1 GiB from one GPU to many", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "fig5.png"), dpi=200)
    fig.savefig(os.path.join(HERE, "fig5.svg"), metadata={"Date": None})


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
