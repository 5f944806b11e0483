#!/bin/sh
# Figure 6: the nine Table 2 cases under each method, then plot.
set -e
here=$(dirname "$0")
/usr/bin/python3 "$here/run.py"
