#!/usr/bin/env python3
"""Figure 9's tables in README.md, generated from fig09_weak_scaling.csv: the paper's stated
numbers beside meshsim's with issue 12's verdicts and tolerances (`fig9-quantities`) and the
measured utilizations per model (`fig9-measured-gpt3`, `fig9-measured-megatron-nlg`); and the
"Wang against §4.2" section (`wang-*` blocks: tables and every number in its prose) from
wang_trace.csv, wang_bound.csv and wang_bound_gemms.csv (wang_trace.py); from
fig09_cost_models.csv (run.sh's `meshsim tune` runs) the cost models' efficiency loss
(`fig9-cost-lost`) and "The gaps, and why" (`fig9-gaps`). plot.py calls this; so does
results/check_readmes.sh."""
import os
import textwrap
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

MODELS = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
CHIPS = [16, 32, 64, 128, 256]
ALGS = ["meshslice", "meshslice-search", "collective", "wang", "summa", "cannon", "tp1d", "fsdp"]
NAMES = {"meshslice": "MeshSlice (autotuned)", "meshslice-search": "MeshSlice (searched)",
         "collective": "Collective", "wang": "Wang", "summa": "SUMMA", "cannon": "Cannon",
         "tp1d": "1D TP", "fsdp": "FSDP"}
NO_S = {"collective", "cannon"}
BASELINES = ["summa", "cannon", "tp1d", "fsdp"]
# The paper's numbers, one place: MeshSlice (ISCA'25) §5.1.1's text (Figure 9's bars are not in
# the text) and Table 2 "optimized" (the same 256-chip setup).
PAPER_VS_WANG_256 = {"gpt3": 0.138, "megatron-nlg": 0.260}     # MeshSlice over Wang, FC layers
PAPER_E2E_VS_WANG_256 = {"gpt3": 0.120, "megatron-nlg": 0.234}  # incl. non-FC layers
PAPER_LOSS_16_256 = {"gpt3": 0.168, "megatron-nlg": 0.058}     # MeshSlice efficiency lost
PAPER_MESHSLICE_256 = {"gpt3": 0.674, "megatron-nlg": 0.822}   # Table 2 "optimized" (same setup)
UTIL_TOL = 3.0   # issue 12: utilization within ±3 points
REL_TOL = 0.2    # issue 12: a speed-up (or loss) within ±20% of the paper's


def load():
    rows = plotenv.read_csv(plotenv.require(__file__, "fig09_weak_scaling.csv"))
    return {(r["model"], int(r["chips"]), r["algorithm"]): r for r in rows}


def main():
    b = load()
    readme = plotenv.here(__file__, "README.md")

    def u(m, n, a):
        return float(b[(m, n, a)]["flop_utilization"])

    def t(m, n, a):
        return float(b[(m, n, a)]["makespan_s"])

    q = []
    points = [(m, n) for m in MODELS for n in CHIPS]
    for m, name in MODELS.items():
        auto, srch = "meshslice", "meshslice-search"
        q.append([f"{name}: MeshSlice utilization at 256 chips", plotenv.pct(PAPER_MESHSLICE_256[m]),
                  plotenv.pct(u(m, 256, auto)), plotenv.pct(u(m, 256, srch)),
                  plotenv.verdict(100 * u(m, 256, auto), 100 * PAPER_MESHSLICE_256[m], UTIL_TOL)])
        sw = {a: t(m, 256, "wang") / t(m, 256, a) - 1 for a in (auto, srch)}
        q.append([f"{name}: MeshSlice faster than Wang, 256 chips (FC layers)",
                  plotenv.pct(PAPER_VS_WANG_256[m]), plotenv.pct(sw[auto]), plotenv.pct(sw[srch]),
                  plotenv.verdict_rel(sw[auto], PAPER_VS_WANG_256[m], REL_TOL)])
        sc = {a: t(m, 256, "collective") / t(m, 256, a) - 1 for a in (auto, srch)}
        q.append([f"{name}: MeshSlice faster than Collective, 256 chips", "—",
                  plotenv.pct(sc[auto]), plotenv.pct(sc[srch]), "—"])
        lost = {a: 1 - u(m, 256, a) / u(m, 16, a) for a in (auto, srch)}
        q.append([f"{name}: MeshSlice efficiency lost from 16 to 256 chips",
                  plotenv.pct(PAPER_LOSS_16_256[m]), plotenv.pct(lost[auto]),
                  plotenv.pct(lost[srch]),
                  plotenv.verdict_rel(lost[auto], PAPER_LOSS_16_256[m], REL_TOL)])

    others = [a for a in ALGS if a not in ("meshslice", "meshslice-search")]

    def fastest(a):
        bad = [(m, n) for m, n in points
               if any(u(m, n, o) > u(m, n, a) for o in others if (m, n, o) in b)]
        return bad

    fa, fs = fastest("meshslice"), fastest("meshslice-search")
    q.append(["MeshSlice fastest at all 10 points", "yes", f"{10 - len(fa)} of 10",
              f"{10 - len(fs)} of 10", plotenv.verdict_bool(not fa, ", ".join(
                  f"not at {MODELS[m]} {n}" for m, n in fa))])
    order = {a: [(m, n) for m, n in points
                 if u(m, n, "collective") <= u(m, n, "wang") <= u(m, n, a)]
             for a in ("meshslice", "meshslice-search")}
    q.append(["Collective ≤ Wang ≤ MeshSlice", "yes", f"{len(order['meshslice'])} of 10",
              f"{len(order['meshslice-search'])} of 10",
              plotenv.verdict_bool(len(order["meshslice"]) == 10)])
    below = {n: all(u(m, n, a) < u(m, n, "collective") for m in MODELS for a in BASELINES
                    if (m, n, a) in b) for n in CHIPS}
    ok = [n for n in CHIPS if below[n]]
    exc = [(m, n, a) for m in MODELS for n in CHIPS if not below[n] for a in BASELINES
           if (m, n, a) in b and u(m, n, a) >= u(m, n, "collective")]
    large = [n for n in CHIPS if n >= 64]
    q.append(["SUMMA, Cannon, 1D TP, FSDP below Collective in large clusters", "yes",
              f"at {', '.join(map(str, ok))} chips" +
              "".join(f" (not at {n}: {MODELS[m]} {NAMES[a]} {plotenv.pct(u(m, n, a))} ≥ "
                      f"{plotenv.pct(u(m, n, 'collective'))})" for m, n, a in exc), "—",
              plotenv.verdict_bool(all(below[n] for n in large), "at 64–256 chips")])
    plotenv.readme_table(readme, "fig9-quantities",
                         ["quantity", "paper", "meshsim (autotuned)", "meshsim (searched)",
                          "issue-12 target met?"], q, align="lrrrl",
                         note=f"Targets: utilization within ±{UTIL_TOL:g} points, speed-ups and "
                              f"efficiency lost within ±{100 * REL_TOL:g}% of the paper's "
                              f"(\"efficiency lost\" read as the relative drop, 1 − u256 / u16). "
                              f"The end-to-end speed-ups over Wang ("
                              f"{plotenv.pct(PAPER_E2E_VS_WANG_256['gpt3'])}, "
                              f"{plotenv.pct(PAPER_E2E_VS_WANG_256['megatron-nlg'])}), which add "
                              f"measured non-FC layers, are not modelled.")

    for m in MODELS:
        rows = plotenv.utilization_grid(b, m, ALGS, CHIPS, NAMES, NO_S)
        plotenv.readme_table(readme, f"fig9-measured-{m}", ["algorithm"] + [str(n) for n in CHIPS],
                             rows)

    gaps_section(readme, b)
    wang_section(readme, b)


