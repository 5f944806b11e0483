#!/usr/bin/env bash
# Checks what ./scripts/demo.sh left behind, as CI does after running it: its printed output (the
# comparison table and the lines naming the files), the HDF5 archive (readable, one run per
# algorithm compared) and the trace (valid JSON with events). Exit 0 when all hold, 1 otherwise.
# Usage: scripts/check-demo.sh DEMO_OUTPUT.log
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MESHSIM_BUILD_DIR:-$root/build}"
log="$1"
out="$root/results/demo/out"
fail() { echo "check-demo: $*" >&2; exit 1; }

# The algorithms compared by default: every one must have a row in the table and a run in the file.
algorithms=(meshslice wang collective summa cannon tp1d fsdp)
for a in "${algorithms[@]}"; do
  grep -Eq "^ *$a " "$log" || fail "the comparison table has no row for $a"
done
grep -q "wrote $out/demo.h5" "$log" || fail "the demo did not say it wrote $out/demo.h5"
grep -q "wrote $out/demo.trace.json" "$log" || fail "the demo did not say it wrote the trace"

[ -s "$out/demo.h5" ] || fail "$out/demo.h5 is missing or empty"
report="$("$build/sim/meshsim" report "$out/demo.h5" --format csv)" ||
  fail "meshsim report cannot read $out/demo.h5"
for a in "${algorithms[@]}"; do
  grep -q "^$a," <<<"$report" || fail "$out/demo.h5 has no run $a"
done

[ -s "$out/demo.trace.json" ] || fail "$out/demo.trace.json is missing or empty"
python3 - "$out/demo.trace.json" <<'PY' || fail "$out/demo.trace.json is not a readable trace"
import json, sys
with open(sys.argv[1]) as f:
    trace = json.load(f)
events = trace["traceEvents"]
assert len(events) > 1000, f"only {len(events)} events"
assert any(e.get("ph") == "X" for e in events), "no complete slices"
PY
echo "check-demo: table, $out/demo.h5 (${#algorithms[@]} runs) and $out/demo.trace.json are good"
