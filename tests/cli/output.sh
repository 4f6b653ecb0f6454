#!/bin/sh
# tests/cli/output.sh: what CI infers from gpuadvise's output agrees with
# its exit status, and --demo honours the output options.
#
#   JUnit: a <failure> only at or above --fail-on (none without it), its
#     type the highest severity; a test case's classname and name stay the
#     same when a kernel's class or its process id changes; a bad input
#     still gives a JUnit document (an <error>), never an empty file.
#   --fail-on regression against a baseline of another GPU: status 2 naming
#     both GPUs, unless --baseline-any-gpu.
#   --demo NAME with -f, --log-file, --fail-on and -o (the recorded demos:
#     skipped where a GPU is present, where the demo would run live).
#
# Environment as tests/cli/run.sh (meson sets it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRCDIR=${SRCDIR:-$(cd "$here/../.." && pwd)}
BUILDDIR=${BUILDDIR:-$SRCDIR/build}
GPUADVISE=${GPUADVISE:-$BUILDDIR/gpuadvise}
NO_COLOR=1
export GPUADVISE SRCDIR NO_COLOR
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-output.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
XDG_CONFIG_HOME=$T/config
export XDG_CONFIG_HOME
unset GPUADVISE_RULES_DIR GPUADVISE_RECORDED_DIR

. "$here/tap.sh"

REC=tests/fixtures/recorded
BASE=tests/fixtures/baseline
ALL=$REC/testapp-all.json

