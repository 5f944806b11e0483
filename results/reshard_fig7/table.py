#!/usr/bin/env python3
"""Figure 7's "Measured" table in README.md, generated from fig7.csv (between the
`<!-- fig7-measured:begin/end -->` markers): aggregate TFLOPS per case and method, and the
ratios of the paper's claims (§5.2), so no cell is typed by hand. Rerun after run.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

METHODS = ["Send/Recv", "Alpa", "Broadcast", "Ours", "Signal"]
CASE_NAMES = {"GPT case1": "GPT case 1", "GPT case2": "GPT case 2", "U-Trans case1": "U-Trans"}


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "fig7.csv"))
    tf, order = {}, []
    for r in rows:
        key = (r["case"], r["dp_op_pp"])
        if key not in order:
            order.append(key)
        tf[key + (r["method"],)] = float(r["tflops"])
    out = []
    for case, cfg in order:
        t = {m: tf[(case, cfg, m)] for m in METHODS}
        out.append([f"{CASE_NAMES.get(case, case)} {cfg}"] + [f"{t[m]:.1f}" for m in METHODS] +
                   [f"{t['Ours'] / t['Alpa']:.2f}×", f"{100 * t['Ours'] / t['Signal']:.1f}%",
                    f"{t['Signal'] / t['Alpa']:.2f}×"])
    plotenv.readme_table(plotenv.here(__file__, "README.md"), "fig7-measured",
                         ["case"] + METHODS + ["Ours / Alpa", "Ours / Signal", "Signal / Alpa"],
                         out)


if __name__ == "__main__":
    main()
