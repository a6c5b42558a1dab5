#!/usr/bin/env bash
# The hostile-user run: throws batches of bad, odd and extreme inputs at the
# ssdsim binary, by category, and classifies every outcome.
#
#   scripts/hostile.sh path/to/ssdsim [CATEGORY ...]
#
# Categories: trace fio config output merge load (all by default). Cases are
# generated from a fixed seed (47), so two runs throw the same cases. Each
# command runs under `timeout 60` in its own directory of a scratch
# directory (kept when a case is not ok or refused, with the command's
# stdout and stderr), and its outcome is one of:
#   ok           exit 0 and its output passes the case's check
#   refused      exit non-zero with a message on stderr naming the file,
#                line, field or flag at fault
#   vague        exit non-zero, but the message names none of them
#   panic        exit 101 or "panicked at" on stderr
#   signal       killed by a signal (exit > 128)
#   hang         killed by `timeout 60`
#   destroyed    an input file changed (checksums before and after)
#   silent-wrong exit 0 but the check on the output fails (a count that is
#                not the number of valid lines, a report missing, a value
#                set that the configuration does not carry, ...)
# A summary table follows, then every case that is not ok or refused with its
# command. The exit status is 1 when any case is panic, signal, hang,
# destroyed or silent-wrong. Needs bash, coreutils (timeout, sha256sum) and
# python3 (case generation and output checks). About 800 cases in 2 minutes.
set -u

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 path/to/ssdsim [trace|fio|config|output|merge|load ...]" >&2
    exit 2
fi
BIN=$(readlink -f "$1")
shift
CATS=${*:-trace fio config output merge load}
REPO=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/ssdsim-hostile.XXXXXX")
RESULTS=$W/results.tsv
: >"$RESULTS"
TIMEOUT=${HOSTILE_TIMEOUT:-60}
echo "ssdsim: $BIN"
echo "scratch: $W"

# ---------------------------------------------------------------- the runner

# The case's directory, its inputs (checksummed around the command) and its
# check (a shell function given the directory; it prints why it fails).
CASE_DIR=
INPUTS=()
CHECK=check_none
EXPECT_NAME=

# new_case CATEGORY ID: a fresh directory for the case (the cwd of its command).
new_case() {
    CAT=$1
    ID=$2
    CASE_DIR=$W/cases/$CAT/$ID
    mkdir -p "$CASE_DIR"
    INPUTS=()
    CHECK=check_none
    EXPECT_NAME=
}

sums() {
    local f
    for f in "${INPUTS[@]}"; do
        if [ -e "$f" ]; then sha256sum <"$f"; else echo "missing $f"; fi
    done
}

# run COMMAND...: run it in the case's directory and record the outcome.
# EXPECT_NAME is an extended regular expression a refusal's message must
# match (the file, line, field or flag at fault).
run() {
    local before after rc outcome detail=""
    before=$(sums)
    (cd "$CASE_DIR" && timeout -k 5 "$TIMEOUT" "$@" >"$CASE_DIR/stdout" 2>"$CASE_DIR/stderr")
    rc=$?
    after=$(sums)
    if [ "$before" != "$after" ]; then
        outcome=destroyed
        detail="an input changed"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        outcome=hang
    elif [ $rc -eq 101 ] || grep -q "panicked at" "$CASE_DIR/stderr"; then
        outcome=panic
        detail=$(grep -m1 "panicked at" -A1 "$CASE_DIR/stderr" | tr '\n' ' ')
    elif [ $rc -gt 128 ]; then
        outcome=signal
        detail="exit $rc"
    elif [ $rc -eq 0 ]; then
        if detail=$(cd "$CASE_DIR" && $CHECK); then
            outcome=ok
        else
            outcome=silent-wrong
        fi
    elif [ -s "$CASE_DIR/stderr" ] && { [ -z "$EXPECT_NAME" ] ||
        grep -Eq -- "$EXPECT_NAME" "$CASE_DIR/stderr"; }; then
        outcome=refused
    else
        outcome=vague
        detail="exit $rc: $(head -c 300 "$CASE_DIR/stderr" | tr '\n' ' ')"
    fi
    local cmd
    cmd=$(printf '%q ' "$@")
    cmd=${cmd//$BIN/ssdsim}
    printf '%s\t%s\t%s\t%s\t%s\n' "$CAT" "$outcome" "$ID" "$cmd" "$detail" >>"$RESULTS"
    case $outcome in
    ok | refused) rm -rf "$CASE_DIR" ;;
    esac
}

# ---------------------------------------------------------------- checks

check_none() { :; }

# The case must be refused: exit 0 is silent-wrong.
check_refuse() {
    echo "exit 0 where a refusal was expected: $(head -c 200 stdout | tr '\n' ' ')"
    return 1
}

# python3 CODE: a check written in Python (stdout and stderr of the command
# in the cwd; sys.argv[1:] its arguments); it prints why it fails.
py() {
    local code=$1
    shift
    python3 -c "$code" "$@"
}

