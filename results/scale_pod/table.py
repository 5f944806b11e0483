#!/usr/bin/env python3
"""The README's table of results/scale_pod, generated from pod.csv (between the
`<!-- pod-measured:begin/end -->` markers): each run's step and where its time goes, its ops
(the whole pod's graph) and the events of its simulation (folded: sim/fold.h). plot.py calls
this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "pod.csv"))
    readme = plotenv.here(__file__, "README.md")
    out = []
    for r in rows:
        step = float(r["step_time_s"])
        peak, compute = float(r["peak_compute_s"]), float(r["compute_s"])
        shares = [x / step for x in (peak, compute - peak, float(r["exposed_comm_s"]),
                                     float(r["idle_s"]))]
        out.append([r["chips"], f"{r['stages']} × {r['dp']} × {r['mesh']}",
                    plotenv.num(step, 3), plotenv.num(float(r["tflops_per_chip"]), 1),
                    plotenv.pct(float(r["flop_utilization"])),
                    " / ".join(plotenv.pct(x, 0) for x in shares),
                    f"{int(r['events']) / 1e6:.0f} M", f"{int(r['ops']) / 1e6:.1f} M",
                    r["simulated_chips"]])
    plotenv.readme_table(readme, "pod-measured",
                         ["chips", "stages × DP × mesh", "step (s)", "TFLOPS per chip",
                          "FLOP utilization", "FLOPs at peak / other compute / exposed comm / idle",
                          "events", "ops", "simulated"], out)


if __name__ == "__main__":
    main()
