#!/bin/sh
# tests/cli/timeline.sh: the timeline, without a GPU, from recordings.
#   - a PyTorch training step recorded with --timeline-only on an H200
#     (tests/fixtures/recorded/pytorch-transformer-timeline.json): every
#     format shows the timeline, the host-bound finding first in wall time,
#     its saving bounded by the loop's share of the run; the text report is
#     golden (tests/fixtures/golden/pytorch-transformer-timeline.txt);
#   - the transfers demo from its recording: the transfer fix first, the
#     async variant's measured speedup inside the printed range;
#   - --fail-on, JUnit and --explain with program findings;
#   - the synthetic timeline (tests/fixtures/cli/timeline-synthetic.json):
#     the program rules it was written for fire.
# Environment (tests/meson.build sets them): GPUADVISE, SRCDIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
cli_setup timeline
TF=$SRCDIR/tests/fixtures/recorded/pytorch-transformer-timeline.json
SYN=$SRCDIR/tests/fixtures/cli/timeline-synthetic.json

run() {
	(cd "$T" && TMPDIR=$T/tmp timeout 60 "$GPUADVISE" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# 1. The PyTorch step, text: golden, and its first action.
run --import "$TF"
expect "transformer timeline: --import -> 0" [ "$rc" = 0 ]
golden_check tests/fixtures/golden/pytorch-transformer-timeline.txt
expect "... a Timeline section with the loop found" grep -q '^  loop: [0-9]* iterations of ' "$T/out"
expect "... the host-bound finding first" sh -c \
	"grep -A1 '^What to do first' '$T/out' | tail -1 | grep -q -- '^-' &&
	 grep -A2 '^What to do first' '$T/out' | grep -q 'The GPU waits for the host'"

# JSON: valid, the same first action, the saving bounded by the loop.
run --import "$TF" --format json
expect "transformer timeline: --format json -> 0" [ "$rc" = 0 ]
cp "$T/out" "$T/tf.json"
expect "... valid against docs/report.schema.json" \
	python3 "$here/check-schema.py" "$SRCDIR/docs/report.schema.json" "$T/tf.json"
expect "... first: host-bound-launching, saving = loop share x the loop's idle share" \
	python3 - "$T/tf.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
first = r["first"][0]
assert first["kind"] == "program_finding", first
f = r["program_findings"][first["index"]]
assert f["rule"] == "host-bound-launching", f["rule"]
ev = {e["name"]: e["value"] for e in f["evidence"]}
loop = ev["loop_pct"] / 100
want = loop * ev["idle_host_pct"] / 100
assert abs(first["saving"] - want) < 1e-6, (first["saving"], want)
# the setup outside the loop stays: less than the run's idle share
tl = r["timeline"][0]
assert 0 < loop < 1 and first["saving"] < 1 - tl["busy_share"], (loop, first["saving"])
assert 0 < tl["iteration_busy_share"] < 1
PY

# Markdown and HTML: the same first action, the timeline and its chart.
run --import "$TF" --format markdown
expect "transformer timeline: --format markdown -> 0, a Timeline section, host-bound first" \
	sh -c "[ $rc = 0 ] && grep -q '^#* Timeline$' '$T/out' &&
	       grep -A3 'What to do first' '$T/out' | grep -q 'The GPU waits for the host'"
run --import "$TF" --format html
expect "transformer timeline: --format html -> 0, an SVG strip chart" \
	sh -c "[ $rc = 0 ] && grep -q '<svg' '$T/out' && grep -q 'The GPU waits for the host' '$T/out'"

# Gating CI: a program finding counts for --fail-on as a kernel's does, and
# JUnit says which one failed; --explain says where a program rule applies.
run --import "$TF" --fail-on high
expect "transformer timeline: --fail-on high -> 1 (host-bound, high)" [ "$rc" = 1 ]
run --import "$TF" --format junit --fail-on high
expect "... JUnit: the program finding's test case fails, the suite counts it" sh -c \
	"[ $rc = 1 ] && grep -q '<testcase classname=\"gpuadvise.program\" name=\"host-bound-launching (process 1)\"' '$T/out' &&
	 grep -q '<testsuite [^>]*failures=\"1\"' '$T/out'"
run --import "$TF" --format junit
expect "... without --fail-on: no failure" sh -c "[ $rc = 0 ] && ! grep -q '<failure' '$T/out'"
run --explain host-bound-launching
expect "--explain of a program rule: it applies to each process's timeline" sh -c \
	"[ $rc = 0 ] && grep -q '^applies to: each process, on its timeline' '$T/out' &&
	 grep -q '^Part of the wall time the fix acts on: timeline__loop_share' '$T/out'"

# 2. The transfers demo, recorded: predicted against measured.
run --demo transfers
expect "--demo transfers -> 0" [ "$rc" = 0 ]
expect "... pageable-copies first, fixed by pinned_async, measured inside the range" \
	python3 - "$T/out" <<'PY'
import re, sys
t = " ".join(open(sys.argv[1]).read().split())
assert "The advice for pageable_sync put pageable-copies first" in t, t[-600:]
m = re.search(r"Variant pinned_async applies that fix: finding pageable-copies: predicted "
              r"(\S+) \(([\d.]+)-([\d.]+)x\), measured ([\d.]+)x, inside the range", t)
assert m, t[-600:]
lo, hi, got = float(m.group(2)), float(m.group(3)), float(m.group(4))
assert lo <= got <= hi, (lo, got, hi)
PY

# 3. The synthetic timeline: the program rules it was written for.
run --import "$SYN" --format json
expect "synthetic timeline: --format json -> 0" [ "$rc" = 0 ]
expect "... its program findings" python3 - "$T/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
got = {f["rule"] for f in r["program_findings"]}
print("#   program findings:", sorted(got))
assert got, "no program finding"
for f in r["program_findings"]:
    assert 0 <= f["estimate"] <= 1 and f["affects"] <= 1, f
PY

tap_end
