#!/usr/bin/env bash
# Reproduces every paper figure/table in results/ from a clean clone, in one command:
#
#   results/run_all.sh                    # build, then every item: simulations, then plot.py
#   results/run_all.sh fig09_weak_scaling table2_dataflow     # only these items
#
# Builds with scripts/build.sh (installs missing Debian packages; build dir = build/, or
# $MESHSIM_BUILD_DIR, which scripts/build.sh honours too), then for each item folder:
#   - run.sh if the folder has one (items that need `meshsim tune --validate` or several tools),
#   - else `meshsim sweep` of every *.ini in it: experiment.ini → out/sweep.h5, NAME.ini →
#     out/NAME.h5 (the printed summary goes to out/<same>.txt),
#   - then `python3 plot.py` (results/common/plotenv.py re-executes it under Debian's /usr/bin/python3 when
#     the python3 on PATH lacks h5py or matplotlib): out/table.md and the committed figure
#     (NAME.png at 200 dpi, NAME.svg, NAME.csv) beside each item's README.
# Prints each item's wall time and the total, and keeps them in results/out/run_all_times.txt.
# JOBS (default 2) = parallel simulations per sweep.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${MESHSIM_BUILD_DIR:-$root/build}"
export MESHSIM="$build/sim/meshsim"
export JOBS="${JOBS:-2}"
# shellcheck source=common/item_runs.sh
source "$here/common/item_runs.sh"
ITEMS=(fig09_weak_scaling fig10_comm_breakdown fig11_gemm_shapes fig12_strong_scaling
       table2_dataflow fig13_fig14_cost_model table3_tpuv4_4x4 atp_fig10_sota atp_table3_overlap
       atp_fig11_mesh atp_fig12_topologies
       meshslice_end_to_end reshard_fig5 reshard_fig6 reshard_fig7 reshard_fig8 reshard_fig9
       scale_pod)
[ $# -gt 0 ] && ITEMS=("$@")

mkdir -p "$here/out"
times="$here/out/run_all_times.txt"
: > "$times"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
report() { printf '%-26s %8s s\n' "$1" "$2" | tee -a "$times"; }

start_all=$(now)
t=$(now)
echo "== build ($build)"
MESHSIM_BUILD_DIR="$build" "$root/scripts/build.sh"
report build "$(elapsed "$t")"

for item in "${ITEMS[@]}"; do
  dir="$here/$item"
  [ -d "$dir" ] || { echo "run_all: no item '$item' in $here" >&2; exit 2; }
  echo "== $item"
  t=$(now)
  mkdir -p "$dir/out"
  if [ -x "$dir/run.sh" ]; then
    "$dir/run.sh"
  else
    run_sweeps "$dir"
  fi
  (cd "$dir" && python3 plot.py)
  report "$item" "$(elapsed "$t")"
done
report total "$(elapsed "$start_all")"
