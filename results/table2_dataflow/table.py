#!/usr/bin/env python3
"""Table 2's tables in README.md, generated from table2_dataflow.csv: paper vs meshsim
(`table2-measured`) and issue 12's targets with their verdicts and tolerances
(`table2-targets`). plot.py calls this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

MODELS = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
# The paper's numbers, one place: MeshSlice (ISCA'25) §5.2, Table 2 — FLOP utilization not
# optimized, optimized, and the speed-up.
PAPER = {"gpt3": (0.556, 0.674, 0.212), "megatron-nlg": (0.782, 0.822, 0.051)}
# Figure 11's averages (MeshSlice over Collective / Wang, 16 GeMMs) live in fig11's table.py.
PAPER_FIG11 = plotenv.load_module(
    plotenv.here(__file__, "..", "fig11_gemm_shapes", "table.py"), "fig11_table").PAPER_AVG
UTIL_TOL = 3.0     # issue 12: optimized utilization within ±3 points
SPEEDUP_TOL = 0.2  # issue 12: speed-up within ±20% (relative)


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "table2_dataflow.csv"))
    readme = plotenv.here(__file__, "README.md")
    r = {(x["model"], x["dataflow"]): x for x in rows}
    table, targets = [], []
    for m, name in MODELS.items():
        no, yes = r[(m, "os")], r[(m, "auto")]
        un, uy = float(no["flop_utilization"]), float(yes["flop_utilization"])
        sp = uy / un - 1  # same FLOPs: the makespan ratio
        p = PAPER[m]
        assert abs(float(yes["paper_utilization"]) - p[1]) < 1e-9, "CSV and PAPER disagree"
        table.append([name, plotenv.pct(p[0]), plotenv.pct(p[1]), plotenv.pct(p[2]),
                      f"{plotenv.pct(un)} ({no['mesh']}, S={no['slices']})",
                      f"{plotenv.pct(uy)} ({yes['mesh']}, S={yes['slices']})", plotenv.pct(sp)])
        targets.append([f"{name} optimized within ±{UTIL_TOL:g} points", plotenv.pct(p[1]),
                        plotenv.pct(uy), plotenv.verdict(100 * uy, 100 * p[1], UTIL_TOL)])
        targets.append([f"{name} speed-up within ±{100 * SPEEDUP_TOL:g}%", plotenv.pct(p[2]),
                        plotenv.pct(sp), plotenv.verdict_rel(sp, p[2], SPEEDUP_TOL)])
    plotenv.readme_table(readme, "table2-measured",
                         ["LLM", "paper: not opt.", "paper: opt.", "paper: speed-up",
                          "meshsim: not opt. (mesh, S)", "meshsim: opt. (mesh, S)",
                          "meshsim: speed-up"], table)
    plotenv.readme_table(readme, "table2-targets", ["target (issue 12)", "paper", "meshsim",
                                                    "met?"], targets, align="lrrl")
    sensitivity(readme)


def crossing(xs, ys, target):
    """Where the piecewise-linear curve (xs, ys) first reaches `target`, as text."""
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if (y0 - target) * (y1 - target) <= 0 and y0 != y1:
            return f"{x0 + (target - y0) / (y1 - y0) * (x1 - x0):.0f} GB/s"
    side = "below" if all(y < target for y in ys) else "above"
    return f"none ({side} it from {xs[0]:g} to {xs[-1]:g} GB/s)"


def sensitivity(readme):
    """`table2-sensitivity`: Table 2's cells and Figure 11's in-step speed-ups per link rate
    (table2_sensitivity.csv), and where each curve meets the paper's value."""
    rows = plotenv.read_csv(plotenv.require(__file__, "table2_sensitivity.csv"))
    by = {(float(r["link_gb_per_s"]), r["model"]): r for r in rows}
    links = sorted({k[0] for k in by})
    f = lambda x, m, k: float(by[(x, m)][k])  # noqa: E731
    curves = []  # (name, values per link, paper value)
    for m, name in MODELS.items():
        curves += [(f"{name} not optimized", [f(x, m, "not_opt_util") for x in links], PAPER[m][0]),
                   (f"{name} optimized", [f(x, m, "opt_util") for x in links], PAPER[m][1]),
                   (f"{name} dataflow speed-up", [f(x, m, "dataflow_speedup") for x in links],
                    PAPER[m][2])]
    for base, name in (("collective", "Collective"), ("wang", "Wang")):
        curves.append((f"MeshSlice over {name}, in the step (16 GeMMs)",
                       [(f(x, "gpt3", f"instep_speedup_over_{base}")
                         + f(x, "megatron-nlg", f"instep_speedup_over_{base}")) / 2
                        for x in links], PAPER_FIG11[base]))
    table = [[name, plotenv.pct(paper)] + [plotenv.pct(v) for v in vals]
             + [crossing(links, vals, paper)] for name, vals, paper in curves]
    plotenv.readme_table(readme, "table2-sensitivity",
                         ["quantity", "paper"] + [f"{x:g} GB/s" for x in links]
                         + ["meets the paper at"], table, align="lr" + "r" * len(links) + "l")


if __name__ == "__main__":
    main()
