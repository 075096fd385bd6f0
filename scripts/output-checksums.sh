#!/bin/sh
# Checksums of representative outputs, without their wall-clock fields, for checking that a refactor
# leaves results byte-identical: run it before and after, then diff the two listings.
# Usage: scripts/output-checksums.sh [BUILD_DIR] OUT_DIR > listing.txt
# Covers: the README's `make run` comparison; experiments/paper-generated.yaml and real-traces.yaml
# (the latter only when ../shared/traces exists); every shipped model's evaluation (argmax, and sampled
# for the models trained from the best heuristic); simulate with global/pool blocking x backfill
# on/off x greedy/milp on one generated workload per preset (heuristics, a model and a sampled model);
# and a 2-epoch training run. MILP runs get a wall-clock limit no solve reaches, so that only the
# node limit decides (the experiments keep their configs' limits: run this on an idle machine).
set -eu
BUILD=${1:-build/release}
OUT=${2:?usage: output-checksums.sh [BUILD_DIR] OUT_DIR}
RLTUNE="$BUILD/rltune"
rm -rf "$OUT"
mkdir -p "$OUT"

# Printed tables lose their wall-clock column (decision times, "N us").
"$RLTUNE" simulate --cluster helios --seed 2 --blocking pool --milp-time-limit-ms 100000 --out "$OUT/make-run" \
  --policy fcfs,sjf,f1,rl:models/helios-fcfs-bsld-extended,rl:models/helios-fcfs-bsld-extended@milp 2>/dev/null |
  sed -E 's/ +[0-9.]+ us//; s/ +decision p50//; s/ +$//' > "$OUT/make-run.txt"

for config in paper-generated real-traces; do
  if [ "$config" = real-traces ] && [ ! -d ../shared/traces ]; then continue; fi
  "$RLTUNE" experiment --config "experiments/$config.yaml" --out "$OUT/experiment-$config" --quiet >/dev/null
done

for model in models/*/; do
  name=$(basename "$model")
  case $name in
    alibaba-*) workload="--cluster alibaba --sample-jobs 20000 --sample-load 4 --window-len 1024 --seed 2 --split all" ;;
    philly-*) workload="--cluster philly --sample-jobs 20000 --sample-load 8 --window-len 256 --seed 1 --split test" ;;
    helios-*) workload="--cluster helios --sample-jobs 20000 --sample-load 0.9 --window-len 256 --seed 1 --split test" ;;
  esac
  # shellcheck disable=SC2086
  "$RLTUNE" evaluate --model "$model" $workload --windows 20 --out "$OUT/evaluate-$name" 2>/dev/null |
    sed -E 's/ +[0-9.]+ us//; s/ +decision p50//; s/ +$//' > "$OUT/evaluate-$name.txt"
  case $name in *-fcfs-*) ;; *)
    # shellcheck disable=SC2086
    "$RLTUNE" evaluate --model "$model" $workload --windows 20 --sample --out "$OUT/evaluate-sampled-$name" >/dev/null 2>&1 ;;
  esac
done

for preset in helios:helios-f1-bsld-extended:0.9 philly:philly-sjf-bsld-extended:8 alibaba:alibaba-uni-bsld-extended:4; do
  cluster=${preset%%:*} rest=${preset#*:}
  model=${rest%%:*} load=${rest#*:}
  "$RLTUNE" generate --like "$cluster" --cluster "$cluster" --jobs 3000 --load "$load" --seed 3 --out "$OUT/$cluster-trace.csv" >/dev/null 2>&1
  for blocking in global pool; do
    for backfill in "" --backfill; do
      for placement in greedy milp; do
        limit=""
        [ $placement = milp ] && limit="--milp-time-limit-ms 100000"
        # shellcheck disable=SC2086
        "$RLTUNE" simulate --cluster "$cluster" --trace "$OUT/$cluster-trace.csv" --blocking $blocking $backfill \
          --placement $placement $limit --seed 3 --out "$OUT/simulate-$cluster-$blocking${backfill:+-backfill}-$placement" \
          --policy "fcfs,sjf,rl:models/$model,rl-sampled:models/$model,rl:models/$cluster-fcfs-bsld" >/dev/null 2>&1
      done
    done
  done
done

"$RLTUNE" train --cluster helios --sample-jobs 4000 --epochs 2 --trajs 8 --threads 2 --seed 5 --features extended \
  --backfill --blocking pool --quiet --out "$OUT/train" >/dev/null 2>&1

# Every output file, with wall-clock fields removed (JSON keys and CSV columns named like *wall*,
# decision_us_* and milp_us_*, *_per_s; Markdown lines that mention them), then hashed. Model weights
# are compared in policy.json and best.json; torch's .pt archives are not byte-stable.
find "$OUT" -type f \( -name '*.json' -o -name '*.csv' -o -name '*.md' -o -name '*.txt' \) ! -name timings.csv | sort |
  python3 -c '
import csv, hashlib, io, json, re, sys
wall = re.compile(r"(wall|_us_p|per_s|_s_per_)")
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if not wall.search(k)}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
out = sys.argv[1].rstrip("/") + "/"
for path in sys.stdin.read().splitlines():
    data = open(path, "rb").read().replace(out.encode(), b"OUT/")
    if path.endswith(".json"):
        data = json.dumps(strip(json.loads(data))).encode()  # key order kept: it is part of the output
    elif path.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(data.decode())))
        if rows:
            keep = [i for i, h in enumerate(rows[0]) if not wall.search(h)]
            data = "\n".join(",".join(r[i] for i in keep if i < len(r)) for r in rows).encode()
    elif path.endswith(".md"):
        data = b"\n".join(l for l in data.split(b"\n") if b"decision" not in l and b"wall" not in l)
    print(hashlib.sha256(data).hexdigest() + "  " + path[len(out):])
' "$OUT"
