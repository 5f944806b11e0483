#!/usr/bin/env python3
"""Table 2's four configurations under the autotuner's cost models: the data of the "cost
models" table and the prose around it in README.md.

    python3 cost_models.py --list-runs   # "stem|options" per run: what run.sh passes to
                                         #   `meshsim tune` (its JSON goes to out/<stem>.json)
    python3 cost_models.py --csv         # out/tune_*.json + out/sweep.h5 → table2_cost_models.csv
                                         #   (committed; table.py writes the README from it)

RUNS: `meshsim tune --chips 256 --model M --dataflow D --cost-model C --format json`, M = gpt3,
megatron-nlg, D = os (not optimized), auto (optimized), C = simulation-fitted (meshsim's hybrid
mean model, the tuner's default: its estimate_s; strict_estimate_s is the max model on the same
mesh and S) and authors-simulation (the authors' committed simulation branch). Well under 1 s
each. The CSV has one row per run and candidate mesh: the tuner's S, both estimates and their
FLOP utilizations (the sweep's FLOPs per block over 256 chips × the chip's peak, from
out/sweep.h5: the same workload), and, on the row whose mesh and S experiment.ini's run of that
model and dataflow has, that simulation's makespan, utilization and bytes sent per chip.
plot.py calls `write_csv` when run.sh has made the JSON files; otherwise the committed CSV stays.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CHIPS = 256
MODELS = ["gpt3", "megatron-nlg"]
DATAFLOWS = ["os", "auto"]
COST_MODELS = ["simulation-fitted", "authors-simulation"]
# `meshsim tune` options, {model}, {dataflow} and {cost} filled in per run.
OPTIONS = (f"--chips {CHIPS} --model {{model}} --dataflow {{dataflow}} --cost-model {{cost}} "
           "--format json")
RUNS = [(f"tune_{m}_{d}_{c}", m, d, c, OPTIONS.format(model=m, dataflow=d, cost=c))
        for m in MODELS for d in DATAFLOWS for c in COST_MODELS]
CSV = "table2_cost_models.csv"
COLUMNS = ["model", "dataflow", "cost_model", "mesh", "picked", "slices", "estimate_ms",
           "strict_ms", "estimate_utilization", "strict_utilization", "simulated_ms",
           "simulated_utilization", "bytes_sent_per_chip"]


def shell_loop():
    """RUNS as the shell loop README.md shows (each JSON to stdout)."""
    return (f"for m in {' '.join(MODELS)}; do for d in {' '.join(DATAFLOWS)}; do "
            f"for c in {' '.join(COST_MODELS)}; do\n"
            f"  meshsim tune {OPTIONS.format(model='$m', dataflow='$d', cost='$c')}\n"
            "done; done; done")


def archives():
    return [os.path.join(HERE, "out", f"{stem}.json") for stem, *_ in RUNS]


def simulated():
    """{(model, dataflow): summary row} of out/sweep.h5 (experiment.ini)."""
    sys.path.insert(0, os.path.join(HERE, "..", "common"))
    import meshsim_results as mr
    path = mr.require(__file__, "out/sweep.h5")
    return {(r["model"], r["dataflow"]): r
            for r in mr.read_summary(path, config_keys=["mesh", "slices"])}


def write_csv():
    sim = simulated()
    rows = []
    for (stem, model, dataflow, cost, _), path in zip(RUNS, archives()):
        with open(path) as f:
            d = json.load(f)
        s = sim[(model, dataflow)]
        if int(s["chips"]) != CHIPS:
            sys.exit(f"cost_models.py: out/sweep.h5 ran {s['chips']} chips, not {CHIPS}")
        # FLOP utilization of a block taking t seconds, as `meshsim tune` prints it.
        util = lambda t: s["flops"] / (CHIPS * s["chip_peak_flops_per_s"] * t)  # noqa: E731
        picked = 0
        for m in d["meshes"]:
            slices = ",".join(str(x) for x in m["slices"])
            chosen = int(m["mesh"] == d["mesh"])
            picked += chosen
            same = s["mesh"] == m["mesh"] and str(s["slices"]) == slices
            rows.append([model, dataflow, cost, m["mesh"], chosen, slices,
                         f"{1e3 * m['estimate_s']:.4f}", f"{1e3 * m['strict_estimate_s']:.4f}",
                         f"{util(m['estimate_s']):.5f}", f"{util(m['strict_estimate_s']):.5f}",
                         f"{1e3 * s['makespan_s']:.4f}" if same else "",
                         f"{s['flop_utilization']:.5f}" if same else "",
                         f"{s['bytes_sent_per_chip']:.0f}" if same else ""])
            if cost == "simulation-fitted" and chosen and not same:
                sys.exit(f"cost_models.py: {path} picks {m['mesh']} S={slices}, but "
                         f"experiment.ini's run ran {s['mesh']} S={s['slices']}")
        if picked != 1:
            sys.exit(f"cost_models.py: {path}: not one mesh equal to 'mesh'")
    plotenv.write_rows(os.path.join(HERE, CSV), COLUMNS, rows)


def main():
    plotenv.runs_main(__file__, [(r[0], r[-1]) for r in RUNS], archives, write_csv, __doc__)


if __name__ == "__main__":
    main()