run() {
	(cd "$SRCDIR" && "$GPUADVISE" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# expect DESCRIPTION STATUS PYTHON-CHECK (reads $T/out as argv[1], exit 0 = pass)
expect() {
	desc=$1 want=$2
	shift 2
	if [ "$rc" = "$want" ] && python3 - "$T/out" "$T/err" >"$T/why" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc (status $rc, want $want)"
		sed 's/^/#   /' "$T/why"
		show stderr "$T/err"
	fi
}

# ---- JUnit ------------------------------------------------------------------

# The test cases of a JUnit file as "classname|name|failure type" lines.
cases() {
	python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
for c in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    f = c.find("failure")
    print(f"{c.get('classname')}|{c.get('name')}|{f.get('type') if f is not None else '-'}")
PY
}

run --format junit --import "$ALL"
expect "--format junit without --fail-on -> 0 and no <failure> (the status and the test result agree)" 0 <<'PY'
import sys
import xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
fails = [c.get("name") for c in r.iter("testcase") if c.find("failure") is not None]
outs = [c.find("system-out").text for c in r.iter("testcase")]
assert not fails, fails
assert r.get("failures") == "0", r.get("failures")
assert sum("finding: [high]" in o for o in outs) == 3, "findings not in system-out"
PY

run --format junit --fail-on medium --import "$ALL"
expect "--format junit --fail-on medium -> 1; each failure's type is its kernel's highest severity" 1 <<'PY'
import sys
import xml.etree.ElementTree as ET
types = {c.get("name").split("(")[0]: c.find("failure").get("type")
         for c in ET.parse(sys.argv[1]).getroot().iter("testcase") if c.find("failure") is not None}
want = {"matmul_naive": "high", "chain_one_warp": "medium", "smem_conflict": "medium",
        "branch_evenodd": "medium", "copy_strided": "high"}
for k, v in want.items():
    assert types.get(k) == v, (k, types.get(k), v)
assert set(types) >= set(want), types
PY

# branch_evenodd is compute-bound in this baseline, divergence-bound in the
# recording: the test cases are the same ones.
run --format junit --import "$ALL"
cases "$T/out" | cut -d'|' -f1,2 | sort >"$T/ids-now"
run --format junit --import "$BASE/divergence-was-uniform.json"
cases "$T/out" | cut -d'|' -f1,2 | sort >"$T/ids-before"
if [ -s "$T/ids-now" ] && cmp -s "$T/ids-now" "$T/ids-before" &&
	! grep -Eq '^gpuadvise\.(compute|memory|latency|divergence)\|' "$T/ids-now"; then
	ok "--format junit: a kernel whose class changed keeps its classname and name"
else
	not_ok "--format junit: test case identity changes with the class"
	diff "$T/ids-before" "$T/ids-now" | head -8 | sed 's/^/#   /'
fi

# The same kernel in two processes (a SYNTHETIC copy with another pid), then
# the same two with other pids: the names tell the two apart by process
# number, and stay the same.
python3 - "$SRCDIR/$REC/testapp-fma_loop.json" "$T" <<'PY'
import json, sys
src, t = sys.argv[1], sys.argv[2]
for name, shift in (("a1", 0), ("a2", 1), ("b1", 5000), ("b2", 5001)):
    p = json.load(open(src))
    for l in p["launches"]:
        l["pid"] = l["pid"] + shift
    json.dump(p, open(f"{t}/{name}.json", "w"))
PY
run --format junit --import "$T/a1.json" --import "$T/a2.json"
cases "$T/out" >"$T/pids-a"
run --format junit --import "$T/b1.json" --import "$T/b2.json"
cases "$T/out" >"$T/pids-b"
if [ "$(wc -l <"$T/pids-a")" = 2 ] && [ "$(sort -u "$T/pids-a" | wc -l)" = 2 ] &&
	cmp -s "$T/pids-a" "$T/pids-b" && ! grep -q 'pid' "$T/pids-a" &&
	grep -q 'process 2\]|' "$T/pids-a"; then
	ok "--format junit: one kernel in two processes: two names without a pid, the same in every run"
else
	not_ok "--format junit: names of a kernel in two processes"
	sed 's/^/#   /' "$T/pids-a" "$T/pids-b" | cut -c1-160
fi

# A bad input: status 2, and a JUnit document with the reason, on standard
# output and in --log-file.
run --format junit --import "$BASE/broken.json"
cp "$T/out" "$T/bad-stdout.xml"
expect "--format junit --import broken.json -> 2, a JUnit <error> on stdout (not an empty file)" 2 <<'PY'
import sys
import xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
c = r.find("testsuite/testcase")
e = c.find("error")
assert r.get("errors") == "1" and r.get("failures") == "0"
assert c.get("name") == "tests/fixtures/baseline/broken.json", c.get("name")
assert "broken.json:7:70: invalid JSON" in e.get("message"), e.get("message")
PY
run --format junit --import "$ALL" --baseline "$BASE/no-such.json" --log-file "$T/bad.xml"
if [ "$rc" = 2 ] && [ -s "$T/bad.xml" ] && grep -q '<error message="cannot open' "$T/bad.xml" &&
	[ ! -s "$T/out" ]; then
	ok "--format junit --baseline missing --log-file -> 2, the file holds the error"
else
	not_ok "--format junit --baseline missing --log-file -> $rc"
	show file "$T/bad.xml"
fi
run --format json --import "$BASE/broken.json"
[ "$rc" = 2 ] && [ ! -s "$T/out" ] && ok "--format json --import broken.json -> 2, nothing on stdout" ||
	not_ok "--format json --import broken.json -> $rc"

# ---- a baseline of another GPU ----------------------------------------------

run --import "$ALL" --baseline "$BASE/other-gpu.json" --fail-on regression
if [ "$rc" = 2 ] && grep -q 'NVIDIA H100 80GB HBM3' "$T/err" && grep -q 'NVIDIA H200' "$T/err" &&
	grep -q 'baseline-any-gpu' "$T/err" && [ ! -s "$T/out" ]; then
	ok "--fail-on regression, baseline of another GPU -> 2, both GPUs named"
else
	not_ok "--fail-on regression, baseline of another GPU -> $rc"
	show stderr "$T/err"
fi
run --import "$ALL" --baseline "$BASE/other-gpu.json" --fail-on regression --baseline-any-gpu
[ "$rc" = 0 ] && grep -q 'DIFFERENT GPU' "$T/out" &&
	ok "--baseline-any-gpu: compared anyway (classes and findings), -> 0" ||
	not_ok "--baseline-any-gpu -> $rc"
run --import "$ALL" --baseline "$BASE/strided-was-coalesced.json" --fail-on regression --baseline-any-gpu
[ "$rc" = 1 ] && ok "--baseline-any-gpu on the same GPU: a new high finding still fails (1)" ||
	not_ok "--baseline-any-gpu, same GPU, new finding -> $rc, want 1"
run --import "$ALL" --baseline "$BASE/other-gpu.json"
[ "$rc" = 0 ] && grep -q 'warning: The baseline was recorded on another GPU' "$T/err" &&
	ok "--baseline of another GPU without --fail-on regression: a warning, -> 0" ||
	not_ok "--baseline other GPU without --fail-on -> $rc"

# ---- --demo and the output options -----------------------------------------

have_gpu() {
	for d in /dev/nvidia[0-9]*; do
		[ -e "$d" ] && return 0
	done
	return 1
}
if have_gpu; then
	skip "--demo with output options (recorded demos): a GPU is present"
	tap_end
	exit $?
fi

run --demo matmul --format json --log-file "$T/demo.json" --fail-on low
if [ "$rc" = 1 ] && [ ! -s "$T/out" ] && python3 - "$T/demo.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "gpuadvise-report", r["format"]
assert r["kernels"][0]["name"].startswith("matmul_naive"), r["kernels"][0]["name"]
assert {f["rule"] for f in r["findings"]} >= {"tensor-cores-unused"}
PY
then
	ok "--demo matmul --format json --log-file F --fail-on low -> 1, the slow variant's JSON report in F"
else
	not_ok "--demo matmul --format json --log-file F --fail-on low -> $rc"
	show stdout "$T/out"
fi

run --demo matmul --fail-on high
[ "$rc" = 1 ] && grep -q '^Demo matmul: naive' "$T/out" &&
	ok "--demo matmul --fail-on high -> 1 (tensor-cores-unused is high), text on stdout" ||
	not_ok "--demo matmul --fail-on high -> $rc"
run --demo matmul
[ "$rc" = 0 ] && ok "--demo matmul without --fail-on -> 0" || not_ok "--demo matmul -> $rc"
run --demo coalescing --fail-on high
want=$(cd "$SRCDIR" && "$GPUADVISE" --format json --import /dev/stdin --fail-on high >/dev/null 2>&1 \
	<<EOF
$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["variants"][0]["profile"]))' \
	"$SRCDIR/$REC/demo-coalescing.json")
EOF
	echo $?)
