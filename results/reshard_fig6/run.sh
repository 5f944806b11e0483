#!/bin/sh
# Figure 6: the nine Table 2 cases under each method -> fig6.csv (plot: plot.py).
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
