#!/bin/bash
# End-to-end tests of the rltune executable: real commands, real files, exit codes and messages.
# Usage: cli_test.sh RLTUNE SHARED_TRACES_DIR
set -u
RLTUNE=$1
SHARED=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE PATTERN -- ARGS...: runs rltune ARGS, checks the exit code and that stdout+stderr match PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 3
  local out
  out=$("$RLTUNE" "$@" 2>&1)
  local got=$?
  [ "$got" -eq "$code" ] || fail "rltune $* exited $got, expected $code: $out"
  echo "$out" | grep -qE -- "$pattern" || fail "rltune $* output lacks /$pattern/: $out"
}

cat > "$TMP/ok.csv" <<'CSV'
job_id,submit_time,duration,num_gpus,vc
a,0,100,8,0
b,10,50,4,0
c,20,30,16,1
CSV
printf 'job_id,submit_time,duration,num_gpus\na,0,100,2\nb,5,oops,1\n' > "$TMP/bad.csv"
printf 'name: x\npools:\n  - {name: a, nodes: 2, gpus_per_node: 8, colour: red}\n' > "$TMP/bad.yaml"
printf 'name: tiny\npools:\n  - {name: a, nodes: 2, gpus_per_node: 8}\n' > "$TMP/tiny.yaml"

# Success paths.
expect 0 "fcfs .* 2000 " -- simulate --policy fcfs,sjf,f1
# One sign convention, as in evaluate and experiment: SJF waits less than FCFS, a positive improvement.
expect 0 "^  sjf +avg wait \+[0-9]+%, avg JCT \+" -- simulate --policy fcfs,sjf
expect 0 "improvement over fcfs \(positive = better\)" -- simulate --policy fcfs,sjf
expect 0 "sjf\+backfill" -- simulate --trace "$TMP/ok.csv" --policy sjf --backfill --blocking pool --out "$TMP/out1"
[ -f "$TMP/out1/jobs.csv" ] && [ -f "$TMP/out1/summary.json" ] && [ -f "$TMP/out1/config.json" ] || fail "simulate --out files missing"
head -1 "$TMP/out1/jobs.csv" | grep -qx "window,job_id,pool,num_gpus,submit_time,start_time,end_time,wait_s,jct_s,bsld,placement,status,reason" \
  || fail "jobs.csv header"
[ "$(wc -l < "$TMP/out1/jobs.csv")" -eq 4 ] || fail "jobs.csv should have 3 rows"
grep -q '"aggregate"' "$TMP/out1/summary.json" || fail "summary.json lacks aggregate"
expect 0 "wrote" -- simulate --policy fcfs,wfp --window 0:100 --window 100:50 --out "$TMP/out2"
# A window given twice would count its jobs twice; an empty --out would be taken for none.
expect 2 "--window '0:100': window 0:100 is given twice" -- simulate --window 0:100 --window 100:50 --window 0:100
expect 2 "--out: an empty name names no file or folder" -- simulate --out ''
# One range for a generated workload's load, wherever it is given (workload::kMinLoad, kMaxLoad).
expect 2 "--sample-load: 0.0001 is out of range \(0.001 to 100\)" -- simulate --sample-load 0.0001
[ -f "$TMP/out2/fcfs/jobs.csv" ] && [ -f "$TMP/out2/wfp/summary.json" ] || fail "per-policy output folders missing"
grep -q '^0:100,' "$TMP/out2/fcfs/jobs.csv" && grep -q '^100:50,' "$TMP/out2/fcfs/jobs.csv" || fail "window labels in jobs.csv"
[ "$(grep -c . "$TMP/out2/fcfs/jobs.csv")" -eq 151 ] || fail "two windows should give 150 rows"
# Two policies whose folder names come out the same each get their own folder.
expect 0 "fcfs: .*/out3/fcfs-2" -- simulate --trace "$TMP/ok.csv" --policy fcfs,fcfs --out "$TMP/out3"
[ -f "$TMP/out3/fcfs/jobs.csv" ] && [ -f "$TMP/out3/fcfs-2/jobs.csv" ] || fail "a repeated policy overwrote the first one's folder"
# A reused --out keeps no result of an earlier run beside the new one's; folders simulate did not write stay.
mkdir -p "$TMP/out3/mine" && echo keep > "$TMP/out3/mine/notes.txt"
expect 0 "removed an earlier simulate's results .*\(fcfs/, fcfs-2/\)" -- simulate --trace "$TMP/ok.csv" --policy sjf --out "$TMP/out3"
[ -f "$TMP/out3/jobs.csv" ] && [ ! -e "$TMP/out3/fcfs" ] && [ ! -e "$TMP/out3/fcfs-2" ] && [ -f "$TMP/out3/mine/notes.txt" ] ||
  fail "a single-policy run over a two-policy one: $(ls -R "$TMP/out3")"
expect 0 "removed an earlier simulate's results .*\(its files at the top\)" -- simulate --trace "$TMP/ok.csv" --policy sjf,f1 --out "$TMP/out3"
[ ! -e "$TMP/out3/jobs.csv" ] && [ ! -e "$TMP/out3/summary.json" ] && [ -f "$TMP/out3/sjf/jobs.csv" ] && grep -q '"folders"' "$TMP/out3/config.json" ||
  fail "a two-policy run over a single-policy one: $(ls -R "$TMP/out3")"
