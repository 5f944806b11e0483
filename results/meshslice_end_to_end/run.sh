#!/usr/bin/env bash
# Runs the experiment (≈ 2 min on 2 cores) and writes end_to_end.csv and the table of README.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
meshsim="${MESHSIM:-$root/build/sim/meshsim}"
mkdir -p "$here/out"
"$meshsim" sweep "$here/experiment.ini" --jobs "${MESHSIM_JOBS:-2}" --format csv \
  --out "$here/out/sweep.h5" >"$here/out/sweep.csv"
python3 "$here/summarize.py" "$here/out/sweep.csv" "$here/end_to_end.csv"
