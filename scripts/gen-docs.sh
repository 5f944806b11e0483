#!/usr/bin/env bash
# Regenerates the committed docs/cli.md from the built binary (`meshsim help --markdown`); the
# test CliReferenceTest.CommittedDocsAreCurrent fails until it is rerun after an option changes.
# Usage: scripts/gen-docs.sh   (builds meshsim in build/ or $MESHSIM_BUILD_DIR first)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MESHSIM_BUILD_DIR:-$root/build}"
[ -f "$build/CMakeCache.txt" ] || "$root/scripts/build.sh"
cmake --build "$build" --target meshsim -j "${MESHSIM_JOBS:-2}" >/dev/null
"$build/sim/meshsim" help --markdown > "$root/docs/cli.md.tmp"
mv "$root/docs/cli.md.tmp" "$root/docs/cli.md"
echo "wrote docs/cli.md"
