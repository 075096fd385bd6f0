#!/bin/bash
# `rltune slurm` against a real Slurm (scripts/slurm-local.sh: 4 nodes x 8 fake V100s, strict priority
# order). Skips (exit 77) without root or the Slurm packages. Stops what it started, by pid.
# Usage: slurm_test.sh RLTUNE
set -u
RLTUNE=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
LOCAL="$HERE/../scripts/slurm-local.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld >/dev/null || [ ! -x /usr/sbin/munged ]; then
  echo "SKIP: needs root and the packages munge slurmctld slurmd slurm-client"
  exit 77
fi
BASE=$(mktemp -d /tmp/rltune-slurm.XXXXXX)
export SLURM_CONF="$BASE/slurm.conf"
ADVISOR_PID=""
cleanup() {
  [ -n "$ADVISOR_PID" ] && kill "$ADVISOR_PID" 2>/dev/null
  SCHEDULER=builtin "$LOCAL" stop "$BASE"
  rm -rf "$BASE"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

SCHEDULER=builtin "$LOCAL" start "$BASE" || { echo "FAIL: could not start Slurm"; cat "$BASE"/log/*.log; exit 1; }

start_advisor() {  # start_advisor LOG ARGS...: the advisor loop in the background
  local log=$1
  shift
  "$RLTUNE" slurm --interval 500ms --log-format json "$@" > "$log" 2>&1 &
  ADVISOR_PID=$!
}
stop_advisor() {
  [ -n "$ADVISOR_PID" ] || return 0
  kill -TERM "$ADVISOR_PID" 2>/dev/null
  wait "$ADVISOR_PID" 2>/dev/null
  ADVISOR_PID=""
}
wait_idle() {  # until no job is pending or running
  for _ in $(seq 600); do [ -z "$(squeue -h -t pending,running,configuring,completing)" ] && return 0; sleep 0.2; done
  fail "jobs still queued after 120 s"
}
epoch() { [ "$1" = "N/A" ] || [ "$1" = "Unknown" ] && echo -1 || date -u -d "$1" +%s; }

# The batch: 4 blockers fill the cluster for 4 s, then 10 jobs arrive over 1 s with different GPU
# requests and time limits; each sleeps 2 s per minute of its limit (SJF by limit is SJF by runtime).
BATCH_GPUS=(8 4 8 2 8 4 8 1 4 2)
BATCH_LIMITS=(5 1 4 1 3 2 5 1 2 3)
submit_batch() {  # prints "id limit" per batch job
  for _ in 1 2 3 4; do sbatch --parsable --gres=gpu:v100:8 -t 10 -o /dev/null --wrap 'sleep 4' > /dev/null; done
  for i in "${!BATCH_GPUS[@]}"; do
    id=$(sbatch --parsable --gres=gpu:v100:"${BATCH_GPUS[$i]}" -t "${BATCH_LIMITS[$i]}" -o /dev/null \
      --wrap "sleep $((BATCH_LIMITS[i] * 2))")
    echo "$id ${BATCH_LIMITS[$i]}"
    sleep 0.1
  done
}
# "id limit submit start" for the batch jobs.
times_of() {
  while read -r id limit; do
    line=$(squeue -h -t all -j "$id" -o "%V %S")
    echo "$id $limit $(epoch "${line% *}") $(epoch "${line#* }")"
  done < "$1"
}
mean_wait() { awk '{ s += $4 - $3; n++ } END { printf "%.1f", s / n }' "$1"; }

# 1. SJF through the advisor: jobs start in SJF order (by time limit), all complete.
start_advisor "$BASE/sjf.log" --policy sjf
submit_batch > "$BASE/sjf.jobs"
wait_idle
stop_advisor
times_of "$BASE/sjf.jobs" > "$BASE/sjf.times"
grep -q '"event":"applied"' "$BASE/sjf.log" || fail "the advisor applied nothing: $(cat "$BASE/sjf.log")"
grep -q '"event":"failed"' "$BASE/sjf.log" && echo "note: some commands failed (jobs started meanwhile): $(grep -c failed "$BASE/sjf.log")"
[ "$(wc -l < "$BASE/sjf.times")" -eq 10 ] || fail "expected 10 batch jobs"
awk '$4 < 0 { bad = 1 } END { exit bad }' "$BASE/sjf.times" || fail "a batch job never started: $(cat "$BASE/sjf.times")"
# Order: a job with a shorter limit never starts after one with a longer limit.
awk '{ l[NR] = $2; s[NR] = $4 } END { for (i = 1; i <= NR; i++) for (j = 1; j <= NR; j++)
       if (l[i] < l[j] && s[i] > s[j]) { print "job " i " (limit " l[i] ") started after job " j " (limit " l[j] ")"; bad = 1 }
       exit bad }' "$BASE/sjf.times" || fail "jobs did not start in SJF order: $(cat "$BASE/sjf.times")"
for id in $(cut -d' ' -f1 "$BASE/sjf.jobs"); do
  state=$(squeue -h -t all -j "$id" -o %T)
  [ "$state" = COMPLETED ] || fail "job $id ended $state"
done

# 2. The same batch under Slurm's own priority (multifactor, favouring large jobs), for comparison.
submit_batch > "$BASE/default.jobs"
wait_idle
times_of "$BASE/default.jobs" > "$BASE/default.times"
echo "mean queueing delay of the batch: advisor sjf $(mean_wait "$BASE/sjf.times") s, Slurm default $(mean_wait "$BASE/default.times") s"

# 3. --dry-run changes nothing in Slurm.
scontrol update PartitionName=debug State=DOWN
for g in 2 4 1; do sbatch --parsable --gres=gpu:v100:$g -t $((5 - g)) -o /dev/null --wrap 'sleep 1' >> "$BASE/dry.jobs"; done
sleep 1
before=$(squeue -h -t pending -o "%i %Q %n" | sort)
"$RLTUNE" slurm --policy sjf --placement greedy --once --dry-run > "$BASE/dry.log" 2>&1 || fail "dry run failed: $(cat "$BASE/dry.log")"
grep -q "would run: scontrol update" "$BASE/dry.log" || fail "dry run printed no command: $(cat "$BASE/dry.log")"
[ "$(squeue -h -t pending -o "%i %Q %n" | sort)" = "$before" ] || fail "--dry-run changed Slurm"
# A trained model and the MILP placement decide on the live cluster too.
"$RLTUNE" slurm --policy "rl:$HERE/../models/helios-fcfs-bsld-extended" --placement milp --once --dry-run > "$BASE/rl.log" 2>&1 ||
  fail "rl + milp dry run failed: $(cat "$BASE/rl.log")"
grep -q "helios-fcfs-bsld-extended@milp orders 3 pending jobs" "$BASE/rl.log" || fail "rl + milp did not order the 3 jobs: $(cat "$BASE/rl.log")"
# A sampled policy draws its order once per cycle and advises it.
"$RLTUNE" slurm --policy sjf-sampled --temperature 2 --once --dry-run > "$BASE/sampled.log" 2>&1 ||
  fail "sjf-sampled dry run failed: $(cat "$BASE/sampled.log")"
grep -qE "sjf-sampled.* orders 3 pending jobs" "$BASE/sampled.log" || fail "sjf-sampled did not order the 3 jobs: $(cat "$BASE/sampled.log")"

# 4. Placement: with the partition down nothing starts; the advisor asks for nodes; once up, the jobs
#    run where it said.
#    The state file lets a later --once run clear what an earlier one set: a run without placement
#    clears every NodeList, and Slurm takes the empty one.
"$RLTUNE" slurm --policy sjf --placement greedy --once --state "$BASE/state.json" > /dev/null 2>&1 || fail "first placement cycle failed"
pinned=$(squeue -h -t pending -o "%n" | grep -c .)
[ "$pinned" -ge 1 ] || fail "the advisor pinned no job"
"$RLTUNE" slurm --policy sjf --once --state "$BASE/state.json" > "$BASE/clear.log" 2>&1 || fail "clearing cycle failed: $(cat "$BASE/clear.log")"
[ "$(grep -c 'NodeList= (no longer placed' "$BASE/clear.log")" -eq "$pinned" ] || fail "not every NodeList was cleared: $(cat "$BASE/clear.log")"
[ "$(squeue -h -t pending -o "%n" | grep -c .)" -eq 0 ] || fail "Slurm still holds NodeLists: $(squeue -h -t pending -o "%i %n")"
grep -q '"node_lists": {}' "$BASE/state.json" || fail "the state still records NodeLists: $(cat "$BASE/state.json")"
"$RLTUNE" slurm --policy sjf --placement greedy --once --state "$BASE/state.json" --log-format json > "$BASE/place.log" 2>&1 ||
  fail "placement cycle failed"
scontrol update PartitionName=debug State=UP
wait_idle
placed=0
while read -r line; do
  job=$(echo "$line" | sed -n 's/.*"job":\([0-9]*\).*NodeList=\([^"]*\)".*/\1 \2/p')
  [ -n "$job" ] || continue
  placed=$((placed + 1))
  ran=$(squeue -h -t all -j "${job% *}" -o %N)
  [ "$ran" = "${job#* }" ] || fail "job ${job% *} ran on $ran, the advisor placed it on ${job#* }"
done < <(grep '"event":"applied"' "$BASE/place.log")
[ "$placed" -ge 1 ] || fail "the advisor placed no job: $(cat "$BASE/place.log")"

# 5. Malformed or failing Slurm answers: a logged, skipped cycle; nothing applied.
mkdir -p "$BASE/fake"
printf '#!/bin/sh\necho "{not json"\n' > "$BASE/fake/sinfo"
printf '#!/bin/sh\necho "{}"\n' > "$BASE/fake/squeue"
printf '#!/bin/sh\ntouch %s/fake/scontrol-called\n' "$BASE" > "$BASE/fake/scontrol"
chmod +x "$BASE/fake/"*
"$RLTUNE" slurm --once --slurm-bin-dir "$BASE/fake" > "$BASE/fake.log" 2>&1 && fail "a malformed answer should fail --once"
grep -q "skipped.*not JSON" "$BASE/fake.log" || fail "no skipped cycle logged: $(cat "$BASE/fake.log")"
printf '#!/bin/sh\ntrue\n' > "$BASE/fake/sinfo"
"$RLTUNE" slurm --once --slurm-bin-dir "$BASE/fake" > "$BASE/empty.log" 2>&1 && fail "an empty answer should fail --once"
grep -q "skipped.*not JSON" "$BASE/empty.log" || fail "no skipped cycle logged for an empty answer: $(cat "$BASE/empty.log")"
printf '#!/bin/sh\nsleep 30\n' > "$BASE/fake/sinfo"
"$RLTUNE" slurm --once --timeout 1 --slurm-bin-dir "$BASE/fake" > "$BASE/slow.log" 2>&1 && fail "a hung command should fail --once"
grep -q "timed out" "$BASE/slow.log" || fail "no time-out logged: $(cat "$BASE/slow.log")"
[ -e "$BASE/fake/scontrol-called" ] && fail "scontrol ran after a bad reading"

# 6. slurmctld stops and comes back: the advisor keeps running and resumes deciding.
start_advisor "$BASE/restart.log" --policy sjf
sleep 1
kill "$(cat "$BASE/slurmctld.pid")"
sleep 2
kill -0 "$ADVISOR_PID" 2>/dev/null || fail "the advisor died when slurmctld stopped"
slurmctld -f "$SLURM_CONF"
for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
restarted=$(wc -l < "$BASE/restart.log")
# Nodes are "unknown" until their slurmd registers again; then cycles decide again.
for _ in $(seq 150); do tail -n +"$restarted" "$BASE/restart.log" | grep -q '"event":"decision"' && break; sleep 0.2; done
kill -0 "$ADVISOR_PID" 2>/dev/null || fail "the advisor died after slurmctld restarted"
stop_advisor
grep -q '"event":"skipped"' "$BASE/restart.log" || fail "no skipped cycle while slurmctld was down"
tail -n +"$restarted" "$BASE/restart.log" | grep -q '"event":"decision"' ||
  fail "no decision after the restart: $(tail -5 "$BASE/restart.log")"
grep -q '"event":"stop"' "$BASE/restart.log" || fail "SIGTERM did not end the advisor cleanly"

[ "$failures" -eq 0 ] && echo "all Slurm checks passed"
exit $((failures > 0))
