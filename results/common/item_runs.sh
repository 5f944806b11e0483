# Shell functions shared by results/run_all.sh and the items' run.sh: the simulations of an item,
# each run's summary and log in the item's out/. Source it; MESHSIM (the binary, default
# build/sim/meshsim) and JOBS (parallel simulations per sweep, default 2) are read.
#   run_sweeps DIR [NAME...]          `meshsim sweep` of DIR/NAME.ini (default: every *.ini) into
#                                     out/NAME.h5, experiment.ini into out/sweep.h5; the summary
#                                     in out/NAME.txt, stderr in out/NAME.log (printed on failure)
#   run_listed DIR SCRIPT             `meshsim tune OPTIONS > out/STEM.json` for every
#                                     "STEM|OPTIONS" line that `python3 DIR/SCRIPT --list-runs`
#                                     prints (the script keeps the one list of its runs)

_item_runs_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MESHSIM="${MESHSIM:-$_item_runs_root/build/sim/meshsim}"

run_sweeps() {
  local dir="$1" ini name
  shift
  mkdir -p "$dir/out"
  local inis=("$@")
  if [ ${#inis[@]} -eq 0 ]; then
    for ini in "$dir"/*.ini; do inis+=("$(basename "$ini" .ini)"); done
  fi
  for name in "${inis[@]}"; do
    ini="$dir/$name.ini"
    [ "$name" = experiment ] && name=sweep
    if ! "$MESHSIM" sweep "$ini" --out "$dir/out/$name.h5" --jobs "${JOBS:-2}" \
        > "$dir/out/$name.txt" 2> "$dir/out/$name.log"; then
      cat "$dir/out/$name.log" >&2
      return 1
    fi
    tail -n 1 "$dir/out/$name.txt"
  done
}

run_listed() {
  local dir="$1" script="$2" stem opts count=0
  mkdir -p "$dir/out"
  while IFS='|' read -r stem opts; do
    # shellcheck disable=SC2086  # opts is a list of options
    if ! "$MESHSIM" tune $opts > "$dir/out/$stem.json" 2> "$dir/out/$stem.log" < /dev/null; then
      cat "$dir/out/$stem.log" >&2
      return 1
    fi
    count=$((count + 1))
  done < <(python3 "$dir/$script" --list-runs)
  echo "$script: $count tune runs, JSON in out/"
}