# Only what simulate wrote goes: not through a link out of --out, not another command's folder.
mkdir -p "$TMP/victim" && echo '{"command": "simulate"}' > "$TMP/victim/config.json" && echo keep > "$TMP/victim/jobs.csv"
"$RLTUNE" simulate --trace "$TMP/ok.csv" --policy fcfs,sjf --out "$TMP/out4" > /dev/null 2>&1
rm -r "$TMP/out4/sjf" && ln -s "$TMP/victim" "$TMP/out4/sjf"
"$RLTUNE" simulate --trace "$TMP/ok.csv" --policy fcfs --out "$TMP/out4" > /dev/null 2>&1
[ -f "$TMP/victim/jobs.csv" ] && [ -f "$TMP/victim/config.json" ] || fail "simulate removed files through a link out of --out"
ln -s "$TMP/nowhere" "$TMP/dangling"
expect 2 "--out .*dangling: .*dangling is a link to nothing" -- simulate --trace "$TMP/ok.csv" --out "$TMP/dangling"
# An --out that cannot be a folder is refused before the work (evaluate printed its whole table first).
echo file > "$TMP/a-file"
expect 2 "--out .*/a-file/sub: .*/a-file is a file, not a folder" -- simulate --out "$TMP/a-file/sub"
out=$("$RLTUNE" evaluate --model "$(cd "$(dirname "$0")/.." && pwd)/models/helios-fcfs-bsld" --windows 2 --window-len 50 --out "$TMP/a-file" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "a-file is a file, not a folder" && ! echo "$out" | grep -q "improvement" ||
  fail "evaluate --out on a file: $out"
expect 0 "^rltune [0-9]+\.[0-9]+\.[0-9]+$" -- --version
expect 2 "--seed: -1 is not a whole number from 0 to 18446744073709551615" -- simulate --seed -1
expect 2 "18446744073709551616 is not a whole number" -- simulate --seed 18446744073709551616
expect 2 "seed" -- generate --jobs 5 --seed -1 --out "$TMP/never.csv"
expect 0 "tiny" -- simulate --cluster "$TMP/tiny.yaml" --trace "$TMP/ok.csv" --placement defrag
expect 0 "offered load" -- trace-stats --trace "$TMP/ok.csv" --cluster helios
# Three jobs within 20 s that run up to 100 s: the load says little about contention, and it says so.
expect 0 "arrive within 20 s, less than the p99 duration" -- trace-stats --trace "$TMP/ok.csv" --cluster helios
# Scheduler options shape only the replay that measures estimates: refused where they change nothing.
expect 2 "--blocking shapes only the replay .* --runtime oracle does not run" -- trace-stats --trace "$TMP/ok.csv" --blocking pool
expect 2 "--mf-favor-small applies only to the multifactor policy" -- trace-stats --trace "$TMP/ok.csv" --runtime requested --mf-favor-small
"$RLTUNE" trace-stats --help | grep -qE -- "--temperature|--mf-age-weight" && fail "trace-stats --help offers options it refuses"
expect 0 "pool large +160 GPUs  load" -- generate --cluster philly --jobs 300 --out "$TMP/gen-philly.csv"
expect 0 "multifactor" -- policies
expect 0 "consolidate .*HeliosArtifact" -- policies
expect 0 "helios .*consolidate placement" -- policies

# --semantics helios: fixes placement, blocking and backfill; contradictions are errors.
expect 0 "blocking pool; backfill off; runtime estimates oracle; placement consolidate; semantics helios" -- \
  simulate --semantics helios --blocking pool --policy fcfs,sjf --trace "$TMP/ok.csv"
expect 0 "sjf@consolidate" -- simulate --semantics helios --policy sjf --trace "$TMP/ok.csv" --out "$TMP/hel"
grep -q '"semantics": "helios"' "$TMP/hel/config.json" && grep -q '"blocking": "pool"' "$TMP/hel/config.json" \
  || fail "config.json records the semantics and the blocking it sets"
expect 2 "--semantics helios sets --placement consolidate; --placement greedy contradicts it" -- simulate --semantics helios --placement greedy
expect 2 "sets --backfill false" -- simulate --semantics helios --backfill
expect 2 "sjf@greedy: --semantics helios places with consolidate" -- simulate --semantics helios --policy sjf@greedy
expect 2 "--semantics: unknown semantics .slurm. \(known: rltune, helios, reference\)" -- simulate --semantics slurm
expect 2 "--backfill-limits plans backfilling: it needs --backfill" -- simulate --sample-jobs 300 --backfill-limits
# sjf-sampled and --temperature: seeded draws; the temperature only where a policy samples.
expect 0 "sjf-sampled" -- policies
expect 0 "sjf-sampled" -- simulate --policy sjf,sjf-sampled --temperature 2 --trace "$TMP/ok.csv" --out "$TMP/samp"
grep -q '"temperature": 2' "$TMP/samp/sjf-sampled/config.json" || fail "config.json records the temperature of a sampled policy"
grep -q '"temperature"' "$TMP/samp/sjf/config.json" && fail "config.json records no temperature for a policy that does not sample"
expect 2 "--temperature applies only to sampled policies" -- simulate --policy sjf --temperature 2 --trace "$TMP/ok.csv"
expect 2 "--temperature: 0 is not between 0.01 and 100" -- simulate --policy sjf-sampled --temperature 0
expect 2 "--temperature applies only to sampled policies" -- train --temperature 2 --epochs 1 --out "$TMP/hot"
# --semantics reference: the published RLTune's baseline loop, for heuristic priorities only.
expect 0 "reference .*one head at a time" -- policies
expect 0 "placement greedy; semantics reference" -- simulate --semantics reference --policy fcfs,sjf,f1 --trace "$TMP/ok.csv"
expect 0 "fcfs\+backfill" -- simulate --semantics reference --backfill --policy fcfs --trace "$TMP/ok.csv"
expect 2 "multifactor: job .* the published multifactor ranks jobs by the wait their trace recorded" -- \
  simulate --semantics reference --policy multifactor --trace "$TMP/ok.csv"
expect 2 "--policy sjf-sampled: not under --semantics reference" -- simulate --semantics reference --policy sjf-sampled --trace "$TMP/ok.csv"
expect 0 "rl:.*helios-fcfs-bsld" -- \
  simulate --semantics reference --policy rl:"$(cd "$(dirname "$0")/.." && pwd)/models/helios-fcfs-bsld" --trace "$TMP/ok.csv"
expect 0 "semantics reference" -- \
  evaluate --semantics reference --windows 2 --model "$(cd "$(dirname "$0")/.." && pwd)/models/helios-fcfs-bsld" --baselines fcfs,sjf
expect 0 "semantics reference" -- \
  evaluate --semantics reference --backfill --windows 2 --model "$(cd "$(dirname "$0")/.." && pwd)/models/helios-fcfs-bsld" --baselines fcfs
expect 0 "wrote 50 jobs" -- generate --jobs 50 --out "$TMP/gen.csv"
expect 0 "50 jobs" -- simulate --trace "$TMP/gen.csv"
expect 2 "--sample-jobs applies only to the generated default workload, not to --trace" -- simulate --trace "$TMP/gen.csv" --sample-jobs 5
expect 2 "--vc-column applies only to the rltune format; .*gen.csv was read as canonical" -- simulate --trace "$TMP/gen.csv" --vc-column 3

# Determinism: the same inputs give byte-identical jobs.csv.
"$RLTUNE" simulate --policy wfp --backfill --out "$TMP/d1" > /dev/null 2>&1
"$RLTUNE" simulate --policy wfp --backfill --out "$TMP/d2" > /dev/null 2>&1
cmp -s "$TMP/d1/jobs.csv" "$TMP/d2/jobs.csv" || fail "jobs.csv differs between identical runs"

# Bad input: exit code 2 and a message naming the problem.
expect 2 "bad.csv:3: field 'duration': value 'oops'" -- simulate --trace "$TMP/bad.csv"
expect 0 "1 rows skipped" -- simulate --trace "$TMP/bad.csv" --skip-invalid
printf 'job_id,submit_time,duration,num_gpus\na,0,x,1\nb,5,y,1\n' > "$TMP/all-bad.csv"
expect 2 "all-bad.csv: no valid job left after skipping 2 rows: 2 x duration: is not a number" -- simulate --trace "$TMP/all-bad.csv" --skip-invalid
expect 2 "unknown priority policy 'nope'.*fcfs" -- simulate --policy nope
expect 2 "unknown command 'simulat' \(commands: simulate, evaluate, .*, train, export\)" -- simulat --policy fcfs
expect 2 "unknown command 'evaluat'" -- --log-level warn evaluat
expect 2 "unknown placement policy 'x'" -- simulate --placement x
expect 2 "cannot open the trace file" -- simulate --trace "$TMP/missing.csv"
expect 2 "bad.yaml:3: field 'pools\[0\].colour'" -- simulate --cluster "$TMP/bad.yaml"
# A second YAML document would be ignored: refused, at its line.
printf 'name: a\npools:\n  - {name: a, nodes: 2, gpus_per_node: 8}\n---\nname: b\n' > "$TMP/two-docs.yaml"
expect 2 "two-docs.yaml:4: .*starts a second YAML document; rltune reads one per file" -- simulate --cluster "$TMP/two-docs.yaml"
expect 2 "neither a preset" -- simulate --cluster nowhere
expect 2 "--window '5'" -- simulate --window 5
"$RLTUNE" simulate --window 0:010 --out "$TMP/w" > /dev/null 2>&1 && grep -q '^0:10,' "$TMP/w/jobs.csv" || fail "window labels are START:LEN"
expect 0 "3 jobs" -- simulate --trace <(cat "$TMP/ok.csv")
expect 2 "--mf-age-weight: inf is not between" -- simulate --policy multifactor --mf-age-weight inf
# Reading options with no file to read would do nothing.
expect 2 "--format applies only to reading a trace file; no --trace is given" -- simulate --format swf --sample-jobs 50
expect 2 "--duration-source applies only to reading a trace file; --like philly is not a trace file" \
  -- generate --like philly --duration-source x.csv --out "$TMP/g.csv"
expect 2 "--mf-age-weight applies only to the multifactor policy" -- simulate --policy fcfs,sjf@milp --mf-age-weight 5
expect 2 "--mf-favor-small applies only to the multifactor policy" -- simulate --policy sjf --mf-favor-small
expect 2 "only 3 jobs" -- simulate --trace "$TMP/ok.csv" --window 2:5
expect 2 "--blocking: unknown blocking mode .sometimes. \(known: global, pool\)" -- simulate --blocking sometimes
expect 2 "--runtime: unknown runtime knowledge 'psychic' \(known: oracle, requested, predicted:history, predicted:learned\)" -- simulate --runtime psychic
expect 2 "unknown runtime knowledge 'predicted:unknown' \(known: .*predicted:history" -- train --runtime predicted:unknown --epochs 1
expect 2 "--predict-last applies only to --runtime predicted" -- simulate --predict-last 3
expect 2 "--predict-last: 0 is not between 1 and 1000" -- simulate --runtime predicted --predict-last 0
expect 0 "runtime estimates \(predicted:history\):" -- simulate --policy fcfs,sjf --blocking pool --backfill --runtime predicted --sample-jobs 400
expect 0 "median \|ln\(estimate/true\)\| [0-9.]+, [0-9.]+% under-estimated.*estimated from user\+gpus\+vc" -- trace-stats --runtime predicted --sample-jobs 400
# Learned runtimes: fitted on the training split (helios-users: users who repeat themselves), measured on
# the jobs after it too; a model file given with --runtime-model is used as it is.
expect 0 "held out: +median \|ln\(estimate/true\)\| [0-9.]+.* after the training split, which the model was fitted on" -- \
  trace-stats --cluster helios --like helios-users --runtime predicted:learned --sample-jobs 2000
expect 2 "--runtime-model applies only to --runtime predicted:learned \(runtime is oracle\)" -- simulate --runtime-model m.json
expect 2 "nowhere.json: cannot read the runtime model" -- simulate --runtime predicted:learned --runtime-model "$TMP/nowhere.json"
if [ -n "$(ldd "$RLTUNE" | grep xgboost)" ]; then
  "$RLTUNE" simulate --cluster helios --like helios-users --sample-jobs 1500 --policy sjf --blocking pool --backfill \
    --runtime predicted:learned --window 1100:300 --out "$TMP/learned" > /dev/null 2>&1 || fail "simulate --runtime predicted:learned failed"
  grep -q '"runtime": "predicted:learned"' "$TMP/learned/config.json" || fail "config.json does not record predicted:learned"
fi
expect 0 "after up to 300 warm-up jobs" -- simulate --policy fcfs,sjf --window 400:100 --warmup 300
"$RLTUNE" simulate --window 400:100 --warmup 300 --out "$TMP/warm" > /dev/null 2>&1
[ "$(grep -c . "$TMP/warm/jobs.csv")" -eq 101 ] && grep -q '"warmup": 300' "$TMP/warm/config.json" \
  || fail "warm windows: only the window's 100 jobs are written, and config.json records the warm-up"
expect 2 "--warmup: -1 is not between 0 and 100000000" -- simulate --warmup -1
expect 2 "--warmup 10: no window starts after the trace's first job" -- simulate --warmup 10
expect 2 "--warmup 10: no window starts after" -- simulate --window 0:100 --window 0:50 --warmup 10
"$RLTUNE" simulate --runtime predicted:history --predict-last 4 --sample-jobs 300 --out "$TMP/pred" > /dev/null 2>&1
grep -q '"predict_last": 4' "$TMP/pred/config.json" && grep -q '"runtime_estimates"' "$TMP/pred/summary.json" \
  && grep -q '"user+gpus+vc": 0\.' "$TMP/pred/summary.json" \
  || fail "predicted runtimes: config.json records predict_last and summary.json the estimates' accuracy and sources"
# Jobs without a requested time: counted among the jobs that ran (not the rejected), and said once.
printf 'job_id,submit_time,duration,num_gpus,requested_time,vc\na,0,100,1,,0\nb,1,100,1,200,0\nc,2,100,999,,0\n' > "$TMP/no-limit.csv"
out=$("$RLTUNE" simulate --trace "$TMP/no-limit.csv" --runtime requested --policy fcfs,sjf 2>&1)
[ "$(echo "$out" | grep -c "window all: 1 jobs have no requested time")" -eq 1 ] || fail "the fallback warning: $out"
expect 2 "unknown trace format" -- simulate --trace "$TMP/ok.csv" --format parquet
expect 2 "--no-such-flag" -- simulate --no-such-flag
expect 2 "A subcommand is required|require" --

# The reference synthetic trace on the Helios preset (skipped when ../shared/traces is absent).
if [ -f "$SHARED/rltune/synthetic_trace.csv" ]; then
  expect 0 "960 jobs" -- simulate --trace "$SHARED/rltune/synthetic_trace.csv" --vc-column 18 --gpu-type-column -1 --policy fcfs,sjf
else
  echo "skip: $SHARED/rltune/synthetic_trace.csv is absent"
fi

# cluster-from: a node inventory (PAI machine spec, no header) becomes a cluster that simulate loads.
printf 'v1,V100,96,384,8\nc1,CPU,96,512,0\nv2,V100,96,384,8\nt1,T4,96,512,2\n' > "$TMP/inv.csv"
printf 'v1,V100,96,384,8\nv2,V100,96,384,eight\n' > "$TMP/inv-bad.csv"
expect 0 "3 GPU nodes read, 1 machines without GPUs left out; 2 pools" -- cluster-from --format pai-machines "$TMP/inv.csv" --out "$TMP/inv.yaml"
grep -q "^  - {name: v100-8g, gpu_type: V100, nodes: 2, gpus_per_node: 8" "$TMP/inv.yaml" || fail "cluster-from pool line"
expect 0 "cluster  inv: 2 pools, 3 nodes, 18 GPUs" -- simulate --cluster "$TMP/inv.yaml" --trace "$TMP/ok.csv"
expect 0 "name: small" -- cluster-from --format pai-machines "$TMP/inv.csv" --name small --sample 1
# A node with GPUs but no GPU model is left out (as documented), and said so.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,8000,61440,2,T4\nn1,8000,61440,2,\n' > "$TMP/openb-nodes.csv"
expect 0 "openb-nodes.csv:3: node n1 has 2 GPUs but no GPU model: left out" -- cluster-from --format openb-nodes "$TMP/openb-nodes.csv"
[ "$("$RLTUNE" cluster-from --format pai-machines "$TMP/inv.csv" --sample 1 2> /dev/null | grep -c 'nodes: 1,')" -eq 2 ] \
  || fail "cluster-from --sample 1 should cap both pools to one node"
expect 2 "inv-bad.csv:2: field 'cap_gpu': value 'eight'" -- cluster-from --format pai-machines "$TMP/inv-bad.csv"
expect 2 "unknown inventory format 'slurm'" -- cluster-from --format slurm "$TMP/inv.csv"
expect 2 "--sample" -- cluster-from --format pai-machines "$TMP/inv.csv" --sample 0

# convert: a published format to canonical CSV with a report; converting the output again changes nothing.
cat > "$TMP/pods.csv" <<'CSV'
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p1,6000,12288,1,460,,LS,Running,100,5000,150
p2,8000,1024,8,1000,V100M16|V100M32,BE,Succeeded,200,1200,250
p3,1000,1024,1,1000,,BE,Pending,300,400,
CSV
expect 0 "kept 2 jobs.*skipped 1 rows: 1 x never scheduled" -- convert "$TMP/pods.csv" --out "$TMP/pods1.csv"
expect 0 "as canonical: kept 2 jobs" -- convert "$TMP/pods1.csv" --out "$TMP/pods2.csv"
cmp -s "$TMP/pods1.csv" "$TMP/pods2.csv" || fail "convert round trip changed the canonical file"
# An id that starts with '#' is quoted, or the next reader would take its row for a comment.
printf 'job_id,submit_time,duration,num_gpus\n"#5",0,100,1\nb,10,100,1\n' > "$TMP/hash.csv"
expect 0 "as canonical: kept 2 jobs" -- convert "$TMP/hash.csv" --out "$TMP/hash1.csv"
grep -q '^"#5",' "$TMP/hash1.csv" || fail "convert wrote an id starting with '#' unquoted: $(cat "$TMP/hash1.csv")"
expect 0 "as canonical: kept 2 jobs" -- convert "$TMP/hash1.csv" --out "$TMP/hash2.csv"
cp "$TMP/pods1.csv" "$TMP/pods-kept.csv"
expect 2 "--out .*pods1.csv: is .*pods1.csv, which writing would replace" -- convert "$TMP/pods1.csv" --out "$TMP/./pods1.csv"
cmp -s "$TMP/pods1.csv" "$TMP/pods-kept.csv" || fail "convert wrote over its input"
expect 2 "--out .*pods1.csv: is .*pods1.csv, which writing would replace" -- generate --like "$TMP/pods1.csv" --jobs 10 --out "$TMP/pods1.csv"
expect 2 "--save-model .*pods1.csv: is .*pods1.csv, which writing would replace" -- generate --like "$TMP/pods1.csv" --save-model "$TMP/pods1.csv"
cmp -s "$TMP/pods1.csv" "$TMP/pods-kept.csv" || fail "generate wrote over its input"
expect 2 "--save-model .*same.yaml: is also --out" -- generate --like philly --out "$TMP/same.yaml" --save-model "$TMP/./same.yaml"
grep -qx "p2,200,950,8,,V100|V100M32,,8,1024,,Succeeded,8," "$TMP/pods1.csv" || fail "converted openb row: $(cat "$TMP/pods1.csv")"
expect 2 "no input file" -- convert --out "$TMP/x.csv"
expect 2 "cannot tell the trace format" -- convert "$TMP/inv.csv" --out "$TMP/x.csv"
printf '[{"jobid": "a", "submitted_time": "2017-10-03 12:06:25", "attempts": [' > "$TMP/trunc.json"
expect 2 "trunc.json.*invalid JSON" -- convert --format philly "$TMP/trunc.json" --out "$TMP/x.csv"

# generate: the same seed gives the same file; families, model files and fitted traces all work.
expect 0 "wrote 300 jobs like philly at offered load 0.8 on philly-paper" -- generate --cluster philly --jobs 300 --load 0.8 --seed 5 --out "$TMP/g1.csv"
"$RLTUNE" generate --cluster philly --jobs 300 --load 0.8 --seed 5 --out "$TMP/g2.csv" > /dev/null
cmp -s "$TMP/g1.csv" "$TMP/g2.csv" || fail "generate is not deterministic for a seed"
expect 0 "wrote the workload model" -- generate --like "$TMP/g1.csv" --save-model "$TMP/model.yaml"
expect 0 "wrote 100 jobs like g1" -- generate --like "$TMP/model.yaml" --jobs 100 --out "$TMP/g3.csv"
expect 2 "'nope': neither a workload family \(.*helios.*\) nor a readable model file" -- generate --like nope --out "$TMP/never.csv"
"$RLTUNE" generate --cluster alibaba --jobs 20000 --load 0.95 --out "$TMP/g4.csv" > /dev/null
expect 0 "offered load on cluster alibaba \(254 GPUs\): 0\.9" -- trace-stats --cluster alibaba --trace "$TMP/g4.csv"
expect 2 "neither a workload family" -- generate --like nowhere.yaml --out "$TMP/x.csv"
expect 2 "give --out" -- generate

# MILP placement: runs, reports its solves in summary.json, keeps its options in config.json.
expect 0 "fcfs@milp" -- simulate --policy fcfs --placement milp --sample-jobs 300 --out "$TMP/milp"
grep -q '"milp_solves": [1-9]' "$TMP/milp/summary.json" || fail "summary.json lacks milp_solves"
grep -q '"milp_us_p99"' "$TMP/milp/summary.json" || fail "summary.json lacks milp_us_p99"
grep -q '"model": "nodes"' "$TMP/milp/config.json" || fail "config.json lacks the milp model"
expect 0 "fcfs@milp" -- simulate --policy fcfs --placement milp --milp-model ways --milp-alpha 2 --sample-jobs 100 --out "$TMP/ways"
grep -q '"alpha": 2' "$TMP/ways/config.json" || fail "config.json lacks the given alpha"
grep -q '"beta": 0.3' "$TMP/ways/config.json" || fail "ways should default to the paper's beta"
expect 2 "--milp-model: unknown MILP model 'magic' \(known: nodes, ways\)" -- simulate --placement milp --milp-model magic
expect 2 "milp-alpha" -- simulate --placement milp --milp-alpha -1
expect 2 "applies only to --placement milp" -- simulate --milp-gamma 1

# A full disk: expect_full_disk KIB PATTERN DIR -- ARGS runs rltune ARGS where no file may grow past
# KIB KiB (SIGXFSZ ignored, so writes fail with EFBIG, as on a full disk). The command must exit 2
# naming the file, and leave no temporary file in DIR.
expect_full_disk() {
  local kib=$1 pattern=$2 dir=$3
  shift 4
  local out
  out=$( (trap '' XFSZ; ulimit -f "$kib"; "$RLTUNE" "$@") 2>&1)
  local got=$?
  [ "$got" -eq 2 ] || fail "on a full disk, rltune $* exited $got, expected 2: $out"
  echo "$out" | grep -qE -- "$pattern" || fail "on a full disk, rltune $* output lacks /$pattern/: $out"
  [ -z "$(find "$dir" -name '*.tmp' 2>/dev/null)" ] || fail "on a full disk, rltune $* left $(find "$dir" -name '*.tmp')"
}
mkdir -p "$TMP/full"
expect_full_disk 8 "full/gen.csv: cannot write" "$TMP/full" -- generate --jobs 2000 --out "$TMP/full/gen.csv"
expect_full_disk 8 "full/sim/.*: cannot write" "$TMP/full" -- simulate --sample-jobs 2000 --out "$TMP/full/sim"
# An output path that is a device, a pipe or a symbolic link is written through, never replaced by a file.
expect 2 "/dev/full: cannot write the output file" -- generate --jobs 50 --out /dev/full
[ -c /dev/full ] || fail "an output replaced /dev/full"
# A result on stdout lost to a full disk is an error, not a success with nothing written.
out=$("$RLTUNE" trace-stats --trace "$TMP/ok.csv" 2>&1 >/dev/full)
got=$?
[ "$got" -eq 2 ] || fail "trace-stats > /dev/full exited $got, expected 2: $out"
echo "$out" | grep -q "cannot write the result to standard output (No space left on device)" || fail "trace-stats > /dev/full: $out"
"$RLTUNE" simulate --help > /dev/full 2>/dev/null && fail "simulate --help > /dev/full exited 0"
mkdir -p "$TMP/link-target" && ln -sf link-target/gen.csv "$TMP/gen-link.csv"
expect 0 "wrote 50 jobs" -- generate --jobs 50 --out "$TMP/gen-link.csv"
[ -L "$TMP/gen-link.csv" ] && cmp -s "$TMP/gen-link.csv" "$TMP/gen.csv" || fail "an output through a symbolic link replaced the link"
mkfifo "$TMP/gen-fifo" && { cat "$TMP/gen-fifo" > "$TMP/gen-fifo.out" & }
expect 0 "wrote 50 jobs" -- generate --jobs 50 --out "$TMP/gen-fifo"
wait
[ -p "$TMP/gen-fifo" ] && cmp -s "$TMP/gen-fifo.out" "$TMP/gen.csv" || fail "an output into a FIFO did not reach its reader"

# Learning: train (through rltune-train), resume, evaluate, simulate with the model, export.
if [ -x "$(dirname "$RLTUNE")/rltune-train" ]; then
  expect 0 "wrote model.pt" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 1 --trajs 4 \
    --validation-windows 2 --pi-iters 5 --vf-iters 5 --quiet --out "$TMP/run"
  for f in model.pt best.pt policy.json best.json progress.csv config.json; do
    [ -s "$TMP/run/$f" ] || fail "train did not write $f"
  done
  expect_full_disk 64 "full/run/.*\.pt: cannot write" "$TMP/full" -- train --cluster helios --sample-jobs 3000 --window-len 64 \
    --epochs 1 --trajs 4 --validation-windows 2 --pi-iters 5 --vf-iters 5 --quiet --out "$TMP/full/run"
  [ "$(wc -l < "$TMP/run/progress.csv")" -eq 2 ] || fail "progress.csv should have one epoch"
  grep -q '"pi_lr": 0.0003' "$TMP/run/config.json" || fail "config.json lacks the PPO settings"
  # Training's numbers have bounds (rl::train_settings, rl::ppo_settings), checked before any work.
  expect 2 "--gamma: 2 is not between 0 and 1" -- train --gamma 2 --out "$TMP/bad-gamma"
  expect 2 "--target-kl: nan is not between 0 and 100" -- train --target-kl nan --out "$TMP/bad-kl"
  expect 2 "--trajs: 0 is not between 1 and 1000000" -- train --trajs 0 --out "$TMP/bad-trajs"
  expect 2 "--pi-iters: 2.5 is not a whole number" -- train --pi-iters 2.5 --out "$TMP/bad-iters"
  expect 2 "--validation-temperature: -1 is not between 0 and 100" -- train --validation-temperature -1 --out "$TMP/bad-vt"
  expect 2 "--teacher: sjf-sample not in" -- train --teacher sjf-sample --imitate 1 --out "$TMP/bad-teacher"
  [ ! -e "$TMP/bad-gamma" ] || fail "a refused train made its run folder"
  # Training with learned runtimes writes the model it fitted beside the policy; run again from that
  # file, a simulation gives the same schedule as one that fits its own on the same jobs.
  if [ -n "$(ldd "$RLTUNE" | grep xgboost)" ]; then
    expect 0 "wrote model.pt, .*runtime-model.json and config.json" -- train --cluster helios --like helios-users --sample-jobs 1500 --window-len 64 --epochs 1 \
      --trajs 2 --validation-windows 1 --pi-iters 2 --vf-iters 2 --blocking pool --backfill --runtime predicted:learned \
      --features realistic --quiet --out "$TMP/run-learned"
    grep -q '"format":"rltune-runtime-model"' "$TMP/run-learned/runtime-model.json" || fail "train did not write runtime-model.json"
    "$RLTUNE" simulate --cluster helios --like helios-users --sample-jobs 1500 --policy sjf --blocking pool --backfill \
      --runtime predicted:learned --runtime-model "$TMP/run-learned/runtime-model.json" --window 1100:300 --out "$TMP/learned-file" \
      > /dev/null 2>&1 || fail "simulate --runtime-model failed"
    cmp -s "$TMP/learned/jobs.csv" "$TMP/learned-file/jobs.csv" || fail "the saved runtime model schedules otherwise than a fresh fit"
  fi
  # --init-policy: the policy starts from a file's weights (with no policy step, it stays there).
  expect 0 "wrote model.pt" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 1 --trajs 2 \
    --validation-windows 1 --pi-iters 0 --vf-iters 2 --quiet --init-policy "$TMP/run/best.json" --out "$TMP/init"
  grep -q '"init_policy"' "$TMP/init/config.json" || fail "config.json does not record --init-policy"
  /usr/bin/python3 -c 'import json, sys; a, b = (json.load(open(f))["network"] for f in sys.argv[1:]); sys.exit(a != b)' \
    "$TMP/run/best.json" "$TMP/init/policy.json" || fail "--init-policy: the policy did not start from the file's weights"
  # A resume goes on from model.pt: the start file may change (a run still training) or go meanwhile.
  cp "$TMP/run/best.json" "$TMP/start.json"
  init_run() { expect 0 "wrote model.pt" -- train --cluster helios --sample-jobs 3000 --window-len 64 --trajs 2 --validation-windows 1 \
    --pi-iters 0 --vf-iters 2 --quiet --init-policy "$TMP/start.json" --out "$TMP/init-resumed" "$@"; }
  init_run --epochs 1
  echo " " >> "$TMP/start.json"
  init_run --epochs 2 --resume
  rm "$TMP/start.json"
  init_run --epochs 3 --resume
  [ "$(wc -l < "$TMP/init-resumed/progress.csv")" -eq 4 ] || fail "the resumed runs from a changed or removed start file did not go on"
  expect 2 "--resume: the run in .*init-resumed started from .*start.json, not from --init-policy .*run/best.json" -- train --cluster helios \
    --sample-jobs 3000 --window-len 64 --trajs 2 --validation-windows 1 --pi-iters 0 --vf-iters 2 --quiet --init-policy "$TMP/run/best.json" \
    --out "$TMP/init-resumed" --epochs 4 --resume
  expect 2 "--init-policy .*best.json: a mlp policy of 7 features cannot start a mlp policy of 11 features" -- train --cluster helios \
    --sample-jobs 3000 --window-len 64 --epochs 1 --features ranked --init-policy "$TMP/run/best.json" --out "$TMP/init-bad"
  expect 2 "--window-len 5000: must be at most the trace's 3000 jobs" -- train --cluster helios --sample-jobs 3000 --window-len 5000 --epochs 1 --out "$TMP/too-long"
  expect 2 "already holds a training run" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 1 \
    --trajs 4 --quiet --out "$TMP/run"
  # Another command's folder is refused, before its config.json could be replaced.
  cp "$TMP/out1/config.json" "$TMP/out1-config.json"
  expect 2 "--out .*/out1: holds the results of another command \(its config.json is not train's\)" -- train --cluster helios \
    --sample-jobs 3000 --window-len 64 --epochs 1 --trajs 4 --quiet --out "$TMP/out1"
  cmp -s "$TMP/out1/config.json" "$TMP/out1-config.json" || fail "a refused train replaced a simulation's config.json"
  expect 0 "epoch 2" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 2 --trajs 4 \
    --validation-windows 2 --pi-iters 5 --vf-iters 5 --quiet --resume --out "$TMP/run"
  [ "$(wc -l < "$TMP/run/progress.csv")" -eq 3 ] || fail "the resumed run should have two epochs"
  expect 2 "settings differ" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 3 --trajs 5 \
    --quiet --resume --out "$TMP/run"
  expect 2 "is at epoch 2, past --epochs 1" -- train --resume --out "$TMP/run" --epochs 1 --quiet
  # The run folder alone resumes with the run's own arguments; --epochs (and --threads) may change.
  expect 0 "epoch 3" -- train --resume --out "$TMP/run" --epochs 3 --quiet
  [ "$(wc -l < "$TMP/run/progress.csv")" -eq 4 ] || fail "the short resume should add a third epoch"
  grep -q '"window_len": 64' "$TMP/run/config.json" || fail "the short resume lost the run's settings"
  # Without --epochs, a resume goes to the end the last invocation set (3), not the default (100).
  expect 0 "resuming .* at epoch 3 of 3" -- train --resume --out "$TMP/run" --quiet
  [ "$(wc -l < "$TMP/run/progress.csv")" -eq 4 ] || fail "a resume without --epochs trained past the run's last end"
  # A run that has ended writes its policy.json again from model.pt: the same bytes.
  cp "$TMP/run/policy.json" "$TMP/run-policy.json" && rm "$TMP/run/policy.json"
  expect 0 "resuming .* at epoch 3 of 3" -- train --resume --out "$TMP/run" --quiet
  cmp -s "$TMP/run/policy.json" "$TMP/run-policy.json" || fail "a resume did not write the run's policy.json again"
  # Given the run's own settings but no --epochs, too, it goes to the run's end, not the default 100.
  expect 0 "resuming .* at epoch 3 of 3" -- train --cluster helios --sample-jobs 3000 --window-len 64 --trajs 4 \
    --validation-windows 2 --pi-iters 5 --vf-iters 5 --quiet --resume --out "$TMP/run"
  expect 0 "resuming .* at epoch 3 of 3" -- train --cluster helios --sample-jobs 3000 --window-len 64 --trajs 4 \
    --validation-windows 2 --pi-iters 5 --vf-iters 5 --quiet --resume --out "$TMP/run" --
  # A policy.json that model.pt does not hold (an edit, or a checkpoint damaged in place) is refused;
  # the next epoch's, left by a run stopped before its model.pt, is not.
  sed 's/"epoch":3/"epoch":4/' "$TMP/run-policy.json" > "$TMP/run/policy.json"
  expect 0 "resuming .* at epoch 3 of 3" -- train --resume --out "$TMP/run" --quiet
  cmp -s "$TMP/run/policy.json" "$TMP/run-policy.json" || fail "a resume did not write the interrupted epoch's policy.json over"
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["network"]["layers"][0]["bias"][0] += 1
json.dump(j, open(sys.argv[1], "w"))' "$TMP/run/policy.json"
  expect 2 "model.pt does not hold the network of .*run/policy.json" -- train --resume --out "$TMP/run" --quiet
  # One written by an older rltune, without a key added since ("commit"), holds the same network: resumed.
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); del j["commit"]
json.dump(j, open(sys.argv[2], "w"))' "$TMP/run-policy.json" "$TMP/run/policy.json"
  expect 0 "resuming .* at epoch 3 of 3" -- train --resume --out "$TMP/run" --quiet
  cp "$TMP/run-policy.json" "$TMP/run/policy.json"
  cp "$TMP/run/best.json" "$TMP/run-best.json" && head -c 100 "$TMP/run-best.json" > "$TMP/run/best.json"
  expect 2 "run/best.json: not JSON" -- train --resume --out "$TMP/run" --quiet
  cp "$TMP/run-best.json" "$TMP/run/best.json"
  # An edited progress.csv, or a cut config.json, is refused, saying what is wrong.
  cp "$TMP/run/progress.csv" "$TMP/run-progress.csv" && sed -i '3s/^2,/7,/' "$TMP/run/progress.csv"
  expect 2 "progress.csv: line 3: epoch 7 where 2 was expected" -- train --resume --out "$TMP/run" --quiet
  sed -E '3s/^([^,]*),[^,]*,/\1,x,/' "$TMP/run-progress.csv" > "$TMP/run/progress.csv"
  expect 2 "progress.csv: line 3: field 2 'x' is not a number" -- train --resume --out "$TMP/run" --quiet
  cp "$TMP/run-progress.csv" "$TMP/run/progress.csv"
  cp "$TMP/run/config.json" "$TMP/run-config.json" && head -c 100 "$TMP/run-config.json" > "$TMP/run/config.json"
  expect 2 "--out .*run: its config.json is not JSON \(cut short or edited\)" -- train --resume --out "$TMP/run" --quiet
  # Edited: a key twice, a command line that is not all words, no command line (an older run).
  sed '0,/"options": {/s//"options": {\n    "epochs": 5,/' "$TMP/run-config.json" > "$TMP/run/config.json"
  expect 2 "run/config.json: key 'epochs' appears twice" -- train --resume --out "$TMP/run" --quiet
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["arguments"][1] = 3000
json.dump(j, open(sys.argv[2], "w"))' "$TMP/run-config.json" "$TMP/run/config.json"
  expect 2 "run/config.json: 'arguments' is not a list of strings" -- train --resume --out "$TMP/run" --quiet
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); del j["arguments"]
json.dump(j, open(sys.argv[2], "w"))' "$TMP/run-config.json" "$TMP/run/config.json"
  expect 2 "settings differ .*keeps no command line \(an older run\): give its arguments again" -- train --resume --out "$TMP/run" --quiet
  rm "$TMP/run/config.json"
  expect 2 "run/config.json is missing" -- train --resume --out "$TMP/run" --quiet
  cp "$TMP/run-config.json" "$TMP/run/config.json"
  # A model whose config.json is not an object is refused, not run without its regime.
  mkdir -p "$TMP/model-array" && cp "$TMP/run/best.json" "$TMP/model-array/" && echo '[]' > "$TMP/model-array/config.json"
  expect 2 "model-array/config.json: the model's training config is unreadable: not a JSON object" -- simulate \
    --policy rl:"$TMP/model-array" --sample-jobs 300 --window 0:64
  expect 2 "--resume: .*no-such-run is not a folder: there is no run to resume" -- train --resume --out "$TMP/no-such-run" --quiet
  [ ! -e "$TMP/no-such-run" ] || fail "a refused resume made its folder"
  # A training window the cluster rejects whole is refused before the first epoch, not when a draw lands there.
  { echo "job_id,submit_time,duration,num_gpus,vc"; for k in $(seq 0 99); do echo "j$k,$((k * 60)),600,1,$([ "$k" -lt 50 ] && echo 0 || echo nowhere)"; done; } > "$TMP/half-rejected.csv"
  expect 2 "window 50:20 of the train split: none of its jobs can run on cluster helios" -- train --cluster helios \
    --trace "$TMP/half-rejected.csv" --window-len 20 --epochs 1 --trajs 2 --quiet --out "$TMP/run-rejected"
  # A resume reads the same files as the run: a trace changed under its name is refused, naming it.
  "$RLTUNE" generate --cluster helios --jobs 400 --seed 3 --out "$TMP/train-trace.csv" > /dev/null 2>&1 || fail "generate failed"
  expect 0 "wrote model.pt" -- train --cluster helios --trace "$TMP/train-trace.csv" --window-len 32 --epochs 1 --trajs 2 \
    --validation-windows 1 --pi-iters 1 --vf-iters 1 --quiet --out "$TMP/run-file"
  grep -q '"inputs"' "$TMP/run-file/config.json" || fail "train's config.json lacks its inputs' checksums"
  "$RLTUNE" generate --cluster helios --jobs 400 --seed 4 --out "$TMP/train-trace.csv" > /dev/null 2>&1 || fail "generate failed"
  expect 2 "--resume: .*train-trace.csv has changed since the run" -- train --resume --out "$TMP/run-file" --epochs 2 --quiet
  [ "$(wc -l < "$TMP/run-file/progress.csv")" -eq 2 ] || fail "a refused resume trained on"
  # A preset's name is the preset, whatever file of that name is in the current folder: not an input.
  mkdir -p "$TMP/preset-cwd" && echo junk > "$TMP/preset-cwd/helios"
  (cd "$TMP/preset-cwd" && "$RLTUNE" train --cluster helios --sample-jobs 3000 --window-len 32 --epochs 1 --trajs 2 \
    --validation-windows 1 --pi-iters 1 --vf-iters 1 --quiet --out run > /dev/null 2>&1) || fail "train beside a file named helios failed"
  echo junk2 > "$TMP/preset-cwd/helios"
  (cd "$TMP/preset-cwd" && "$RLTUNE" train --resume --out run --epochs 2 --quiet > /dev/null 2>&1) ||
    fail "a file named like the preset stopped a resume"
  # A trace read from a pipe is not digested (that would consume it before the run reads it).
  "$RLTUNE" train --cluster helios --trace /dev/stdin --window-len 32 --epochs 1 --trajs 2 --validation-windows 1 --pi-iters 1 \
    --vf-iters 1 --quiet --out "$TMP/run-stdin" < "$TMP/train-trace.csv" > "$TMP/run-stdin.log" 2>&1
  grep -q "trace /dev/stdin (400 jobs)" "$TMP/run-stdin.log" || fail "train from a pipe: $(cat "$TMP/run-stdin.log")"
  expect 0 "wrote $TMP/eval/evaluation.json" -- evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 --windows 3 \
    --window-len 64 --baselines fcfs,sjf --out "$TMP/eval/"
  grep -q "rl vs sjf" <("$RLTUNE" evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 --windows 3 --window-len 64 \
    --baselines fcfs,sjf 2>&1) || fail "evaluate prints no improvement over sjf"
  grep -q '"improvement"' "$TMP/eval/evaluation.json" || fail "evaluation.json lacks the improvement"
  grep -q '"avg_bsld_pct"' "$TMP/eval/evaluation.json" || fail "evaluation.json lacks avg_bsld_pct"
  # config.json beside it says how the comparison ran.
  grep -q '"command": "evaluate"' "$TMP/eval/config.json" && grep -q '"placement": "greedy"' "$TMP/eval/config.json" \
    && grep -q '"policies": \[' "$TMP/eval/config.json" || fail "evaluate's config.json: $(cat "$TMP/eval/config.json")"
  # Not into the model's own run folder: its config.json is the model's.
  expect 2 "--out .*run: holds the results of another command \(its config.json is not evaluate's\)" -- evaluate \
    --model "$TMP/run" --cluster helios --sample-jobs 3000 --windows 2 --window-len 64 --baselines fcfs --out "$TMP/run"
  grep -q '"command": "train"' "$TMP/run/config.json" || fail "evaluate wrote over the training run's config.json"
  # --semantics helios: the baselines and the model run under HeliosArtifact's rules; train's baseline too.
  expect 0 "placement consolidate; semantics helios" -- evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 \
    --windows 2 --window-len 64 --baselines fcfs,sjf --semantics helios --out "$TMP/eval-helios/"
  grep -q '"semantics": "helios"' "$TMP/eval-helios/evaluation.json" || fail "evaluation.json lacks the semantics"
  expect 0 "wrote model.pt" -- train --semantics helios --baseline sjf --cluster helios --sample-jobs 3000 --window-len 64 \
    --epochs 1 --trajs 2 --validation-windows 1 --pi-iters 2 --vf-iters 2 --quiet --out "$TMP/run-helios"
  grep -q '"semantics": "helios"' "$TMP/run-helios/config.json" && grep -q '"placement": "consolidate"' "$TMP/run-helios/config.json" \
    || fail "train's config.json lacks the semantics and the placement it sets"
  # The whole test split (jobs 2550..3000 of 3000) as one window, warmed by the 100 jobs before it.
  expect 0 "windows  1 x 450 jobs from the test split \(jobs 2550\.\.3000\) after up to 100 warm-up jobs" -- evaluate \
    --model "$TMP/run" --cluster helios --sample-jobs 3000 --window all --warmup 100 --baselines fcfs
  # Windows over the jobs it trained on (the same workload's first 70%) are said to be so.
  expect 0 "3 of the 3 windows hold jobs the model was trained on \(jobs 0\.\.2100 of this workload" -- evaluate \
    --model "$TMP/run" --cluster helios --sample-jobs 3000 --split train --windows 3 --window-len 64 --baselines fcfs
  "$RLTUNE" evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 --windows 3 --window-len 64 --baselines fcfs 2>&1 \
    | grep -q "trained on (jobs" && fail "evaluate warned about test windows the model never saw"
  expect 2 "--baselines: names no heuristic" -- evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 --baselines ,
  expect 2 "only 'all'" -- evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 --window 0:100
  expect 2 "excludes" -- evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 --window all --windows 3
  expect 0 "rl:" -- simulate --policy fcfs,rl:"$TMP/run" --sample-jobs 300
  "$RLTUNE" simulate --policy rl:"$TMP/run" --sample-jobs 300 2>&1 | grep -q "carry over" && fail "a model in its own regime warned"
  # Trained with global blocking and no backfill: run otherwise, it says so.
  expect 0 "runs with pool blocking \(trained: global\), backfill \(trained: no backfill\); what it learned may not carry over" \
    -- simulate --policy rl:"$TMP/run/policy.json" --sample-jobs 300 --blocking pool --backfill
  # rl-sampled in simulate is the policy that evaluate --sample runs: the same seed gives the same window result.
  expect 0 "rl vs fcfs" -- evaluate --model "$TMP/run" --cluster helios --sample-jobs 3000 --windows 1 --window-len 64 \
    --baselines fcfs --sample --seed 3 --out "$TMP/eval-sampled"
  window=$(grep -o '"window": "[0-9]*:64"' "$TMP/eval-sampled/evaluation.json" | head -1 | grep -o '[0-9]*:64')
  expect 0 "rl-sampled:" -- simulate --cluster helios --sample-jobs 3000 --seed 3 --window "$window" \
    --policy rl-sampled:"$TMP/run" --out "$TMP/sim-sampled"
  evaluated=$(grep -o '"avg_bsld": [-0-9.e+]*' "$TMP/eval-sampled/evaluation.json" | sed -n 2p)
  simulated=$(grep -o '"avg_bsld": [-0-9.e+]*' "$TMP/sim-sampled/summary.json" | head -1)
  [ -n "$evaluated" ] && [ "$evaluated" = "$simulated" ] ||
    fail "rl-sampled in simulate ($simulated) differs from evaluate --sample ($evaluated) on window $window"
  expect 0 "wrote model.pt" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 1 --trajs 2 \
    --validation-windows 1 --pi-iters 2 --vf-iters 2 --blocking pool --quiet --out "$TMP/run-pool"
  grep -q '"blocking": "pool"' "$TMP/run-pool/config.json" || fail "config.json lacks the blocking mode"
  expect 0 "wrote model.pt" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 1 --trajs 2 \
    --validation-windows 1 --pi-iters 2 --vf-iters 2 --backfill --placement milp --quiet --out "$TMP/run-bf"
  grep -q '"backfill": true' "$TMP/run-bf/config.json" || fail "config.json lacks backfill"
  expect 0 "wrote model.pt" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 1 --trajs 2 \
    --validation-windows 1 --pi-iters 2 --vf-iters 2 --skip --quiet --out "$TMP/run-skip"
  grep -q '"skip": true' "$TMP/run-skip/config.json" || fail "config.json lacks skip"
  grep -q '"skip_logit"' "$TMP/run-skip/policy.json" || fail "policy.json lacks the skip logit"
  expect 0 "rl:" -- simulate --policy rl:"$TMP/run-skip" --sample-jobs 300
  expect 0 "imitation 1/1" -- train --cluster helios --sample-jobs 3000 --window-len 64 --epochs 1 --trajs 2 \
    --validation-windows 1 --pi-iters 2 --vf-iters 2 --baseline sjf --features ranked --reconsider --imitate 1 \
    --out "$TMP/run-imitate"
  grep -q '"commit":false' "$TMP/run-imitate/policy.json" || fail "policy.json lacks commit"
  grep -q '"imitation_epochs": 1' "$TMP/run-imitate/config.json" || fail "config.json lacks imitation_epochs"
  expect 0 "imitation 1/1: cross-entropy [0-9.]+ \\(the teacher's entropy [0-9.]+\\), sjf-sampled return" -- train --cluster helios --sample-jobs 3000 --window-len 64 \
    --epochs 1 --trajs 2 --validation-windows 1 --pi-iters 2 --vf-iters 2 --baseline sjf --features extended --reconsider \
    --teacher sjf-sampled --imitate 1 --imitation-lr 0.01 --validation-temperature 1 --out "$TMP/run-drawn"
  grep -q '"teacher": "sjf-sampled"' "$TMP/run-drawn/config.json" || fail "config.json lacks the teacher"
  grep -q '"imitation_lr": 0.01' "$TMP/run-drawn/config.json" || fail "config.json lacks imitation_lr"
  grep -q 'imitation_lr' "$TMP/run-imitate/config.json" && fail "config.json records imitation_lr though it was not set"
  grep -q '"validation_temperature": 1' "$TMP/run-drawn/config.json" || fail "config.json lacks validation_temperature"
  expect 0 "rl:" -- simulate --policy sjf,rl:"$TMP/run-imitate" --sample-jobs 300
  for model in helios-f1-bsld-ranked philly-sjf-bsld-ranked alibaba-uni-bsld-ranked; do
    expect 0 "$model" -- simulate --policy rl:"$(cd "$(dirname "$0")/.." && pwd)/models/$model" --sample-jobs 300
  done
  expect 2 "--features: ranks not in" -- train --cluster helios --features ranks --out "$TMP/run-bad"
  expect 0 "wrote .*skip.pt" -- export --model "$TMP/run-skip" --torchscript "$TMP/skip.pt"
  expect 0 "wrote .*policy.pt" -- export --model "$TMP/run" --torchscript "$TMP/policy.pt"
  cp "$TMP/init/model.pt" "$TMP/init-model.pt"
  expect 2 "--torchscript .*init/model.pt: would replace a file of the rltune results in .*init; choose another file" \
    -- export --model "$TMP/run" --torchscript "$TMP/init/model.pt"
  cmp -s "$TMP/init/model.pt" "$TMP/init-model.pt" || fail "export replaced another run's checkpoint"
  [ -s "$TMP/policy.pt" ] || fail "export wrote nothing"
  # The export must not replace the policy or a checkpoint of its run.
  cp -r "$TMP/run" "$TMP/run-copy"
  expect 2 "--torchscript .*best.json: is .*best.json, which writing would replace" -- export --model "$TMP/run-copy" \
    --torchscript "$TMP/run-copy/best.json"
  expect 2 "which writing would replace" -- export --model "$TMP/run-copy/policy.json" --torchscript "$TMP/run-copy/./model.pt"
  # A resume needs a checkpoint (not, say, an export) and the best epoch's files.
  cp "$TMP/policy.pt" "$TMP/run-copy/model.pt"
  expect 2 "model.pt is not an rltune checkpoint" -- train --resume --out "$TMP/run-copy" --epochs 4 --quiet
  cp "$TMP/run/model.pt" "$TMP/run-copy/model.pt" && rm "$TMP/run-copy/best.pt"
  expect 2 "best.pt is missing" -- train --resume --out "$TMP/run-copy" --epochs 4 --quiet
  # Options that would do nothing: as simulate and evaluate refuse them.
  expect 2 "--mf-age-weight applies only to the multifactor policy" -- train --cluster helios --mf-age-weight 5 --out "$TMP/run-bad"
  expect 2 "--imitation-lr needs --imitate N" -- train --cluster helios --imitation-lr 0.01 --out "$TMP/run-bad"
  # The baseline is a priority order, said as the flag: a list, or a policy that is not an order, is refused alike.
  expect 2 "--baseline: unknown priority policy 'sjf,fcfs' \(known: fcfs, .*uni\)" -- train --cluster helios --baseline sjf,fcfs --out "$TMP/run-bad"
  expect 2 "--baseline: unknown priority policy 'sjf-sampled' \(known: fcfs, .*uni\)" -- train --cluster helios --baseline sjf-sampled --out "$TMP/run-bad"
  expect 2 "no policy there" -- evaluate --model "$TMP/nowhere" --cluster helios
  expect 2 "fewer than a window.s 256" -- evaluate --model "$TMP/run" --cluster helios --sample-jobs 300 --window-len 256
  expect 2 "--split: later not in" -- evaluate --model "$TMP/run" --split later
  expect 2 "--baselines: fcfs is given twice" -- evaluate --model "$TMP/run" --baselines fcfs,sjf,fcfs
  expect 2 "no policy there" -- simulate --policy rl:"$TMP/nowhere"
  expect 2 "model .*nowhere: no policy there" -- simulate --policy rl-sampled:"$TMP/nowhere"
  expect 2 "needs a model" -- simulate --policy rl
  mkdir -p "$TMP/bad-baseline" && /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["baseline"] = "nope"
