#!/usr/bin/env bash
# Regenerates every README table and verdict under results/ from the committed CSVs (each
# results/*/table.py, then results/table.py for results/README.md's summary; no simulation,
# no plotting) and fails when that changes any README or CSV
# under results/ — i.e. when a README says something its CSV does not. On a clean checkout this
# is `git diff --exit-code results/` after regenerating. About a second in all.
#   results/check_readmes.sh            # regenerate in place; `git diff` shows what changed
#   results/check_readmes.sh --copy     # regenerate in a scratch copy; the tree is not touched
#                                       # (what the ctest `results_readmes_current` runs)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
WORK="$ROOT"
if [ "${1:-}" = "--copy" ]; then
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  (cd "$ROOT" && find results -path '*/out' -prune -o -type f \
      \( -name '*.md' -o -name '*.csv' -o -name '*.py' \) -print0 |
      xargs -0 cp --parents -t "$WORK")
fi
cd "$WORK"
snapshot() { find results -path '*/out' -prune -o -type f \( -name '*.md' -o -name '*.csv' \) \
               -print0 | sort -z | xargs -0 sha256sum; }
before="$(snapshot)"
status=0
for t in results/*/table.py results/table.py; do  # the summary last: it reads the items
  if ! "$PY" "$t" >/dev/null; then
    echo "check_readmes: $t failed" >&2
    status=1
  fi
done
after="$(snapshot)"
if [ "$before" != "$after" ]; then
  echo "check_readmes: these files differ from what the committed CSVs give (regenerate with" \
       "results/check_readmes.sh and commit them, or fix the CSV / table.py):" >&2
  changed="$(diff <(echo "$before") <(echo "$after") | sed -n 's/^> [0-9a-f]*  //p' || true)"
  for f in $changed; do
    echo "  $f" >&2
    [ "$WORK" = "$ROOT" ] || diff -u "$ROOT/$f" "$WORK/$f" >&2 || true
  done
  status=1
fi
exit $status
