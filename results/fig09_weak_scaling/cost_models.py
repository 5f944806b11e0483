#!/usr/bin/env python3
"""Figure 9's autotuned MeshSlice points under the autotuner's cost models: the data of the
"Efficiency lost" table, the near-tie numbers and the cost-model prose of README.md.

    python3 cost_models.py --list-runs   # "stem|options" per run: what run.sh passes to
                                         #   `meshsim tune` (its JSON goes to out/<stem>.json)
    python3 cost_models.py --csv         # out/tune_*.json + out/sweep.h5 + out/meshslice_search.h5
                                         #   → fig09_cost_models.csv (committed; table.py writes
                                         #   the README from it)

RUNS: `meshsim tune --chips N --model M --seq 2048 --cost-model C --format json` (batch N/2 and
dataflow auto by default, as experiment.ini), N = 16 … 256, M = gpt3, megatron-nlg, C =
simulation-fitted (meshsim's hybrid mean model, the tuner's default: its estimate_s;
strict_estimate_s is the max model on the same mesh and S) and authors-simulation. Well under
1 s each. The CSV has one row per run and candidate mesh: the tuner's S, both estimates and their
FLOP utilizations (the FLOPs per block over N chips × the chip's peak, from experiment.ini's
MeshSlice run of that model and N: the same workload) and, where a sweep ran that mesh with that
S (experiment.ini's autotuned run, else meshslice_search.ini's `slices = auto` run of the mesh),
the simulated makespan and utilization.
plot.py calls `write_csv` when run.sh has made the JSON files; otherwise the committed CSV stays.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CHIPS = [16, 32, 64, 128, 256]
MODELS = ["gpt3", "megatron-nlg"]
COST_MODELS = ["simulation-fitted", "authors-simulation"]
SEQ = 2048
# `meshsim tune` options, {chips}, {model} and {cost} filled in per run.
OPTIONS = "--chips {chips} --model {model} --seq %d --cost-model {cost} --format json" % SEQ
RUNS = [(f"tune_{m}_{n}_{c}", m, n, c, OPTIONS.format(chips=n, model=m, cost=c))
        for m in MODELS for n in CHIPS for c in COST_MODELS]
CSV = "fig09_cost_models.csv"
COLUMNS = ["model", "chips", "cost_model", "mesh", "picked", "slices", "estimate_ms", "strict_ms",
           "estimate_utilization", "strict_utilization", "simulated_ms", "simulated_utilization"]


def shell_loop():
    """RUNS as the shell loop README.md shows (each JSON to stdout)."""
    return (f"for m in {' '.join(MODELS)}; do for n in {' '.join(map(str, CHIPS))}; do "
            f"for c in {' '.join(COST_MODELS)}; do\n"
            f"  meshsim tune {OPTIONS.format(chips='$n', model='$m', cost='$c')}\n"
            "done; done; done")


def archives():
    return [os.path.join(HERE, "out", f"{stem}.json") for stem, *_ in RUNS]


def simulated():
    """({(model, chips): experiment.ini's MeshSlice row}, {(model, chips, mesh, slices): row} of
    every MeshSlice run in out/sweep.h5 and out/meshslice_search.h5)."""
    sys.path.insert(0, os.path.join(HERE, "..", "common"))
    import meshsim_results as mr
    sweep, search = mr.require(__file__, "out/sweep.h5", "out/meshslice_search.h5")
    main = [r for r in mr.read_summary(sweep) if r["algorithm"] == "meshslice"]
    runs = {}
    for r in mr.read_summary(search) + main:  # experiment.ini's run last: it wins a duplicate
        runs[(r["model"], int(r["chips"]), r["mesh"], str(r["slices"]))] = r
    return {(r["model"], int(r["chips"])): r for r in main}, runs


def write_csv():
    auto, runs = simulated()
    rows = []
    for (stem, model, chips, cost, _), path in zip(RUNS, archives()):
        with open(path) as f:
            d = json.load(f)
        a = auto[(model, chips)]
        # FLOP utilization of a block taking t seconds, as `meshsim tune` prints it.
        util = lambda t: a["flops"] / (chips * a["chip_peak_flops_per_s"] * t)  # noqa: E731
        picked = 0
        for m in d["meshes"]:
            slices = ",".join(str(x) for x in m["slices"])
            chosen = int(m["mesh"] == d["mesh"])
            picked += chosen
            s = runs.get((model, chips, m["mesh"], slices))
            rows.append([model, chips, cost, m["mesh"], chosen, slices,
                         f"{1e3 * m['estimate_s']:.4f}", f"{1e3 * m['strict_estimate_s']:.4f}",
                         f"{util(m['estimate_s']):.5f}", f"{util(m['strict_estimate_s']):.5f}",
                         f"{1e3 * s['makespan_s']:.4f}" if s else "",
                         f"{s['flop_utilization']:.5f}" if s else ""])
            if cost == "simulation-fitted" and chosen and \
                    (a["mesh"], str(a["slices"])) != (m["mesh"], slices):
                sys.exit(f"cost_models.py: {path} picks {m['mesh']} S={slices}, but "
                         f"experiment.ini's autotuned run ran {a['mesh']} S={a['slices']}")
        if picked != 1:
            sys.exit(f"cost_models.py: {path}: not one mesh equal to 'mesh'")
    plotenv.write_rows(os.path.join(HERE, CSV), COLUMNS, rows)


def main():
    plotenv.runs_main(__file__, [(r[0], r[-1]) for r in RUNS], archives, write_csv, __doc__)


if __name__ == "__main__":
    main()
