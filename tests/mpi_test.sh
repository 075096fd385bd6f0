#!/bin/bash
# Training and experiments spread over MPI ranks (mpirun -np 2 on this machine) give the same files as
# one process; a rank that fails stops the job with an error naming it, leaves whole files only, and the
# run resumes under another rank count. Skips (exit 77) without Open MPI's mpirun.
# Usage: mpi_test.sh RLTUNE MODELS_DIR
set -u
RLTUNE=$(realpath "$1")
MODELS=$(realpath "$2")
if ! command -v mpirun > /dev/null; then
  echo "SKIP: needs mpirun (openmpi-bin)"
  exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# As root (CI), Open MPI wants both the flag and the variables; --oversubscribe: more ranks than cores.
# No single-copy (CMA) transfers: containers often forbid the ptrace they need.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi() {  # mpi N ARGS...: rltune ARGS on N ranks
  local n=$1
  shift
  mpirun --allow-run-as-root --oversubscribe -x RLTUNE_TEST_FAIL -np "$n" "$RLTUNE" "$@"
}
export RLTUNE_TEST_FAIL=""
same() {  # same A B FILES...: the files are byte-identical in folders A and B
  local a=$1 b=$2
  shift 2
  for f in "$@"; do cmp -s "$a/$f" "$b/$f" || fail "$a/$f and $b/$f differ"; done
}
# progress.csv without its timing columns (decisions_per_s, wall_s, decisions_per_s_by_rank).
numbers() { cut -d, -f1-12 "$1/progress.csv"; }

# Training: 1 process, 2 ranks and 3 ranks (uneven blocks) give the same model and numbers.
# One imitation epoch first, so that behaviour cloning runs over ranks too.
TRAIN=(train --cluster helios --sample-jobs 3000 --window-len 64 --features extended --trajs 6 --validation-windows 3
       --pi-iters 10 --vf-iters 10 --imitate 1 --quiet)
"$RLTUNE" "${TRAIN[@]}" --threads 1 --epochs 3 --out one > one.log 2>&1 || fail "single-process training: $(cat one.log)"
mpi 2 "${TRAIN[@]}" --threads 2 --epochs 3 --out two > two.log 2>&1 || fail "training on 2 ranks: $(cat two.log)"
mpi 3 "${TRAIN[@]}" --threads 1 --epochs 3 --out three > three.log 2>&1 || fail "training on 3 ranks: $(cat three.log)"
grep -q "on each of 2 MPI ranks" two.log || fail "the 2-rank run does not say so: $(cat two.log)"
[ "$(grep -c "^wrote model.pt" two.log)" -eq 1 ] || fail "more than rank 0 printed: $(cat two.log)"
same one two policy.json best.json
same one three policy.json best.json
[ "$(numbers one)" = "$(numbers two)" ] || fail "progress.csv differs on 2 ranks"
[ "$(numbers one)" = "$(numbers three)" ] || fail "progress.csv differs on 3 ranks"
[ "$(tail -1 two/progress.csv | awk -F, '{print $NF}' | wc -w)" -eq 2 ] || fail "no per-rank rate in $(tail -1 two/progress.csv)"
[ "$(tail -1 one/progress.csv | cut -d, -f1)" = 3 ] || fail "3 epochs expected in one/progress.csv"

# A rank killed in epoch 2: the job stops, naming it; epoch 1's checkpoint is whole; the run resumes on
# 1 process and ends as the uninterrupted run.
RLTUNE_TEST_FAIL=1:2:die mpi 2 "${TRAIN[@]}" --threads 1 --epochs 3 --out killed > killed.log 2>&1
code=$?
[ "$code" -ne 0 ] || fail "a killed rank left exit code 0"
grep -qE "rank 1 .*(signal 9|Killed)" killed.log || fail "the killed rank is not named: $(cat killed.log)"
[ "$(numbers killed | tail -1 | cut -d, -f1)" = 1 ] || fail "killed/progress.csv should end at epoch 1: $(cat killed/progress.csv)"
ls killed | grep -q '\.tmp$' && fail "half-written files left: $(ls killed)"
"$RLTUNE" train --resume --out killed --epochs 3 --threads 1 --quiet > resumed.log 2>&1 || fail "resume on 1 process: $(cat resumed.log)"
same one killed policy.json best.json
[ "$(numbers one)" = "$(numbers killed)" ] || fail "the resumed run's progress.csv differs"

