#!/bin/sh
# bench/accuracy/rescore.sh on a recorded run made here, no GPU: a JSON
# report of a recorded profile stands in for a slow side's report. The
# rescored rank must be the rule's position in a direct `--import` of that
# report, the measured speedup the recorded one, and the usage and missing-
# report errors must give their exit statuses.
# usage: rescore_test.sh GPUADVISE SRCDIR
set -u
ga=$1
src=$2
build=$(dirname "$ga")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run=$work/run
mkdir -p "$run"
"$ga" --quiet --import "$src/tests/fixtures/recorded/counter-image-profile.json" --format json \
    --log-file "$run/strided.json" || fail "import of the recorded profile"
cp "$run/strided.json" "$run/ctl.json"
printf 'strided uncoalesced-global-access pair a strided copy\nctl tensor-cores-unused control the same copy\n' >"$run/list.txt"
printf 'strided 30.0 10.0 3.0000\nctl 10.0 10.0 1.0000\n' >"$run/times.txt"

"$src/bench/accuracy/rescore.sh" "$build" "$run" "$work/out" >"$work/table.txt" 2>"$work/err" ||
	fail "rescore.sh exited $? ($(cat "$work/err"))"
[ -f "$work/out/strided.json" ] || fail "no rescored report"
[ -f "$work/out/table.md" ] || fail "no table"

# Expected from the direct report: the rule's 1-based position in its kernel.
python3 - "$run/strided.json" "$work/out/results.json" <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
want = None
for k in rep["kernels"]:
    rules = [rep["findings"][i]["rule"] for i in k["findings"]]
    if "uncoalesced-global-access" in rules:
        want = rules.index("uncoalesced-global-access") + 1
        f = rep["findings"][k["findings"][want - 1]]
assert want is not None, "the fixture must fire uncoalesced-global-access"
rows = {r["pair"]: r for r in json.load(open(sys.argv[2]))}
s = rows["strided"]
assert s["rank"] == want, (s["rank"], want)
assert s["measured"] == 3.0, s["measured"]
assert s["predicted"] == f.get("speedup", f.get("estimated_speedup")), (s["predicted"], f)
c = rows["ctl"]
assert c["control"] is True and c["rank"] is None, c
PY

"$src/bench/accuracy/rescore.sh" "$build" >/dev/null 2>&1
[ $? -eq 2 ] || fail "usage error must exit 2"
rm "$run/ctl.json"
"$src/bench/accuracy/rescore.sh" "$build" "$run" "$work/out2" >/dev/null 2>&1
[ $? -eq 1 ] || fail "a missing report must exit 1"
echo "rescore: ok"
