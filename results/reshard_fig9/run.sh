#!/bin/sh
# Figure 9: 16 pipeline runs (2 at a time) -> fig9.csv (plot: plot.py).
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