json.dump(j, open(sys.argv[2], "w"))' "$TMP/run/best.json" "$TMP/bad-baseline/policy.json"
  expect 2 "model .*bad-baseline: baseline 'nope': unknown priority policy" -- simulate --policy rl:"$TMP/bad-baseline"
fi

# experiment and report: a small config with a shipped model, outputs, resume, bad configs, the report.
cat > "$TMP/exp.yaml" <<YAML
name: cli
windows: {count: 3, length: 64, split: test}
policies: [fcfs, sjf, "rl:$(cd "$(dirname "$0")/.." && pwd)/models/helios-fcfs-bsld",
           "rl-sampled:$(cd "$(dirname "$0")/.." && pwd)/models/helios-fcfs-bsld"]
workloads:
  - cluster: helios
    trace: {generate: {jobs: 2000}}
YAML
expect 0 "12 runs \(0 reused" -- experiment --config "$TMP/exp.yaml" --out "$TMP/exp" --jobs 2 --quiet
for f in runs.csv timings.csv summary.csv summary.md cdf.csv timeseries.csv config.json; do
  [ -s "$TMP/exp/$f" ] || fail "experiment did not write $f"
done
[ "$(grep -c ',completed,' "$TMP/exp/runs.csv")" -eq 12 ] || fail "runs.csv should hold 12 completed runs"
grep -q ',rl-sampled:helios-fcfs-bsld,' "$TMP/exp/runs.csv" || fail "runs.csv lacks the sampled model"
grep -q "Improvement over fcfs" "$TMP/exp/summary.md" || fail "summary.md lacks the improvement table"
expect 2 "already holds an experiment" -- experiment --config "$TMP/exp.yaml" --out "$TMP/exp" --quiet
expect 2 "--out .*/out1: holds the results of rltune simulate, not an experiment" -- experiment --config "$TMP/exp.yaml" --out "$TMP/out1" --resume --quiet
# A window in which no job runs (every one rejected) has no averages: left out, not counted as 0.
{ echo job_id,submit_time,duration,num_gpus,vc
  for i in $(seq 1 50); do echo "a$i,$((i * 10)),100,1,0"; done
  for i in $(seq 51 100); do echo "a$i,$((i * 10)),100,0,0"; done; } > "$TMP/half-rejected.csv"
