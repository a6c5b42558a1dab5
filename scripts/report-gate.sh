#!/bin/bash
# The byte-identical gate of an engine refactor: full JSON reports of varied
# configurations (every FTL, schedulers, personalities, traces, write buffer,
# drain, open loop, several presets) and the sweep rows of every grid in
# experiments/, wall-time fields left out. Run it with the binary before and
# after a change and compare the two directories:
#
#   scripts/report-gate.sh target/release/ssdsim /tmp/gate-before   # old build
#   scripts/report-gate.sh target/release/ssdsim /tmp/gate-after    # new build
#   diff -r /tmp/gate-before /tmp/gate-after && echo byte-identical
#
# Traces are read from $SSDSIM_TRACES (default ../shared/traces).
set -uo pipefail
BIN=$1
OUT=$2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
T=${SSDSIM_TRACES:-$ROOT/../shared/traces}
mkdir -p "$OUT"
rm -f "$OUT"/*
run() {
    name=$1
    shift
    "$BIN" run --format json "$@" 2>"$OUT/$name.err" | grep -v '_wall_s\|"wall_s"' >"$OUT/$name.json"
    echo "rc=${PIPESTATUS[0]}" >>"$OUT/$name.json"
}
run page-rw --nand chip2 --ftl page --rw randwrite --number_ios 30000 --precondition fill --power lee2011
run dftl-rw --nand chip2 --ftl dftl --rw randwrite --number_ios 30000 --precondition fill --power lee2011
run dftl-mix --nand mlc-mqsim --ftl dftl --rw randrw --number_ios 30000 --precondition steady --interface nvme-gen3x4
run fast --nand chip2 --ftl fast --rw randwrite --number_ios 20000 --precondition fill --power park-slc
run last --nand park-slc --ftl last --rw randwrite --number_ios 20000 --precondition fill --power park-slc
run block --nand chip1 --ftl block --rw write --number_ios 20000
run wb --nand chip2 --ftl page --rw randwrite --number_ios 30000 --write-buffer 1MiB --power lee2011
run seqread --nand tlc-64l --ftl page --rw read --number_ios 30000 --precondition fill --interface nvme-gen4x4
run randread --nand qlc-96l --ftl page --rw randread --number_ios 30000 --precondition fill
run cfq-fs --nand chip2 --ftl dftl --sched cfq --personality fileserver --time-limit 200ms --power lee2011
run bfq-vm --nand chip2 --ftl page --sched bfq --personality varmail --time-limit 200ms
run deadline-ws --nand chip2 --ftl fast --sched deadline --personality webserver --time-limit 200ms --precondition fill
run drain --nand chip2 --ftl page --rw randwrite --number_ios 30000 --precondition fill --drain --power lee2011
run open --nand chip2 --ftl page --rw randwrite --rate_iops 2000 --number_ios 5000 --precondition fill --power lee2011
if [ -d "$T" ]; then
    run trace-msr --nand chip2 --ftl dftl --trace "$T/msr_cut10k_rw_20_80.105.trace" --power lee2011
    run trace-mqsim --nand mlc-mqsim --ftl page --trace "$T/mqsim_tpcc-small.trace" --interface nvme-gen3x4
    run trace-blk --nand chip2 --ftl page --trace "$T/blkparse_ycsb_ext4.txt" --sched deadline --set replay.blkparse_action=D
fi
for g in "$ROOT"/experiments/*.toml; do
    n=$(basename "$g" .toml)
    "$BIN" sweep --grid "$g" --time-limit 30ms --jsonl "$OUT/sweep-$n.jsonl" --no-progress --threads 2 >/dev/null 2>&1
    sed -i 's/"wall_s":[0-9.e-]*//' "$OUT/sweep-$n.jsonl"
done
rm -f "$OUT"/*.err
