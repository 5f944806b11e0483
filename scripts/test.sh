#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MESHSIM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
ctest --test-dir "$build" -j "${MESHSIM_JOBS:-2}" --output-on-failure --timeout 600
