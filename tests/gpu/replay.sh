#!/bin/sh
# GPU test: source lines and opcodes of kernels launched once, by a second
# run of the launch from saved device memory (src/collect/sassreplay.c), on
# the accuracy bench's pairs.  Exits 77 (skipped) without a usable NVIDIA
# GPU or without the pairs binary.  Environment (set by meson test):
#   GPUADVISE  the gpuadvise binary   BUILDDIR  the build directory
# Prints "ok - ..." or "not ok - ..." per check; the exit status is the
# number of failures.
set -u
GA=${GPUADVISE:-build/gpuadvise}
BUILDDIR=${BUILDDIR:-$(dirname "$GA")}
PAIRS="$BUILDDIR/kernels/gpuadvise-pairs"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no NVIDIA GPU here: skipping"
	exit 77
fi
if [ ! -x "$PAIRS" ]; then
	echo "$PAIRS not built: skipping"
	exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; fails=$((fails + 1)); }
# run NAME PAIR [gpuadvise options...]: the slow side once, JSON report
# (SIDE=fast: the fast side).
run() {
	name=$1 pair=$2
	shift 2
	"$GA" "$@" --quiet --format json --log-file "$T/$name.json" -- \
		"$PAIRS" --pair "$pair" --side "${SIDE:-slow}" --launches 1 >"$T/$name.out" 2>&1
	echo $? >"$T/$name.status"
}
# report NAME: python over the report, with r (the report), p (its profile).
report() {
	name=$1
	shift
	python3 - "$T/$name.json" "$SRC/tests/models" "$@" >"$T/check.out" 2>&1 <<'PY'
import json, sys
sys.path.insert(0, sys.argv.pop(2))
from check_models import load_waits
r = json.load(open(sys.argv[1]))
p = r["profile"]
XU = ("MUFU", "FRND", "F2I", "I2F", "F2F")
def source(mangled_part):
    return [s for s in p.get("sources", []) if mangled_part in s["mangled"]]
def xu_ops(s):
    by = {}
    for pc in s["pcs"]:
        if pc.get("op") and pc.get("inst") is not None and pc["op"].split(".")[0] in XU:
            by[pc["op"]] = by.get(pc["op"], 0) + pc["inst"]
    return by
what, arg = sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None
if what == "opcodes":
    # The XU opcodes of the second run add up to the XU pipe's counter of
    # the profiled launch (the same launch, from the same memory).
    [s] = source(arg)
    by = xu_ops(s)
    launch = next(l for l in p["launches"] if arg in l["mangled"])
    xu = launch["values"]["sm__inst_executed_pipe_xu.sum"]
    print("XU opcodes", by, "counter", xu)
    assert by and abs(sum(by.values()) - xu) <= 1e-6 * xu, "opcodes do not add up"
elif what == "estimate-by-opcode":
    # sfu-heavy-math's calls: the most executed XU opcode's share < 1
    # (powf: FRND and F2I a call) changes the estimate from the one that
    # counts each XU instruction as a call.
    [f] = [f for f in r["findings"] if f["rule"] == "sfu-heavy-math"]
    [s] = source(arg)
    by = xu_ops(s)
    share = max(by.values()) / sum(by.values())
    print("share", share, "estimate", f["estimated_speedup"])
    assert 0 < share < 1, share
elif what == "lone-loads":
    # The scoreboards of the listing: the waits on loads at which a warp
    # has one load in flight, of all its waits on loads (share wanted:
    # "1", or "<0.2"), and memory-latency-stalls' evidence, where it fired.
    [k] = [k for k in r["kernels"] if arg in k["mangled"]]
    [s] = source(arg)
    share = load_waits(p, k)[1]
    f = [f for f in r["findings"] if f["rule"] == "memory-latency-stalls"]
    ev = f[0]["evidence"]["lone_share"] if f else None
    print("scoreboards", s.get("scoreboards"), "lone share", share, "evidence", ev)
    want = sys.argv[4]
    assert s.get("scoreboards") and share is not None, "no scoreboards"
    assert share == 1.0 if want == "1" else share < 0.2, share
    assert ev is None or ev == share, (ev, share)
    if want == "1":
        # the source view places the loop's loads (one source line) as a
        # line with every lone wait
        lone = [l for l in k["source"]["lines"] if "lone_load" in l["issues"]]
        print("lone-load lines", [(l["pc"], l["lone_load_waits"], l["lone_load_movable"])
                                  for l in lone])
        assert lone and lone[0]["share"] > 0.99, lone
elif what == "sources":
    n = len(source(arg))
    print(n, "sources of", arg)
    assert n == int(sys.argv[4]), n
PY
}
check() { # description, report args...
	d=$1
	shift
	if report "$@"; then pass "$d"; else fail "$d"; sed 's/^/    /' "$T/check.out"; fi
}
ok_run() { # description, name: gpuadvise exited 0 and the pair's check passed
	if [ "$(cat "$T/$2.status")" = 0 ] && grep -q 'check ok' "$T/$2.out"; then
		pass "$1"
	else
		fail "$1 (status $(cat "$T/$2.status"))"
		tail -5 "$T/$2.out" | sed 's/^/    /'
	fi
}

