#!/usr/bin/env python3
"""Figure 9's "Measured" table in README.md, generated from fig9.csv (between the
`<!-- fig9-measured:begin/end -->` markers): aggregate TFLOPS per microbatch count and method,
and the ratios of the paper's claims (§5.3.2), so no cell is typed by hand. Rerun after run.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

METHODS = ["Broadcast", "Overlap", "Eager-1F1B", "Eager-1F1B + delay-dw"]


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "fig9.csv"))
    tf, counts = {}, []
    for r in rows:
        m = int(r["microbatches"])
        if (m, r["batch"]) not in counts:
            counts.append((m, r["batch"]))
        tf[(m, r["method"])] = float(r["tflops"])
    out = []
    for m, batch in counts:
        b, o, e, d = (tf[(m, x)] for x in METHODS)
        out.append([f"{m} ({batch})", f"{b:.1f}", f"{o:.1f}", f"{e:.1f}", f"{d:.1f}",
                    f"{o / b:.3f}×", f"{e / o:.3f}×", f"{d / o:.3f}×"])
    plotenv.readme_table(plotenv.here(__file__, "README.md"), "fig9-measured",
                         ["microbatches (batch)", "Broadcast", "Overlap", "Eager-1F1B",
                          "Eager + delay-dw", "Overlap / Broadcast", "Eager / Overlap",
                          "Eager+dw / Overlap"], out)


if __name__ == "__main__":
    main()
