#!/bin/sh
# GPT-3 175B on 512 and 1024 TPU v4-like chips (8 stages x DP x 8x8 MeshSlice slices), one run at
# a time: out/pod_<chips>.json, out/pod_wall.csv (plot: plot.py).
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