# A JSON report with host.requests == $1 (or >= 1 with "any").
check_report_requests() {
    py '
import json, sys
want = sys.argv[1]
try:
    d = json.load(open("stdout"))
    n = d["host"]["requests"]
except Exception as e:
    print(f"no JSON report: {e}"); sys.exit(1)
if want == "any":
    # A buffered run may send the device nothing yet: its calls count.
    ok = n >= 1 or d.get("app", {}).get("calls", 0) >= 1
else:
    ok = n == int(want)
if not ok:
    print(f"host.requests = {n}, expected {want}"); sys.exit(1)
' "$EXPECT_REQUESTS"
}

# trace stats --format json with requests == $EXPECT_REQUESTS.
check_stats_requests() {
    py '
import json, sys
try:
    n = json.load(open("stdout"))["requests"]
except Exception as e:
    print(f"no JSON statistics: {e}"); sys.exit(1)
if n != int(sys.argv[1]):
    print(f"requests = {n}, expected {sys.argv[1]}"); sys.exit(1)
' "$EXPECT_REQUESTS"
}

EXPECT_REQUESTS=any

# ---------------------------------------------------------------- generation

# Trace and fio cases come from one deterministic generator (seed 47): it
# writes the files and a manifest, one case a line.
generate() {
    python3 - "$REPO" "$W/gen" <<'PY'
import os, random, sys
repo, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
rng = random.Random(47)

# ---- traces: 20 requests in each writable text format.
numeric = {  # fields that hold numbers, by format (0-based; split as below)
    "msr": [0, 2, 4, 5, 6],
    "spc": [0, 1, 2, 4],
    "blkparse": [3, 7, 9],
    "disksim": [0, 1, 2, 3],
    "csv": [0, 2, 3, 4],
}
sep = {"msr": ",", "spc": ",", "csv": ",", "blkparse": None, "disksim": " "}
header = {"csv": 1}
manifest = open(os.path.join(out, "traces.tsv"), "w")
for fmt in numeric:
    lines = open(os.path.join(repo, "traces", "synth." + fmt)).read().splitlines()
    h = header.get(fmt, 0)
    head, body = lines[:h], lines[h:h + 20]
    def fields(l):
        return l.split(sep[fmt]) if sep[fmt] else l.split()
    def join(fs):
        return (sep[fmt] or " ").join(fs)
    n = len(body)
    cases = []
    # (name, expect, lines, requests expected when accepted)
    #   valid: must run with n requests; invalid: must be refused;
    #   either: refused, or accepted with `count` requests.
    def mutate_field(value_fn, i=None):
        b = list(body)
        i = rng.randrange(n) if i is None else i
        fs = fields(b[i])
        f = rng.choice(numeric[fmt])
        fs[f] = value_fn(fs[f])
        b[i] = join(fs)
        return b, i
    cases.append(("crlf", "valid", [l + "\r" for l in body], n))
    b = list(body); b.insert(rng.randrange(n), ""); cases.append(("blank", "valid", b, n))
    b = list(body); b.insert(rng.randrange(n), " \t "); cases.append(("spaces", "valid", b, n))
    b = list(body); b.insert(rng.randrange(n), "# a comment"); cases.append(("comment", "valid", b, n))
    cases.append(("no-final-newline", "valid", body, n))  # written without the last \n
    for name, fn, expect in [
        ("nan", lambda v: "NaN", "invalid"),
        ("negative", lambda v: "-" + v.lstrip("-"), "invalid"),
        ("text", lambda v: "abc", "invalid"),
        ("empty-field", lambda v: "", "invalid"),
        ("overflow", lambda v: "99999999999999999999999", "invalid"),
        ("exp", lambda v: "1e400", "invalid"),
        ("i64max", lambda v: "9223372036854775807", "either"),
        ("u64max", lambda v: "18446744073709551615", "either"),
        ("zero", lambda v: "0", "either"),
        ("fraction", lambda v: v + ".5" if "." not in v else v + "5", "either"),
        ("hex", lambda v: "0x10", "invalid"),
    ]:
        b, i = mutate_field(fn)
        cases.append((name, expect, b, n))
    b = list(body); i = rng.randrange(n)
    fs = fields(b[i]); b[i] = join(fs[: max(1, len(fs) - 2)])
    cases.append(("truncated", "invalid", b, n))
    b = list(body); i = rng.randrange(n); b[i] = b[i][: len(b[i]) // 2]
    cases.append(("cut-mid-line", "invalid", b, n))
    b = list(body); i = rng.randrange(n)
    b[i] = "".join(chr(rng.choice([1, 2, 7, 0x7f, 0xe9, 0x2603, 0xfffd, 0x41])) for _ in range(30))
    cases.append(("garbage", "invalid", b, n))
    b = list(body); i = rng.randrange(n); b[i] = b[i] + (sep[fmt] or " ") + "7" + (sep[fmt] or " ") + "7"
    cases.append(("extra-fields", "either", b, n))
    b = list(body); b.insert(rng.randrange(n), body[rng.randrange(n)])
    cases.append(("duplicate-line", "valid", b, n + 1))
    cases.append(("only-header", "empty", [], 0))
    for name, expect, b, count in cases:
        path = os.path.join(out, f"{fmt}-{name}.trace")
        text = "\n".join(head + b)
        if name != "no-final-newline" and (head or b):
            text += "\n"
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        manifest.write(f"{fmt}\t{name}\t{expect}\t{count}\t{path}\n")
manifest.close()

# ---- fio job files: a valid job, one option mutated.
base = ["[global]", "direct=1", "bs=4k", "[job1]", "rw=randrw", "rwmixread=70",
        "iodepth=4", "number_ios=200"]
manifest = open(os.path.join(out, "fio.tsv"), "w")
def job(name, expect, lines, requests="any"):
    path = os.path.join(out, f"fio-{name}.fio")
    open(path, "w").write("\n".join(lines) + "\n")
    manifest.write(f"{name}\t{expect}\t{requests}\t{path}\n")
def with_opt(opt, val):
    ls = [l for l in base if not l.startswith(opt + "=")]
    return ls + [f"{opt}={val}"]
bad_numbers = ["abc", "", "-1", "1e30", "99999999999999999999", "0x", "4k4", "nan"]
for opt in ["bs", "iodepth", "number_ios", "rwmixread", "size", "offset", "rate_iops",
            "randseed", "runtime", "ramp_time", "startdelay", "numjobs",
            "percentage_random", "fsync"]:
    for v in rng.sample(bad_numbers, 4):
        job(f"{opt}-{v or 'empty'}", "invalid", with_opt(opt, v))
    for v in ["0", "18446744073709551615", "9223372036854775807"]:
        job(f"{opt}-{v}", "either", with_opt(opt, v))
for v, expect in [("4k", "valid"), ("4KiB", "valid"), ("512", "valid"), ("3000", "invalid"),
                  ("1.5k", "either"), ("4k-8k", "either"), ("1g", "either")]:
    job(f"bs-unit-{v}", expect, with_opt("bs", v))
for v in ["zipf:0", "zipf:-1", "zipf:abc", "pareto:2", "pareto:0", "normal:50", "zipf:1e300"]:
    job(f"dist-{v}", "either", with_opt("random_distribution", v))
job("number_ios-500", "valid", with_opt("number_ios", "500"), "500")
job("numjobs-3", "valid", with_opt("numjobs", "3"), "600")
job("unknown-option", "either", base + ["frobnicate=1"])
job("rw-bogus", "invalid", with_opt("rw", "sideways"))
job("no-section", "either", ["bs=4k", "rw=randread", "number_ios=100"])
job("empty-section-name", "either", ["[]", "rw=randread", "number_ios=100"])
job("two-jobs", "valid", base + ["[job2]", "rw=randread", "number_ios=100"], "300")
job("only-global", "either", ["[global]", "rw=randread"])
job("empty-file", "either", [""])
job("binary", "invalid", ["[job1]", "rw=\x01\x02\x7f", "number_ios=10"])
job("crlf", "valid", [l + "\r" for l in base], "200")
job("no-equals", "either", base + ["iodepth"])
job("duplicate-option", "valid", base + ["number_ios=300"], "300")
job("include", "either", ["include /etc/passwd"] + base)
job("bssplit", "either", base + ["bssplit=4k/50:8k/50"])
job("huge-line", "invalid", base + ["bs=" + "9" * 100000])
manifest.close()
PY
}

# ---------------------------------------------------------------- trace

cat_trace() {
    local fmt name expect count path
    while IFS=$'\t' read -r fmt name expect count path; do
        for cmd in stats run; do
            new_case trace "$fmt-$name-$cmd"
            cp "$path" "$CASE_DIR/t.trace"
            INPUTS=("$CASE_DIR/t.trace")
            EXPECT_REQUESTS=$count
            # A refusal names the file and line (t.trace:N), or the file.
            EXPECT_NAME='t\.trace'
            case $expect in
            invalid) CHECK=check_refuse ;;
            *) [ $cmd = stats ] && CHECK=check_stats_requests || CHECK=check_report_requests ;;
            esac
            if [ "$expect" = empty ]; then
                # No request: statistics of nothing, and a run refused.
                if [ $cmd = stats ]; then
                    CHECK=check_stats_requests
                else
                    CHECK=check_refuse
                    EXPECT_NAME='t\.trace|no request'
                fi
            fi
            if [ $cmd = stats ]; then
                run "$BIN" trace stats --format json --trace-format "$fmt" t.trace
            else
                run "$BIN" run --trace t.trace --trace-format "$fmt" --no-power --format json
            fi
        done
    done <"$W/gen/traces.tsv"
    # Format detection on a few mutated files (no --trace-format).
    for f in msr-crlf spc-comment blkparse-blank disksim-spaces csv-crlf msr-garbage; do
        new_case trace "$f-detected"
        cp "$W/gen/$f.trace" "$CASE_DIR/t.trace"
        INPUTS=("$CASE_DIR/t.trace")
        EXPECT_NAME='t\.trace'
        EXPECT_REQUESTS=20
        case $f in *garbage) CHECK=check_refuse ;; *) CHECK=check_stats_requests ;; esac
        run "$BIN" trace stats --format json t.trace
    done
}

