#!/bin/sh
# Figure 5: run the 24 resharding tasks (≈ 1 s), then plot.
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
