#!/usr/bin/env python3
"""The README's tables of results/scale_pod, generated from pod.csv (between the
`<!-- pod-measured:begin/end -->` and `<!-- pod-8192:begin/end -->` markers): each run's step and
where its time goes, and what a 8192-chip step would take in events and ops, extrapolated from
the largest run's per-chip counts. plot.py calls this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

POD = 8192  # Issue 22's pod: GPT-3 175B on 8192 TPUv4-like chips.


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
                    f"{int(r['events']) / 1e6:.0f} M", f"{int(r['ops']) / 1e6:.1f} M"])
    plotenv.readme_table(readme, "pod-measured",
                         ["chips", "stages × DP × mesh", "step (s)", "TFLOPS per chip",
                          "FLOP utilization", "FLOPs at peak / other compute / exposed comm / idle",
                          "events", "ops"], out)
    per_chip = []
    for r in rows:
        chips = int(r["chips"])
        per_chip.append([r["chips"], f"{int(r['events']) / chips / 1e3:.0f} k",
                         f"{int(r['ops']) / chips / 1e3:.1f} k"])
    last = rows[-1]
    scale = POD / int(last["chips"])
    per_chip.append([f"{POD} (×{scale:g} the {last['chips']}-chip run)",
                     f"{int(last['events']) * scale / 1e9:.2f} G events in all",
                     f"{int(last['ops']) * scale / 1e6:.0f} M ops in all"])
    plotenv.readme_table(readme, "pod-8192", ["chips", "events per chip", "ops per chip"],
                         per_chip)


if __name__ == "__main__":
    main()