# ---------------------------------------------------------------- fio

cat_fio() {
    local name expect requests path
    while IFS=$'\t' read -r name expect requests path; do
        new_case fio "$name"
        cp "$path" "$CASE_DIR/job.fio"
        INPUTS=("$CASE_DIR/job.fio")
        # The job file, or the workload field its option set.
        EXPECT_NAME='job\.fio|workload\.'
        EXPECT_REQUESTS=$requests
        case $expect in
        invalid) CHECK=check_refuse ;;
        *) CHECK=check_report_requests ;;
        esac
        run "$BIN" run --fio job.fio --channels 2 --blocks-per-plane 64 --time-limit 1s \
            --no-power --format json
    done <"$W/gen/fio.tsv"
}

# ---------------------------------------------------------------- config

# A `--set FIELD=VALUE` accepted must be carried by the configuration: the
# report's echo of FIELD is VALUE, or at least no longer the default's
# (unless VALUE is the default); a word is no value for a number.
check_set_taken() {
    py '
import json, re, sys, tomllib
field, value, kind = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    d = json.load(open("stdout"))
    d["host"]["requests"]
except Exception as e:
    print(f"no JSON report: {e}"); sys.exit(1)
if value in ("abc", "\"\"", "[]") and kind not in ("str", "str-free", "list"):
    print(f"{field}={value} accepted for a {kind} field"); sys.exit(1)
def at(t, path):
    for p in path.split("."):
        if not isinstance(t, dict) or p not in t:
            return None
        t = t[p]
    return t
echo = at(d["config"], field)
default = at(tomllib.load(open(sys.argv[4], "rb")), field)
try:
    given = tomllib.loads(f"v = {value}")["v"]
except Exception:
    given = value
def norm(v):
    s = str(v).strip().lower()
    m = re.fullmatch(r"([-+0-9.e]+)\s*[a-z/]*", s)
    if m:
        try:
            return float(m.group(1))
        except ValueError:
            pass
    return s
if echo is not None and norm(echo) == norm(default) and norm(given) != norm(default):
    print(f"{field}={value} accepted, but the configuration still has the default {default!r}")
    sys.exit(1)
' "$SET_FIELD" "$SET_VALUE" "$SET_KIND" "$W/default.toml"
}

