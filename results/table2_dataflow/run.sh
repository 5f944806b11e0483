#!/usr/bin/env bash
# Table 2 and its cost-model table:
#   out/sweep.h5, out/sensitivity.h5        `meshsim sweep` of experiment.ini and sensitivity.ini
#                                           (what run_all.sh does for an item of .ini files;
#                                           summaries in out/<name>.txt)
#   out/tune_<model>_<dataflow>_<cost>.json `meshsim tune --format json` of Table 2's four cells
#                                           under the simulation-fitted and authors-simulation
#                                           cost models (cost_models.py's RUNS; well under 1 s each)
# then plot.py writes table2_dataflow.{png,svg,csv}, table2_sensitivity.{png,svg,csv} and, from
# the JSON files and out/sweep.h5, table2_cost_models.csv (cost_models.py), and table.py the
# README's tables.
# Usage: results/table2_dataflow/run.sh   (MESHSIM = the binary, default build/sim/meshsim;
# JOBS = parallel simulations per sweep, default 2)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
meshsim="${MESHSIM:-$here/../../build/sim/meshsim}"
mkdir -p "$here/out"
for ini in "$here"/*.ini; do
  name="$(basename "$ini" .ini)"
  [ "$name" = experiment ] && name=sweep
  if ! "$meshsim" sweep "$ini" --out "$here/out/$name.h5" --jobs "${JOBS:-2}" \
      > "$here/out/$name.txt" 2> "$here/out/$name.log"; then
    cat "$here/out/$name.log" >&2
    exit 1
  fi
  tail -n 1 "$here/out/$name.txt"
done
# The tune runs: "stem|options" lines, from cost_models.py's RUNS (one list).
python3 "$here/cost_models.py" --list-runs | while IFS='|' read -r stem opts; do
  # shellcheck disable=SC2086  # opts is a list of options
  if ! "$meshsim" tune $opts > "$here/out/$stem.json" 2> "$here/out/$stem.log" < /dev/null; then
    cat "$here/out/$stem.log" >&2
    exit 1
  fi
done
echo "tune runs: $(ls "$here"/out/tune_*.json | wc -l) JSON files in out/"
