#!/bin/bash
# The cluster recipe of the README ("Running on a cluster") on a real Slurm (scripts/slurm-local.sh: 4
# nodes on this machine): scripts/slurm/train.sbatch and experiment.sbatch on 2 nodes x 2 tasks, and
# srun --mpi=pmix, give the files one process gives. Skips (exit 77) without root, the Slurm packages
# or Open MPI. Stops what it started.
# Usage: slurm_mpi_test.sh RLTUNE MODELS_DIR
set -u
RLTUNE=$(realpath "$1")
MODELS=$(realpath "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
LOCAL="$HERE/../scripts/slurm-local.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld > /dev/null || [ ! -x /usr/sbin/munged ] || ! command -v mpirun > /dev/null; then
  echo "SKIP: needs root, the packages munge slurmctld slurmd slurm-client, and openmpi-bin"
  exit 77
fi
BASE=$(mktemp -d /tmp/rltune-slurm-mpi.XXXXXX)
export SLURM_CONF="$BASE/slurm.conf"
cleanup() {
  SCHEDULER=builtin "$LOCAL" stop "$BASE"
  rm -rf "$BASE"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
SCHEDULER=builtin "$LOCAL" start "$BASE" || { echo "FAIL: could not start Slurm"; cat "$BASE"/log/*.log; exit 1; }
cd "$BASE" || exit 1
# As root, Open MPI wants these (sbatch passes the environment on); RLTUNE: the program the scripts run.
# TCP only: the fake nodes share one host name, so their shared-memory segments would have the same
# names (a real cluster's nodes do not).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp RLTUNE

TRAIN=(--cluster helios --sample-jobs 3000 --window-len 64 --features extended --trajs 6 --validation-windows 3
       --pi-iters 10 --vf-iters 10 --epochs 2 --quiet)
"$RLTUNE" train "${TRAIN[@]}" --threads 1 --out "$BASE/one" > one.log 2>&1 || fail "single-process training: $(cat one.log)"

# The README's sbatch script: 2 nodes x 2 tasks, mpirun inside the allocation.
sbatch --wait -o "$BASE/train.log" "$HERE/../scripts/slurm/train.sbatch" "${TRAIN[@]}" --out "$BASE/sbatch" > /dev/null 2>&1 ||
  fail "train.sbatch failed: $(cat "$BASE/train.log")"
grep -q "on each of 4 MPI ranks" train.log || fail "train.sbatch did not run 4 ranks: $(cat train.log)"
for f in policy.json best.json; do cmp -s "one/$f" "sbatch/$f" || fail "train.sbatch's $f differs from one process's"; done

# srun starting the ranks itself (PMIx). One node: the fake nodes of one machine would share PMIx's
# directories, which a real cluster's nodes do not.
timeout 300 srun -N 1 -n 2 --mpi=pmix "$RLTUNE" train "${TRAIN[@]}" --threads 1 --out "$BASE/srun" > srun.log 2>&1 ||
  fail "srun --mpi=pmix: $(cat srun.log)"
for f in policy.json best.json; do cmp -s "one/$f" "srun/$f" || fail "srun's $f differs from one process's"; done

# srun without an MPI plugin would start independent copies: refused.
srun -N 1 -n 2 --mpi=none "$RLTUNE" train "${TRAIN[@]}" --threads 1 --out "$BASE/plain" > plain.log 2>&1
grep -q "srun started 2 tasks without MPI" plain.log || fail "srun --mpi=none was not refused: $(cat plain.log)"
[ -e plain ] && fail "srun --mpi=none wrote $(ls plain)"

cat > exp.yaml << YAML
name: slurm
windows: {count: 2, length: 64, split: test}
policies: [fcfs, sjf, "rl:$MODELS/helios-fcfs-bsld"]
workloads:
  - cluster: helios
    trace: {generate: {jobs: 2000}}
YAML
"$RLTUNE" experiment --config exp.yaml --out "$BASE/e1" --jobs 1 --quiet > e1.log 2>&1 || fail "experiment: $(cat e1.log)"
sbatch --wait -o "$BASE/experiment.log" "$HERE/../scripts/slurm/experiment.sbatch" --config exp.yaml --out e2 --quiet > /dev/null 2>&1 || fail "experiment.sbatch failed: $(cat "$BASE/experiment.log")"
for f in runs.csv summary.csv summary.md cdf.csv timeseries.csv config.json; do
  cmp -s "e1/$f" "e2/$f" || fail "experiment.sbatch's $f differs from one process's"
done

[ "$failures" -eq 0 ] && echo "Slurm + MPI: all checks passed"
exit $((failures > 0))
