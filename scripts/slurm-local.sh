#!/bin/bash
# A real Slurm cluster on this machine for tests: 4 nodes x 8 fake V100 GPUs (GRES files are /dev/null
# links), one slurmctld and one slurmd per node, all under BASE. Needs root and the Debian packages
# munge slurmctld slurmd slurm-client (scripts/install-deps.sh --slurm installs them).
#   slurm-local.sh start BASE   starts munged (if not running), slurmctld and the slurmd's; waits until idle
#   slurm-local.sh stop BASE    cancels every job, then stops what `start` started, by pid
# Clients use: export SLURM_CONF=BASE/slurm.conf. SCHEDULER=builtin (default backfill) gives Slurm's strict
# priority order.
set -eu
cmd=${1:?usage: slurm-local.sh start|stop BASE}
BASE=$(realpath -m "${2:?usage: slurm-local.sh start|stop BASE}")
export SLURM_CONF="$BASE/slurm.conf"
NODES="n1 n2 n3 n4"

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2
  shift 2
  for _ in $(seq $((limit * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "slurm-local: timed out waiting for $what" >&2
  return 1
}

start() {
  mkdir -p "$BASE/state" "$BASE/log" "$BASE/fakedev"
  for n in $NODES; do mkdir -p "$BASE/spool/$n"; done
  for i in 0 1 2 3 4 5 6 7; do ln -sf /dev/null "$BASE/fakedev/nvidia$i"; done
  cat > "$BASE/slurm.conf" <<EOF
ClusterName=rltunetest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/slurmctld.pid
SlurmdPidFile=$BASE/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/${SCHEDULER:-backfill}
SchedulerParameters=sched_interval=1
PriorityType=priority/multifactor
PriorityWeightJobSize=1000
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[17001-17004] CPUs=32 RealMemory=256000 Gres=gpu:v100:8
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  echo "NodeName=n[1-4] Name=gpu Type=v100 File=$BASE/fakedev/nvidia[0-7]" > "$BASE/gres.conf"
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    runuser -u munge -- /usr/sbin/munged
    touch "$BASE/started-munged"
    wait_for 10 munge sh -c 'munge -n | unmunge'
  fi
  slurmctld -f "$SLURM_CONF"
  wait_for 30 slurmctld scontrol ping
  for n in $NODES; do slurmd -f "$SLURM_CONF" -N "$n"; done
  wait_for 60 "4 idle nodes" sh -c '[ "$(sinfo -h -t idle -o %D)" = 4 ]'
}

kill_pidfile() {
  local f=$1
  [ -f "$f" ] || return 0
  local pid
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$f"
}

stop() {
  if scontrol ping >/dev/null 2>&1; then
    scancel --full --quiet --partition debug 2>/dev/null || true
    for _ in $(seq 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  for n in $NODES; do kill_pidfile "$BASE/slurmd-$n.pid"; done
  kill_pidfile "$BASE/slurmctld.pid"
  if [ -f "$BASE/started-munged" ]; then
    kill_pidfile /run/munge/munged.pid
    rm -f "$BASE/started-munged"
  fi
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: slurm-local.sh start|stop BASE" >&2; exit 2 ;;
esac
