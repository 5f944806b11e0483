#!/usr/bin/env bash
# Table 3: a 4x4 TPUv4 slice without AllGather/ReduceScatter overlap (see experiment.ini).
#   out/sweep.h5              the simulations of experiment.ini (tpuv4-slice and tpuv4; overlap
#                             off and on)
#   out/batch.h5              batch.ini: the same on tpuv4-slice at batch 16 and 32 (sensitivity)
#   out/collective_<model>.h5 Collective on tpuv4-slice with its timeline, for plot.py's check
#                             of each of its ops against the TPUv4-measured cost model
#   out/tune_<model>.json     the MeshSlice autotuner on 4x4 with the tpuv4-measured cost model
#                             (constants measured on a real v4-32 slice); its estimate assumes
#                             overlap: the analogue of the paper's "MeshSlice Overlap (Estim.)"
# Usage: results/table3_tpuv4_4x4/run.sh   (MESHSIM = the binary, default build/sim/meshsim)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
meshsim="${MESHSIM:-$here/../../build/sim/meshsim}"
mkdir -p "$here/out"
for m in gpt3 megatron-nlg; do
  "$meshsim" tune --model "$m" --chips 16 --mesh 4x4 --seq 2048 --cost-model tpuv4-measured \
    --format json > "$here/out/tune_$m.json"
  "$meshsim" run --system tpuv4-slice --model "$m" --chips 16 --mesh 4x4 --seq 2048 \
    --algorithm collective --out "$here/out/collective_$m.h5" > /dev/null
done
"$meshsim" sweep "$here/experiment.ini" --out "$here/out/sweep.h5" --jobs "${JOBS:-2}" \
  > "$here/out/sweep.txt"
"$meshsim" sweep "$here/batch.ini" --out "$here/out/batch.h5" --jobs "${JOBS:-2}" \
  > "$here/out/batch.txt"