[ "$rc" = "$want" ] &&
	ok "--demo coalescing --fail-on high -> $rc, as --import of its slow variant's profile" ||
	not_ok "--demo coalescing --fail-on high -> $rc, --import of the slow variant -> $want"

run --demo matmul --log-file "$T/demo.txt"
if [ "$rc" = 0 ] && [ ! -s "$T/out" ] && grep -q '^Step 2: apply the fixes' "$T/demo.txt"; then
	ok "--demo matmul --log-file F -> 0, the demo in F, nothing on stdout"
else
	not_ok "--demo matmul --log-file F -> $rc"
fi

run --demo matmul --format junit --fail-on high
expect "--demo matmul --format junit --fail-on high -> 1, matmul_naive fails with type high" 1 <<'PY'
import sys
import xml.etree.ElementTree as ET
c = ET.parse(sys.argv[1]).getroot().find("testsuite/testcase")
assert c.get("name").startswith("matmul_naive"), c.get("name")
assert c.find("failure").get("type") == "high"
PY

run --demo matmul --format markdown
[ "$rc" = 0 ] && grep -q '^### gpuadvise: NVIDIA H200' "$T/out" && ! grep -q '^Demo matmul' "$T/out" &&
	ok "--demo matmul --format markdown -> 0, a Markdown report" ||
	not_ok "--demo matmul --format markdown -> $rc"

# -o: the profiles shown (here the recording), which GPUADVISE_RECORDED_DIR
# can show again.
mkdir -p "$T/rec"
run --demo transpose -o "$T/rec/demo-transpose.json"
cp "$T/out" "$T/transpose-1.txt"
GPUADVISE_RECORDED_DIR=$T/rec run --demo transpose
if [ -s "$T/rec/demo-transpose.json" ] && [ "$rc" = 0 ] && cmp -s "$T/out" "$T/transpose-1.txt"; then
	ok "--demo transpose -o F writes the demo's profiles; shown from F, the same demo"
else
	not_ok "--demo transpose -o F -> $rc"
	ls -la "$T/rec" | sed 's/^/#   /'
fi

run --demo all --format json
[ "$rc" = 2 ] && grep -q 'demo all -f FMT' "$T/err" && [ ! -s "$T/out" ] &&
	ok "--demo all --format json -> 2, refused with a reason" || not_ok "--demo all --format json -> $rc"
run --demo list --fail-on low
[ "$rc" = 2 ] && grep -q 'demo list names the demos' "$T/err" &&
	ok "--demo list --fail-on low -> 2, refused" || not_ok "--demo list --fail-on low -> $rc"
run --demo list --log-file "$T/list.txt"
[ "$rc" = 0 ] && [ "$(wc -l <"$T/list.txt")" = 11 ] &&
	ok "--demo list --log-file F -> 0, eleven lines in F" || not_ok "--demo list --log-file -> $rc"
run --demo all --fail-on high --log-file "$T/all.txt"
[ "$rc" = 1 ] && grep -q '^Summary' "$T/all.txt" &&
	ok "--demo all --fail-on high --log-file F -> 1, the summary in F" ||
	not_ok "--demo all --fail-on high --log-file -> $rc"

tap_end
