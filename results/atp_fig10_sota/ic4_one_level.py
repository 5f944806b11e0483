#!/usr/bin/env python3
"""IC4 (`a100-ib`, 16 GPUs) under both readings of ATP's communication matrix: the data of the
"IC4 under the paper's one-level reading" table of README.md.

    python3 ic4_one_level.py --list-runs   # "stem|options" per run: what run.sh passes to
                                           #   `meshsim tune` (its JSON goes to out/<stem>.json)
    python3 ic4_one_level.py --csv         # out/ic4_*.json → ic4_one_level.csv (committed;
                                           #   table.py writes the README's table from it)

RUNS: `meshsim tune --algorithm atp --validate --format json` of atp-m1..atp-m4, batch 4, seq
2048, `--stack pytorch-nccl`, Megatron's dropout 0.1 (as ib16.ini), once with `--atp-matrix hierarchical` (the derived
matrix, the default) and once with `--atp-matrix one-level` (§5.3's "only one layer"). Each run
estimates T_comm (Eq. 2–4) on every mesh and simulates one layer (forward + backward) on each;
the CSV has one row per run and mesh. TFLOPS per GPU is ATP's metric, as `--workload layer`
computes it: 72·b·s·h²·(1 + s/(6h)) / (GPUs × simulated time), 1e12 flop/s.
plot.py calls `write_csv` when run.sh has made the JSON files; otherwise the committed CSV stays.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM, CHIPS, STACK, BATCH, SEQ, DROPOUT = "a100-ib", 16, "pytorch-nccl", 4, 2048, 0.1
# ATP Table 2's hidden sizes (workloads/transformer.cc), for the TFLOPS metric.
HIDDEN = {"atp-m1": 2048, "atp-m2": 4096, "atp-m3": 8192, "atp-m4": 12288}
READINGS = ["hierarchical", "one-level"]
# `meshsim tune` options, {model} and {reading} filled in per run.
OPTIONS = (f"--algorithm atp --system {SYSTEM} --chips {CHIPS} --model {{model}} --stack {STACK} "
           f"--batch {BATCH} --seq {SEQ} --dropout {DROPOUT} --atp-matrix {{reading}} --validate "
           f"--format json")
RUNS = [(f"ic4_{m}_{r}", m, r, OPTIONS.format(model=m, reading=r))
        for m in HIDDEN for r in READINGS]


def shell_loop():
    """RUNS as the shell loop README.md shows (each JSON to stdout)."""
    opts = OPTIONS.format(model="$m", reading="$r").split(" --atp-matrix")
    return (f"for m in {' '.join(HIDDEN)}; do for r in {' '.join(READINGS)}; do\n"
            f"  meshsim tune {opts[0]} \\\n      --atp-matrix{opts[1]}\n"
            "done; done")
CSV = "ic4_one_level.csv"
COLUMNS = ["model", "reading", "gpus", "batch", "seq", "mesh", "picked", "b1_prime_gbs",
           "b2_prime_gbs", "t_comm_ms", "simulated_ms", "tflops_per_gpu"]


def layer_flops(b, s, h):
    return 72 * b * s * h * h * (1 + s / (6 * h))


def archives():
    return [os.path.join(HERE, "out", f"{stem}.json") for stem, _, _, _ in RUNS]


def write_csv():
    rows = []
    for (stem, model, reading, _), path in zip(RUNS, archives()):
        with open(path) as f:
            d = json.load(f)
        if d["matrix"]["reading"] != reading:
            sys.exit(f"ic4_one_level.py: {path} is the {d['matrix']['reading']} reading, "
                     f"not {reading}")
        flops = layer_flops(BATCH, SEQ, HIDDEN[model])
        for m in d["meshes"]:
            sim = m["simulated_s"]
            rows.append([model, reading, CHIPS, BATCH, SEQ, m["mesh"], int(m["chosen"]),
                         f"{m['b1_prime'] / 1e9:.2f}", f"{m['b2_prime'] / 1e9:.2f}",
                         f"{1e3 * m['t_comm_s']:.4f}", f"{1e3 * sim:.4f}",
                         f"{flops / (CHIPS * sim) / 1e12:.3f}"])
        if sum(r[6] for r in rows if r[0] == model and r[1] == reading) != 1 or \
                d["mesh"] not in [m["mesh"] for m in d["meshes"] if m["chosen"]]:
            sys.exit(f"ic4_one_level.py: {path}: not one chosen mesh equal to 'mesh'")
    plotenv.write_rows(os.path.join(HERE, CSV), COLUMNS, rows)


def main():
    plotenv.runs_main(__file__, [(r[0], r[-1]) for r in RUNS], archives, write_csv, __doc__)


if __name__ == "__main__":
    main()
