#!/bin/sh
# Trains the models shipped under models/ and evaluates each on held-out test windows.
# Usage: scripts/train-models.sh [BUILD_DIR] [CLUSTER...]   (default build/release, all three presets;
# about 8 to 25 minutes per model on 2 cores)
# Per preset, on its generated workload (20,000 jobs, seed 1) at an offered load whose windows are
# contended (see models/README.md):
# - NAME-fcfs-bsld and NAME-fcfs-bsld-extended: PPO against FCFS on average bounded slowdown, the
#   paper's features and the extended ones;
# - NAME-BEST-bsld-extended and NAME-BEST-bsld-ranked: against the preset's best heuristic BEST, which
#   the policy first imitates (--reconsider --imitate N), with the extended and the ranked features.
# Evaluation: 50 windows from the test split (the last 15% of the jobs, never trained on), every
# heuristic on the same windows; the models from the best heuristic also with sampled actions.
# Alibaba's test split is a quiet stretch (FCFS bsld 1.9 against 10 to 17 elsewhere, and 50 windows
# of 1,024 jobs from 3,000 overlap): its models are evaluated on a second workload (seed 2), all of it.
set -eu
BUILD=${1:-build/release}
[ $# -gt 0 ] && shift
CLUSTERS=${*:-helios philly alibaba}
RLTUNE="$BUILD/rltune"

# train_and_evaluate NAME BASELINE FEATURES EPOCHS [TRAIN OPTIONS...]; uses $workload, $test_windows
# and $trajs.
train_and_evaluate() {
  name=$1 baseline=$2 features=$3 epochs=$4
  shift 4
  out="models/$name"
  rm -rf "$out"
  # shellcheck disable=SC2086
  "$RLTUNE" train $workload --seed 1 --baseline "$baseline" --score bsld --features "$features" "$@" \
    --epochs "$epochs" --trajs "$trajs" --threads 2 --quiet --out "$out"
  mkdir -p "$out/evaluation"
  # shellcheck disable=SC2086
  "$RLTUNE" evaluate --model "$out" $workload $test_windows --windows 50 --out "$out/evaluation" \
    > "$out/evaluation/table.txt"
  if [ "$baseline" != fcfs ]; then
    mkdir -p "$out/evaluation-sampled"
    # shellcheck disable=SC2086
    "$RLTUNE" evaluate --model "$out" $workload $test_windows --windows 50 --sample \
      --out "$out/evaluation-sampled" > "$out/evaluation-sampled/table.txt"
  fi
}

for cluster in $CLUSTERS; do
  # cluster: offered load of the generated workload, jobs per window, trajectories per epoch, epochs
  # of the paper-feature and of the extended model against FCFS, the best heuristic on the training
  # and test windows, the epochs and imitation epochs of the extended model trained against it, and
  # the epochs of the ranked one; and where the evaluation windows come from
  case $cluster in
    helios) load=0.9; window=256; trajs=60; epochs=30; epochs_extended=60; best=f1; epochs_best=40; imitate=10; epochs_ranked=40
      test_windows="--seed 1 --split test" ;;
    philly) load=8; window=256; trajs=60; epochs=25; epochs_extended=25; best=sjf; epochs_best=30; imitate=30; epochs_ranked=30
      test_windows="--seed 1 --split test" ;;
    alibaba) load=4; window=1024; trajs=15; epochs=25; epochs_extended=25; best=uni; epochs_best=120; imitate=30; epochs_ranked=25
      test_windows="--seed 2 --split all" ;;
    *) echo "unknown cluster $cluster" >&2; exit 2 ;;
  esac
  workload="--cluster $cluster --sample-jobs 20000 --sample-load $load --window-len $window"
  train_and_evaluate "$cluster-fcfs-bsld" fcfs paper "$epochs"
  train_and_evaluate "$cluster-fcfs-bsld-extended" fcfs extended "$epochs_extended"
  train_and_evaluate "$cluster-$best-bsld-extended" "$best" extended "$epochs_best" --reconsider --imitate "$imitate"
  train_and_evaluate "$cluster-$best-bsld-ranked" "$best" ranked "$epochs_ranked" --reconsider --imitate 10
done

# The realistic regime (models/README.md): helios-users, pool blocking, backfilling, predicted
# runtimes, 1,000-job warm-up; evaluated by experiments/realistic.yaml. About 4 to 5 hours on 2 cores
# for the first model.
if [ -z "${*:-}" ] || echo " $* " | grep -q " helios "; then
  rm -rf models/helios-users-sjf-bsld-realistic
  "$RLTUNE" train --cluster helios --like helios-users --sample-jobs 20000 --sample-load 0.95 --seed 1 \
    --window-len 256 --warmup 1000 --blocking pool --backfill --runtime predicted --baseline sjf --score bsld \
    --features realistic --reconsider --imitate 10 --epochs 86 --trajs 30 --threads 2 --quiet \
    --out models/helios-users-sjf-bsld-realistic
  # The second: from sjf-sampled (its probabilities cloned), with learned estimates and limit plans,
  # best.json picked on validation windows drawn at temperature 1. About 1 h 10 min on 2 cores.
  rm -rf models/helios-users-sjf-sampled-bsld-realistic
  "$RLTUNE" train --cluster helios --like helios-users --sample-jobs 20000 --sample-load 0.95 --seed 1 \
    --window-len 256 --warmup 1000 --blocking pool --backfill --backfill-limits --runtime predicted:learned \
    --baseline sjf --score bsld --features realistic --reconsider --teacher sjf-sampled --imitate 10 --imitation-lr 0.01 \
    --validation-temperature 1 --validation-windows 30 --epochs 60 --trajs 30 --threads 2 --quiet \
    --out models/helios-users-sjf-sampled-bsld-realistic
fi
