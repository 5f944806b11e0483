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
# shellcheck source=../common/item_runs.sh
source "$here/../common/item_runs.sh"
run_sweeps "$here"
run_listed "$here" ic4_one_level.py