# A rank that throws in epoch 2: every rank stops; rank 0 says which rank and where (exit 1: not bad input).
RLTUNE_TEST_FAIL=1:2:throw mpi 2 "${TRAIN[@]}" --threads 1 --epochs 3 --out threw > threw.log 2>&1
code=$?
[ "$code" -eq 1 ] || fail "a throwing rank: exit $code, expected 1"
grep -q "rank 1: failure injected by RLTUNE_TEST_FAIL in epoch 2" threw.log || fail "no error naming rank 1: $(cat threw.log)"
# Resuming on 3 ranks (another count than the run's 2) continues it to the same model.
mpi 3 train --resume --out threw --epochs 3 --threads 1 --quiet > threw-resumed.log 2>&1 || fail "resume on 3 ranks: $(cat threw-resumed.log)"
same one threw policy.json best.json
[ "$(numbers one)" = "$(numbers threw)" ] || fail "the run resumed on 3 ranks has other progress.csv numbers"

# Ranks started with other arguments are refused before any work.
mpirun --allow-run-as-root --oversubscribe -np 1 "$RLTUNE" "${TRAIN[@]}" --epochs 1 --out mixed : \
  -np 1 "$RLTUNE" simulate --cluster helios > mixed.log 2>&1
[ $? -eq 2 ] || fail "mismatched arguments: expected exit 2: $(cat mixed.log)"
grep -q "rank 1 was started with other arguments than rank 0" mixed.log || fail "mismatch not named: $(cat mixed.log)"
[ -e mixed ] && fail "mismatched ranks wrote $(ls mixed)"
# An error every rank meets is said once, without a rank.
mpi 3 train --cluster helios --sample-jobs 3000 --window-len 64 --trajs 2 --epochs 1 --quiet --out few > few.log 2>&1
[ $? -eq 2 ] || fail "--trajs below the rank count: expected exit 2: $(cat few.log)"
[ "$(grep -c "error: --trajs 2 is fewer than the 3 MPI ranks" few.log)" -eq 1 ] || fail "expected the error once: $(cat few.log)"
# Commands that do not spread over ranks say so.
mpi 2 simulate --cluster helios > simulate.log 2>&1
[ $? -eq 2 ] && grep -q "runs in one process" simulate.log || fail "simulate under mpirun: $(cat simulate.log)"

# Experiments: the same files on 1, 2 and 3 ranks, timings.csv (wall clock) and the runs/ journal aside.
cat > exp.yaml << YAML
name: mpi
windows: {count: 3, length: 64, split: test}
policies: [fcfs, sjf, f1, "rl:$MODELS/helios-fcfs-bsld"]
workloads:
  - cluster: helios
    trace: {generate: {jobs: 2000}}
  - cluster: philly
    trace: {generate: {like: philly, jobs: 2000}}
YAML
OUTPUTS=(runs.csv summary.csv summary.md cdf.csv timeseries.csv config.json)
"$RLTUNE" experiment --config exp.yaml --out e1 --jobs 1 --quiet > e1.log 2>&1 || fail "experiment: $(cat e1.log)"
mpi 2 experiment --config exp.yaml --out e2 --jobs 1 --quiet > e2.log 2>&1 || fail "experiment on 2 ranks: $(cat e2.log)"
mpi 3 experiment --config exp.yaml --out e3 --jobs 1 --quiet > e3.log 2>&1 || fail "experiment on 3 ranks: $(cat e3.log)"
same e1 e2 "${OUTPUTS[@]}"
same e1 e3 "${OUTPUTS[@]}"
[ "$(ls e2/runs | wc -l)" -eq 24 ] || fail "e2/runs should hold 24 runs: $(ls e2/runs)"
# A rank that throws at its third run: the error names the rank and the run; the finished runs stay and
# --resume (on 1 process) reuses them and writes the same files.
RLTUNE_TEST_FAIL=1:2:throw mpi 2 experiment --config exp.yaml --out e4 --jobs 1 --quiet > e4.log 2>&1
[ $? -eq 2 ] || fail "an experiment whose rank threw: expected exit 2: $(cat e4.log)"
grep -qE "rank 1: experiment stopped: .* in run w[0-9]-k[0-9]+-p[0-9]+\.json" e4.log || fail "no error naming the rank and run: $(cat e4.log)"
[ -e e4/runs.csv ] && fail "a stopped experiment wrote runs.csv"
finished=$(ls e4/runs | grep -c '\.json$')
[ "$finished" -ge 2 ] && [ "$finished" -lt 24 ] || fail "expected some finished runs, found $finished"
"$RLTUNE" experiment --config exp.yaml --out e4 --jobs 1 --quiet --resume > e4r.log 2>&1 || fail "resume: $(cat e4r.log)"
grep -q "($finished reused" e4r.log || fail "the resume did not reuse the $finished finished runs: $(cat e4r.log)"
same e1 e4 "${OUTPUTS[@]}"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "mpi: all checks passed"