printf 'windows: {count: 4, length: 20, split: all}\npolicies: [fcfs, sjf]\nworkloads:\n  - cluster: helios\n    trace: {files: [%s]}\n' \
  "$TMP/half-rejected.csv" > "$TMP/half-rejected.yaml"
expect 0 "4 run\(s\) had no job that ran" -- experiment --config "$TMP/half-rejected.yaml" --out "$TMP/half-rejected" --quiet
grep -q '^helios,half-rejected,fcfs,avg_bsld,2,1,' "$TMP/half-rejected/summary.csv" \
  || fail "a window without a job that ran counted in the summary: $(grep avg_bsld "$TMP/half-rejected/summary.csv")"
if command -v gnuplot >/dev/null; then  # nor in the box plots: a box whose first quartile is 0 holds such a run
  expect 0 "wrote .*report.html" -- report "$TMP/half-rejected"
  BOX_AT_0='^[12] 0( [^ ]+){5}$'  # a box row: policy, q1, low, high, q3, median, policy
  [ "$(grep -cE "$BOX_AT_0" "$TMP/half-rejected/figures/figures.gp")" -le 2 ] \
    || fail "a window without a job that ran is in the box plots (only the waits may be 0): $(grep -E "$BOX_AT_0" "$TMP/half-rejected/figures/figures.gp")"
  # Names reach gnuplot as text only: a backtick command in a policy name is not run, a quote breaks nothing.
  sed "s|policies: \[fcfs, sjf\]|policies: [fcfs, {name: \"it's \`touch $TMP/ran\`\", priority: sjf}]|" "$TMP/half-rejected.yaml" > "$TMP/quoting.yaml"
  grep -q 'touch' "$TMP/quoting.yaml" || fail "the quoting config lacks its command"
  expect 0 "wrote .*report.html" -- experiment --config "$TMP/quoting.yaml" --out "$TMP/quoting" --report --quiet
  [ -e "$TMP/ran" ] && fail "report ran a command written in a policy name"
  grep -q "it's \`touch" "$TMP/quoting/report.md" || fail "report.md lacks the policy's name as written"
