#!/usr/bin/env python3
"""MeshSlice end-to-end (§5.1.1): end_to_end.csv → end_to_end.{png,svg} (committed): MeshSlice's
speed-up over the best Wang run, FC layers and whole layers, meshsim beside the paper."""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_results as mr  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    with open(mr.require(__file__, "end_to_end.csv")) as f:
        rows = list(csv.DictReader(f))
    plt = mr.setup_matplotlib()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    labels = [f"{r['model']}\n{'FC layers' if r['workload'] == 'llm' else 'whole layer'}"
              for r in rows]
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [float(r["speedup_pct"]) for r in rows], 0.4, label="meshsim")
    ax.bar([x + 0.2 for x in xs], [float(r["paper_pct"]) for r in rows], 0.4, label="paper")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels)
    ax.set_ylabel("MeshSlice faster than Wang (%)")
    ax.set_ylim(0, 35)
    ax.set_title("256 TPUv4 chips, batch 128, seq 2048")
    ax.legend(loc="upper left")
    fig.tight_layout()
    mr.save_figure(fig, os.path.join(HERE, "end_to_end"))


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
