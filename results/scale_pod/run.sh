#!/bin/sh
# GPT-3 175B on 512, 1024 and 8192 TPU v4-like chips (8 stages x DP x 8x8 MeshSlice slices), one run at
# a time: out/pod_<chips>.json, out/pod_wall.csv (plot: plot.py).
set -e
# 8192 chips: ~85 s and ~11.1 GiB on the 2-core, 24 GiB machine (README).
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
