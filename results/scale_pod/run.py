#!/usr/bin/python3
"""A pod-scale run a user would make (issue 22): GPT-3 175B, one training step on TPU v4-like chips
as 8 pipeline stages x D data-parallel replicas x an 8x8 MeshSlice mesh per stage replica, each
stage replica on its own 8x8 torus slice (torus3d (8·D)x8x8, as TPU v4 wires its slices), for
D = 1, 2 and 16 (512, 1024 and 8192 chips). Runs one at a time (the wall times are measurements) and
writes out/pod_<chips>.json (the run's JSON) and out/pod_wall.csv (chips, wall seconds, peak
RSS in MB: this machine's, not a result). plot.py turns the JSON into pod.csv and the figure."""
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from meshsim_reshard import binary, write_csv  # noqa: E402

STAGES, MESH, MICROBATCHES, SEQS = 8, 8, 8, 8  # SEQS: sequences per replica per microbatch.
REPLICAS = [1, 2, 16]  # 512, 1024 and 8192 chips.
# The 8192-chip graph has 99.4 M ops, lowered whole and folded: ~120 B per op at the peak, within
# the default --max-ops of a run that may fold on a 24 GiB machine (half of it at ~125 B per op).


def command(dp):
    chips = STAGES * dp * MESH * MESH
    return ["run", "--workload", "pipeline", "--model", "gpt3", "--chips", str(chips),
            "--stages", str(STAGES), "--dp", str(dp), "--mesh", f"{MESH}x{MESH}",
            "--algorithm", "meshslice", "--microbatches", str(MICROBATCHES),
            "--batch", str(MICROBATCHES * SEQS * dp), "--topology", "torus3d",
            "--dims", f"{STAGES * dp}x{MESH}x{MESH}", "--format", "json"]


def main():
    os.makedirs(os.path.join(HERE, "out"), exist_ok=True)
    wall = []
    for dp in REPLICAS:
        args = command(dp)
        chips = STAGES * dp * MESH * MESH
        t = time.time()
        # stderr passes through: the run's progress line, once a minute.
        p = subprocess.run([binary()] + args, stdout=subprocess.PIPE, text=True)
        seconds = time.time() - t
        if p.returncode != 0:
            sys.exit(f"run.py: meshsim {' '.join(args)}: exit {p.returncode}")
        r = json.loads(p.stdout)
        r["command"] = "meshsim " + " ".join(args)
        with open(os.path.join(HERE, "out", f"pod_{chips}.json"), "w") as f:
            json.dump(r, f)
        # ru_maxrss of the children so far: the largest of the runs, in KB on Linux.
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        wall.append([chips, f"{seconds:.1f}", f"{rss_mb:.0f}"])
        print(f"{chips} chips: step {r['step_time_s']:.3f} s, {r['events'] / 1e6:.0f} M events, "
              f"{seconds:.1f} s wall, peak RSS so far {rss_mb:.0f} MB", flush=True)
    write_csv(os.path.join(HERE, "out", "pod_wall.csv"), ["chips", "wall_s", "peak_rss_mb"], wall)


if __name__ == "__main__":
    main()
