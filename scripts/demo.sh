#!/usr/bin/env bash
# Installs what is missing, builds, and runs meshsim's main job on its built-in default, writing
# an HDF5 archive and a Chrome trace into results/demo/.
#
# Until the machine model and the algorithm plugins land, the runnable default is the `chain`
# smoke workload on a 16-chip ring (see README "Status").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MESHSIM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
out="$root/results/demo/out"
mkdir -p "$out"
"$build/sim/meshsim" run --workload chain --chips 16 --steps 16 \
  --out "$out/demo.h5" --trace "$out/demo.trace.json" "$@"
