#!/usr/bin/env python3
"""Prints docs/measurements/layer_probe.md's tables: each op of the layer as layer_probe.py timed
it on the card beside what meshsim simulates for the same layer on one GPU.

    python3 scripts/device/layer_probe_tables.py docs/measurements/layer_probe_h200.json \
        [build/sim/meshsim]

meshsim runs the `h100` chip alone (node.gpus=1) with the card's HBM (H200: 4.8e12 B/s; the
H100 SXM's SMs and clock are the H200's), `--stack pytorch-nccl`, ATP on a 1x1 mesh, no dropout,
and writes a Chrome trace; an op's simulated time is its kernel slice plus its launch.
"""
import json
import os
import subprocess
import sys
import tempfile

HBM = {"NVIDIA H200": 4.8e12, "NVIDIA H100 80GB HBM3": 3.35e12}
# probe name -> meshsim op label (None: an op meshsim's layer does not have).
RENAME = {"scale": "attn_scale", "mask": "attn_mask", "head_split": None, "head_merge": None}


def simulate(meshsim, model, chunks, hbm):
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.json")
        out = subprocess.run(
            [meshsim, "run", "--workload", "layer", "--system", "h100", "--chips", "1",
             "--set", "node.gpus=1", "--set", "pcie.gpus_per_switch=1", "--set", "node.sockets=1",
             "--set", f"hbm.bandwidth={hbm}", "--stack", "pytorch-nccl", "--algorithm", "atp",
             "--mesh", "1x1", "--model", model, "--chunks", str(chunks), "--format", "json",
             "--trace", trace], check=True, capture_output=True, text=True).stdout
        run = json.loads(out[out.index("{"):])
        with open(trace) as fh:
            events = json.load(fh)
    events = events["traceEvents"] if isinstance(events, dict) else events
    per_op = {}
    for e in events:
        if e.get("ph") != "X" or e["name"].endswith("· host"):
            continue
        label = e["name"].split(" · ")[0].rsplit(".", 1)[0]  # "qkv.fwd.gemm · launch" -> qkv.fwd
        per_op[label] = per_op.get(label, 0.0) + e["dur"] / 1e3  # us -> ms
    return run["makespan_s"] * 1e3, per_op


def main():
    probe = json.load(open(sys.argv[1]))
    meshsim = sys.argv[2] if len(sys.argv) > 2 else "build/sim/meshsim"
    hbm = HBM[probe["device"]]
    models = sorted({k.split(".")[0] for k in probe if k.startswith("atp-")})
    for model in models:
        measured = probe[f"{model}.chunks1.ops_ms"]
        makespan, sim = simulate(meshsim, model, 1, hbm)
        print(f"\n{model}, one {probe['device']}, chunks 1 (ms):\n")
        print("| op | measured | meshsim | meshsim / measured |")
        print("|---|---:|---:|---:|")
        unmodelled = 0.0
        for name, ms in measured.items():
            if name.startswith("start."):
                continue
            base, pass_ = name.split(".", 1)
            target = RENAME.get(base, base)
            if target is None:
                unmodelled += ms
                print(f"| {name} | {ms:.3f} | — | — |")
                continue
            s = sim.get(f"{target}.{pass_}", 0.0)
            print(f"| {name} | {ms:.3f} | {s:.3f} | {s / ms:.2f} |")
        layer = probe[f"{model}.chunks1.layer_ms"]
        print(f"| **layer** | **{layer:.2f}** | **{makespan:.2f}** | **{makespan / layer:.2f}** |")
        print(f"\nOps meshsim's layer does not have: {unmodelled:.2f} ms "
              f"({100 * unmodelled / layer:.1f}% of the measured layer).")
        print(f"\n{model}, whole layer by chunk count (ms):\n")
        print("| chunks | measured | meshsim |")
        print("|---:|---:|---:|")
        for c in (1, 2, 4):
            print(f"| {c} | {probe[f'{model}.chunks{c}.layer_ms']:.2f} | "
                  f"{simulate(meshsim, model, c, hbm)[0]:.2f} |")


if __name__ == "__main__":
    main()
