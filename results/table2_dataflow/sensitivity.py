#!/usr/bin/env python3
"""Table 2 and Figure 11 (in the training step) against the ICI link rate: out/sensitivity.h5
(sensitivity.ini) → table2_sensitivity.{png,svg,csv} (committed). plot.py calls this; the
README's `table2-sensitivity` block comes from the CSV (table.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_results as mr  # noqa: E402
from fc_gemms import block_cells, cells, speedups  # noqa: E402

from table import PAPER, PAPER_FIG11  # noqa: E402  (the paper's numbers, one place)

COLUMNS = ["link_gb_per_s", "model", "not_opt_util", "not_opt_mesh", "not_opt_slices",
           "opt_util", "opt_mesh", "opt_slices", "dataflow_speedup", "collective_util",
           "collective_mesh", "wang_util", "wang_mesh", "wang_slices",
           "instep_speedup_over_collective", "instep_speedup_over_wang"]


def gbps(text):
    """'30GB/s' (as the sweep file spells it) → 30.0."""
    assert text.endswith("GB/s"), text
    return float(text[:-4])


def rows_from_archive(path):
    """One CSV row per (link rate, model): Table 2's two MeshSlice runs, the best Collective and
    Wang blocks, and MeshSlice's mean in-step speed-ups over them on the model's 8 GeMMs that
    the paper counts (Figure 11's reading `fig11_gemm_shapes_in_block`)."""
    runs = mr.read_summary(path)
    out = []
    for link in sorted({r["link.bandwidth"] for r in runs}, key=gbps):
        at = [r for r in runs if r["link.bandwidth"] == link]
        best = mr.best_by([r for r in at if r["algorithm"] != "meshslice"],
                          ["model", "algorithm"])
        for r in at:
            if r["algorithm"] == "meshslice" and r["dataflow"] == "auto":
                best[(r["model"], "meshslice")] = r
        util = block_cells(path, best)
        for m in mr.MODELS:
            no = next(r for r in at if r["model"] == m and r["algorithm"] == "meshslice"
                      and r["dataflow"] == "os")
            yes, col, wang = (best[(m, a)] for a in ("meshslice", "collective", "wang"))
            sp = speedups(lambda c, a: util[(c[0], c[1], a)][0],
                          [(c, c[4]) for c in cells() if c[0] == m])
            out.append([f"{gbps(link):g}", m, f"{no['flop_utilization']:.4f}", no["mesh"],
                        no["slices"], f"{yes['flop_utilization']:.4f}", yes["mesh"],
                        yes["slices"], f"{no['makespan_s'] / yes['makespan_s'] - 1:.4f}",
                        f"{col['flop_utilization']:.4f}", col["mesh"],
                        f"{wang['flop_utilization']:.4f}", wang["mesh"], wang["slices"],
                        f"{sp['collective'][0]:.4f}", f"{sp['wang'][0]:.4f}"])
    return out


def draw(rows):
    """Left: Table 2's four cells; right: Figure 11's in-step mean speed-ups over the 16 GeMMs
    (the mean of the two models' 8-GeMM means); the paper's values dashed."""
    plt = mr.setup_matplotlib()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    links = sorted({float(r[0]) for r in rows})
    by = {(float(r[0]), r[1]): r for r in rows}
    styles = {"gpt3": "-", "megatron-nlg": "--"}
    for m, name in mr.MODELS.items():
        for col, label, colour, j in ((2, "not optimized", "#7f7f7f", 0),
                                      (5, "optimized", mr.COLORS["meshslice"], 1)):
            left.plot(links, [100 * float(by[(x, m)][col]) for x in links], styles[m],
                      marker="o", color=colour, label=f"{name}, {label}")
            left.axhline(100 * PAPER[m][j], color=colour, ls=styles[m], lw=0.8, alpha=0.5)
            left.annotate(f"paper {100 * PAPER[m][j]:.1f}", (links[-1], 100 * PAPER[m][j]),
                          fontsize=7, color=colour, ha="right", va="bottom")
    left.set_xlabel("ICI link rate per direction (GB/s)")
    left.set_ylabel("FLOP utilization (%)")
    left.set_title("Table 2: MeshSlice at 256 chips (paper: thin lines)", fontsize=10)
    left.legend(fontsize=7, loc="lower right")
    for base, col, colour in (("collective", 14, mr.COLORS["collective"]),
                              ("wang", 15, mr.COLORS["wang"])):
        mean16 = [50 * (float(by[(x, "gpt3")][col]) + float(by[(x, "megatron-nlg")][col]))
                  for x in links]
        right.plot(links, mean16, marker="o", color=colour, label=f"over {mr.LABELS[base]}")
        right.axhline(100 * PAPER_FIG11[base], color=colour, lw=0.8, ls="--")
        right.annotate(f"paper {100 * PAPER_FIG11[base]:.1f}%",
                       (links[-1], 100 * PAPER_FIG11[base]), fontsize=7, color=colour,
                       ha="right", va="bottom")
    right.set_xlabel("ICI link rate per direction (GB/s)")
    right.set_ylabel("MeshSlice's mean speed-up (%)")
    right.set_title("Figure 11 in the training step: 16 GeMMs (paper: dashed)", fontsize=10)
    right.legend(fontsize=8)
    fig.suptitle("Sensitivity to the ICI link rate: the preset's fitted 30 GB/s to TPUv4's "
                 "public ~50 GB/s")
    fig.tight_layout()
    mr.save_figure(fig, mr.here(__file__, "table2_sensitivity"))
    plt.close(fig)


def main():
    mr.require(__file__, "out/sensitivity.h5")
    rows = rows_from_archive(mr.here(__file__, "out", "sensitivity.h5"))
    mr.write_csv(mr.here(__file__, "table2_sensitivity.csv"), COLUMNS, rows)
    draw(rows)


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables, from the same CSVs)
    table.main()
