#!/bin/sh
# Figure 7: 20 pipeline runs (2 at a time) -> fig7.csv (plot: plot.py).
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
