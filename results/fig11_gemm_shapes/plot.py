#!/usr/bin/env python3
"""Figure 11 (single FC GeMMs at 256 chips): out/sweep.h5 → fig11_gemm_shapes.{png,svg,csv}
(committed), out/table.md. Each algorithm's bar is its best run over the candidate meshes and S."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_results as mr  # noqa: E402
from fc_gemms import T, block_cells, cells, speedups  # noqa: E402

ALGS = ["meshslice", "collective", "wang", "summa", "cannon"]
# MeshSlice paper §5.1.4 (Figure 11's text): "On average, MeshSlice is 27.8% and 19.1% faster than
# Collective and Wang, respectively" over the 16 GeMMs.
from table import PAPER_AVG  # noqa: E402  (the paper's numbers, one place)


def short(mnk):
    return "(" + ", ".join(f"{int(x) // 1024}K" for x in mnk.split(",")) + ")"


def draw_panel(ax, model, util, label, title):
    """One model's bars: util(cell, algorithm) → utilization, label(algorithm) → legend text.
    Returns the model's cells."""
    mc = [c for c in cells() if c[0] == model]
    width = 0.16
    for a_i, alg in enumerate(ALGS):
        ax.bar([i + (a_i - 2) * width for i in range(len(mc))],
               [100 * util(c, alg) for c in mc], width, label=label(alg), color=mr.COLORS[alg])
    ax.set_xticks(range(len(mc)))
    ax.set_xticklabels([f"{c[1]}{'' if c[4] else '*'}\n{c[2].upper()} {short(c[3])}"
                        for c in mc], fontsize=7.5)
    ax.set_ylabel("FLOP utilization (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title)
    return mc


def paper_box(ax, util):
    """The paper's average speed-ups (§5.1.4: MeshSlice 27.8% over Collective, 19.1% over Wang,
    over the 16 GeMMs) beside meshsim's over the same 16 cells (from `util`, either reading), in
    the upper left of `ax`."""
    sp = speedups(util, [(c, c[4]) for c in cells()])
    ax.text(0.01, 0.97, "MeshSlice's mean speed-up over the 16 GeMMs (both models):\n"
            + "\n".join(f"over {mr.LABELS[b]}: paper (§5.1.4) {100 * PAPER_AVG[b]:.1f}%, "
                        f"meshsim {100 * sp[b][0]:.1f}%" for b in ("collective", "wang")),
            transform=ax.transAxes, ha="left", va="top", fontsize=8,
            bbox={"facecolor": "white", "edgecolor": "gray", "alpha": 0.9})


def draw_alone(plt, util):
    """Figure 11 (each GeMM alone): util(cell, algorithm) → utilization. Writes the PNG/SVG."""
    fig, axes = plt.subplots(2, 1, figsize=(13, 8))
    for ax, model in zip(axes, mr.MODELS):
        draw_panel(ax, model, util, lambda a: mr.LABELS[a] if a != "meshslice" else "MeshSlice",
                   f"{mr.MODELS[model]}, 256 chips, T = {T // 1024}K tokens "
                   f"(M, N, K in units of 1K = 1024)")
    axes[0].legend(ncol=5, fontsize=8, loc="upper right")
    paper_box(axes[0], util)
    axes[1].set_xlabel("GeMM (layer.pass), its dataflow and (M, N, K); "
                       "* = second dataflow of the (T, H, H) shape")
    fig.suptitle("Figure 11 (meshsim): single FC GeMMs, each algorithm on its best mesh")
    fig.tight_layout()
    mr.save_figure(fig, mr.here(__file__, "fig11_gemm_shapes"))
    plt.close(fig)


def draw_in_block(plt, util, mesh):
    """Figure 11 in the training step: util(cell, algorithm) → utilization, mesh(model,
    algorithm) → its best block's mesh. Writes the PNG/SVG."""
    fig, axes = plt.subplots(2, 1, figsize=(13, 8))
    for ax, model in zip(axes, mr.MODELS):
        draw_panel(ax, model, util,
                   lambda a: f"{mr.LABELS[a].replace(' (autotuned)', '')} ({mesh(model, a)})",
                   f"{mr.MODELS[model]}, 256 chips: each GeMM's share of its algorithm's "
                   f"best block (mesh in the legend)")
        ax.legend(ncol=5, fontsize=8, loc="upper right")
    paper_box(axes[0], util)
    axes[1].set_xlabel("GeMM (layer.pass), its dataflow and (M, N, K); "
                       "* = second dataflow of the (T, H, H) shape")
    fig.suptitle("Figure 11 (meshsim), in the training step: per-GeMM utilization from each "
                 "GeMM's share of the block")
    fig.tight_layout()
    mr.save_figure(fig, mr.here(__file__, "fig11_gemm_shapes_in_block"))
    plt.close(fig)


def util_from_csv(path):
    """util(cell, algorithm) from the committed fig11_gemm_shapes.csv."""
    import csv
    with open(path, newline="") as f:
        u = {(r["model"], r["gemm"], r["algorithm"]): float(r["flop_utilization"])
             for r in csv.DictReader(f)}
    return lambda c, a: u[(c[0], c[1], a)]


def main():
    if sys.argv[1:] == ["--from-csv"]:  # Redraw both figures from the committed CSVs only.
        import csv
        plt = mr.setup_matplotlib()
        draw_alone(plt, util_from_csv(mr.require(__file__, "fig11_gemm_shapes.csv")))
        path = mr.require(__file__, "fig11_gemm_shapes_in_block.csv")
        with open(path, newline="") as f:
            meshes = {(r["model"], r["algorithm"]): r["mesh"] for r in csv.DictReader(f)}
        draw_in_block(plt, util_from_csv(path), lambda m, a: meshes[(m, a)])
        return
    mr.require(__file__, "out/sweep.h5",
               "out/block.h5",
               note="or plot.py --from-csv to redraw from the committed CSV")
    out = mr.here(__file__, "out")
    rows = mr.read_summary(os.path.join(out, "sweep.h5"))
    best = mr.best_by(rows, ["gemm", "dataflow", "algorithm"])
    plt = mr.setup_matplotlib()
    util = lambda c, a: best[(c[3], c[2], a)]["flop_utilization"]  # noqa: E731
    draw_alone(plt, util)
    md = ["# Figure 11 — measured (generated by plot.py)\n",
          "Best FLOP utilization per GeMM over the candidate meshes (and S); in brackets the "
          "mesh and S. `*` = the (T, H, H) GeMM in its second dataflow (not one of the paper's 8 "
          "distinct shapes per model; excluded from the averages).\n"]
    table = []
    sp_col, sp_wang, sp_col_all, sp_wang_all, losses = [], [], [], [], []
    for model in mr.MODELS:
        for c in [c for c in cells() if c[0] == model]:
            r = {a: best[(c[3], c[2], a)] for a in ALGS}
            ms = r["meshslice"]["flop_utilization"]
            s_col = ms / r["collective"]["flop_utilization"] - 1
            s_wang = ms / r["wang"]["flop_utilization"] - 1
            sp_col_all.append(s_col)
            sp_wang_all.append(s_wang)
            if c[4]:
                sp_col.append(s_col)
                sp_wang.append(s_wang)
            top = max(ALGS, key=lambda a: r[a]["flop_utilization"])
            if top != "meshslice":
                losses.append((f"{mr.MODELS[model]} {c[1]}{'' if c[4] else ' *'} "
                               f"({mr.LABELS[top]} {mr.pct(r[top]['flop_utilization'])})", c[4]))
            cell = [mr.MODELS[model], c[1] + ("" if c[4] else " *"), c[2].upper(), short(c[3])]
            for a in ALGS:
                s = "" if a in ("collective", "cannon") else f", S={r[a]['slices']}"
                cell.append(f"{mr.pct(r[a]['flop_utilization'])} ({r[a]['mesh']}{s})")
            cell += [f"{100 * s_col:+.1f}%", f"{100 * s_wang:+.1f}%"]
            table.append(cell)
    mr.write_csv(mr.here(__file__, "fig11_gemm_shapes.csv"),
                 ["model", "gemm", "dataflow", "m_n_k", "counted_by_paper", "algorithm", "mesh",
                  "slices", "flop_utilization"],
                 [[c[0], c[1], c[2], c[3], int(c[4]), a, best[(c[3], c[2], a)]["mesh"],
                   best[(c[3], c[2], a)]["slices"],
                   f"{best[(c[3], c[2], a)]['flop_utilization']:.4f}"]
                  for c in cells() for a in ALGS])
    md.append(mr.markdown_table(["model", "GeMM", "dataflow", "(M, N, K)"]
                                + [mr.LABELS[a].replace(" (autotuned)", "") for a in ALGS]
                                + ["MeshSlice vs Collective", "MeshSlice vs Wang"], table,
                                "llll" + "r" * (len(ALGS) + 2)))
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    md.append("\n## Stated numbers\n")
    md.append(mr.markdown_table(
        ["quantity", "paper", "meshsim (16 GeMMs)", "meshsim (all 18 cells)"],
        [["MeshSlice average speed-up over Collective", f"{100 * PAPER_AVG['collective']:.1f}%",
          f"{100 * mean(sp_col):.1f}%", f"{100 * mean(sp_col_all):.1f}%"],
         ["MeshSlice average speed-up over Wang", f"{100 * PAPER_AVG['wang']:.1f}%",
          f"{100 * mean(sp_wang):.1f}%", f"{100 * mean(sp_wang_all):.1f}%"],
         ["GeMMs where MeshSlice is the fastest", "16 of 16",
          f"{len(sp_col) - sum(1 for x in losses if x[1])} of {len(sp_col)}",
          f"{len(sp_col_all) - len(losses)} of {len(sp_col_all)}"]], "lrrr"))
    if losses:
        md.append("\nNot fastest: " + "; ".join(x[0] for x in losses) + "\n")
    md += in_block(out, plt, {"collective": (mean(sp_col), mean(sp_col_all)),
                              "wang": (mean(sp_wang), mean(sp_wang_all))})
    mr.write_text(os.path.join(out, "table.md"), "\n".join(md))


def in_block(out, plt, alone):
    """The second reading (block.ini): each GeMM's share of its algorithm's best block at 256
    chips → fig11_gemm_shapes_in_block.{png,svg,csv}; returns the markdown for out/table.md."""
    path = os.path.join(out, "block.h5")
    best = mr.best_by(mr.read_summary(path), ["model", "algorithm"])
    util = block_cells(path, best)
    draw_in_block(plt, lambda c, a: util[(c[0], c[1], a)][0],
                  lambda m, a: best[(m, a)]["mesh"])
    table = []
    for model in mr.MODELS:
        for c in [c for c in cells() if c[0] == model]:
            u = {a: util[(model, c[1], a)][0] for a in ALGS}
            table.append([mr.MODELS[model], c[1] + ("" if c[4] else " *"), c[2].upper(),
                          short(c[3])] + [mr.pct(u[a]) for a in ALGS]
                         + [f"{100 * (u['meshslice'] / u['collective'] - 1):+.1f}%",
                            f"{100 * (u['meshslice'] / u['wang'] - 1):+.1f}%"])
    stated = speedups(lambda c, a: util[(c[0], c[1], a)][0], [(c, c[4]) for c in cells()])
    not_fastest = [(c, max(ALGS, key=lambda a: util[(c[0], c[1], a)][0])) for c in cells()]
    not_fastest = [(c, a) for c, a in not_fastest if a != "meshslice"]
    mr.write_csv(mr.here(__file__, "fig11_gemm_shapes_in_block.csv"),
                 ["model", "gemm", "dataflow", "m_n_k", "counted_by_paper", "algorithm", "mesh",
                  "slices", "flop_utilization"],
                 [[c[0], c[1], c[2], c[3], int(c[4]), a, util[(c[0], c[1], a)][1]["mesh"],
                   util[(c[0], c[1], a)][1]["slices"], f"{util[(c[0], c[1], a)][0]:.4f}"]
                  for c in cells() for a in ALGS])
    md = ["\n# In the training step (block.ini)\n",
          "Each GeMM's share of its algorithm's best block at 256 chips (from the previous "
          "GeMM's end to its own; GeMMs of the same shape and dataflow pooled). Best blocks: "
          + "; ".join(f"{mr.MODELS[m]} {mr.LABELS[a].replace(' (autotuned)', '')} "
                      f"{best[(m, a)]['mesh']} ({mr.pct(best[(m, a)]['flop_utilization'])})"
                      for m in mr.MODELS for a in ALGS) + ".\n",
          mr.markdown_table(["model", "GeMM", "dataflow", "(M, N, K)"]
                            + [mr.LABELS[a].replace(" (autotuned)", "") for a in ALGS]
                            + ["MeshSlice vs Collective", "MeshSlice vs Wang"], table,
                            "llll" + "r" * (len(ALGS) + 2)),
          "\n## Stated numbers, both readings\n",
          mr.markdown_table(
              ["MeshSlice's average speed-up", "paper", "alone (16 GeMMs)", "in the step (16)",
               "alone (18 cells)", "in the step (18)"],
              [[f"over {mr.LABELS[b]}", f"{100 * PAPER_AVG[b]:.1f}%",
                f"{100 * alone[b][0]:.1f}%", f"{100 * stated[b][0]:.1f}%",
                f"{100 * alone[b][1]:.1f}%", f"{100 * stated[b][1]:.1f}%"]
               for b in ("collective", "wang")], "lrrrrr"),
          f"\nIn the step MeshSlice is the fastest in "
          f"{16 - sum(1 for c, _ in not_fastest if c[4])} of 16 GeMMs and "
          f"{18 - len(not_fastest)} of 18 cells; not in: "
          + ("; ".join(f"{mr.MODELS[c[0]]} {c[1]}{'' if c[4] else ' *'} ({mr.LABELS[a]} "
                       f"{mr.pct(util[(c[0], c[1], a)][0])} vs "
                       f"{mr.pct(util[(c[0], c[1], 'meshslice')][0])})" for c, a in not_fastest)
             or "none") + ".\n"]
    return md


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSVs)
    table.main()
