#!/usr/bin/env bash
# Coverage-guided fuzzing of ssdsim's parsers (cargo-fuzz + libFuzzer), on the
# stable toolchain: `-s none` builds without a sanitizer (which would need
# nightly); the code is safe Rust, and fuzz builds keep debug assertions and
# overflow checks, so panics, overflows, hangs and broken properties are the
# findings.
#
#   fuzz/run.sh smoke            build, seed the corpora, run each target a few
#                                seconds (FUZZ_SMOKE_SECONDS, default 10): CI
#   fuzz/run.sh long SECONDS     run each target SECONDS, one after the other,
#                                one process each (one core); logs in fuzz/logs/
#   fuzz/run.sh nightly          the long run at 1,800 s per target (3.5 hours
#                                for the seven), then `keep`
#   fuzz/run.sh keep             merge into fuzz/kept/TARGET/ (committed) the
#                                local corpus's inputs that add coverage
#   fuzz/run.sh build | seed     only build the targets / the seed corpora
#
# FUZZ_TARGETS="units fio_job" picks targets. SSDSIM_FUZZ_TRACES=DIR adds the
# heads of the traces in DIR to the local corpus (fuzz/corpus/ is ignored by
# git: real traces are never committed). Inputs that once failed live in
# fuzz/regressions/TARGET/ and are run first, every time. fuzz/kept/TARGET/
# is the corpus kept in the repository: each input in it added code edges
# when a long run's corpus was merged into it (libFuzzer's set-cover merge
# over edges, without hit counts), so it stays small; every run starts from
# it.
set -euo pipefail
cd "$(dirname "$0")"
FUZZ=$PWD
ROOT=$(cd .. && pwd)
ALL="trace_parse trace_detect fio_job config_toml grid_file set_values units"
TARGETS=${FUZZ_TARGETS:-$ALL}
# The order of TraceFormat::ALL: trace_parse's first byte picks the format.
FORMATS=(spc msr blkparse disksim mqsim msr-cut fiu cloudphysics csv)

need_cargo_fuzz() {
    if ! cargo fuzz --version >/dev/null 2>&1; then
        cargo install cargo-fuzz --locked
    fi
}

build() {
    need_cargo_fuzz
    # The lock file is committed: refuse to build with other versions.
    cargo fetch --locked --manifest-path "$FUZZ/Cargo.toml"
    cargo fuzz build -s none
}

dict_for() {
    case $1 in
    trace_parse | trace_detect) echo "$FUZZ/dicts/trace.dict" ;;
    fio_job) echo "$FUZZ/dicts/fio.dict" ;;
    units) echo "$FUZZ/dicts/units.dict" ;;
    *) echo "$FUZZ/corpus/config.dict" ;;
    esac
}

# The head of a trace file (whole lines, at most ~3 KiB).
head_of() {
    { head -n 40 "$1" || true; } | head -c 3072
}

seed() {
    local c=$FUZZ/corpus
    for t in $ALL; do mkdir -p "$c/$t"; done
    # Traces: the repository's synthetic trace of each format, with two
    # option/buffer bytes; the detector gets them as samples.
    local i=0 f
    for f in "${FORMATS[@]}"; do
        local oct
        oct=$(printf '%03o' "$i")
        { printf "\\$oct\\000"; head_of "$ROOT/traces/synth.$f"; } >"$c/trace_parse/synth-$f"
        { printf "\\$oct\\077"; head_of "$ROOT/traces/synth.$f"; } >"$c/trace_parse/synth-$f-small-buffer"
        { printf '\000'; head_of "$ROOT/traces/synth.$f"; } >"$c/trace_detect/sample-$f"
        { printf "\\$(printf '%03o' $((2 * i + 1)))"; head -c 160 "$ROOT/traces/synth.$f"; } \
            >"$c/trace_detect/written-$f"
        i=$((i + 1))
    done
    if [ -n "${SSDSIM_FUZZ_TRACES:-}" ] && [ -d "$SSDSIM_FUZZ_TRACES" ]; then
        local n=0
        for f in "$SSDSIM_FUZZ_TRACES"/*; do
            [ -f "$f" ] || continue
            case $f in *.gz | *.md) continue ;; esac
            n=$((n + 1))
            for i in "${!FORMATS[@]}"; do
                { printf "\\$(printf '%03o' "$i")\\000"; head_of "$f"; } \
                    >"$c/trace_parse/real-$n-${FORMATS[$i]}"
            done
            { printf '\000'; head_of "$f"; } >"$c/trace_detect/real-$n"
        done
    fi
    for t in $ALL; do
        if [ -d "$FUZZ/kept/$t" ]; then cp "$FUZZ/kept/$t"/* "$c/$t/" 2>/dev/null || true; fi
    done
    cp "$FUZZ"/seeds/fio/*.fio "$c/fio_job/"
    cp "$FUZZ"/seeds/config/*.toml "$c/config_toml/"
    cp "$ROOT"/experiments/*.toml "$FUZZ"/seeds/grid/*.toml "$c/grid_file/"
    # --set: every field of the default configuration, six to an input.
    awk '
        /^\[/ { gsub(/[\[\]]/, ""); sec = $0; next }
        / = / { k = $1; sub(/^[^=]*= /, ""); print sec "." k "=" $0 }
    ' "$FUZZ/seeds/config/default.toml" | split -l 6 - "$c/set_values/default-"
    printf '%s\n' nand=tlc-64l ftl=dftl personality=varmail personality.requests=500 \
        trace=traces/synth.csv trace-format=csv gc=windowed:0.5 bs=8KiB iodepth=4 \
        interface=nvme-gen3x4 power=park-slc | split -l 4 - "$c/set_values/flags-"
    local u=0 s
    for s in 4096 4KiB 4k 1.5GiB 2MB 1_000KB 8sectors 25us 1.5ms 24.414ns 2s 0.5min 1h 500ps \
        3.3V 15mA 259mW 4.72uJ 1000 1.1KB 1.5k 4kb 1gib 0.000001s 9223372036854775807B; do
        printf '%s' "$s" >"$c/units/seed-$u"
        u=$((u + 1))
    done
    # A dictionary of the configuration's sections and keys.
    {
        awk '/^\[/ { print "\"" $0 "\"" } / = / { print "\"" $1 " = \"" }' \
            "$FUZZ/seeds/config/default.toml" | sort -u
        printf '"%s"\n' '[grid]' '[base]' '[workloads.w]' '[personality]' '[trace]' \
            '[replay]' 'nand_preset = ' 'power_preset = ' 'interface = ' '"4KiB"' '"25us"' \
            '"10MB/s"' '"800MT/s"' '"100us/page"' '9223372036854775807' '1e308' 'nan' 'inf'
    } >"$c/config.dict"
}

# Run one target for $2 seconds; its log goes to $3.
run_one() {
    local t=$1 secs=$2 log=$3 reg=()
    [ -d "$FUZZ/regressions/$t" ] && reg=("$FUZZ/regressions/$t")
    # shellcheck disable=SC2086 # FUZZ_LIMITS is a list of libFuzzer flags
    cargo fuzz run -s none "$t" "$FUZZ/corpus/$t" "${reg[@]}" -- \
        -max_total_time="$secs" ${FUZZ_LIMITS:-} -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -dict="$(dict_for "$t")" -print_final_stats=1 >"$log" 2>&1
}

# One summary line per target from its libFuzzer log.
summary() {
    local t=$1 log=$2 status=$3
    local execs rate final
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    final=$({ grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" || true; } |
        tail -1 | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [0-9]+\/[0-9a-zA-Z]+).*/\1/')
    printf '%-13s %-6s execs=%-10s exec/s=%-7s %s\n' "$t" "$status" "${execs:-?}" "${rate:-?}" "$final"
}

