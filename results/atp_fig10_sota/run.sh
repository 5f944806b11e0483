#!/usr/bin/env bash
# ATP Figure 10 and its "IC4 under the paper's one-level reading" table:
#   out/sweep.h5, out/ib16.h5, out/ic1_ring_bridge.h5   `meshsim sweep` of experiment.ini,
#                                           ib16.ini and ic1_ring_bridge.ini (what run_all.sh does
#                                           for an item of .ini files; summaries in out/<name>.txt)
#   out/ic4_<model>_<reading>.json          `meshsim tune --algorithm atp --validate --format json`
#                                           on IC4, atp-m1..atp-m4 × --atp-matrix hierarchical and
#                                           one-level (ic4_one_level.py's RUNS; well under 1 s each)
# then plot.py writes atp_fig10_sota.{png,svg,csv} and, from the JSON files, ic4_one_level.csv
# (ic4_one_level.py), and table.py the README's tables.
# Usage: results/atp_fig10_sota/run.sh   (MESHSIM = the binary, default build/sim/meshsim;
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
# The IC4 tune runs: "stem|options" lines, from ic4_one_level.py's RUNS (one list).
python3 "$here/ic4_one_level.py" --list-runs | while IFS='|' read -r stem opts; do
  # shellcheck disable=SC2086  # opts is a list of options
  if ! "$meshsim" tune $opts > "$here/out/$stem.json" 2> "$here/out/$stem.log" < /dev/null; then
    cat "$here/out/$stem.log" >&2
    exit 1
  fi
done
echo "ic4 tune runs: $(ls "$here"/out/ic4_*.json | wc -l) JSON files in out/"