cat_config() {
    # The default configuration's fields and their kinds.
    "$BIN" run --print-config --channels 2 --blocks-per-plane 256 >"$W/default.toml"
    python3 - "$W/default.toml" >"$W/fields.tsv" <<'PY'
import random, sys, tomllib
cfg = tomllib.load(open(sys.argv[1], "rb"))
fields = []
def walk(t, path):
    for k, v in t.items():
        p = path + [k]
        if isinstance(v, dict):
            walk(v, p)
        else:
            kind = type(v).__name__
            fields.append((".".join(p), kind))
walk(cfg, [])
# Names and free text take any word.
rng = random.Random(47)
values = ["0", "-1", "1e300", "99999999999999999999", "18446744073709551615",
          "9223372036854775807", "abc", "\"\"", "nan", "inf", "0.5", "true", "[]",
          "1ns", "4KiB", "-4KiB", "1e-300", "1", "8", "100", "0.25"]
picked = rng.sample(fields, min(60, len(fields)))
for f, kind in sorted(picked):
    if f.endswith("name") or f in ("nand_preset", "power_preset", "interface"):
        kind = "str-free"
    for v in rng.sample(values, 4):
        print(f"{f}\t{kind}\t{v}")
PY
    local field kind value i=0
    while IFS=$'\t' read -r field kind value; do
        i=$((i + 1))
        new_case config "$i-$field"
        SET_FIELD=$field SET_VALUE=$value SET_KIND=$kind
        # The field, or its section (a rule over several of its fields).
        EXPECT_NAME="${field//./\\.}|^error: ${field%%.*}[.:]"
        CHECK=check_set_taken
        run "$BIN" run --channels 2 --blocks-per-plane 256 --number_ios 200 --no-power \
            --time-limit 2s --format json --set "$field=$value"
    done <"$W/fields.tsv"
}

# ---------------------------------------------------------------- output faults

check_dev_null_ok() { :; }