run_all() {
    local secs=$1 logdir=$2 failed=0 t status
    mkdir -p "$logdir"
    : >"$logdir/summary.txt"
    for t in $TARGETS; do
        if run_one "$t" "$secs" "$logdir/$t.log"; then status=ok; else
            status=FAILED
            failed=1
            echo "--- $t failed; the end of its log ($logdir/$t.log):"
            tail -40 "$logdir/$t.log"
        fi
        summary "$t" "$logdir/$t.log" "$status" | tee -a "$logdir/summary.txt"
    done
    return $failed
}

# Merge the local corpus into the kept one: a smallest set of inputs that
# adds the local corpus's code edges (-set_cover_merge=1; -use_counters=0
# counts edges, not hit-count buckets, which would keep thousands). Refused when real traces seeded the corpus (they are never
# committed).
keep() {
    if [ -n "${SSDSIM_FUZZ_TRACES:-}" ]; then
        echo "fuzz/run.sh keep: SSDSIM_FUZZ_TRACES is set; real trace heads must not enter fuzz/kept/" >&2
        exit 2
    fi
    local t before after
    for t in $TARGETS; do
        [ -d "$FUZZ/corpus/$t" ] || continue
        mkdir -p "$FUZZ/kept/$t"
        before=$(find "$FUZZ/kept/$t" -type f | wc -l)
        cargo fuzz run -s none "$t" -- -set_cover_merge=1 -use_counters=0 -max_len=4096 \
            -timeout=10 -rss_limit_mb=2048 \
            "$FUZZ/kept/$t" "$FUZZ/corpus/$t" >"$FUZZ/logs/keep-$t.log" 2>&1
        after=$(find "$FUZZ/kept/$t" -type f | wc -l)
        printf '%-13s kept %d inputs (%d new), %s\n' "$t" "$after" $((after - before)) \
            "$(du -sh "$FUZZ/kept/$t" | cut -f1)"
    done
}

case ${1:-} in
build) build ;;
seed) seed ;;
smoke)
    # A fixed seed and at most 5,000 inputs per target: CI runs the same
    # inputs on every machine (a fast one does not wander further), so it
    # only goes red for a change of the code, not by chance.
    FUZZ_LIMITS=${FUZZ_LIMITS:--seed=1 -runs=5000}
    build
    seed
    run_all "${FUZZ_SMOKE_SECONDS:-10}" "$(mktemp -d)"
    ;;
long)
    secs=${2:?usage: fuzz/run.sh long SECONDS}
    build
    seed
    run_all "$secs" "$FUZZ/logs"
    ;;
nightly)
    build
    seed
    status=0
    run_all "${FUZZ_NIGHTLY_SECONDS:-1800}" "$FUZZ/logs" || status=$?
    mkdir -p "$FUZZ/logs"
    keep
    exit $status
    ;;
keep)
    build
    mkdir -p "$FUZZ/logs"
    keep
    ;;
*)
    sed -n '2,27p' "$0"
    exit 2
    ;;
esac
