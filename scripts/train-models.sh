#!/bin/sh
# Trains the models shipped under models/ and evaluates each on held-out test windows.
# Usage: scripts/train-models.sh [BUILD_DIR] [CLUSTER...]   (default build/release, all three presets;
# about 8 to 12 minutes per model on 2 cores)
# Each model: PPO against FCFS on average bounded slowdown, on the preset's generated workload (20,000
# jobs, seed 1) at an offered load whose windows are contended (see models/README.md); evaluation: 50
# windows from the test split (the last 15% of the jobs, never trained on), every heuristic on the same
# windows.
set -eu
BUILD=${1:-build/release}
[ $# -gt 0 ] && shift
CLUSTERS=${*:-helios philly alibaba}
RLTUNE="$BUILD/rltune"
for cluster in $CLUSTERS; do
  # cluster: offered load of the generated workload, jobs per window, trajectories per epoch, epochs
  # of the paper-feature and of the extended model
  case $cluster in
    helios) load=0.9; window=256; trajs=60; epochs=30; epochs_extended=60 ;;
    philly) load=8; window=256; trajs=60; epochs=25; epochs_extended=25 ;;
    alibaba) load=4; window=1024; trajs=15; epochs=25; epochs_extended=25 ;;
    *) echo "unknown cluster $cluster" >&2; exit 2 ;;
  esac
  workload="--cluster $cluster --sample-jobs 20000 --sample-load $load --seed 1 --window-len $window"
  for features in paper extended; do
    name="$cluster-fcfs-bsld"
    [ "$features" = extended ] && name="$name-extended" && epochs=$epochs_extended
    out="models/$name"
    rm -rf "$out"
    # shellcheck disable=SC2086
    "$RLTUNE" train $workload --baseline fcfs --score bsld --features "$features" \
      --epochs "$epochs" --trajs "$trajs" --threads 2 --quiet --out "$out"
    mkdir -p "$out/evaluation"
    # shellcheck disable=SC2086
    "$RLTUNE" evaluate --model "$out" $workload --windows 50 --split test --out "$out/evaluation" \
      > "$out/evaluation/table.txt"
  done
done