fi
expect 0 "^fcfs +0 +50 +n/a +n/a +n/a +n/a" -- simulate --trace "$TMP/half-rejected.csv" --window 50:50 --policy fcfs,sjf
expect 0 "^  every policy: 50 x zero_gpus$" -- simulate --trace "$TMP/half-rejected.csv" --window 50:50 --policy fcfs,sjf
# Jobs without a requested time are estimated by their true duration: said, as simulate says it.
sed 's/policies: \[fcfs, sjf\]/policies: [fcfs, {name: sjf-req, priority: sjf, runtime: requested}]/' "$TMP/half-rejected.yaml" > "$TMP/no-requested.yaml"
expect 0 "half-rejected: 100 of its 100 jobs have no requested time; sjf-req \(runtime requested\) estimate them by their true duration" \
  -- experiment --config "$TMP/no-requested.yaml" --out "$TMP/no-requested" --quiet
# The whole trace has no job before it: its warm-up is empty, which is said.
sed 's/windows: {count: 4, length: 20, split: all}/windows: {length: all, warmup: 50}/' "$TMP/half-rejected.yaml" > "$TMP/cold.yaml"
expect 0 "1 of the 1 windows start before job 50, so fewer than the 50 warm-up jobs precede them" \
  -- experiment --config "$TMP/cold.yaml" --out "$TMP/cold" --quiet
