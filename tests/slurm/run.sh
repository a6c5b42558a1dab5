#!/usr/bin/env bash
# A real Slurm test of sharded sweeps: start a one-node Slurm cluster on
# localhost (munged, slurmctld, slurmd; no cgroups, no accounting), submit a
# small sweep as a 4-task job array with `sbatch --wait --array=0-3`, each task
# running `ssdsim sweep --shard auto --jsonl ...`, join the shards with
# `ssdsim merge` and check that the result equals the single-machine sweep of
# the same grid row for row (wall time aside).
#
# Needs root and Debian's slurm-wlm and munge (.ci/run installs them). When
# they are missing it prints SKIPPED and why, and exits 0.
#
#   SSDSIM=path/to/ssdsim tests/slurm/run.sh     # default: builds the release binary
set -euo pipefail
cd "$(dirname "$0")/../.."

skip() {
    echo "SKIPPED: real Slurm test: $*"
    exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root to start munged, slurmctld and slurmd"
for c in munged slurmctld slurmd sbatch sinfo scontrol; do
    command -v "$c" >/dev/null 2>&1 ||
        skip "$c is not installed (Debian packages slurm-wlm and munge)"
done

if [ -z "${SSDSIM:-}" ]; then
    cargo build --release --locked -p ssdsim-cli
    SSDSIM="${CARGO_TARGET_DIR:-target}/release/ssdsim"
fi
SSDSIM="$(realpath "$SSDSIM")"
export SSDSIM

W="$(mktemp -d /tmp/ssdsim-slurm.XXXXXX)"
chmod 755 "$W"
PIDS=()
MUNGED_STARTED=
KEEP=
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$MUNGED_STARTED" ] && [ -f "$W/munge/munged.pid" ]; then
        kill "$(cat "$W/munge/munged.pid")" 2>/dev/null || true
    fi
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -n "$KEEP" ] || rm -rf "$W"
}
fail() {
    KEEP=1
    echo "FAILED: real Slurm test: $* (files kept in $W)"
    for f in "$W"/slurmctld.log "$W"/slurmd.log "$W"/slurm-*.out; do
        [ -f "$f" ] && { echo "--- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
    exit 1
}
trap cleanup EXIT

# munge: the packaged key, or a fresh one; a munged of our own unless one answers.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
        chown munge:munge /etc/munge/munge.key 2>/dev/null || true
        chmod 400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
    # Its pid file where the munge user may write it, so cleanup can end it.
    mkdir -p "$W/munge"
    if id munge >/dev/null 2>&1; then
        chown munge:munge "$W/munge"
        runuser -u munge -- munged --pid-file="$W/munge/munged.pid" || fail "munged did not start"
    else
        munged --force --pid-file="$W/munge/munged.pid" || fail "munged did not start"
    fi
    MUNGED_STARTED=1
    for _ in $(seq 50); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
        sleep 0.1
    done
    munge -n | unmunge >/dev/null || fail "munge does not answer"
fi

# Ports away from a system Slurm's 6817/6818.
CTLD_PORT=$((20000 + RANDOM % 20000))
SLURMD_PORT=$((CTLD_PORT + 1))
mkdir -p "$W/state" "$W/spool"
export SLURM_CONF="$W/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=ssdsimtest
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MaxArraySize=16
NodeName=localhost CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
# An empty cgroup.conf beside it: nothing here uses cgroups.
: >"$W/cgroup.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$W/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$W/slurmd.out" 2>&1 &
PIDS+=($!)
state=
for _ in $(seq 120); do
    state="$(sinfo -h -n localhost -o %T 2>/dev/null || true)"
    case "$state" in idle*) break ;; esac
    sleep 0.5
done
case "$state" in idle*) ;; *) fail "the node is not idle after 60 s (state: ${state:-none})" ;; esac
echo "slurm: $(sinfo -V), node localhost idle with $(nproc) CPUs"

# The grid: 3 FTLs x 2 workloads on a 1 GiB drive, 2,000 requests a point.
GRID=(--nand chip2 --ftl page,dftl,fast --rw randread,randwrite --bs 4k --iodepth 8
    --number_ios 2000 --blocks-per-plane 128 --precondition fill --seed 7 --no-progress)

cat >"$W/shard.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=ssdsim-shard
#SBATCH --cpus-per-task=1
#SBATCH --output=$W/slurm-%A_%a.out
exec "\$SSDSIM" sweep ${GRID[*]} --threads 1 --shard auto --jsonl "$W/shard-\${SLURM_ARRAY_TASK_ID}.jsonl"
EOF
start=$(date +%s)
timeout 150 sbatch --wait --array=0-3 --chdir="$W" "$W/shard.sbatch" ||
    fail "sbatch --wait --array=0-3 failed or timed out"
echo "array of 4 tasks done in $(($(date +%s) - start)) s"
for i in 0 1 2 3; do
    out="$(ls "$W"/slurm-*_"$i".out)"
    grep -q -- "--shard auto: shard $i/4 (from SLURM_ARRAY_TASK_ID" "$out" ||
        fail "task $i did not run shard $i/4: $(head -c 400 "$out")"
    [ -s "$W/shard-$i.jsonl" ] || fail "task $i wrote no rows"
    echo "task $i: shard $i/4, $(wc -l <"$W/shard-$i.jsonl") rows"
done

"$SSDSIM" merge "$W"/shard-{0,1,2,3}.jsonl --jsonl "$W/merged.jsonl" >"$W/merged.txt" ||
    fail "ssdsim merge refused the shards"
"$SSDSIM" sweep "${GRID[@]}" --jsonl "$W/single.jsonl" >"$W/single.txt" ||
    fail "the single-machine sweep failed"

# Row for row, wall time aside (the single sweep appends rows as points finish).
norm() { sed -E 's/"wall_s":[-0-9.eE+]+/"wall_s":0/' "$1" | sort; }
rows=$(wc -l <"$W/single.jsonl")
[ "$rows" -eq 6 ] || fail "the single-machine sweep wrote $rows rows, not 6"
[ "$(wc -l <"$W/merged.jsonl")" -eq "$rows" ] || fail "merged $(wc -l <"$W/merged.jsonl") rows, not $rows"
if ! diff <(norm "$W/single.jsonl") <(norm "$W/merged.jsonl") >"$W/diff.txt"; then
    head -c 2000 "$W/diff.txt"
    fail "the merged shards differ from the single-machine sweep"
fi
echo "merged 4 shards: $rows rows, equal row for row to the single-machine sweep"
cat "$W/merged.txt"
echo "PASSED: real Slurm test ($(($(date +%s) - start)) s after the cluster was up)"
