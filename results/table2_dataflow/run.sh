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
# shellcheck source=../common/item_runs.sh
source "$here/../common/item_runs.sh"
run_sweeps "$here"
run_listed "$here" cost_models.py
