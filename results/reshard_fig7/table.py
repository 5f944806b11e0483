#!/usr/bin/env python3
"""Figure 7's "Measured" table in README.md, generated from fig7.csv (between the
`<!-- fig7-measured:begin/end -->` markers): aggregate TFLOPS per case and method, and the
ratios of the paper's claims (§5.2), so no cell is typed by hand; and the claims' verdicts
(`fig7-claims`), each with its tolerance; and the peak memory per chip (`fig7-memory`).
plot.py calls this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

METHODS = ["Send/Recv", "Alpa", "Broadcast", "Ours", "Signal"]
# The paper's numbers, one place: Zhuang et al. MLSys'23 §5.2 (the text of Figure 7) and §4.
PAPER_OURS_OVER_ALPA = {"GPT": 1.1, "U-Trans": 1.5}   # "≈ 1.1×", "≈ 1.5×"
PAPER_OURS_OF_SIGNAL = 0.97                           # "more than 97% of Signal in all cases"
PAPER_SIGNAL_OVER_SYNC = (1.1, 1.5)                   # §4: Signal 1.1–1.5× over synchronous
ROUNDING_TOL = 0.05   # the paper's one-decimal "≈ 1.1×": ±0.05×
CLOSE_TOL = 0.10      # "close to Signal": within 10% of Signal's throughput
V100_HBM_GB = 16.0   # V100 (SXM2) 16 GB HBM2, NVIDIA's datasheet: the capacity the runs must fit
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
    claims(tf, order)
    memory(rows, order)


def memory(rows, order):
    """One line: peak memory per chip per case (the larger stage, over the five methods), and
    which cases fit the V100's 16 GB."""
    peak = {}
    for r in rows:
        key = (r["case"], r["dp_op_pp"])
        peak.setdefault(key, []).append(max(float(r["stage0_peak_gb"]),
                                            float(r["stage1_peak_gb"])))
    parts, over = [], []
    for c, cfg in order:
        lo, hi = f"{min(peak[(c, cfg)]):.1f}", f"{max(peak[(c, cfg)]):.1f}"
        name = f"{CASE_NAMES.get(c, c)} {cfg}"
        parts.append(f"{name} {lo if lo == hi else lo + '–' + hi} GB")
        if max(peak[(c, cfg)]) > V100_HBM_GB:
            over.append(name)
    fit = ("all within" if not over else
           "all but " + ", ".join(over) + " (capacity check lifted, above) within")
    plotenv.readme_block(plotenv.here(__file__, "README.md"), "fig7-memory",
                         "Peak memory per chip (`stage0_peak_gb` / `stage1_peak_gb` in `fig7.csv`,"
                         " the larger stage, over the five methods): " + ", ".join(parts) +
                         f"; {fit} the V100's {V100_HBM_GB:g} GB.")


def claims(tf, order):
    def of(kind):
        return [(c, g) for c, g in order if c.startswith(kind)]

    def r(g, a, b):
        return tf[g + (a,)] / tf[g + (b,)]

    gpt, ut = of("GPT"), of("U-Trans")
    al_sig = [r(g, "Alpa", "Signal") for g in gpt]
    ou_sig = [r(g, "Ours", "Signal") for g in gpt]
    close = all(x >= 1 - CLOSE_TOL for x in al_sig + ou_sig)
    rows = [["GPT: Ours and Alpa both close to Signal (NVLink offloads the resharding)",
             f"Alpa {plotenv.pct(min(al_sig))}–{plotenv.pct(max(al_sig))} of Signal, Ours "
             f"{plotenv.pct(min(ou_sig))}–{plotenv.pct(max(ou_sig))}",
             plotenv.verdict_bool(close, f"each ≥ {100 * (1 - CLOSE_TOL):g}% of Signal")]]
    for kind, groups in (("GPT", gpt), ("U-Trans", ut)):
        p = PAPER_OURS_OVER_ALPA[kind]
        rows.append([f"{kind}: Ours ≈ {p:g}× Alpa" + (" (overlap)" if kind == "GPT" else ""),
                     ", ".join(f"{plotenv.ratio(r((c, cfg), 'Ours', 'Alpa'))} "
                               f"({CASE_NAMES.get(c, c)} {cfg})" for c, cfg in groups),
                     "; ".join(f"{cfg} " + plotenv.verdict(r((c, cfg), "Ours", "Alpa"), p,
                                                           ROUNDING_TOL, unit="×", digits=2)
                               for c, cfg in groups)])
    sig = [(f"{CASE_NAMES.get(c, c)} {cfg}", r((c, cfg), "Ours", "Signal")) for c, cfg in order]
    short = [(n, x) for n, x in sig if x < PAPER_OURS_OF_SIGNAL]
    rows.append([f"Ours ≥ {100 * PAPER_OURS_OF_SIGNAL:g}% of Signal everywhere",
                 ", ".join(plotenv.pct(x) for _, x in sig),
                 plotenv.verdict_bool(not short, "; ".join(
                     f"{n} {100 * (PAPER_OURS_OF_SIGNAL - x):.1f} pts short" for n, x in short))])
    lo, hi = PAPER_SIGNAL_OVER_SYNC
    sa = [(f"{CASE_NAMES.get(c, c)} {cfg}", r((c, cfg), "Signal", "Alpa")) for c, cfg in order]

    def where(x):
        return ("in range" if lo - ROUNDING_TOL <= x <= hi + ROUNDING_TOL else
                "higher" if x > hi else "lower")
    rows.append([f"Signal {lo:g}–{hi:g}× over the synchronous baseline (Alpa; §4)",
                 ", ".join(f"{plotenv.ratio(x)} ({n})" for n, x in sa),
                 "; ".join(f"{n}: {'yes' if where(x) == 'in range' else 'no, ' + where(x)}"
                           for n, x in sa) + f" (range ±{ROUNDING_TOL:g}×)"])
    plotenv.readme_table(plotenv.here(__file__, "README.md"), "fig7-claims",
                         ["claim (§5.2)", "meshsim", "holds?"], rows, align="lll")


if __name__ == "__main__":
    main()