cat_output() {
    local trace=$REPO/traces/synth.msr
    local where faults
    # Each output flag against each fault; every one must be refused, and
    # the input must be intact.
    faults="dir devfull missing-dir parent-is-file proc long-name same-as-input symlink-to-input hardlink-to-input"
    for flag in --out --power-trace --html --record-trace --plot-power convert sweep-csv \
        sweep-jsonl import; do
        for fault in $faults; do
            new_case output "${flag#--}-$fault"
            cp "$trace" "$CASE_DIR/t.msr"
            mkdir "$CASE_DIR/d"
            echo x >"$CASE_DIR/f"
            cp "$REPO/crates/cli/tests/data/mqsim-ssdconfig.xml" "$CASE_DIR/m.xml"
            INPUTS=("$CASE_DIR/t.msr" "$CASE_DIR/m.xml")
            local input=t.msr
            [ "$flag" = import ] && input=m.xml
            case $fault in
            dir) where=d ;;
            devfull) where=/dev/full ;;
            missing-dir) where=nope/x ;;
            parent-is-file) where=f/x ;;
            proc) where=/proc/ssdsim-hostile ;;
            long-name) where=$(printf 'n%.0s' $(seq 300)) ;;
            same-as-input) where=$input ;;
            symlink-to-input) ln -s "$input" "$CASE_DIR/l" && where=l ;;
            hardlink-to-input) ln "$CASE_DIR/$input" "$CASE_DIR/h" && where=h ;;
            esac
            EXPECT_NAME="${where:0:40}|standard output|full|space"
            CHECK=check_refuse
            case $flag in
            convert) run "$BIN" trace convert --to csv t.msr "$where" ;;
            sweep-csv) run "$BIN" sweep --trace t.msr --op 0.07,0.28 --precondition none \
                --csv "$where" ;;
            sweep-jsonl) run "$BIN" sweep --trace t.msr --op 0.07,0.28 --precondition none \
                --jsonl "$where" ;;
            import) run "$BIN" import mqsim m.xml -o "$where" ;;
            --power-trace | --plot-power) run "$BIN" run --trace t.msr "$flag" "$where" ;;
            *) run "$BIN" run --trace t.msr --no-power "$flag" "$where" ;;
            esac
        done
    done
    # Standard output closed, or full, for commands that print.
    local cmds=(
        "run --trace t.msr --no-power"
        "trace stats t.msr"
        "sweep --trace t.msr --op 0.07,0.28 --dry-run"
        "presets"
        "mapping-size --capacity 1TiB"
        "run --print-config"
        "man"
    )
    local c j=0
    for c in "${cmds[@]}"; do
        for how in closed full; do
            j=$((j + 1))
            new_case output "stdout-$how-$j"
            cp "$trace" "$CASE_DIR/t.msr"
            INPUTS=("$CASE_DIR/t.msr")
            EXPECT_NAME="standard output|stdout|No space"
            CHECK=check_refuse
            if [ $how = closed ]; then
                # shellcheck disable=SC2086
                run sh -c 'exec "$0" "$@" >&-' "$BIN" $c
            else
                # shellcheck disable=SC2086
                run sh -c 'exec "$0" "$@" >/dev/full' "$BIN" $c
            fi
        done
    done
    # /dev/null is a fine output.
    new_case output "out-dev-null"
    cp "$trace" "$CASE_DIR/t.msr"
    INPUTS=("$CASE_DIR/t.msr")
    CHECK=check_none
    run "$BIN" run --trace t.msr --no-power --out /dev/null
}

# ---------------------------------------------------------------- merge and shards

SWEEP_ARGS=(sweep --op 0.07,0.28 --rw randread,randwrite --number_ios 200 --channels 2
    --blocks-per-plane 64 --precondition none --no-progress)

# The merged CSV (merged.csv) or a resumed sweep's rows (full.jsonl) hold
# the reference's points exactly: each index once, its params, its metrics.
check_rows_match() {
    py '
import csv, json, sys
ref = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    ref[r["index"]] = r
src = sys.argv[2]
# A row whose results (not its identity, index or params) were edited cannot
# be told from a genuine one: only where it goes is checked then.
results_tampered = sys.argv[3] == "results"
got = {}
if src.endswith(".jsonl"):
    for l in open(src):
        if not l.strip():
            continue
        r = json.loads(l)
        i = r["index"]
        if i in got:
            print(f"point {i} twice"); sys.exit(1)
        got[i] = r
    for i, r in ref.items():
        g = got.get(i)
        if g is None:
            print(f"point {i} missing"); sys.exit(1)
        for k in r:
            if k == "wall_s" or (results_tampered and k not in ("index", "params", "sweep", "points")):
                continue
            if g.get(k) != r[k]:
                print(f"point {i}: {k} = {g.get(k)!r}, the reference has {r[k]!r}"); sys.exit(1)
else:
    rows = list(csv.DictReader(open(src)))
    if len(rows) != len(ref):
        print(f"{len(rows)} rows, expected {len(ref)}"); sys.exit(1)
    for row in rows:
        i = int(row["index"])
        r = ref.get(i)
        if r is None:
            print(f"row index {i} not in the sweep"); sys.exit(1)
        for k, v in r["params"]:
            if row.get(k) != v:
                print(f"point {i}: {k} = {row.get(k)!r}, expected {v!r}"); sys.exit(1)
        want, have = r["iops"], float(row["iops"] or "nan")
        if not results_tampered and not abs(have - want) <= max(0.051, 1e-4 * want):
            print(f"point {i}: iops {have} but the point ran {want}"); sys.exit(1)
' "$W/merge/full.jsonl" "$1" "$TAMPERED"
}
check_merged() { check_rows_match merged.csv; }
check_resumed() { check_rows_match full.jsonl; }

# tamper NAME FILE: the tampered copy of FILE (python3 on its lines).
tamper() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, random, sys
name, src, dst = sys.argv[1:]
lines = open(src).read().splitlines()
rows = [json.loads(l) for l in lines]
rng = random.Random(47)
def dump(rs):
    return [json.dumps(r) for r in rs]