# A polynomial of powf, launched once: sfu-heavy-math flags it and reads
# opcodes, so its launch runs a second time with SASS metrics.
run powf poly-pow
ok_run "poly-pow under gpuadvise: exit 0, results correct" powf
check "poly-pow: the second run's XU opcodes add up to the XU counter" powf opcodes poly_powf
check "poly-pow: sfu-heavy-math counts calls by opcode" powf estimate-by-opcode poly_powf

# Dependent row gathers, launched once: memory-latency-stalls flags them
# and reads the listing's scoreboards; one row in flight per warp, every
# wait is on a lone load.  Their fix, eight rows loaded before the first
# use, waits on eight (with --source: no rule flags it).
run gather latency-gather
ok_run "latency-gather: exit 0, results correct" gather
check "latency-gather: every wait on a load has one load in flight" gather lone-loads gather_serial 1
SIDE=fast run gather_fast latency-gather --source
ok_run "latency-gather's fix --source: exit 0, results correct" gather_fast
check "latency-gather's fix: loads batched, under a fifth of the waits alone" gather_fast lone-loads gather_batched lt0.2

# One total that every thread adds into: run twice without the memory put
# back, the total would be doubled and the pair's check would fail.
run sum_source atomics-sum --source
ok_run "atomics-sum --source: the launch's effect went in once" sum_source
check "atomics-sum --source: source lines of a kernel launched once" sum_source sources sum_atomic 1
# By default only kernels of a rule that reads opcodes run again.
run sum_default atomics-sum
ok_run "atomics-sum: exit 0, results correct" sum_default
check "atomics-sum: no second run by default" sum_default sources sum_atomic 0
# GPUADVISE_SOURCE_REPLAY=0: none at all.
GPUADVISE_SOURCE_REPLAY=0
export GPUADVISE_SOURCE_REPLAY
run powf_off poly-pow
unset GPUADVISE_SOURCE_REPLAY
ok_run "poly-pow, GPUADVISE_SOURCE_REPLAY=0: exit 0, results correct" powf_off
check "poly-pow, GPUADVISE_SOURCE_REPLAY=0: no second run" powf_off sources poly_powf 0

# The launcher hands the collector the rules' lists of opcode rules and
# library kernels, and drops what the user's environment holds for them:
# the shipped rules have both, a directory with one rule and no owners has
# neither.
envrun() { # name, gpuadvise options...
	name=$1
	shift
	GPUADVISE_SOURCE_OPCODES=users GPUADVISE_SOURCE_SKIP=users "$GA" "$@" --quiet -- \
		sh -c "env | grep '^GPUADVISE_SOURCE_\(OPCODES\|SKIP\)=' | sort >'$T/$name.env'" \
		>/dev/null 2>&1
}
envrun env_shipped
if grep -qx 'GPUADVISE_SOURCE_OPCODES=fp32-accurate-math,memory-latency-stalls,sfu-heavy-math' "$T/env_shipped.env" &&
   grep -q '^GPUADVISE_SOURCE_SKIP=.' "$T/env_shipped.env" && ! grep -q '=users$' "$T/env_shipped.env"; then
	pass "shipped rules: the collector gets their opcode rules and library kernels"
else
	fail "shipped rules: the collector's source lists"
	sed 's/^/    /' "$T/env_shipped.env"
fi
mkdir "$T/rules"
cp "$SRC/rules/classify.yaml" "$SRC/rules/grid-too-small.yaml" "$T/rules/"
envrun env_none --no-default-rules -r "$T/rules"
if [ -f "$T/env_none.env" ] && [ ! -s "$T/env_none.env" ]; then
	pass "rules without opcode rules or owners: neither list, nor the user's"
else
	fail "rules without opcode rules or owners: the collector's source lists"
	sed 's/^/    /' "$T/env_none.env" 2>/dev/null
fi

echo "$fails failed"
[ "$fails" -lt 100 ] || fails=99
exit "$fails"