# 30 windows of 90 jobs from 100 jobs: at most 11 starts, so windows repeat, which narrows the intervals.
sed 's/count: 4, length: 20/count: 30, length: 90/' "$TMP/half-rejected.yaml" > "$TMP/repeated.yaml"
expect 0 "2[0-9] of the 30 windows of 90 jobs repeat another window" -- experiment --config "$TMP/repeated.yaml" --out "$TMP/repeated" --quiet
# A file name that is not UTF-8 (any bytes are a Linux name) is written as U+FFFD in JSON outputs.
cp "$TMP/ok.csv" "$TMP/trace-$(printf '\377').csv"
expect 0 "wrote jobs.csv, summary.json and config.json" -- simulate --trace "$TMP/trace-$(printf '\377').csv" --out "$TMP/not-utf8"
grep -q $'trace-\xEF\xBF\xBD.csv' "$TMP/not-utf8/config.json" || fail "config.json lacks the replaced file name"
expect 2 "--out .*exp: holds the results of another command" -- simulate --out "$TMP/exp"
expect 0 "12 runs \(12 reused" -- experiment --config "$TMP/exp.yaml" --out "$TMP/exp" --quiet --resume
# A run record cut or edited by hand is run again, never read with keys missing; runs without the
# config that wrote them are not reused at all.
cp -r "$TMP/exp" "$TMP/exp-edited-run" && cp -r "$TMP/exp" "$TMP/exp-edited-run-2"
/usr/bin/python3 -c 'import json, sys; f = sys.argv[1]; r = json.load(open(f)); del r["metrics"]["avg_bsld"]; json.dump(r, open(f, "w"))' \
  "$TMP/exp-edited-run/runs/w0-k0000-p01.json"
/usr/bin/python3 -c 'import json, sys; f = sys.argv[1]; r = json.load(open(f)); r["policy"] = "fcfs"; json.dump(r, open(f, "w"))' \
  "$TMP/exp-edited-run-2/runs/w0-k0001-p01.json"
