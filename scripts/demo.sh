#!/usr/bin/env bash
# Installs what is missing, builds, and runs meshsim's main job on its built-in default:
# MeshSlice against the baseline algorithms on one GPT-3 training block (256 TPUv4 chips; the
# 2D baselines on the mesh the autotuner picks for MeshSlice, Cannon on a square one),
# printing a comparison table and writing results/demo/out/demo.h5 (every run) and
# results/demo/out/demo.trace.json (the MeshSlice timeline; open it in ui.perfetto.dev).
# Extra arguments go to `meshsim compare` (e.g. --chips 64, --model megatron-nlg).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MESHSIM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
out="$root/results/demo/out"
mkdir -p "$out"
"$build/sim/meshsim" compare --out "$out/demo.h5" --trace "$out/demo.trace.json" "$@"
