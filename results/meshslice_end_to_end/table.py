#!/usr/bin/env python3
"""The README's measured table with verdicts (`e2e-measured`) and the numbers of its "Paper vs
meshsim" bullets (`e2e-numbers`), generated from end_to_end.csv. The paper's numbers come from
the CSV's paper_pct column, written by summarize.py from its PAPER (MeshSlice §5.1.1, one place).
plot.py calls this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

MEASURE = {"llm": "FC layers (one block)", "layer": "whole layer"}
NAMES = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
REL_TOL = 0.2  # issue 12: a speed-up within ±20% of the paper's


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "end_to_end.csv"))
    readme = plotenv.here(__file__, "README.md")
    r = {(x["model"], x["workload"]): x for x in rows}
    out = []
    for x in rows:
        sp, paper = float(x["speedup_pct"]), float(x["paper_pct"])
        out.append([x["model"], MEASURE[x["workload"]],
                    f"{x['meshslice_ms']} ms ({x['meshslice_mesh']}, {x['meshslice_slices']})",
                    f"{x['meshslice_util']}%", f"{x['wang_ms']} ms ({x['wang_mesh']}, "
                    f"{x['wang_slices']})", f"{x['wang_util']}%", plotenv.num(sp, 1, True, "%"),
                    plotenv.num(paper, 1, True, "%"),
                    plotenv.verdict_rel(sp, paper, REL_TOL)])
    plotenv.readme_table(readme, "e2e-measured",
                         ["model", "measure", "MeshSlice (mesh, S)", "util", "Wang best (mesh, S)",
                          "util", "MeshSlice faster by", "paper",
                          f"within ±{100 * REL_TOL:g}%?"], out, align="lllrlrrrl")

    models = sorted({x["model"] for x in rows}, key=list(NAMES).index)

    def f(m, w, k):
        return float(r[(m, w)][k])

    nonfc = {m: (f(m, "layer", "meshslice_ms") - f(m, "llm", "meshslice_ms"),
                 f(m, "layer", "wang_ms") - f(m, "llm", "wang_ms")) for m in models}
    dil = {m: (f(m, "layer", "speedup_pct") - f(m, "llm", "speedup_pct"),
               f(m, "layer", "paper_pct") - f(m, "llm", "paper_pct")) for m in models}
    share = {m: nonfc[m][0] / f(m, "llm", "meshslice_ms") for m in models}
    # Non-FC time x (the same for both, MeshSlice's FC time = 1): (1 + fc + x) / (1 + x) = 1 + e2e.
    paper_share = {m: (f(m, "llm", "paper_pct") - f(m, "layer", "paper_pct")) /
                   f(m, "layer", "paper_pct") for m in models}
    text = (
        "- Non-FC time per layer (whole layer − FC layers): " + "; ".join(
            f"{NAMES[m]} MeshSlice {nonfc[m][0]:.2f} ms, Wang {nonfc[m][1]:.2f} ms" for m in models)
        + ".\n- The non-FC layers change the speed-up by " + " and ".join(
            plotenv.num(dil[m][0], 1, True) for m in models) + " points in meshsim (" +
        ", ".join(NAMES[m] for m in models) + "), " + " and ".join(
            plotenv.num(dil[m][1], 1, True) for m in models) + " in the paper.\n"
        "- Non-FC time as a share of MeshSlice's FC time: " + ", ".join(
            f"{plotenv.pct(share[m])} ({NAMES[m]})" for m in models) +
        "; the paper's speed-ups imply about " + ", ".join(
            f"{plotenv.pct(paper_share[m], 0)} ({NAMES[m]})" for m in models) +
        " if both algorithms spend the same non-FC time x: (1 + FC speed-up + x) / (1 + x) = "
        "1 + end-to-end speed-up.\n")
    plotenv.readme_block(readme, "e2e-numbers", text)


if __name__ == "__main__":
    main()
