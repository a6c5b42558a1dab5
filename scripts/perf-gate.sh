#!/usr/bin/env bash
# The instruction gate: a fixed set of whole `ssdsim run` processes, each
# counted under callgrind (every instruction from exec to exit: argument
# parsing, preconditioning, the simulation, the report), compared with
# perf/baseline.tsv. Fails if any run costs more than 3 % over its baseline;
# a run more than 10 % under it is noted (update the baseline so it stays
# tight). Builds nothing: instruction counts belong to one exact binary, so
# give it the one CI builds, `cargo build --release --locked -p ssdsim-cli`.
#
#   scripts/perf-gate.sh [BIN]            # check (BIN: target/release/ssdsim)
#   scripts/perf-gate.sh --update [BIN]   # measure and rewrite the baseline
#
# Options: --jobs N (runs at once, default 2), --baseline FILE.
# See PERFORMANCE.md, "The instruction gate".
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/ssdsim"
BASELINE="$ROOT/perf/baseline.tsv"
JOBS=2
UPDATE=0
MAX_OVER=3   # percent over the baseline that fails the gate
MAX_UNDER=10 # percent under it that asks for a new baseline
while [ $# -gt 0 ]; do
    case $1 in
    --update) UPDATE=1 ;;
    --jobs)
        JOBS=$2
        shift
        ;;
    --baseline)
        BASELINE=$2
        shift
        ;;
    -h | --help)
        sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "perf-gate: unknown option $1" >&2
        exit 2
        ;;
    *) BIN=$1 ;;
    esac
    shift
done
if [ ! -x "$BIN" ]; then
    echo "perf-gate: no binary at $BIN (cargo build --release --locked -p ssdsim-cli)" >&2
    exit 2
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "perf-gate: valgrind is not installed" >&2
    exit 2
fi

# The runs: a name, then the arguments after `ssdsim run` (the seeds are the
# defaults; COMMON is added to each). Each takes 0.1-0.4 s natively, 10-25 s
# under callgrind. Changing a run changes its count: update the baseline in
# the same commit.
NAMES=()
ARGS=()
add() {
    NAMES+=("$1")
    shift
    ARGS+=("$*")
}
# 4 KiB random reads of a filled drive (the default 16 GiB one).
add randread --rw randread --precondition fill --number_ios 100000
# Random writes to a fresh drive with the power model attached (the default).
add randwrite-power --rw randwrite --number_ios 200000
# Random writes to a filled 2 GiB drive: GC from the start (WAF ~4.9).
add gc-randwrite --blocks-per-plane 256 --precondition fill --rw randwrite --number_ios 60000 --no-power
# DFTL: mapping-cache misses, translation writes and their GC.
add dftl-randwrite --ftl dftl --blocks-per-plane 256 --precondition fill --rw randwrite --number_ios 30000
# The block layer and the write buffer: mixed I/O through mq-deadline.
add randrw-sched-wb --rw randrw --sched mq-deadline --write-buffer 1MiB --precondition fill --number_ios 50000
# Buffered, file-level: Filebench's varmail on ext4 through the page cache.
add varmail-ext4 --personality varmail --set personality.level=file --fs ext4 --time-limit 1s
COMMON=(--no-progress --format json --out /dev/null)

# A count repeats when nothing outside the binary steers the process: one
# thread of work, and the simulation reads no clock (wall-time fields are
# only reported; formatting them moves a count by a few instructions). What
# does vary between two runs is std's HashMap: each process draws its
# SipHash keys from getrandom(2), so the page cache's and DFTL's tables probe
# and grow differently (up to ~0.015 % of a run). A getrandom that returns a
# constant, preloaded, pins the keys; without a C compiler the gate runs
# unpinned (that noise is far below its threshold).
export RAYON_NUM_THREADS=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
preload=""
if command -v cc >/dev/null 2>&1; then
    cat >"$work/fixed-getrandom.c" <<'EOF'
#include <string.h>
#include <sys/types.h>
ssize_t getrandom(void *buf, size_t len, unsigned int flags) {
    (void)flags;
    memset(buf, 7, len);
    return (ssize_t)len;
}
EOF
    if cc -shared -fPIC -O2 -o "$work/fixed-getrandom.so" "$work/fixed-getrandom.c"; then
        preload="$work/fixed-getrandom.so"
    fi
fi
if [ -z "$preload" ]; then
    echo "perf-gate: no C compiler: HashMap keys not pinned, counts vary by ~0.015 %"
fi

measure() { # index -> $work/NAME.count, or $work/NAME.fail
    local name=${NAMES[$1]}
    local -a args
    read -r -a args <<<"${ARGS[$1]}"
    if LD_PRELOAD="$preload" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --log-file="$work/$name.vg" "$BIN" run "${args[@]}" "${COMMON[@]}" \
        >"$work/$name.out" 2>&1; then
        sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$work/$name.vg" >"$work/$name.count"
    else
        echo "exit status $?" >"$work/$name.fail"
    fi
}

