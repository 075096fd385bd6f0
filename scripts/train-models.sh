#!/bin/sh
# Trains the models shipped under models/ and evaluates each on held-out test windows.
# Usage: scripts/train-models.sh [BUILD_DIR]   (default build/release; about 8 minutes per model on 2 cores)
# Each model: PPO against FCFS on average bounded slowdown, on the preset's generated workload (20,000
# jobs at offered load 0.9, seed 1); evaluation: 50 windows of 256 jobs from the test split (the last 15%
# of the jobs, never trained on), every heuristic on the same windows.
set -eu
BUILD=${1:-build/release}
RLTUNE="$BUILD/rltune"
EPOCHS=${EPOCHS:-30}
TRAJS=${TRAJS:-60}
for cluster in helios philly alibaba; do
  for features in paper extended; do
    name="$cluster-fcfs-bsld"
    [ "$features" = extended ] && name="$name-extended"
    out="models/$name"
    rm -rf "$out"
    "$RLTUNE" train --cluster "$cluster" --baseline fcfs --score bsld --features "$features" \
      --epochs "$EPOCHS" --trajs "$TRAJS" --threads 2 --seed 1 --quiet --out "$out"
    mkdir -p "$out/evaluation"
    "$RLTUNE" evaluate --model "$out" --cluster "$cluster" --seed 1 --sample-jobs 20000 --windows 50 --window-len 256 --split test \
      --out "$out/evaluation" > "$out/evaluation/table.txt"
    rm -f "$out/model.pt.tmp" "$out/best.pt.tmp"
  done
done
