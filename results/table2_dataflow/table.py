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


if __name__ == "__main__":
    main()
