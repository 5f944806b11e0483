#!/usr/bin/env bash
# Figure 9 (weak scaling) and its "Wang against §4.2" section:
#   out/sweep.h5, out/meshslice_search.h5   `meshsim sweep` of experiment.ini and
#                                           meshslice_search.ini (what run_all.sh does for an
#                                           item of .ini files; summaries in out/<name>.txt)
#   out/wang_<model>_<run>.h5               `meshsim run --out` of GPT-3 and Megatron-NLG on 256
#                                           chips, 32x8: Wang S = 8 and S = 4, Collective, and
#                                           MeshSlice autotuned (wang_trace.py's RUNS; ~1 s each)
#   out/tune_<model>_<chips>_<cost>.json    `meshsim tune --format json` of every autotuned point
#                                           under the simulation-fitted and authors-simulation
#                                           cost models (cost_models.py's RUNS; well under 1 s each)
# then plot.py writes fig09_weak_scaling.{png,svg,csv} and, from the archives, wang_trace.csv,
# wang_bound.csv and wang_bound_gemms.csv (wang_trace.py) and, from the JSON files and the two
# sweeps, fig09_cost_models.csv (cost_models.py), and table.py the README's tables.
# Usage: results/fig09_weak_scaling/run.sh   (MESHSIM = the binary, default build/sim/meshsim;
# JOBS = parallel simulations per sweep, default 2)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../common/item_runs.sh
source "$here/../common/item_runs.sh"
run_sweeps "$here" experiment meshslice_search
# The runs of the Wang section: "stem|options" lines, from wang_trace.py's RUNS (one list).
python3 "$here/wang_trace.py" --list-runs | while IFS='|' read -r stem opts; do
  # shellcheck disable=SC2086  # opts is a list of options
  "$MESHSIM" run $opts --out "$here/out/$stem.h5" > "$here/out/$stem.txt" < /dev/null
done
echo "wang runs: $(ls "$here"/out/wang_*.h5 | wc -l) archives in out/"
run_listed "$here" cost_models.py