out = None
if name == "swap-params":
    rows[0]["params"], rows[1]["params"] = rows[1]["params"], rows[0]["params"]
elif name == "index-other":
    rows[0]["index"] = rows[1]["index"]
elif name == "index-out":
    rows[0]["index"] = 99
elif name == "index-negative":
    rows[0]["index"] = -1
elif name == "index-string":
    rows[0]["index"] = "0"
elif name == "points":
    rows[0]["points"] = 5
elif name == "points-all":
    for r in rows: r["points"] = 2
elif name == "sweep-id":
    rows[0]["sweep"] = "0000000000000000"
elif name == "drop-row":
    rows = rows[1:]
elif name == "dup-row":
    rows = rows + [rows[0]]
elif name == "dup-row-other-result":
    r = dict(rows[0]); r["iops"] = r["iops"] * 2; rows = rows + [r]
elif name == "params-value":
    rows[0]["params"][0][1] = "0.5"
elif name == "params-missing":
    rows[0]["params"] = rows[0]["params"][:-1]
elif name == "seed":
    rows[0]["seed"] = rows[0]["seed"] + 1
elif name == "requests-zero":
    rows[0]["requests"] = 0
elif name == "iops-nan":
    out = [l.replace(str(rows[0]["iops"]), "NaN", 1) if i == 0 else l for i, l in enumerate(lines)]
elif name == "error-set":
    rows[0]["error"] = "boom"
elif name == "extra-field":
    rows[0]["frobnicate"] = 1
elif name == "missing-field":
    del rows[0]["iops"]
elif name == "truncated-line":
    out = lines[:-1] + [lines[-1][: len(lines[-1]) // 2]]
elif name == "garbage-line":
    out = lines + ["\x01\x02 not json"]
elif name == "blank-line":
    out = lines[:1] + [""] + lines[1:]
elif name == "crlf":
    out = [l + "\r" for l in lines]
elif name == "empty":
    out = []
elif name == "huge-index":
    rows[0]["index"] = 18446744073709551615
else:
    raise SystemExit(f"unknown tampering {name}")
if out is None:
    out = dump(rows)
open(dst, "w").write("".join(l + "\n" for l in out))
PY
}

TAMPERS="swap-params index-other index-out index-negative index-string points points-all sweep-id
drop-row dup-row dup-row-other-result params-value params-missing seed requests-zero iops-nan
error-set extra-field missing-field truncated-line garbage-line blank-line crlf empty huge-index"
# Edits of a row's results (its seed included), which no check can see.
RESULT_TAMPERS="seed requests-zero iops-nan error-set extra-field missing-field dup-row-other-result"
TAMPERED=identity

cat_merge() {
    local m=$W/merge
    mkdir -p "$m"
    (cd "$m" && "$BIN" "${SWEEP_ARGS[@]}" --jsonl full.jsonl >/dev/null 2>&1 &&
        "$BIN" "${SWEEP_ARGS[@]}" --shard 0/2 --jsonl s0.jsonl >/dev/null 2>&1 &&
        "$BIN" "${SWEEP_ARGS[@]}" --shard 1/2 --jsonl s1.jsonl >/dev/null 2>&1) || {
        echo "the reference sweep failed" >&2
        return
    }
    local t
    for t in $TAMPERS; do
        case " $RESULT_TAMPERS " in
        *" $t "*) TAMPERED=results ;;
        *) TAMPERED=identity ;;
        esac
        # merge of a tampered shard with the other.
        new_case merge "merge-$t"
        cp "$m/s1.jsonl" "$CASE_DIR/s1.jsonl"
        tamper "$t" "$m/s0.jsonl" "$CASE_DIR/s0.jsonl"
        INPUTS=("$CASE_DIR/s0.jsonl" "$CASE_DIR/s1.jsonl")
        EXPECT_NAME='s0\.jsonl|s1\.jsonl|missing'
        CHECK=check_merged
        run "$BIN" merge s0.jsonl s1.jsonl --csv merged.csv
        # --resume from a tampered whole run: runs what is missing or wrong,
        # or refuses; never keeps another point's results.
        new_case merge "resume-$t"
        tamper "$t" "$m/full.jsonl" "$CASE_DIR/full.jsonl"
        EXPECT_NAME='full\.jsonl'
        CHECK=check_resumed
        run "$BIN" "${SWEEP_ARGS[@]}" --jsonl full.jsonl --resume
    done
    # Shard specifications.
    local s
    for s in 2/2 0/0 -1/2 1/-2 a/b 0/1000 999/1000 "0/2/3" " 0 / 2 " 0/18446744073709551616 auto; do
        new_case merge "shard-${s// /_}"
        EXPECT_NAME='--shard|shard|argument'
        CHECK=check_none
        run "$BIN" "${SWEEP_ARGS[@]}" --shard "$s" --jsonl s.jsonl
    done
    for env in "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=2" "SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=2" \
        "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2" "PMI_RANK=0 PMI_SIZE=0"; do
        new_case merge "shard-auto-${env%% *}-$RANDOM"
        EXPECT_NAME='--shard|SLURM|PMI|shard'
        CHECK=check_none
        # shellcheck disable=SC2086
        run env $env "$BIN" "${SWEEP_ARGS[@]}" --shard auto --jsonl s.jsonl
    done
    # Merge edge cases.
    new_case merge "merge-same-file-twice"
    cp "$m/s0.jsonl" "$CASE_DIR/s0.jsonl"
    INPUTS=("$CASE_DIR/s0.jsonl")
    EXPECT_NAME='s0\.jsonl'
    CHECK=check_refuse
    run "$BIN" merge s0.jsonl s0.jsonl --csv merged.csv
    new_case merge "merge-output-is-input"
    cp "$m/s0.jsonl" "$m/s1.jsonl" "$CASE_DIR/"
    INPUTS=("$CASE_DIR/s0.jsonl" "$CASE_DIR/s1.jsonl")
    EXPECT_NAME='s0\.jsonl|s1\.jsonl'
    CHECK=check_refuse
    run "$BIN" merge s0.jsonl s1.jsonl --jsonl s1.jsonl
    new_case merge "merge-ok"
    cp "$m/s0.jsonl" "$m/s1.jsonl" "$CASE_DIR/"
    INPUTS=("$CASE_DIR/s0.jsonl" "$CASE_DIR/s1.jsonl")
    CHECK=check_merged
    run "$BIN" merge s0.jsonl s1.jsonl --csv merged.csv
    new_case merge "merge-directory"
    mkdir "$CASE_DIR/d"
    EXPECT_NAME='d'
    CHECK=check_refuse
    run "$BIN" merge d --csv merged.csv
}

