#!/usr/bin/env bash
# Figures 13 and 14: the MeshSlice autotuner's cost-model estimates beside simulations
# (`meshsim tune --validate`), 256 chips, weak-scaling batch 128, seq 2048, GPT-3 and Megatron-NLG.
#   Fig. 13  every candidate mesh (4x64 … 64x4), each with the tuner's per-layer S for that mesh
#   Fig. 14  on 32x8, every candidate S of every FC layer (the other layers at their tuned S)
# `tune --validate` does the slice points on the mesh it chooses; if that is not 32x8, a second
# call with --mesh 32x8 supplies Figure 14's points. The two models run in parallel (2 jobs).
# Usage: results/fig13_fig14_cost_model/run.sh   (MESHSIM = the binary, default build/sim/meshsim)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
meshsim="${MESHSIM:-$here/../../build/sim/meshsim}"
mkdir -p "$here/out"
tune() {  # model
  local m=$1
  "$meshsim" tune --model "$m" --chips 256 --seq 2048 --validate --format json \
    > "$here/out/tune_$m.json" 2> "$here/out/tune_$m.log"
  if ! grep -q '"mesh": "32x8"' <(head -c 200 "$here/out/tune_$m.json"); then
    "$meshsim" tune --model "$m" --chips 256 --seq 2048 --mesh 32x8 --validate --format json \
      > "$here/out/tune_${m}_32x8.json" 2>> "$here/out/tune_$m.log"
  else
    cp "$here/out/tune_$m.json" "$here/out/tune_${m}_32x8.json"
  fi
}
tune gpt3 & p1=$!
tune megatron-nlg & p2=$!
wait $p1
wait $p2
