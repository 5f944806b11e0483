#!/bin/sh
# Figure 5: run the 32 resharding tasks (≈ 1 s) -> fig5.csv (plot: plot.py).
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