expect 0 "w0-k0000-p01.json: metrics.avg_bsld is not a number; running it again" \
  -- experiment --config "$TMP/exp.yaml" --out "$TMP/exp-edited-run" --quiet --resume
expect 0 "w0-k0001-p01.json: not the run of policy sjf; running it again" \
  -- experiment --config "$TMP/exp.yaml" --out "$TMP/exp-edited-run-2" --quiet --resume
for d in exp-edited-run exp-edited-run-2; do
  cmp -s "$TMP/exp/runs.csv" "$TMP/$d/runs.csv" || fail "$d: a run run again after an edit differs from the first one"
done
cp -r "$TMP/exp" "$TMP/exp-no-config" && rm "$TMP/exp-no-config/config.json"
expect 2 "exp-no-config: holds runs but no config.json" -- experiment --config "$TMP/exp.yaml" --out "$TMP/exp-no-config" --quiet --resume
mkdir -p "$TMP/not-object" && echo '[1]' > "$TMP/not-object/config.json"
expect 2 "not-object/config.json: unreadable: not a JSON object" -- experiment --config "$TMP/exp.yaml" --out "$TMP/not-object" --quiet --resume
# A changed config is refused, naming the first value that differs.
sed 's/policies: \[fcfs, sjf,/policies: [fcfs, lcfs,/' "$TMP/exp.yaml" > "$TMP/exp-changed.yaml"
expect 2 "written by a different config \('workloads/0/policies/1/.*' differs\)" \
  -- experiment --config "$TMP/exp-changed.yaml" --out "$TMP/exp" --quiet --resume
printf 'policies: [fcfs]\nworkloads:\n  - cluster: helios\n    trace: {generate: {jobs: 10}, colour: red}\n' > "$TMP/bad-exp.yaml"
expect 2 "bad-exp.yaml:4: field 'workloads\[0\].trace.colour'" -- experiment --config "$TMP/bad-exp.yaml" --out "$TMP/x"
printf 'policies: [fcfs, magic]\nworkloads: [{cluster: helios, trace: {generate: {}}}]\n' > "$TMP/bad-exp2.yaml"
expect 2 "bad-exp2.yaml:1: field 'policies\[1\]'.*unknown priority policy 'magic'" -- experiment --config "$TMP/bad-exp2.yaml" --out "$TMP/x"
expect 2 "cannot open the experiment config" -- experiment --config "$TMP/none.yaml" --out "$TMP/x"
# MILP settings: the flag and the YAML key take their bounds from one record.
printf 'defaults: {placement: milp, milp: {extra_nodes: 65}}\npolicies: [fcfs]\nworkloads: [{cluster: helios, trace: {generate: {}}}]\n' > "$TMP/bad-milp.yaml"
expect 2 "defaults.milp.extra_nodes'.*between 0 and 64" -- experiment --config "$TMP/bad-milp.yaml" --out "$TMP/x"
expect 2 "milp-extra-nodes: 65 is not between 0 and 64" -- simulate --placement milp --milp-extra-nodes 65
expect 2 "milp-lookahead: 2.5 is not a whole number" -- simulate --placement milp --milp-lookahead 2.5
# Window settings: the flags check the records that experiment YAML checks (sim::window_settings()).
expect 2 "windows: 0 is not between 1 and 1000000" -- evaluate --model "$TMP/nowhere" --windows 0
expect 2 "train-split: 1 is not between 1e-09 and" -- evaluate --model "$TMP/nowhere" --train-split 1
expect 0 "fcfs@milp" -- simulate --placement milp --milp-extra-nodes 64 --milp-time-limit-ms 3600000 --sample-jobs 50
if command -v gnuplot >/dev/null; then
  expect 0 "wrote .*report.html" -- report "$TMP/exp"
  grep -q "<svg\|data:image/svg" "$TMP/exp/report.html" || fail "report.html has no figure"
  # Figures an earlier report drew and this one does not go; other files stay.
  drawn=$(ls "$TMP/exp/figures" | grep -c '\.png$')
  touch "$TMP/exp/figures/gone.png" "$TMP/exp/figures/gone.svg" "$TMP/exp/figures/notes.txt"
  expect 0 "removed 2 files of an earlier report's figures that this one does not draw: gone.png, gone.svg" -- report "$TMP/exp"
  if [ -e "$TMP/exp/figures/gone.png" ] || [ -e "$TMP/exp/figures/gone.svg" ]; then fail "a report left a figure it did not draw"; fi
  [ -e "$TMP/exp/figures/notes.txt" ] || fail "a report removed a file that is not a figure"
  [ "$(ls "$TMP/exp/figures" | grep -c '\.png$')" = "$drawn" ] || fail "a second report drew other figures than the first"
  # A figure cut short (as by a full disk, which gnuplot need not notice) is an error, and the earlier
  # report's figures stay as they were.
  printf '#!/bin/sh\ngnuplot "$@" || exit\nfor f in "$(dirname "$1")"/*.png; do head -c 100 "$f" > "$f.cut"; mv "$f.cut" "$f"; break; done\n' > "$TMP/cut-gnuplot"
  chmod +x "$TMP/cut-gnuplot"
  cp -r "$TMP/exp/figures" "$TMP/exp-figures-before"
  expect 2 "gnuplot did not finish .*/exp/figures/.*\.png \(a full disk\?" -- report "$TMP/exp" --gnuplot "$TMP/cut-gnuplot"
  for f in "$TMP/exp-figures-before"/*.png "$TMP/exp-figures-before"/*.svg; do
    cmp -s "$f" "$TMP/exp/figures/$(basename "$f")" || fail "a failed report changed the earlier $(basename "$f")"
  done
  [ -e "$TMP/exp/figures/.drawing" ] && fail "a failed report left its drawing folder"
fi
expect 2 "not an experiment folder" -- report "$TMP"
# An edited config.json that lacks a key the report reads: a clear error, and no figure drawn first.
mkdir -p "$TMP/exp-edited" && cp "$TMP/exp"/*.csv "$TMP/exp-edited/"
sed 's/"seed": [0-9]*,//' "$TMP/exp/config.json" > "$TMP/exp-edited/config.json"
expect 2 "exp-edited/config.json: unreadable experiment config: .*seed" -- report "$TMP/exp-edited"
[ -e "$TMP/exp-edited/figures" ] && fail "report drew figures before finding config.json unreadable"
mkdir -p "$TMP/exp-cut" && cp "$TMP/exp"/*.csv "$TMP/exp"/config.json "$TMP/exp-cut/" && head -5 "$TMP/exp/runs.csv" > "$TMP/exp-cut/runs.csv"
expect 2 "exp-cut/runs.csv: holds 4 runs where config.json describes 12" -- report "$TMP/exp-cut"
# A metric edited to nan would be left out of its box without a word.
mkdir -p "$TMP/exp-nan" && cp "$TMP/exp"/*.csv "$TMP/exp"/config.json "$TMP/exp-nan/"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "avg_bsld") c = i } NR == 3 { $c = "nan" } { print }' \
  "$TMP/exp/runs.csv" > "$TMP/exp-nan/runs.csv"
expect 2 "exp-nan/runs.csv:3: field 'avg_bsld': value 'nan' is not a number" -- report "$TMP/exp-nan"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "status") c = i } NR == 4 { $c = "Completed" } { print }' \
  "$TMP/exp/runs.csv" > "$TMP/exp-nan/runs.csv"
expect 2 "exp-nan/runs.csv:4: field 'status': value 'Completed' is neither completed nor failed" -- report "$TMP/exp-nan"
# summary.csv without a column the report reads (an edit), or with a word where a number goes.
mkdir -p "$TMP/exp-nocol" && cp "$TMP/exp"/*.csv "$TMP/exp"/config.json "$TMP/exp-nocol/"
/usr/bin/python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1]))); i = rows[0].index("vs_fcfs_ci_low")
csv.writer(open(sys.argv[1], "w", newline="")).writerows([r[:i] + r[i + 1:] for r in rows])' "$TMP/exp-nocol/summary.csv"
expect 2 "exp-nocol/summary.csv: no column 'vs_fcfs_ci_low'" -- report "$TMP/exp-nocol"
mkdir -p "$TMP/exp-word" && cp "$TMP/exp"/*.csv "$TMP/exp"/config.json "$TMP/exp-word/"
sed -i '2s/^\(\([^,]*,\)\{5\}\)[^,]*/\1lots/' "$TMP/exp-word/summary.csv"
expect 2 "exp-word/summary.csv:2: field 'mean': value 'lots' is not a number" -- report "$TMP/exp-word"
# Rows cut from summary.csv, a word in cdf.csv, a run under a policy the config lacks, a config.json of
# the wrong shape: errors, where the report showed n/a, dropped points, or failed as an internal error.
mkdir -p "$TMP/exp-rows" && cp "$TMP/exp"/*.csv "$TMP/exp"/config.json "$TMP/exp-rows/"
head -n 20 "$TMP/exp/summary.csv" > "$TMP/exp-rows/summary.csv"
expect 2 "exp-rows/summary.csv: has no [a-z0-9_]+ row for .* on helios / .*: it was cut or edited" -- report "$TMP/exp-rows"
cp "$TMP/exp/summary.csv" "$TMP/exp-rows/" && sed -i '3s/,[^,]*$/,hello/' "$TMP/exp-rows/cdf.csv"
expect 2 "exp-rows/cdf.csv:3: field 'value': value 'hello' is not a number" -- report "$TMP/exp-rows"
cp "$TMP/exp/cdf.csv" "$TMP/exp-rows/" && sed -i '2s/,sjf,/,sjx,/;2s/,fcfs,/,sjx,/' "$TMP/exp-rows/runs.csv"
expect 2 "exp-rows/runs.csv:2: field 'policy': value 'sjx' is no policy of workload helios" -- report "$TMP/exp-rows"
cp "$TMP/exp/runs.csv" "$TMP/exp-rows/" && echo '[]' > "$TMP/exp-rows/config.json"
expect 2 "exp-rows/config.json: unreadable experiment config" -- report "$TMP/exp-rows"
# Two baselines whose names make one file name get a figure each; a cluster file named without
# ".yaml" is read beside the config, as every path there is.
mkdir -p "$TMP/exp-names" && cp "$(dirname "$0")/../configs/clusters/helios.yaml" "$TMP/exp-names/mycluster"
cat > "$TMP/exp-names/e.yaml" <<YAML
windows: {count: 2, length: 32}
policies: [{name: "a,b", priority: fcfs}, {name: a_b, priority: sjf}, f1]
baselines: ["a,b", a_b]
workloads: [{cluster: mycluster, trace: {generate: {jobs: 500}}}]
YAML
expect 0 "6 runs" -- experiment --config "$TMP/exp-names/e.yaml" --out "$TMP/exp-names/out" --quiet
if command -v gnuplot > /dev/null; then
  expect 0 "wrote .*/report.html" -- report "$TMP/exp-names/out"
  [ -s "$TMP/exp-names/out/figures/improvement-helios-generated-helios-vs-a_b.svg" ] &&
    [ -s "$TMP/exp-names/out/figures/improvement-helios-generated-helios-vs-a_b-2.svg" ] || fail "one figure per baseline: $(ls "$TMP/exp-names/out/figures")"
