#!/usr/bin/env bash
# Reruns every figure and table (results/run_all.sh: build, simulations, plots) and fails when that
# changes any committed file under results/ — the check that every committed CSV, figure and
# README table is what the simulator gives today. Run it in a clean clone: it rewrites results/
# in place. Kept out of the default test run: it takes 10–20 minutes on 2 cores (the total is in
# results/out/run_all_times.txt).
#   results/check_reproducible.sh                 # every item
#   results/check_reproducible.sh fig09_weak_scaling table2_dataflow
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
if [ -n "$(git -C "$root" status --porcelain -- results)" ]; then
  echo "check_reproducible: results/ has uncommitted changes; run it in a clean clone" >&2
  exit 2
fi
"$here/run_all.sh" "$@"
if ! git -C "$root" diff --exit-code --stat -- results; then
  echo "check_reproducible: these committed files under results/ differ from a fresh run" >&2
  exit 1
fi
untracked="$(git -C "$root" ls-files --others --exclude-standard -- results)"
if [ -n "$untracked" ]; then
  echo "check_reproducible: a fresh run wrote files that are not committed:" >&2
  echo "$untracked" >&2
  exit 1
fi
echo "check_reproducible: every committed file under results/ is what a fresh run gives"
