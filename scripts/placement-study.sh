#!/bin/bash
# Placement study: greedy, defrag, balance and milp (both models) under FCFS and SJF on the three presets,
# on generated workloads at offered loads 0.6, 0.8 and 0.95. Prints a Markdown table (stdout).
# Usage: scripts/placement-study.sh [RLTUNE] [JOBS] [SEED]      (defaults: build/rltune 5000 1)
#        scripts/placement-study.sh sweep [RLTUNE] [JOBS] [SEED] (milp weight sweep at load 0.95)
# Blocking is pool (a blocked job holds only its own pools, as Slurm partitions do); BLOCKING=global
# gives the reference's head-of-line rule.
set -euo pipefail
if [ "${1:-}" = sweep ]; then MODE=sweep; shift; else MODE=study; fi
RLTUNE=${1:-build/rltune}
JOBS=${2:-5000}
SEED=${3:-1}
BLOCKING=${BLOCKING:-pool}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# value KEY FILE: a number from summary.json (one key per line; the first block is the only window).
value() { grep -m1 "\"$1\":" "$2" | sed 's/.*: *//; s/,$//'; }

# run PRESET LOAD POLICY LABEL ARGS...: one simulation, one table row.
run() {
  local preset=$1 load=$2 policy=$3 label=$4
  shift 4
  local out="$TMP/out"
  rm -rf "$out"
  "$RLTUNE" simulate --cluster "$preset" --trace "$TMP/$preset-$load.csv" --policy "$policy" --blocking "$BLOCKING" \
    --out "$out" "$@" > /dev/null
  local s="$out/summary.json"
  awk -v p="$preset" -v l="$load" -v pol="$policy" -v lab="$label" -v w="$(value avg_wait_s "$s")" \
      -v w95="$(value p95_wait_s "$s")" -v j="$(value avg_jct_s "$s")" -v u="$(value gpu_utilization "$s")" \
      -v f="$(value avg_fragmentation "$s")" -v base="${BASE_WAIT:-}" 'BEGIN {
        change = (base == "" || base == 0) ? "" : sprintf("%+.1f%%", 100 * (w - base) / base);
        printf "| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.1f%% | %.1f%% | %s |\n", p, l, pol, lab, w / 3600,
               w95 / 3600, j / 3600, 100 * u, 100 * f, change }'
  if [ -z "${BASE_WAIT:-}" ]; then BASE_WAIT=$(value avg_wait_s "$s"); fi
}

echo "| preset | load | policy | placement | avg wait (h) | p95 wait (h) | avg JCT (h) | GPU util | fragmented | avg wait vs greedy |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for preset in helios philly alibaba; do
  for load in $([ $MODE = study ] && echo 0.6 0.8 0.95 || echo 0.95); do
    "$RLTUNE" generate --cluster "$preset" --jobs "$JOBS" --load "$load" --seed "$SEED" --out "$TMP/$preset-$load.csv" > /dev/null
    for policy in fcfs sjf; do
      BASE_WAIT=
      run "$preset" "$load" "$policy" greedy --placement greedy
      if [ $MODE = study ]; then
        run "$preset" "$load" "$policy" defrag --placement defrag
        run "$preset" "$load" "$policy" balance --placement balance
        run "$preset" "$load" "$policy" "milp nodes" --placement milp
        run "$preset" "$load" "$policy" "milp ways" --placement milp --milp-model ways
      else
        for alpha in 0 1; do for beta in 0 10; do for gamma in 0 0.5; do for waste in 0 0.1; do
          run "$preset" "$load" "$policy" "a=$alpha b=$beta g=$gamma w=$waste" --placement milp \
            --milp-alpha $alpha --milp-beta $beta --milp-gamma $gamma --milp-waste $waste
        done; done; done; done
      fi
    done
  done
done
