#!/bin/bash
# Training epochs on 1 and 2 MPI ranks (1 thread each) against one process: rollout throughput (the
# decisions_per_s of progress.csv: every rank's decisions over the slowest rank's rollout time), epoch
# time, and whether the models are identical. Then what the ranks exchange per epoch, from the protocol
# (src/rl/torch/ppo_learner.cpp), and from it the communication share of an epoch on R ranks over a
# network of the given speed.
# Usage: bench/mpi_epoch.sh RLTUNE [TRAJS WINDOW_LEN FEATURES_SET]   (default: 100 256 extended)
set -eu
RLTUNE=$(realpath "$1")
TRAJS=${2:-100}
WINDOW=${3:-256}
FEATURES=${4:-extended}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ARGS=(train --cluster helios --sample-jobs 20000 --sample-load 0.95 --window-len "$WINDOW" --features "$FEATURES"
      --epochs 1 --trajs "$TRAJS" --validation-windows 0 --threads 1 --quiet)
run() {  # run NAME COMMAND...: prints the epoch's wall time and rollout rates
  local name=$1
  shift
  "$@" "${ARGS[@]}" --out "$TMP/$name" > /dev/null
  tail -1 "$TMP/$name/progress.csv" |
    awk -F, -v n="$name" '{printf "%-22s epoch %6.2f s  rollouts %7.0f decisions/s  (by rank: %s)\n", n, $14, $13, $15}'
}
run "1 process" "$RLTUNE"
run "mpirun -np 1" mpirun -np 1 "$RLTUNE"
run "mpirun -np 2" mpirun -np 2 "$RLTUNE"
cmp -s "$TMP/1 process/policy.json" "$TMP/mpirun -np 2/policy.json" && echo "models: identical" || echo "models: DIFFER"

# What one rank sends per epoch. Per policy or value step: reduce() gathers each parameter tensor's
# largest |gradient| (8 doubles) and 4 doubles per shard of its own; step() sums every parameter
# (int64). Shards: ceil(decisions / 128) per episode. The policy steps stop early on KL (progress.csv's
# policy_iters); the value steps are always vf_iters (80).
python3 - "$TMP/1 process/progress.csv" "$FEATURES" "$TRAJS" "$WINDOW" << 'EOF'
import csv, math, sys
path, features, trajs, window = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
f = {"paper": 7, "extended": 10, "ranked": 11, "realistic": 13}[features]
row = list(csv.DictReader(open(path)))[-1]
policy_params = f * 32 + 32 + 32 * 16 + 16 + 16 * 8 + 8 + 8 + 1
value_params = 128 * f * 32 + 32 + 32 * 16 + 16 + 16 * 8 + 8 + 8 + 1
pi_steps, vf_steps = int(row["policy_iters"]), 80
epoch_s = float(row["wall_s"])
print(f"parameters: policy {policy_params}, value {value_params}; {pi_steps} policy + {vf_steps} value steps")
for ranks in (2, 64):
    for scale in (1, 4):  # this epoch, and one of windows 4 times longer (4 x the decisions)
        shards = trajs * math.ceil(scale * window / 128)  # one decision per job without --reconsider
        sums = 8 * (pi_steps * policy_params + vf_steps * value_params)       # payload of the int64 sums
        gathers = 8 * (pi_steps + vf_steps) * (8 + 4 * shards / ranks)        # payload of the gathers
        wire = 2 * (ranks - 1) / ranks * sums + (ranks - 1) * gathers          # ring allreduce; allgather brings the others'
        busiest = math.ceil(trajs / ranks) / (trajs / ranks)                  # a rank with one trajectory more
        compute = epoch_s * scale / ranks * busiest
        latency = (pi_steps + vf_steps + 10) * 2 * 2 * math.log2(ranks) * 25e-6  # 2 collectives a step, 25 us a message
        seconds = wire / 1.25e9 + latency                                     # 10 GbE
        print(f"{ranks} ranks, {trajs} x {scale * window}-job epoch: {sums / 1e6:.1f} MB summed + {gathers / 1e3:.1f} kB gathered "
              f"per rank, about {wire / 1e6:.1f} MB on the wire; compute {compute:.2f} s (this machine's epoch x {scale} / ranks), "
              f"communication {seconds * 1e3:.0f} ms on 10 GbE = {100 * seconds / (compute + seconds):.1f}% of the epoch")
EOF