fi
# What only the outputs read may change behind --resume: every run is reused, the summary rewritten.
mkdir -p "$TMP/exp-rebased" && cp -r "$TMP/exp"/* "$TMP/exp-rebased/" && touch "$TMP/exp-rebased/report.md"
{ cat "$TMP/exp.yaml"; echo "baselines: [sjf]"; echo "description: against sjf"; } > "$TMP/exp-rebased.yaml"
expect 0 "12 runs \(12 reused" -- experiment --config "$TMP/exp-rebased.yaml" --out "$TMP/exp-rebased" --quiet --resume
grep -q "Improvement over sjf" "$TMP/exp-rebased/summary.md" || fail "the resumed summary.md lacks the new baseline"
grep -q "Improvement over fcfs" "$TMP/exp-rebased/summary.md" && fail "the resumed summary.md kept the old baseline"
[ -e "$TMP/exp-rebased/report.md" ] && fail "the resume kept report.md, drawn for the old baselines"
# The shipped comparison runs whole: every model it names loads and every run completes.
expect 0 "1800 runs \(0 reused from an earlier invocation, 0 failed\)" -- experiment \
  --config "$(cd "$(dirname "$0")/.." && pwd)/experiments/paper-generated.yaml" --out "$TMP/paper" --quiet
# The realistic-regime comparison (its last workload reads ../shared/traces).
if [ -d "$SHARED/philly" ]; then
  expect 0 "4450 runs \(0 reused from an earlier invocation, 0 failed\)" -- experiment \
    --config "$(cd "$(dirname "$0")/.." && pwd)/experiments/realistic.yaml" --out "$TMP/realistic" --quiet
fi
# The helios-users models on five independent workloads, and their windows pooled into one comparison.
expect 0 "5500 runs \(0 reused from an earlier invocation, 0 failed\)" -- experiment \
  --config "$(cd "$(dirname "$0")/.." && pwd)/experiments/realistic-seeds.yaml" --out "$TMP/seeds" --quiet
# The contended philly-users and alibaba-users workloads: every heuristic's run completes.
expect 0 "7500 runs \(0 reused from an earlier invocation, 0 failed\)" -- experiment \
  --config "$(cd "$(dirname "$0")/.." && pwd)/experiments/realistic-loaded.yaml" --out "$TMP/loaded" --quiet
POOL="$(dirname "$0")/../scripts/pooled-improvement.py"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  pooled=$(/usr/bin/python3 "$POOL" "$TMP/seeds/runs.csv" --baseline sjf-sampled 2>&1) || fail "pooled-improvement failed: $pooled"
  echo "$pooled" | grep -q "avg_bsld: 5 workloads, 250 windows" || fail "pooled-improvement: not 250 windows: $pooled"
  echo "$pooled" | grep -qE "^rl-sampled +[0-9.]+ +[+-][0-9.]+% \[" || fail "pooled-improvement: no rl-sampled row: $pooled"
  # Hand-worked: sums 12 -> 10 pooled (+16.7%), +50% and +0% per workload; every resample keeps those sums.
  printf 'cluster,trace,window,policy,status,avg_bsld\n' > "$TMP/pool.csv"
  printf 'c,w1,0:2,base,completed,2\nc,w1,2:2,base,completed,2\nc,w2,0:2,base,completed,4\nc,w2,2:2,base,completed,4\n' >> "$TMP/pool.csv"
  printf 'c,w1,0:2,new,completed,1\nc,w1,2:2,new,completed,1\nc,w2,0:2,new,completed,4\nc,w2,2:2,new,completed,4\n' >> "$TMP/pool.csv"
  pooled=$(/usr/bin/python3 "$POOL" "$TMP/pool.csv" --baseline base 2>&1)
  echo "$pooled" | grep -qE "^new +2.500 +\+16.7% \[\+16.7, \+16.7\] +\+50.0% +\+0.0%$" || fail "pooled-improvement hand-worked case: $pooled"
  # --bound: in every window `new` is half-way from `base` to `oracle`, on both metrics (utilisation:
  # higher is better), so every paired resample closes 50% of the gap; unpaired ones would not.
  printf 'cluster,trace,window,policy,status,avg_bsld,gpu_utilization\n' > "$TMP/gap.csv"
  for row in "w1 0:2 2 0.5" "w1 2:2 6 0.3" "w2 0:2 4 0.4" "w2 2:2 8 0.6"; do
    read -r w x b u <<< "$row"
    awk -v w="$w" -v x="$x" -v b="$b" -v u="$u" 'BEGIN {
      printf "c,%s,%s,base,completed,%g,%g\n", w, x, b, u
      printf "c,%s,%s,new,completed,%g,%g\n", w, x, b - 0.5, u + 0.05
      printf "c,%s,%s,oracle,completed,%g,%g\n", w, x, b - 1, u + 0.1 }' >> "$TMP/gap.csv"
  done
  for metric in avg_bsld gpu_utilization; do
    pooled=$(/usr/bin/python3 "$POOL" "$TMP/gap.csv" --baseline base --bound oracle --metric $metric 2>&1)
    echo "$pooled" | grep -qE "^new +[0-9.]+ +\+[0-9.]+% \[[^]]*\] +\+50.0% \[\+50.0, \+50.0\] " \
      || fail "pooled-improvement --bound, $metric: $pooled"
  done
  pooled=$(/usr/bin/python3 "$POOL" "$TMP/gap.csv" --baseline oracle --bound new 2>&1) && fail "pooled-improvement: a bound worse than the baseline passed"
  echo "$pooled" | grep -q "bound new: no better than oracle on these windows" || fail "pooled-improvement bound no better: $pooled"
  grep -v "w2,2:2,oracle" "$TMP/gap.csv" > "$TMP/gap-cut.csv"
  pooled=$(/usr/bin/python3 "$POOL" "$TMP/gap-cut.csv" --baseline base --bound oracle 2>&1) && fail "pooled-improvement: a bound with a window missing passed"
  echo "$pooled" | grep -q "^oracle: did not run on exactly the windows base ran on" || fail "pooled-improvement bound cut: $pooled"
  pooled=$(/usr/bin/python3 "$POOL" "$TMP/pool.csv" --baseline nobody 2>&1) && fail "pooled-improvement: an unknown baseline passed"
  echo "$pooled" | grep -q "no completed run of it (policies: base, new)" || fail "pooled-improvement unknown baseline: $pooled"
  printf 'c,w1,0:2,new,completed,1\n' >> "$TMP/pool.csv"
  pooled=$(/usr/bin/python3 "$POOL" "$TMP/pool.csv" --baseline base 2>&1) && fail "pooled-improvement: a repeated run passed"
  echo "$pooled" | grep -q "pool.csv:10: a second run of new on w1 window 0:2" || fail "pooled-improvement repeated run: $pooled"
fi

expect 0 "as sacct: kept 4 jobs" -- convert "$(dirname "$0")/fixtures/slurm/sacct.txt" --out "$TMP/sacct.csv"
# Calendar times start at the first submit in canonical files: convert says from when, since files
# converted apart lose their common clock.
expect 0 "Its times count from the first submit, 2026-[0-9-]* [0-9:]* UTC; to keep several such files on one clock, convert them together" \
  -- convert "$(dirname "$0")/fixtures/slurm/sacct.txt" --out "$TMP/sacct.csv"
# Nor may --out replace the file durations are drawn from.
printf '1\t1\n' > "$TMP/g1.trace" && printf 'num_gpus,duration\n1,60\n' > "$TMP/durations.csv" && cp "$TMP/durations.csv" "$TMP/durations-kept.csv"
expect 2 "--out .*durations.csv: is .*durations.csv, which writing would replace" -- convert --format gavel "$TMP/g1.trace" \
  --duration-source "$TMP/durations.csv" --out "$TMP/durations.csv"
cmp -s "$TMP/durations.csv" "$TMP/durations-kept.csv" || fail "convert wrote over its --duration-source"

# slurm: bad options, and a cycle whose Slurm commands cannot run is skipped (exit 1 with --once).
expect 2 "--interval '5x'" -- slurm --interval 5x --once
# The advisor has no finished jobs to predict from: its help offers no predicted-runtime option.
expect 0 "--runtime NAME=requested +Runtime estimates: requested \(the jobs' time limits\) or oracle" -- slurm --help
"$RLTUNE" slurm --help | grep -qE -- "--runtime-model|--predict-last|predicted" && fail "slurm --help offers predicted runtimes, which it refuses"
expect 2 "--predict-last applies only to --runtime predicted" -- slurm --predict-last 3 --once --dry-run
expect 2 "--log-format" -- slurm --log-format xml --once
expect 2 "--timeout must be positive and at most a day" -- slurm --timeout inf --once
expect 2 "--interval '1e300s': at most a day" -- slurm --interval 1e300s --once
expect 2 "--interval '0.000001': at least 100ms" -- slurm --interval 0.000001 --once
expect 2 "--placement milp contradicts --policy sjf@greedy" -- slurm --policy sjf@greedy --placement milp --once --dry-run
expect 2 "--cluster-map '.*no-such-map.yaml': neither a preset" -- slurm --cluster-map "$TMP/no-such-map.yaml" --once --dry-run
expect 2 "--default-runtime 0: must be between 1 and 1e12 seconds" -- slurm --default-runtime 0 --once --dry-run
expect 2 "sees no finished jobs to predict from" -- slurm --runtime predicted --once
expect 2 "--once with placement needs --state FILE" -- slurm --policy sjf@greedy --once
expect 2 "--state $TMP: is a folder" -- slurm --state "$TMP" --once
expect 1 "skipped, nothing applied: sinfo --json failed" -- slurm --once --slurm-bin-dir "$TMP/no-slurm-here"

# The shipped model runs in the embedded default (make run) without LibTorch.
MODELS="$(dirname "$0")/../models"
expect 0 "rl:.*helios-fcfs-bsld-extended@milp .* 300 " -- simulate --cluster helios --seed 2 --blocking pool --sample-jobs 300 \
  --policy fcfs,rl:"$MODELS/helios-fcfs-bsld-extended",rl:"$MODELS/helios-fcfs-bsld-extended@milp"
# The realistic-regime model runs in its own regime without a warning.
realistic=$("$RLTUNE" simulate --cluster helios --like helios-users --sample-jobs 1500 --sample-load 0.95 --seed 3 \
  --blocking pool --backfill --runtime predicted --window 1000:300 --warmup 1000 \
  --policy sjf,rl-sampled:"$MODELS/helios-users-sjf-bsld-realistic" 2>&1)
echo "$realistic" | grep -qE "rl-sampled:.*helios-users-sjf-bsld-realistic\+backfill +300 " || fail "the realistic model did not run: $realistic"
echo "$realistic" | grep -q "carry over" && fail "the realistic model warned in its own regime: $realistic"

[ "$failures" -eq 0 ] && echo "all CLI checks passed"
exit $((failures > 0))