# ---- the cost models and "The gaps, and why" --------------------------------------------------

def _fill(text, indent=""):
    return textwrap.fill(text, width=100, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def gaps_section(readme, b):
    """fig09_cost_models.csv (run.sh's `meshsim tune` runs) with fig09_weak_scaling.csv and
    wang_bound.csv: the cost-model sentence under the quantities (`fig9-cost-lost`) and "The gaps,
    and why" (`fig9-gaps`, its efficiency-lost table included)."""
    import cost_models as cm
    rows = plotenv.read_csv(plotenv.require(__file__, cm.CSV))
    allm = {(r["model"], int(r["chips"]), r["cost_model"], r["mesh"]): r for r in rows}
    pick = {(r["model"], int(r["chips"]), r["cost_model"]): r for r in rows if r["picked"] == "1"}
    hy, au = cm.COST_MODELS
    g, n = MODELS
    lo, hi = CHIPS[0], CHIPS[-1]

    def f(m, c, k, cost=hy):
        return float(pick[(m, c, cost)][k])

    def u(m, c, a):
        return float(b[(m, c, a)]["flop_utilization"])

    for m in MODELS:  # the simulation is experiment.ini's autotuned run, as in the figure's CSV
        for c in CHIPS:
            assert abs(f(m, c, "simulated_utilization") - u(m, c, "meshslice")) < 1e-4, \
                f"{cm.CSV} and fig09_weak_scaling.csv disagree on {m} {c}"

    def lost(m, k, cost=hy):
        return 1 - f(m, hi, k, cost) / f(m, lo, k, cost)
    plotenv.readme_block(readme, "fig9-cost-lost", _fill(
        f"The cost models give {plotenv.pct(lost(g, 'estimate_utilization'))} (meshsim's hybrid "
        f"mean model), {plotenv.pct(lost(g, 'estimate_utilization', au))} (the authors' "
        "simulation-branch model, `--cost-model authors-simulation`, on its own meshes and S) and "
        f"{plotenv.pct(lost(g, 'strict_utilization'))} (the max model) lost for GPT-3 (the table "
        "under \"Efficiency lost\" below; fig09_cost_models.csv)."))

    def two(v, fmt=plotenv.pct, sep=" and "):
        return sep.join(fmt(x) for x in v)
    out = []

    # The mean rule at 256 chips.
    below = [100 * (PAPER_MESHSLICE_256[m] - u(m, hi, "meshslice")) for m in MODELS]
    off = [abs(f(m, hi, "simulated_ms") / f(m, hi, "strict_ms") - 1) for m in MODELS]
    out.append(_fill(
        f"- **MeshSlice is {two(below, plotenv.num, ' / ')} points "
        f"{'below' if min(below) > 0 else 'off'} the paper at {hi} chips.** The chip model lost "
        "up to 25% of the FLOP rate on MeshSlice's sliced partial GeMMs before issue 12 (odd tile "
        "counts leaving a core idle, an exposed output write-back per tile, skinny tiles streamed "
        "the slow way); with those modelled as a TPU kernel runs them, each steady-state step "
        "now takes what the cost model says. What remains is one rule: the `simulation-fitted` "
        "cost model — meshsim's hybrid, whose estimates, "
        f"{two([f(m, hi, 'estimate_utilization') for m in MODELS])}, land near the paper's "
        f"{two([PAPER_MESHSLICE_256[m] for m in MODELS])} — charges two concurrent collectives "
        "on the two mesh axes their *mean*; meshsim runs them on different links and a step "
        "lasts as long as the *longer*. (The authors' own simulation-branch model, "
        "`--cost-model authors-simulation`, gives "
        f"{two([f(m, hi, 'estimate_utilization', au) for m in MODELS])}: `docs/calibration.md`.) "
        "meshsim's simulated blocks equal the same formulas with the max within "
        f"{plotenv.pct(max(off))} (GPT-3 {f(g, hi, 'simulated_ms'):.2f} ms vs "
        f"{f(g, hi, 'strict_ms'):.2f} ms, Megatron {f(n, hi, 'simulated_ms'):.2f} vs "
        f"{f(n, hi, 'strict_ms'):.2f} ms). We found no mechanism in the paper's description of "
        "its simulator (one NIC controller per link, links in parallel) that yields the mean, so "
        "the gap is left, not fitted.", "  "))

    # Over Wang.
    def t(m, a):
        return float(b[(m, hi, a)]["makespan_s"])
    sw = {m: t(m, "wang") / t(m, "meshslice") - 1 for m in MODELS}
    ok = {m: abs(sw[m] / PAPER_VS_WANG_256[m] - 1) <= REL_TOL for m in MODELS}
    bound = [r for r in plotenv.read_csv(plotenv.require(__file__, "wang_bound.csv"))
             if r["model"] == g and r["sendrecv"] == "reference"]
    peak = max(float(r["tflops"]) for r in bound)
    best_bound = max(float(r["flop_utilization_bound"]) for r in bound
                     if float(r["tflops"]) == peak)
    implied = PAPER_MESHSLICE_256[g] / (1 + PAPER_VS_WANG_256[g])
    out.append(_fill(
        f"- **Speed-up over Wang**: Megatron {plotenv.pct(sw[n])} is "
        f"{'within' if ok[n] else 'outside'} the band; GPT-3 {plotenv.pct(sw[g])} vs "
        f"{plotenv.pct(PAPER_VS_WANG_256[g])} is {'within it' if ok[g] else 'not'}. meshsim's Wang "
        f"({plotenv.pct(u(g, hi, 'wang'))}) leaves one collective per GeMM exposed, as §4.2 "
        f"describes it; the paper's {plotenv.pct(PAPER_VS_WANG_256[g])} implies a Wang of ≈ "
        f"{plotenv.pct(implied, 0)} at {hi} chips, which "
        + (f"no Wang that does so reaches with the reference constants (≤ "
           f"{plotenv.pct(best_bound)} even at the chip's peak rate)" if best_bound < implied else
           f"a Wang that does so can reach with the reference constants (≤ "
           f"{plotenv.pct(best_bound)} at the chip's peak rate)")
        + ". Traced and bounded in \"Wang against §4.2\" below.", "  "))

    # Efficiency lost, with the table.
    cells = []
    for c in CHIPS:
        row = [str(c)]
        for m in MODELS:
            p = pick[(m, c, hy)]
            row += [f"{p['mesh']}, {p['slices']}", plotenv.pct(f(m, c, "estimate_utilization")),
                    plotenv.pct(f(m, c, "strict_utilization")),
                    plotenv.pct(f(m, c, "simulated_utilization"))]
        cells.append(row)
    row = [f"lost {lo} → {hi}"]
    for m in MODELS:
        row += ["", f"**{plotenv.pct(lost(m, 'estimate_utilization'))}**",
                plotenv.pct(lost(m, "strict_utilization")),
                plotenv.pct(lost(m, "simulated_utilization"))]
    cells.append(row)
    table = plotenv.markdown_table(
        ["chips", "GPT-3 mesh, S", "mean model", "max model", "simulated",
         "Megatron mesh, S", "mean model", "max model", "simulated"], cells, align="rlrrrlrrr")
    sim_lost = {m: lost(m, "simulated_utilization") for m in MODELS}
    out.append(_fill(
        f"- **Efficiency lost {lo} → {hi} chips** (GPT-3 {plotenv.pct(sim_lost[g])} vs the paper's "
        f"{plotenv.pct(PAPER_LOSS_16_256[g])}; Megatron {plotenv.pct(sim_lost[n])} vs "
        f"{plotenv.pct(PAPER_LOSS_16_256[n])}) is the mean rule again, at every chip count. "
        "`meshsim tune` estimates each autotuned point both ways (its `estimate_ms` and "
        "`strict_ms`: the same mesh and S, concurrent collectives charged their mean or their "
        "max), here as FLOP utilizations beside the simulation (fig09_cost_models.csv, from "
        "run.sh's `meshsim tune` runs below; their authors-simulation half gives the sentence "
        "above the measured tables):", "  "))
    out.append("\n  ```sh\n" + "\n".join("  " + x for x in cm.shell_loop().split("\n"))
               + "\n  ```\n")
    out.append("\n".join("  " + x for x in table.rstrip("\n").split("\n")) + "\n")
    trend = (lost(g, "estimate_utilization") > lost(n, "estimate_utilization")) == \
        (PAPER_LOSS_16_256[g] > PAPER_LOSS_16_256[n])
    max_like_sim = (lost(g, "strict_utilization") > lost(n, "strict_utilization")) == \
        (sim_lost[g] > sim_lost[n])
    rule16 = 100 * (f(g, lo, "estimate_utilization") - f(g, lo, "strict_utilization"))
    under = [100 * (f(n, c, "strict_utilization") - f(n, c, "simulated_utilization"))
             for c in CHIPS]
    tr = 32
    out.append(_fill(
        f"  The mean model {'reproduces' if trend else 'does not reproduce'} the paper's trend "
        f"({two([PAPER_LOSS_16_256[m] for m in MODELS])} lost: GPT-3 loses "
        f"{'more' if PAPER_LOSS_16_256[g] > PAPER_LOSS_16_256[n] else 'less'}); the max model, "
        "which is what a machine calibrated to the uncontended constants can at best do, "
        f"{'reproduces' if max_like_sim else 'does not reproduce'} meshsim's. At {lo} chips the "
        f"rule is worth {plotenv.num(rule16, 0)} points for GPT-3: batch {lo // 2} makes the "
        "weight gathers (AGw) longer than both the input gathers and the step's GeMM, so the mean "
        "hides a communication-bound step. (Megatron's simulation is "
        + ", ".join(f"{plotenv.num(x)}" for x in under[:-1]) + f" and {plotenv.num(under[-1])} "
        f"points under its max model at {', '.join(map(str, CHIPS[:-1]))} and {hi} chips. "
        f"Traced in session 7 at {tr} chips ({pick[(n, tr, hy)]['mesh']}, S = "
        f"{pick[(n, tr, hy)]['slices']}: simulated {f(n, tr, 'simulated_ms'):.2f} ms against the "
        f"max model's {f(n, tr, 'strict_ms'):.2f} ms, per GeMM from `meshsim run --out` and the "
        "reference formulas; that trace is not regenerated here, its per-GeMM times are in this "
        "README's git history): it found the two FFN backward-weight GeMMs (RS) and, after them, "
        "the three OS GeMMs with K/S = 512 slower than the max model. At "
        "S = 40 their partial GeMM is 512×10240×8192, whose whole-tiles-per-core split (2×5 "
        "tiles of 256×2048) reads the 168 MB stationary shard B_ij twice, so it runs "
        "HBM-limited, alone and beside the ReduceScatter's reductions, where the cost model "
        "charges compute only (345 µs at 249 TFLOPS). In the OS GeMMs with K/S = 512 (e.g. "
        "qkv.fwd, 8192×7680×512) each tile has one k-step, so the first prefetch and the last "
        "write-back of each core are exposed. The same 512×10240×8192 "
        "GeMM recurs at 64 and 128 chips (K/R = 8192, N/C = 10240, S = 40); at 256 chips S = 20 "
        "makes it 1024×10240×8192, compute-bound, and the simulation is within "
        f"{plotenv.num(abs(under[-1]))} points of the max model. `meshsim tune --chips {tr} "
        "--model megatron-nlg --validate` shows which S of ffn_up and ffn_down simulates best. We "
        "tried a planner that scores tile shapes by compute, HBM time and exposed fill/drain "
        "instead (session 7) and dropped it: it made the 256-chip blocks slower and, when tiles "
        "may exceed the square side, lifted 8192³ above the calibrated 249 TFLOPS (that reverted "
        "experiment's numbers are in this README's git history, not reproducible from this "
        "tree).)", "  "))

    # The near-ties: the picks the mean model alone would make.
    ties = []
    for m in MODELS:
        for c in CHIPS:
            ms = [r for (mm, cc, co, _), r in allm.items() if (mm, cc, co) == (m, c, hy)]
            first = min(ms, key=lambda r: float(r["estimate_ms"]))
            if first["picked"] != "1":
                ties.append((m, c, first, pick[(m, c, hy)]))
    moved = " and ".join(
        f"{MODELS[m].split('-')[0] if m == n else MODELS[m]}'s {a['mesh']} "
        f"{'first ' if i == 0 else ''}at {c} chips ({float(a['estimate_ms']):.2f} ms against "
        f"{p['mesh']}'s {float(p['estimate_ms']):.2f} ms, "
        f"{plotenv.pct(float(p['estimate_ms']) / float(a['estimate_ms']) - 1)} apart)"
        for i, (m, c, a, p) in enumerate(ties))
    sims = " and ".join(
        (f"{plotenv.pct(float(a['simulated_utilization']))}" if a["simulated_utilization"] else "—")
        + (f" (below Wang's {plotenv.pct(u(m, c, 'wang'))})"
           if a["simulated_utilization"] and float(a["simulated_utilization"]) < u(m, c, "wang")
           else "") for m, c, a, _ in ties)
    now = " and ".join(f"{p['mesh']} ({plotenv.pct(f(m, c, 'simulated_utilization'))})"
                       for m, c, _, p in ties)
    behind = []
    for m in MODELS:
        ms = [float(r["estimate_ms"]) for (mm, cc, co, _), r in allm.items()
              if (mm, cc, co) == (m, hi, hy) and r["picked"] != "1"]
        behind.append(min(ms) / f(m, hi, "estimate_ms") - 1)
    out.append(_fill(
        "- **The autotuner's near-ties (session 4).** With the hybrid mean-of-concurrent model "
        f"alone the tuner would rank {moved}; on "
        f"{'both' if len(ties) == 2 else 'these'}, concurrent collectives are unequal and the "
        f"mean hides a communication-bound step, and they simulate {sims} in "
        "meshslice_search.ini's runs with the tuner's S for that mesh. The tuner still optimises the hybrid model, but meshes "
        "within 1% of the best are ranked by the max of concurrent collectives for the same S "
        "(`algorithms/autotune/autotuner.h`; `docs/calibration.md` explains why the mean cannot "
        f"hold on a machine calibrated to the uncontended constants): {now}. No other point "
        f"moves; at {hi} chips the next mesh is "
        f"{plotenv.num(100 * min(behind), 0)}–{plotenv.pct(max(behind), 0)} behind.", "  "))

    # Collective.
    sc = {m: t(m, "collective") / t(m, "meshslice") - 1 for m in MODELS}
    fig11 = plotenv.load_module(plotenv.here(__file__, "..", "fig11_gemm_shapes", "table.py"),
                                "fig11_table").PAPER_AVG["collective"]
    line = all(abs(sc[m] / fig11 - 1) <= REL_TOL for m in MODELS)
    out.append(_fill(
        "- **Collective** (Figure 2b inside a GeMM) now hides the one collective the authors' "
        "cost model hides, by gathering it while the previous GeMM computes, so MeshSlice's lead "
        f"over it at {hi} chips is {two([sc[m] for m in MODELS], lambda x: plotenv.pct(x, 0), ' / ')}"
        f" — {'in line with' if line else 'unlike'} the paper's average "
        f"{plotenv.pct(fig11, 1, True)} over Collective in Figure 11 (within ±"
        f"{100 * REL_TOL:g}%). At Megatron's {lo}-chip point phase 1 keeps the weights stationary "
        f"(batch {lo // 2}: W is the largest matrix); nothing moves that could be prefetched and "
        f"Collective stays at {plotenv.pct(u(n, lo, 'collective'))}.", "  "))
    tp, co = u(n, lo, "tp1d"), u(n, lo, "collective")
    out.append(_fill(
        f"- At {lo} chips 1D TP (Megatron {plotenv.pct(tp)}) "
        f"{'beats' if tp > co else 'does not beat'} Collective ({plotenv.pct(co)})"
        + (", which the paper does not contradict (it says the 1D/SUMMA/Cannon baselines are "
           "inefficient in *large* clusters)" if tp > co else "")
        + ". Cannon at 32 and 128 chips is N/A (no square mesh), as in the paper.", "  "))
    plotenv.readme_block(readme, "fig9-gaps", "\n".join(out))


# ---- "Wang against §4.2" ----------------------------------------------------------------------

KIND = {"ag": "AG", "rds": "RdS", "sendrecv": "SR"}
KIND_LONG = {"ag": ("AllGather", "AllGathers"), "rds": ("ReduceScatter", "ReduceScatters")}
SHOWN_MS = 0.005  # parts of the exposed time under this are left out of the "exposed while" cells


def _f(x, digits=2):
    return plotenv.num(float(x), digits)


def _load_wang():
    trace = plotenv.read_csv(plotenv.require(__file__, "wang_trace.csv"))
    bound = plotenv.read_csv(plotenv.require(__file__, "wang_bound.csv"))
    gemms = plotenv.read_csv(plotenv.require(__file__, "wang_bound_gemms.csv"))
    runs = {}
    for r in trace:
        name = r["algorithm"]
        if name == "wang" and r["slices"] != "8":
            name = f"wang_s{r['slices']}"
        runs.setdefault((r["model"], name), []).append(r)
    return runs, bound, gemms


def _split(cell):
    """'ag_b+sendrecv_a 2.1145; idle 0.3471' → [(('ag_b', 'sendrecv_a'), 2.1145), (('idle',), …)]"""
    out = []
    for part in filter(None, cell.split("; ")):
        ops, ms = part.rsplit(" ", 1)
        out.append((tuple(ops.split("+")), float(ms)))
    return out


def _role(gemm, operand):
    """W (the weight), dW (its gradient: the output of a bwd-weight GeMM) or X (activations and
    their gradients)."""
    weight = "c" if gemm.endswith("bwd-weight") else "b"
    if operand != weight:
        return "X"
    return "dW" if operand == "c" else "W"


def _op(op, row, run):
    """'ag_b' of a GeMM row → 'AG W/32' (kind, operand, ring length on the row's mesh); an op of
    another GeMM of the run ('qkv.bwd-data.ag_b') is marked 'next' or 'prev'."""
    import wang_trace
    if op in ("idle", "?"):
        return op
    own, tag = row, ""
    if "." in op:
        label, op = op.rsplit(".", 1)
        own = run[label]
        order = list(run)
        tag = " (next)" if order.index(label) > order.index(row["gemm"]) else " (prev)"
    kind, operand = op.split("_")
    r, c = (int(x) for x in own["mesh"].split("x"))
    return (f"{KIND[kind]} {_role(own['gemm'], operand)}/"
            f"{wang_trace.operand_ring(own['dataflow'], operand, r, c)}{tag}")


def _while(row, rows):
    run = {r["gemm"]: r for r in rows}
    parts = [(" + ".join(_op(o, row, run) for o in ops), ms)
             for ops, ms in _split(row["exposed_while"]) if ms >= SHOWN_MS]
    return ", ".join(f"{d} {_f(ms)}" for d, ms in parts)


def _totals(rows):
    return (sum(float(r["compute_ms"]) for r in rows), sum(float(r["exposed_ms"]) for r in rows),
            float(rows[0]["makespan_ms"]), float(rows[0]["flop_utilization"]))


def _categories(rows):
    """Wang's exposed time: while a collective that is not a SendRecv runs (its blocking
    AllGather / ReduceScatter, with or without SendRecvs beside it), while only SendRecvs run,
    and idle."""
    cat = {"blocking": 0.0, "rings": 0.0, "idle": 0.0}
    for r in rows:
        for ops, ms in _split(r["exposed_while"]):
            if ops == ("idle",):
                cat["idle"] += ms
            elif all(o.rsplit(".", 1)[-1].startswith("sendrecv_") for o in ops):
                cat["rings"] += ms
            else:
                cat["blocking"] += ms
    return cat


def _blocking_ops(rows):
    """Per GeMM of a Wang run, its non-decomposed collective: the one of the dataflow's two that
    is not `decomposed`."""
    out = {}
    for r in rows:
        ops = {"os": "ab", "ls": "bc", "rs": "ac"}[r["dataflow"]]
        blk = [o for o in ops if o != r["decomposed"]][0]
        out[r["gemm"]] = ("ag" if blk in "ab" else "rds") + "_" + blk
    return out


def wang_section(readme, fig9):
    runs, bound, bgemms = _load_wang()
    M = MODELS
    ref = {(r["model"], r["mesh"], r["tflops"]): r for r in bound if r["sendrecv"] == "reference"}
    msr = {(r["model"], r["mesh"], r["tflops"]): r for r in bound if r["sendrecv"] == "meshsim"}
    meshes = list(dict.fromkeys(r["mesh"] for r in bound))
    any_ref, any_ms = next(iter(ref.values())), next(iter(msr.values()))
    peak, fitted = sorted({r["tflops"] for r in bound}, key=float, reverse=True)
    wmesh = runs[("gpt3", "wang")][0]["mesh"]
    wr, wc = (int(x) for x in wmesh.split("x"))

    # The audit: fig09_weak_scaling.csv at 256 chips.
    def u9(m, a):
        return float(fig9[(m, 256, a)]["flop_utilization"])
    coll, wang = u9("megatron-nlg", "collective"), u9("megatron-nlg", "wang")
    implied = {m: PAPER_MESHSLICE_256[m] / (1 + PAPER_VS_WANG_256[m]) for m in M}
    plotenv.readme_block(readme, "wang-audit", (
        f"The issue-24 audit: on Megatron-NLG at 256 chips Collective, since it prefetches its "
        f"weight gathers, comes within {plotenv.num(100 * abs(wang - coll))} points of Wang "
        f"({plotenv.pct(coll, 2)} against {plotenv.pct(wang, 2)} in the committed CSV: the "
        f"ordering Collective ≤ Wang {'holds' if coll <= wang else 'does not hold'}, by little), "
        f"and meshsim's GPT-3 Wang ({plotenv.pct(u9('gpt3', 'wang'))}) is "
        f"{plotenv.num(100 * (implied['gpt3'] - u9('gpt3', 'wang')))} points below the ≈ "
        f"{plotenv.pct(implied['gpt3'])} ({plotenv.pct(PAPER_MESHSLICE_256['gpt3'])} / "
        f"{1 + PAPER_VS_WANG_256['gpt3']:.3f}) that §5.1.1's +"
        f"{plotenv.pct(PAPER_VS_WANG_256['gpt3'])} implies. We traced where Wang's time goes "
        f"against the paper's description of it and found no lowering that contradicts it; the "
        f"paper's GPT-3 number is faster than that description allows.\n"))

    # The lowering, point by point.
    def code_choice(m):
        rows = runs[(m, "wang")]
        same = sum(r["decomposed"] == ("c" if r["dataflow"] == "ls" else "a") for r in rows)
        return same, len(rows)
    g_same, g_n = code_choice("gpt3")
    n_same, n_n = code_choice("megatron-nlg")
    s4 = {m: float(runs[(m, "wang_s4")][0]["flop_utilization"]) for m in M}
    s8 = {m: float(runs[(m, "wang")][0]["flop_utilization"]) for m in M}
    slower = all(s4[m] < s8[m] for m in M)
    plotenv.readme_table(readme, "wang-lowering", ["", "paper / authors' code", "meshsim"], [
        ["decomposed", "one direction's collective, into SendRecvs (§2.3.4); the code always "
         "decomposes the mesh-row direction: the input's AllGather (OS, RS) or the output's "
         "ReduceScatter (LS)",
         f"the direction with more ring traffic, (P − 1)·shard; at {wmesh} the same choice as the "
         f"code in {g_same} of {g_n} GeMMs of GPT-3 and {n_same} of {n_n} of Megatron-NLG (there "
         f"it picks the other, cheaper one)"],
        ["steps", "P − 1 bidirectional ppermutes of half shards, P partial GeMMs",
         "the same: P − 1 SendRecvs (`directions = 2`), P steps"],
        ["overlap", "SendRecv of step s with the GeMM of step s − 1",
         "the same; the ring also runs beside the blocking AllGather"],
        ["other direction", "\"the prologue or the epilogue is the execution of a communication "
         "operation that is not overlapped\" (§4.2): the weight's AllGather first (OS, LS) or the "
         "output's ReduceScatter last (RS)",
         "a blocking AllGather before the first GeMM or ReduceScatter after the last, not "
         "prefetched across GeMMs (`tests/algorithms/wang_test.cc`, "
         "`BlockingAllGatherWaitsForThePreviousProblem`)"],
        ["unrolling", "loop iterations = MeshSlice's tuned S (§4.2)",
         f"S ∈ {{4, 8}} dividing P, best kept: S = 8 at {wmesh} (S = 4 merges step GeMMs and is "
         f"{'slower' if slower else 'not always slower'}: GPT-3 {plotenv.pct(s4['gpt3'])} against "
         f"{plotenv.pct(s8['gpt3'])}, Megatron-NLG {plotenv.pct(s4['megatron-nlg'])} against "
         f"{plotenv.pct(s8['megatron-nlg'])})"],
        ["dataflow", "Table 1 per layer",
         "the autotuner's phase 1, " + ",".join(r["dataflow"] for r in runs[("gpt3", "wang")]
                                               if r["gemm"].endswith(".fwd"))
         + ", as for MeshSlice and Collective"],
        ["SendRecv cost", "t_launch per call (\"extra launch overhead\", §5.1.2)",
         f"{any_ms['sendrecv_step_fixed_us']} µs per step (launch and sync); halves at 2 × "
         f"{any_ms['sendrecv_GBps']} GB/s"],
    ], align="lll")

    # Where the time goes: GPT-3, GeMM by GeMM.
    w, c, s = runs[("gpt3", "wang")], runs[("gpt3", "collective")], runs[("gpt3", "meshslice")]
    rows = []
    for rw, rc, rs in zip(w, c, s):
        assert rw["gemm"] == rc["gemm"] == rs["gemm"]
        rows.append([f"{rw['gemm']} ({rw['dataflow']})",
                     f"{_f(rw['compute_ms'])} / {_f(rw['exposed_ms'])}", _while(rw, w),
                     _f(rc["exposed_ms"]), _while(rc, c), _f(rs["exposed_ms"])])
    tw, tc, ts = _totals(w), _totals(c), _totals(s)
    rows.append(["**block**", f"**{_f(tw[0])} / {_f(tw[1])}** ({_f(tw[2])} ms, "
                 f"{plotenv.pct(tw[3], 2)})", "",
                 f"**{_f(tc[1])}** (compute {_f(tc[0])}; {_f(tc[2])} ms, {plotenv.pct(tc[3], 2)})",
                 "", f"**{_f(ts[1])}** (compute {_f(ts[0])}; {_f(ts[2])} ms, "
                 f"{plotenv.pct(ts[3], 2)}; S = {s[0]['slices']})"])
    plotenv.readme_table(
        readme, "wang-breakdown",
        ["GeMM (dataflow)", "Wang: compute / exposed, ms", "exposed while", "Collective: exposed",
         "exposed while", "MeshSlice: exposed"], rows, align="lrlrlr",
        note=f"GPT-3, {wmesh}, chip 0 (wang_trace.csv). \"Exposed while\": ms of the exposed time "
             f"by the communication running then — AG AllGather, RdS ReduceScatter, SR the "
             f"SendRecv ring; W the weight, dW its gradient, X activations and their gradients; "
             f"/n the ring's length in chips; idle: none runs (parts under "
             f"{plotenv.num(SHOWN_MS, 3)} ms left out).")

    cat = _categories(w)
    blk = _blocking_ops(w)
    groups = {}
    for r in w:
        op = blk[r["gemm"]]
        kind, operand = op.split("_")
        import wang_trace
        key = (kind, _role(r["gemm"], operand),
               wang_trace.operand_ring(r["dataflow"], operand, wr, wc))
        groups.setdefault(key, []).append(r["dataflow"].upper())
    role_word = {"W": "weight", "dW": "weight-gradient", "X": "activation"}
    blk_text = ", ".join(
        f"the {role_word[role]} {KIND_LONG[kind][0]} over {ring} chips in {len(d)} GeMMs "
        f"({', '.join(dict.fromkeys(d))})" for (kind, role, ring), d in groups.items())
    attn = [r for r in w if r["gemm"].startswith("attn_out.")]
    a0 = attn[0]
    steps = int(a0["ring_chips"]) - 1
    shard = float(a0["ring_shard_bytes"])
    step_ms = shard / (2 * float(any_ms["sendrecv_GBps"]) * 1e9) * 1e3
    fixed_ms = float(any_ms["sendrecv_step_fixed_us"]) / 1e3
    acomp = [float(r["compute_ms"]) for r in attn]
    wf = {r["gemm"]: r for r in w}
    cf = {r["gemm"]: r for r in c}
    ffn = [g for g in ("ffn_up.fwd", "ffn_down.fwd")]
    ffn_text = ", ".join(f"{g} {_f(cf[g]['exposed_ms'])} ms against Wang's {_f(wf[g]['exposed_ms'])}"
                         for g in ffn)
    mw, mc, ms = (_totals(runs[("megatron-nlg", a)]) for a in ("wang", "collective", "meshslice"))
    plotenv.readme_block(readme, "wang-where", (
        f"Wang's {_f(tw[1])} ms exposed are {_f(cat['blocking'])} ms of its blocking collectives "
        f"({blk_text}), {_f(cat['rings'])} ms of SendRecv rings that outlast their GeMMs "
        f"(attention-out computes {plotenv.num(min(acomp))}–{plotenv.num(max(acomp))} ms per pass "
        f"against a {steps}-step ring of {plotenv.num(shard / 1e6)} MB shards, {steps} × "
        f"({_f(step_ms)} + {plotenv.num(fixed_ms, 3)}) ms = "
        f"{plotenv.num(steps * (step_ms + fixed_ms))} ms) and {_f(cat['idle'])} ms idle. "
        f"Collective exposes the other direction instead (the {wc}-chip activation AllGather or "
        f"the ReduceScatter; it gathers the weight while the previous GeMM runs), which costs "
        f"about as much: {ffn_text}. So at {wmesh} the two differ by "
        f"{plotenv.num(abs(tc[2] - tw[2]))} ms of {plotenv.num(tw[2], 0)}. Megatron-NLG {wmesh}: "
        f"Wang {_f(mw[0])} ms compute + {_f(mw[1])} exposed ({plotenv.pct(mw[3], 2)}), Collective "
        f"{_f(mc[0])} + {_f(mc[1])} ({plotenv.pct(mc[3], 2)}), MeshSlice {_f(ms[0])} + "
        f"{_f(ms[1])} ({plotenv.pct(ms[3], 2)}).\n"))

    # The bound.
    plotenv.readme_block(readme, "wang-bound-intro", (
        f"**Why the paper's ≈ {plotenv.pct(implied['gpt3'], 0)} cannot come from that Wang.** A "
        f"lower bound on one block under §4.2, for every GeMM and the better of its two choices of "
        f"the decomposed direction: max(blocking collective + compute, (P − 1) × SendRecv step) — "
        f"generous, since it lets the ring run entirely beside the prologue and never charges a "
        f"partial GeMM's wait. Reference constants (simulation-fitted): AllGather "
        f"{any_ref['launch_us']} µs + (n − 1)·(s/{any_ref['ag_GBps']} GB/s + "
        f"{any_ref['step_us']} µs), ReduceScatter the same at {any_ref['rds_GBps']} GB/s, SendRecv "
        f"step s/(2 × {any_ref['sendrecv_GBps']} GB/s) + {any_ref['sendrecv_step_fixed_us']} µs "
        f"(the authors' ring term; meshsim's links give s/(2 × {any_ms['sendrecv_GBps']} GB/s) + "
        f"{any_ms['sendrecv_step_fixed_us']} µs). Upper bounds on utilization ({peak} TFLOPS = "
        f"100%), with compute at the chip's peak / at the fitted {fitted} TFLOPS "
        f"(wang_bound.csv; `wang_trace.py --bound`):\n"))

    def ub(m, mesh, tf, table=ref):
        return float(table[(m, mesh, tf)]["flop_utilization_bound"])
    rows = []
    best = {m: max(meshes, key=lambda x: ub(m, x, peak)) for m in M}
    for m, name in M.items():
        cells = []
        for mesh in meshes:
            cell = f"{plotenv.num(100 * ub(m, mesh, peak))} / {plotenv.pct(ub(m, mesh, fitted))}"
            cells.append(f"**{cell}**" if mesh == best[m] else cell)
        r0 = ref[(m, meshes[0], peak)]
        rows.append([name] + cells + [
            f"{plotenv.num(100 * PAPER_MESHSLICE_256[m])} / {1 + PAPER_VS_WANG_256[m]:.3f} = "
            f"{plotenv.pct(float(r0['paper_wang_implied']))}",
            f"{plotenv.pct(float(r0['meshsim_wang']), 2)} ({r0['meshsim_wang_mesh']})"])
    plotenv.readme_table(readme, "wang-bound", ["model"] + meshes +
                         ["paper's Wang (implied)", "meshsim's Wang"], rows,
                         note="Bold: the mesh with the highest bound at the peak rate.")

    # The bound on GPT-3's best mesh, GeMM by GeMM.
    g = "gpt3"
    bm = best[g]
    det = [r for r in bgemms if r["model"] == g and r["mesh"] == bm and r["sendrecv"] == "reference"
           and r["tflops"] == fitted]
    assert det, f"wang_bound_gemms.csv has no {g} {bm} rows (it details {bgemms[0]['mesh']})"
    ringb = [r for r in det if float(r["ring_ms"]) > float(r["blocking_ms"]) + float(r["compute_ms"])]
    blkb = [r for r in det if r not in ringb]
    by = {}
    for r in blkb:
        by.setdefault((r["blocking"], r["blocking_ring"]), []).append(float(r["blocking_ms"]))

    def rng(v):
        lo, hi = min(v), max(v)
        return f"{_f(lo)}" if _f(lo) == _f(hi) else f"{_f(lo)}–{_f(hi)}"
    by_text = ", ".join(f"{KIND_LONG[k][len(v) > 1]} over {n} chips {rng(v)} ms"
                        + (" each" if len(v) > 1 else "") + f" ({len(v)})"
                        for (k, n), v in by.items())
    rc = [float(r["ring_ms"]) for r in ringb]
    rcomp = [float(r["compute_ms"]) for r in ringb]
    ring_labels = sorted({r["gemm"].split(".")[0] for r in ringb})
    rb = ref[(g, bm, fitted)]
    rp = ref[(g, bm, peak)]
    work = float(rb["work_at_peak_ms"])
    need = work / implied[g]
    second = max((x for x in meshes if x != bm), key=lambda x: ub(g, x, peak))
    wider = [x for x in meshes if int(x.split("x")[1]) > int(bm.split("x")[1])]
    beyond = all(ub(g, x, peak) < implied[g] for x in meshes)
    nm = "megatron-nlg"
    within = [x for x in meshes if ub(nm, x, fitted) >= implied[nm]]
    within_peak = [x for x in meshes if ub(nm, x, peak) >= implied[nm] and x not in within]
    nw = float(ref[(nm, bm, peak)]["meshsim_wang"])
    nwmesh = ref[(nm, bm, peak)]["meshsim_wang_mesh"]
    nb = ub(nm, nwmesh, fitted, msr)
    plotenv.readme_block(readme, "wang-bound-prose", (
        f"At GPT-3's best mesh, {bm}, compute at {fitted} TFLOPS is "
        f"{_f(sum(float(r['compute_ms']) for r in det))} ms per chip; the blocking collectives at "
        f"the cost model's rates add {_f(sum(float(r['blocking_ms']) for r in blkb))} ms "
        f"({by_text}) and the {len(ringb)} {', '.join(ring_labels)} GeMMs are bound by their rings "
        f"({rng(rc)} ms each against {rng(rcomp)} ms of compute): {_f(rb['bound_ms'])} ms, "
        f"{plotenv.pct(float(rb['flop_utilization_bound']))}. The paper's "
        f"{plotenv.pct(implied[g])} needs {plotenv.num(need)} ms; even at the chip's peak "
        f"({_f(rp['compute_ms'])} ms of compute) the bound is {plotenv.num(float(rp['bound_ms']))} "
        f"ms, {plotenv.pct(float(rp['flop_utilization_bound']))}. No other mesh helps (the next "
        f"best, {second}, is bounded at {plotenv.pct(ub(g, second, peak))}): on the wider meshes "
        f"({', '.join(wider)}) the decomposed ring is longer and its per-step launch alone, "
        f"(P − 1) × {any_ref['sendrecv_step_fixed_us']} µs, grows with it. "
        + ("So the paper's GPT-3 Wang cannot leave one collective per GeMM unoverlapped *and* pay "
           "the reference's launch per SendRecv: its simulation must overlap part of what §4.2 "
           "calls the non-overlapped prologue/epilogue, or run faster constants than the "
           "published fitted set. " if beyond else
           "So the paper's GPT-3 Wang is within what §4.2 allows on some mesh. ")
        + f"For Megatron-NLG the paper's {plotenv.pct(implied[nm])} is "
        + (f"within the bound at {fitted} TFLOPS on {', '.join(within)}" if within else
           f"beyond the bound at {fitted} TFLOPS on every mesh")
        + (f" (at the peak also on {', '.join(within_peak)})" if within_peak else "")
        + f", and meshsim's {plotenv.pct(nw, 2)} is {plotenv.num(100 * (nb - nw))} points under "
        f"the bound with meshsim's own SendRecv rate ({plotenv.pct(nb)} at {nwmesh}, {fitted} "
        f"TFLOPS): a decomposed ReduceScatter's ring cannot start before the blocking AllGather "
        f"and the first partial GeMM it sums (a true dependency the bound ignores), and meshsim's "
        f"SendRecv halves run at 2 × {any_ms['sendrecv_GBps']} GB/s, not 2 × "
        f"{any_ref['sendrecv_GBps']} (`docs/calibration.md`: one link cannot shift faster than an "
        f"AllGather step on it).\n"))


if __name__ == "__main__":
    main()
