#!/usr/bin/env python3
"""Figure 12's tables in README.md, generated from fig12_strong_scaling.csv: the paper's
statements (§5.1.3, no numbers) with verdicts computed here, the test beside each
(`fig12-statements`), and the measured utilizations (`fig12-measured-<model>`). plot.py calls
this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

MODELS = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
CHIPS = [16, 32, 64, 128, 256]
ALGS = ["meshslice", "meshslice-search", "collective", "wang", "summa", "cannon", "tp1d"]
NAMES = {"meshslice": "MeshSlice (autotuned)", "meshslice-search": "MeshSlice (searched)",
         "collective": "Collective", "wang": "Wang", "summa": "SUMMA", "cannon": "Cannon",
         "tp1d": "1D TP"}
NO_S = {"collective", "cannon"}
# The paper states no numbers for Figure 12 (MeshSlice ISCA'25 §5.1.3), only the statements in
# the table; the tolerance this script reads "similar" with:
SIMILAR = 0.10  # MeshSlice within ±10% of the better of Collective and Wang


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "fig12_strong_scaling.csv"))
    readme = plotenv.here(__file__, "README.md")
    b = {(r["model"], int(r["chips"]), r["algorithm"]): r for r in rows}

    def u(m, n, a):
        return float(b[(m, n, a)]["flop_utilization"])

    for m in MODELS:
        out = plotenv.utilization_grid(b, m, ALGS, CHIPS, NAMES, NO_S)
        plotenv.readme_table(readme, f"fig12-measured-{m}", ["algorithm"] +
                             [str(n) for n in CHIPS], out)

    real = [a for a in ALGS if a != "meshslice-search"]

    def algs_at(m, n):
        return [a for a in real if (m, n, a) in b]

    def peak16(m):
        return all(u(m, 16, a) >= max(u(m, n, a) for n in CHIPS if (m, n, a) in b)
                   for a in real)

    def lead(m, n):
        best = max(("collective", "wang"), key=lambda a: u(m, n, a))
        return u(m, n, "meshslice") / u(m, n, best) - 1, best

    st = []
    lo = {m: min(algs_at(m, 16), key=lambda a: u(m, 16, a)) for m in MODELS}
    st.append(["16 chips: compute-bound, all algorithms relatively efficient"] +
              [f"{plotenv.pct(u(m, 16, lo[m]))} ({NAMES[lo[m]]}) … "
               f"{plotenv.pct(max(u(m, 16, a) for a in algs_at(m, 16)))}" for m in MODELS] +
              [plotenv.verdict_bool(all(peak16(m) for m in MODELS),
                                    "criterion: every algorithm's highest utilization of the "
                                    "figure is at 16 chips")])
    ld = {m: lead(m, 256) for m in MODELS}
    ok = {m: abs(ld[m][0]) <= SIMILAR for m in MODELS}
    st.append(['256 chips: communication dominates; MeshSlice\'s gain diminishes, "similar to '
               'Collective and Wang"'] +
              [f"MeshSlice {plotenv.pct(u(m, 256, 'meshslice'))}, Collective "
               f"{plotenv.pct(u(m, 256, 'collective'))}, Wang {plotenv.pct(u(m, 256, 'wang'))}; "
               f"lead over {NAMES[ld[m][1]]} {plotenv.pct(ld[m][0], 0, sign=True)} (16 chips: "
               f"{plotenv.pct(lead(m, 16)[0], 0, sign=True)})" for m in MODELS] +
              ["; ".join(f"{MODELS[m]} {'yes' if ok[m] else 'no'}" for m in MODELS) +
               f" (criterion: within ±{100 * SIMILAR:g}% of the better of Collective and Wang)"])
    above = all(u(m, 256, "meshslice") > max(u(m, 256, "tp1d"), u(m, 256, "summa"))
                for m in MODELS)
    st.append(["256 chips: MeshSlice above 1D TP and SUMMA"] +
              [f"1D TP {plotenv.pct(u(m, 256, 'tp1d'))}, SUMMA {plotenv.pct(u(m, 256, 'summa'))}"
               for m in MODELS] + [plotenv.verdict_bool(above)])
    plotenv.readme_table(readme, "fig12-statements",
                         ["statement (paper)", "meshsim GPT-3", "meshsim Megatron-NLG", "holds?"],
                         st, align="llll")


if __name__ == "__main__":
    main()