start=$SECONDS
running=0
for i in "${!NAMES[@]}"; do
    measure "$i" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait
elapsed=$((SECONDS - start))

failed=0
for name in "${NAMES[@]}"; do
    if [ -e "$work/$name.fail" ] || [ ! -s "$work/$name.count" ]; then
        echo "perf-gate: run $name failed ($(cat "$work/$name.fail" 2>/dev/null || echo 'no count')):"
        tail -n 5 "$work/$name.out" "$work/$name.vg" 2>/dev/null || true
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then exit 1; fi

rustc_version="$(rustc --version 2>/dev/null || echo 'rustc unknown')"
if [ "$UPDATE" -eq 1 ]; then
    mkdir -p "$(dirname "$BASELINE")"
    {
        echo "# Instructions of whole \`ssdsim run\` processes under callgrind (total Ir),"
        echo "# checked in CI by scripts/perf-gate.sh (fails at more than +${MAX_OVER} %)."
        echo "# Regenerate with scripts/perf-gate.sh --update after"
        echo "# \`cargo build --release --locked -p ssdsim-cli\`, and commit it with the change"
        echo "# that moved it, the reason in the commit message and PERFORMANCE.md."
        echo "# Each run also has: ${COMMON[*]}"
        echo "# Built by: $rustc_version"
        printf '# name\tinstructions\tssdsim run arguments\n'
        for i in "${!NAMES[@]}"; do
            name=${NAMES[$i]}
            printf '%s\t%s\t%s\n' "$name" "$(cat "$work/$name.count")" "${ARGS[$i]}"
        done
    } >"$BASELINE"
    echo "perf-gate: wrote ${BASELINE#"$ROOT"/} in $elapsed s:"
    grep -v '^#' "$BASELINE" | awk -F'\t' '{ printf "  %-16s %14s\n", $1, $2 }'
    exit 0
fi

if [ ! -f "$BASELINE" ]; then
    echo "perf-gate: no baseline at $BASELINE (scripts/perf-gate.sh --update)" >&2
    exit 2
fi
built_by="$(sed -n 's/^# Built by: //p' "$BASELINE")"
if [ "$built_by" != "$rustc_version" ]; then
    echo "perf-gate: warning: the baseline was built by $built_by, this machine has" \
        "$rustc_version: counts of another compiler differ"
fi
status=0
under=()
printf '%-16s %14s %14s %8s\n' run baseline now delta
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]}
    now=$(cat "$work/$name.count")
    line=$(awk -F'\t' -v n="$name" '$1 == n' "$BASELINE")
    if [ -z "$line" ]; then
        printf '%-16s %14s %14s %8s  FAIL: not in the baseline\n' "$name" - "$now" -
        status=1
        continue
    fi
    base=$(cut -f2 <<<"$line")
    if [ "$(cut -f3 <<<"$line")" != "${ARGS[$i]}" ]; then
        printf '%-16s %14s %14s %8s  FAIL: the baseline ran other arguments\n' "$name" "$base" "$now" -
        status=1
        continue
    fi
    pct=$(awk -v n="$now" -v b="$base" 'BEGIN { printf "%+.2f%%", (n - b) * 100 / b }')
    verdict=""
    if [ $((now * 100)) -gt $((base * (100 + MAX_OVER))) ]; then
        verdict="  FAIL: more than +${MAX_OVER} %"
        status=1
    elif [ $((now * 100)) -lt $((base * (100 - MAX_UNDER))) ]; then
        verdict="  (more than ${MAX_UNDER} % under)"
        under+=("$name")
    fi
    printf '%-16s %14s %14s %8s%s\n' "$name" "$base" "$now" "$pct" "$verdict"
done
while IFS=$'\t' read -r name _; do
    case $name in '#'* | '') continue ;; esac
    # Not `printf | grep -q`: under pipefail, grep's early exit can fail printf (SIGPIPE).
    if ! grep -qxF "$name" <<<"$(printf '%s\n' "${NAMES[@]}")"; then
        echo "perf-gate: FAIL: $name is in the baseline but no longer run"
        status=1
    fi
done <"$BASELINE"
echo "perf-gate: $elapsed s; binary ${BIN#"$ROOT"/}; baseline ${BASELINE#"$ROOT"/}"
if [ "${#under[@]}" -gt 0 ]; then
    echo "perf-gate: notice: ${under[*]} cost more than ${MAX_UNDER} % under the baseline:" \
        "update it (scripts/perf-gate.sh --update) so that the gate stays tight"
fi
if [ "$status" -ne 0 ]; then
    echo "perf-gate: FAILED. A change that must cost more updates the baseline in the same"
    echo "commit (scripts/perf-gate.sh --update), with the reason in the commit message and"
    echo "in PERFORMANCE.md."
fi
exit "$status"