# ---------------------------------------------------------------- load

check_report_any() {
    EXPECT_REQUESTS=any check_report_requests
}

# A listing of N points: N lines, indices 0..N-1 in order.
check_listing() {
    py '
import sys
n = int(sys.argv[1]); i = 0
for l in open("stdout"):
    if int(l.split()[0]) != i:
        print(f"line {i + 1}: {l[:80]!r}"); sys.exit(1)
    i += 1
if i != n:
    print(f"{i} points listed, expected {n}"); sys.exit(1)
' "$LISTING"
}

cat_load() {
    local small=(--channels 2 --blocks-per-plane 64 --no-power --format json)
    local c i=0
    local runs=(
        "--number_ios 1000000000000 --time-limit 10ms"
        "--number_ios 18446744073709551615 --time-limit 10ms"
        "--iodepth 65536 --time-limit 10ms"
        "--iodepth 65537 --time-limit 10ms"
        "--queue-depth 65535 --rw randwrite --time-limit 10ms"
        "--rate_iops 1e12 --time-limit 1ms"
        "--rate_iops 1e300 --time-limit 1ms"
        "--rate_iops 0.000001 --time-limit 10ms"
        "--rate_iops 1 --number_ios 5"
        "--time-limit 4611686018427387904ns --number_ios 100"
        "--time-limit 100000000h --number_ios 100"
        "--runtime 1ns --number_ios 100000000"
        "--bs 1GiB --number_ios 3"
        "--bs 512 --rw randwrite --time-limit 20ms"
        "--rw randwrite --precondition steady --time-limit 10ms"
        "--rw randwrite --time-limit 50ms --set ftl.op=0.001"
        "--rw randwrite --time-limit 50ms --ftl dftl --set ftl.cmt_size=8B"
        "--rw randwrite --time-limit 50ms --ftl fast"
        "--rw randwrite --time-limit 50ms --ftl bast"
        "--rw randwrite --time-limit 50ms --sched cfq"
        "--rw randwrite --time-limit 50ms --sched bfq"
        "--personality varmail --set personality.level=file --set personality.threads=65536 --time-limit 10ms"
        "--personality fileserver --set personality.level=file --set personality.threads=4096 --time-limit 20ms"
        "--personality webserver --set personality.threads=1000 --time-limit 20ms"
        "--personality oltp --time-limit 20ms"
        "--personality varmail --set personality.level=file --set personality.files=1000000 --time-limit 10ms"
        "--write-buffer 1GiB --rw write --time-limit 20ms"
        "--set workload.direct=false --rw randwrite --time-limit 20ms"
        "--set workload.direct=false --rw randwrite --set page_cache.capacity=1GiB --time-limit 20ms"
        "--blocks-per-plane 1000000 --number_ios 100"
        "--pages-per-block 65536 --number_ios 100"
        "--channels 1024 --number_ios 100"
        "--ways 1024 --number_ios 100"
        "--random_distribution zipf:1e-9 --number_ios 1000"
        "--random_distribution pareto:0.0001 --number_ios 1000"
    )
    for c in "${runs[@]}"; do
        i=$((i + 1))
        new_case load "run-$i"
        EXPECT_NAME='--|\.'
        CHECK=check_report_any
        # shellcheck disable=SC2086
        run "$BIN" run "${small[@]}" $c
    done
    # A long trace, replayed fast, slow, capped.
    python3 -c '
import random
r = random.Random(47)
with open("'"$W"'/long.csv", "w") as f:
    f.write("time_ns,op,offset_bytes,size_bytes,stream\n")
    t = 0
    for i in range(200000):
        t += r.randrange(1, 20000)
        op = r.choice("RW")
        f.write(f"{t},{op},{r.randrange(1 << 20) * 4096},4096,0\n")
'
    local traces=(
        "--speed 1e300"
        "--speed 1e-300 --time-limit 10ms"
        "--speed 0"
        "--closed-loop-depth 65536"
        "--max-gap 1ns"
        "--reorder-window 1000000"
        "--reorder-window 18446744073709551615"
        "--max-requests 1"
        "--out-of-range reject"
        "--time-limit 50ms"
    )
    for c in "${traces[@]}"; do
        i=$((i + 1))
        new_case load "trace-$i"
        ln -s "$W/long.csv" "$CASE_DIR/long.csv"
        INPUTS=("$W/long.csv")
        EXPECT_NAME='--|long\.csv|replay\.'
        CHECK=check_report_any
        # shellcheck disable=SC2086
        run "$BIN" run --trace long.csv "${small[@]}" $c
    done
    # Sweeps: threads and grid sizes.
    local sweeps=(
        "--threads 1024 --op 0.07,0.28 --number_ios 100 --precondition none"
        "--threads 1025 --op 0.07,0.28 --number_ios 100"
        "--threads 18446744073709551616 --op 0.07"
        "--op $(seq -s, 1 1000 | sed 's/\([0-9]*\)/0.\1/g') --bs $(seq -s, 512 512 512000) --dry-run"
    )
    for c in "${sweeps[@]}"; do
        i=$((i + 1))
        new_case load "sweep-$i"
        EXPECT_NAME='--threads|points|--op|--bs|grid'
        CHECK=check_none
        # shellcheck disable=SC2086
        run "$BIN" sweep --channels 2 --blocks-per-plane 64 --no-progress --jsonl s.jsonl $c
    done
    # The largest grid a dry run lists, and one point more.
    python3 -c '
axes = {"ftl.op": [round(0.05 + 0.03 * i, 2) for i in range(10)],
        "workload.iodepth": list(range(1, 11)),
        "workload.rwmixread": list(range(100)),
        "workload.number_ios": list(range(1000, 1100))}
with open("'"$W"'/g1m.toml", "w") as f:
    f.write("[grid]\n")
    for k, v in axes.items():
        f.write(f"\"{k}\" = {v}\n")
with open("'"$W"'/g1m1.toml", "w") as f:
    f.write("[grid]\n")
    for k, v in axes.items():
        f.write(f"\"{k}\" = {v}\n")
    f.write("\"workload.bs\" = [\"4KiB\", \"8KiB\"]\n")
'
    new_case load "grid-1m-dry-run"
    INPUTS=("$W/g1m.toml")
    LISTING=1000000
    CHECK=check_listing
    run "$BIN" sweep --grid "$W/g1m.toml" --dry-run
    new_case load "grid-2m-dry-run"
    INPUTS=("$W/g1m1.toml")
    EXPECT_NAME='points|grid'
    CHECK=check_refuse
    run "$BIN" sweep --grid "$W/g1m1.toml" --dry-run
    new_case load "grid-1m-shard"
    INPUTS=("$W/g1m.toml")
    LISTING=1
    CHECK=check_none
    run "$BIN" sweep --grid "$W/g1m.toml" --shard 999999/1000000 --dry-run
    new_case load "grid-1m-unsharded"
    INPUTS=("$W/g1m.toml")
    EXPECT_NAME='shard|points'
    CHECK=check_refuse
    run "$BIN" sweep --grid "$W/g1m.toml" --jsonl s.jsonl
}

