#!/usr/bin/env python3
"""Table 2's tables in README.md, generated from table2_dataflow.csv: paper vs meshsim
(`table2-measured`) and issue 12's targets with their verdicts and tolerances
(`table2-targets`); from table2_cost_models.csv (run.sh's `meshsim tune` runs) the four cells
under the cost models (`table2-cost-models`, its prose `table2-cost-prose` and speed-ups
`table2-cost-speedups`) and "The gaps, and why" (`table2-gaps`). plot.py calls this; so does
results/check_readmes.sh."""
import textwrap
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
    cost_models(readme, r)
    sensitivity(readme)


def fill(text):
    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False)


def bullet(text):
    return textwrap.fill(text, width=100, subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def cost_models(readme, sim):
    """Table 2's cells under the hybrid mean (simulation-fitted: estimate and its max-of-concurrent
    `strict` twin) and the authors' model, beside the simulation (table2_cost_models.csv), and the
    README's prose numbers on them. `sim`: table2_dataflow.csv's rows by (model, dataflow)."""
    import cost_models as cm
    rows = plotenv.read_csv(plotenv.require(__file__, cm.CSV))
    pick = {(x["model"], x["dataflow"], x["cost_model"]): x for x in rows if x["picked"] == "1"}
    hy, au = cm.COST_MODELS
    cells = [(m, d) for m in MODELS for d in cm.DATAFLOWS]
    f = lambda m, d, c, k: float(pick[(m, d, c)][k])  # noqa: E731
    paper = {(m, d): PAPER[m][j] for m in MODELS for j, d in enumerate(cm.DATAFLOWS)}
    for m, d in cells:  # the simulation is experiment.ini's run, as in table2_dataflow.csv
        assert abs(f(m, d, hy, "simulated_utilization") - float(sim[(m, d)]["flop_utilization"])) \
            < 1e-4, f"{cm.CSV} and table2_dataflow.csv disagree on {m} {d}"
    label = {"os": "not opt.", "auto": "opt."}
    table = [[f"{MODELS[m]}, {label[d]} ({pick[(m, d, hy)]['mesh']})", plotenv.pct(paper[(m, d)]),
              plotenv.pct(f(m, d, hy, "estimate_utilization")),
              plotenv.pct(f(m, d, hy, "strict_utilization")),
              f"{plotenv.pct(f(m, d, au, 'estimate_utilization'))} ({pick[(m, d, au)]['mesh']}, "
              f"S={pick[(m, d, au)]['slices']})",
              plotenv.pct(f(m, d, hy, "simulated_utilization"))] for m, d in cells]
    plotenv.readme_block(readme, "table2-cost-models", f"```sh\n{cm.shell_loop()}\n```\n\n"
                         + plotenv.markdown_table(["LLM, dataflow", "paper", "hybrid mean",
                                                   "max model", "authors (mesh, S)",
                                                   "meshsim simulated"], table))

    # The prose under the table.
    off = [f(m, d, hy, "simulated_ms") / f(m, d, hy, "strict_ms") - 1 for m, d in cells]
    pairs = ", ".join(f"{f(m, d, hy, 'simulated_ms'):.2f} vs {f(m, d, hy, 'strict_ms'):.2f}"
                      + (" ms" if i == 0 else "") for i, (m, d) in enumerate(cells))
    to_hy = [abs(100 * (paper[c] - f(*c, hy, "estimate_utilization"))) for c in cells]
    to_au = [100 * (f(*c, au, "estimate_utilization") - paper[c]) for c in cells]
    au_side = ("*below*" if min(to_au) > 0 else "*above*" if max(to_au) < 0 else "on both sides of")
    au_abs = [abs(x) for x in to_au]
    near = max(to_hy) < min(au_abs)
    plotenv.readme_block(readme, "table2-cost-prose", fill(
        f"meshsim's simulated makespans equal the max model within "
        f"{plotenv.pct(max(abs(x) for x in off))} in all four cells ({pairs}); the paper's "
        f"utilizations lie within {plotenv.num(min(to_hy))}–{plotenv.num(max(to_hy))} points of "
        f"the hybrid mean model, and {plotenv.num(min(au_abs))}–{plotenv.num(max(au_abs))} points "
        f"{au_side} the authors' own committed model."
        + (" So the paper's Table 2 is not what the committed simulation-branch code computes; "
           "the hybrid lands near it by coincidence of its two departures from that code (the "
           "summed sequential pair and the lower 249e12 FLOP/s both make it slower)." if near
           else " The hybrid is not closer to the paper than the authors' model here.")))

    def speedup(m, c, k):
        return f(m, "os", c, k) / f(m, "auto", c, k) - 1
    g, n = MODELS
    plotenv.readme_block(readme, "table2-cost-speedups", fill(
        "The cost models' speed-ups (each side on its own pick, from the table above): hybrid mean "
        f"{plotenv.pct(speedup(g, hy, 'estimate_ms'))} {MODELS[g]}, "
        f"{plotenv.pct(speedup(n, hy, 'estimate_ms'))} {MODELS[n]}; the max model on the same "
        f"meshes and S {plotenv.pct(speedup(g, hy, 'strict_ms'))} and "
        f"{plotenv.pct(speedup(n, hy, 'strict_ms'))}; authors' "
        f"{plotenv.pct(speedup(g, au, 'estimate_ms'))} and "
        f"{plotenv.pct(speedup(n, au, 'estimate_ms'))}."))

    # "The gaps, and why".
    u = lambda m, d: float(sim[(m, d)]["flop_utilization"])  # noqa: E731
    below = [100 * (PAPER[m][1] - u(m, "auto")) for m in MODELS]
    hy_opt = [f(m, "auto", hy, "estimate_utilization") for m in MODELS]
    au_opt = [100 * (f(m, "auto", au, "estimate_utilization") - PAPER[m][1]) for m in MODELS]
    sp = [u(m, "auto") / u(m, "os") - 1 for m in MODELS]
    est, strict, simms = (f(g, "auto", hy, k) for k in ("estimate_ms", "strict_ms", "simulated_ms"))
    nb = [f(n, d, hy, "bytes_sent_per_chip") for d in ("os", "auto")]
    mesh = {d: sim[(g, d)]["mesh"] for d in ("os", "auto")}

    def two(v, fmt):
        return " / ".join(fmt(x) for x in v)
    word = "below" if min(below) > 0 else "off"
    gaps = [bullet(
        f"- **Optimized: {two(below, plotenv.num)} points {word} the paper.** The steady state of "
        "the sliced loop now runs at the cost model's rates (partial GeMMs at ~249 TFLOPS, "
        "collectives as calibrated). What is left is how two concurrent collectives on the two "
        "mesh axes add up: the hybrid `simulation-fitted` cost model, whose estimates "
        f"{two(hy_opt, plotenv.pct)} land near the paper's "
        f"{two([PAPER[m][1] for m in MODELS], plotenv.pct)}, charges their *mean* (so does the "
        "authors' code, which also averages the sequential pair and lands "
        f"{two(au_opt, plotenv.num)} points above the paper); meshsim's links run them side by "
        "side and a step lasts as long as the *longer* one. For GPT-3 the max model charges "
        f"{plotenv.num(strict - est)} ms more than the mean on the same mesh and S and the "
        f"simulated block takes {plotenv.num(simms - est)} ms more ({simms:.2f} against "
        f"{est:.2f} ms), most of it in attention-out, whose ReduceScatter is much longer than its "
        "AllGather (`docs/calibration.md`)."),
        bullet(
        f"- **Speed-ups are {'larger' if all(x > PAPER[m][2] for x, m in zip(sp, MODELS)) else 'different'}: "
        f"{plotenv.pct(sp[0])} vs {plotenv.pct(PAPER[g][2])} (GPT-3), {plotenv.pct(sp[1])} vs "
        f"{plotenv.pct(PAPER[n][2])} (Megatron).** Without the optimization, attention-out and "
        "FFN-down move their T×H activations instead of the weights "
        f"({plotenv.pct(nb[0] / nb[1] - 1, 0, True)} bytes sent per chip for Megatron), and their "
        "two collectives become more unequal, so the mean-vs-max difference above costs the "
        "unoptimized runs more than the optimized ones; issue 12's chip-model fixes helped the "
        "compute-bound optimized runs more than the communication-bound unoptimized ones (the "
        "utilizations before them are in this README's git history, not reproducible from this "
        "tree)."
        + (f" For GPT-3 the autotuner also moves the unoptimized run to {mesh['os']} (the "
           f"optimized one runs on {mesh['auto']})." if mesh["os"] != mesh["auto"] else "")
        + " The paper says most of Megatron's extra communication is hidden; in meshsim it is "
        "not, and without the paper's meshes and S for the unoptimized runs (not reported) we "
        "cannot say more.")]
    plotenv.readme_block(readme, "table2-gaps", "\n".join(gaps))


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
