#!/bin/sh
# Figure 5: run the 32 resharding tasks (≈ 1 s), then plot.
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