# ---------------------------------------------------------------- main

generate
for c in $CATS; do
    echo "== $c"
    start=$SECONDS
    "cat_$c"
    echo "   $((SECONDS - start)) s"
done

python3 - "$RESULTS" <<'PY'
import collections, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
kinds = ["ok", "refused", "vague", "panic", "signal", "hang", "destroyed", "silent-wrong"]
count = collections.defaultdict(collections.Counter)
for cat, outcome, *_ in rows:
    count[cat][outcome] += 1
print()
print(f"{'category':10}" + "".join(f"{k:>13}" for k in kinds) + f"{'cases':>8}")
tot = collections.Counter()
for cat in count:
    print(f"{cat:10}" + "".join(f"{count[cat][k]:>13}" for k in kinds) + f"{sum(count[cat].values()):>8}")
    tot.update(count[cat])
print(f"{'all':10}" + "".join(f"{tot[k]:>13}" for k in kinds) + f"{sum(tot.values()):>8}")
bad = [r for r in rows if r[1] not in ("ok", "refused")]
if bad:
    print()
    for cat, outcome, cid, cmd, detail in bad:
        print(f"{outcome:12} {cat}/{cid}: {cmd}")
        if detail:
            print(f"{'':12} {detail[:300]}")
grave = sum(tot[k] for k in ("panic", "signal", "hang", "destroyed", "silent-wrong"))
sys.exit(1 if grave else 0)
PY
status=$?
echo "cases kept (not ok or refused): $W/cases"
exit $status
