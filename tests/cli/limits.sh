#!/bin/sh
# tests/cli/limits.sh: gpuadvise at the limits of its input, and how it
# writes its output files.  Every case must end with a clear message or the
# documented result (docs/LIMITS.md), never a crash, a hang or garbage:
#   - a 50 MB profile; the same cut in half; JSON nested 100,000 deep; a
#     number too large for a double;
#   - rule files nested 100,000 deep, with YAML aliases ("billion laughs"),
#     larger than 1 MiB, a link to /dev/zero, an expression of 80,000
#     names, or 20,000 errors;
#   - a kernel name of 100 KB;
#   - 10,000 launches, as 10,000 kernels and as one kernel (timed);
#   - values at the edge of a double, and metrics missing from the profile;
#   - -o and --log-file: written through a temporary file and a rename, no
#     temporary file left behind on success or failure.
# Inputs are generated here (python3; the large ones by large_profiles.py)
# in a scratch directory.  Prints "ok -"
# or "not ok -" per check and exits 1 if any failed.  A sanitizer report on
# stderr fails the check that produced it.
#
# Environment (tests/meson.build sets them): GPUADVISE, SRCDIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
cli_setup limits
REC=$SRCDIR/tests/fixtures/recorded

# run SECONDS ARGS...: timed_run (tap.sh).
run() {
	timed_run "$@"
}

# check: tap.sh.

# Inputs.
python3 - "$T" "$REC" "$SRCDIR/rules" "$here" <<'PY' || { echo "not ok - generating the inputs"; exit 1; }
import copy, json, os, sys
t, rec = sys.argv[1], sys.argv[2]
def dump(name, obj):
    with open(os.path.join(t, name), "w") as f:
        json.dump(obj, f, separators=(",", ":"))

one = json.load(open(os.path.join(rec, "testapp-fma_loop.json")))
l0 = one["launches"][0]

# 50 MB (huge.json) and 10,000 launches, of 10,000 kernels and of one
# kernel: made as bench/import.sh makes them.
sys.path.insert(0, sys.argv[4])
sys.dont_write_bytecode = True
import large_profiles
large_profiles.write(t, rec)
with open(os.path.join(t, "huge.json")) as f:
    text = f.read()
with open(os.path.join(t, "huge-cut.json"), "w") as f:
    f.write(text[: len(text) // 2])

with open(os.path.join(t, "deep.json"), "w") as f:
    f.write('{"format":"gpuadvise-profile","schema":1,"device":' + "[" * 100000 +
            "]" * 100000 + "}")
with open(os.path.join(t, "overflow.json"), "w") as f:
    f.write('{"format":"gpuadvise-profile","schema":1,"device":{"name":"x","sm_count":1},'
            '"metrics":[],"launches":[{"name":"k","grid":[1,1,1],"block":[1,1,1],'
            '"values":{"a__b.sum":1e309}}]}')

# A kernel name of 100 KB.
p = copy.deepcopy(one)
p["launches"][0]["name"] = "void k<" + "T" * 100000 + ">(float*, int)"
p["launches"][0]["mangled"] = "_Z1kI" + "T" * 100000 + "EvPfi"
dump("long-name.json", p)

# Values at the edge of a double: sums that overflow, the largest and the
# smallest numbers, nulls.  (No negative counts: a ".sum" is refused below 0.)
p = copy.deepcopy(one)
big = copy.deepcopy(l0)
big["duration_ns"] = 1.7976931348623157e308
big["values"] = {k: (1.7976931348623157e308 if i % 3 == 0 else
                     -1.7976931348623157e308 if i % 3 == 1 and ".sum" not in k else 5e-324)
                 for i, k in enumerate(l0["values"])}
nulls = copy.deepcopy(l0)
nulls["name"] = nulls["mangled"] = "nulls"
nulls["duration_ns"] = None
nulls["values"] = {k: None for k in l0["values"]}
p["launches"] = [big, copy.deepcopy(big), copy.deepcopy(l0), nulls]
p["launches"][2]["duration_ns"] = 1e308
dump("edge-values.json", p)

# No metric values at all.
p = copy.deepcopy(one)
p["metrics"] = []
p["launches"][0]["values"] = {}
dump("no-metrics.json", p)

# Rule files.
def rules_dir(name, text):
    d = os.path.join(t, "rules-" + name)
    os.mkdir(d)
    with open(os.path.join(d, name + ".yaml"), "w") as f:
        f.write(text)
rules_dir("deep", "id: deep\ntitle: " + "[" * 100000 + "]" * 100000 + "\n")
rules_dir("deep-block", "".join(" " * i + "k%d:\n" % i for i in range(100)))
lines = ["id: laughs", "title: t", 'lol0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
for i in range(1, 10):
    lines.append("lol%d: &a%d [" % (i, i) + ",".join(["*a%d" % (i - 1)] * 9) + "]")
rules_dir("laughs", "\n".join(lines) + "\n")
rules_dir("large", "id: large\nexplain: |\n" + "  words words words words\n" * 50000)
rules_dir("names", "id: names\ntitle: t\nclass: memory\nchecklist: 1\nseverity: low\n"
          "speedup: [1, 2]\nwhen: min(" + ", ".join("x%d__y" % i for i in range(80000)) +
          ") > 0\nestimate: 0.5\nfix: f\nexample: e\nexplain: x\n")
with open(os.path.join(sys.argv[3], "classify.yaml")) as f:
    cls = f.read()
with open(os.path.join(t, "rules-names", "classify.yaml"), "w") as f:
    f.write(cls)
rules_dir("problems", "classifier:\n  order:\n    - class: compute\n      when: min(" +
          ", ".join("x%d" % i for i in range(20000)) + ")\n      score: 1\n")
PY
mkdir "$T/rules-zero" && ln -s /dev/zero "$T/rules-zero/zero.yaml"

# ---------------------------------------------------------------------------
# Huge and malformed JSON.
run 120 --import "$T/huge.json"
check "50 MB profile -> 0" 0 out 'launches profiled'
run 120 --import "$T/huge-cut.json"
check "50 MB profile cut in half -> 2, invalid JSON at LINE:COL" 2 err \
	'huge-cut\.json:[0-9]+:[0-9]+: invalid JSON'
run 30 --import "$T/deep.json"
check "JSON nested 100,000 deep -> 2, jansson's depth limit" 2 err \
	'deep\.json:1:[0-9]+: invalid JSON: maximum parsing depth reached'
run 30 --import "$T/overflow.json"
check "number 1e309 -> 2, real number overflow" 2 err \
	'overflow\.json:1:[0-9]+: invalid JSON: real number overflow'

# Hostile rule files: refused quickly with FILE:LINE:COL.
run 10 --check-rules "$T/rules-deep"
check "rule file nested 100,000 deep -> 3 within 10 s" 3 err \
	'deep\.yaml:2:[0-9]+: error: nested more than 64 levels deep'
run 10 --check-rules "$T/rules-deep-block"
check "rule file of 100 nested mappings -> 3" 3 err \
	'deep-block\.yaml:[0-9]+:[0-9]+: error: nested more than 64 levels deep'
run 10 --check-rules "$T/rules-laughs"
check "billion laughs (YAML aliases) -> 3" 3 err \
	"laughs\.yaml:4:[0-9]+: error: YAML alias '\*a0' is not allowed"
run 10 --check-rules "$T/rules-large"
check "rule file over 1 MiB -> 3" 3 err 'large\.yaml: error: rule file is larger than 1024 KiB'
run 10 --check-rules "$T/rules-zero"
check "rule file linked to /dev/zero -> 3" 3 err 'zero\.yaml: error: a character device, not a regular file'
run 10 --check-rules "$T/rules-names"
check "rule with an expression of 80,000 names -> 0 within 10 s" 0 out \
	'rules-names: 1 rules and the classifier are valid'
run 10 --check-rules "$T/rules-problems"
check "classifier with 20,000 unknown names -> 3 within 10 s, 50 shown" 3 err \
	'problems\.yaml: error: 19951 more errors not shown'
run 10 --rules "$T/rules-laughs" --import "$REC/testapp-fma_loop.json"
check "--rules with aliases -> 3 before importing" 3 err 'YAML alias'

# A kernel name of 100 KB: the text report shortens it (--verbose gives the
# first 1000 characters too), JSON keeps it.
run 30 --import "$T/long-name.json"
check "kernel name of 100 KB, the default report -> 0" 0 out '\(…\) \[[a-z]+\]$'
run 30 --verbose --import "$T/long-name.json"
check "kernel name of 100 KB, --verbose -> 0" 0 out 'full name \(1000[0-9]+ characters, cut'
if python3 - "$T/out" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
head = [l for l in lines if l.endswith("]") and "k<" in l]
sys.exit(0 if head and len(head[0]) <= 80 and max(len(l) for l in lines) <= 1010 else 1)
PY
then
	ok "kernel name of 100 KB: header line fits 80 columns, no line over 1010"
else
	not_ok "kernel name of 100 KB: report lines too long"
fi
run 30 --format json --import "$T/long-name.json"
if [ "$rc" = 0 ] && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if len(r["kernels"][0]["name"]) > 100000 else 1)' "$T/out"; then
	ok "kernel name of 100 KB: --format json has the whole name"
else
	not_ok "kernel name of 100 KB: --format json -> $rc, name missing or cut"
fi
run 30 --format markdown --import "$T/long-name.json"
check "kernel name of 100 KB: --format markdown -> 0" 0 out 'k<'

# 10,000 launches.  docs/PERFORMANCE.md ("Import speed") has the timings;
# the limit here only catches a blow-up.
run 60 --import "$T/kernels-10000.json"
check "10,000 kernels, one launch each -> 0" 0 out '^10000 kernels, 10000 launches profiled'
run 60 --import "$T/launches-10000.json"
check "one kernel, 10,000 launches -> 0" 0 out '^1 kernel, 10000 launches profiled'

# Values at the edge of a double: no NaN or infinity in any report, every
# percentage a number, the JSON report strict JSON.
run 30 --verbose --import "$T/edge-values.json"
check "values near 1e308 -> 0" 0 out ''
if grep -Eiq '(^|[^a-z_])(nan|-?inf)([^a-z_]|$)' "$T/out"; then
	not_ok "values near 1e308: NaN or infinity in the text report"
	grep -Ein '(^|[^a-z_])(nan|-?inf)([^a-z_]|$)' "$T/out" | head -5 | sed 's/^/#   /'
else
	ok "values near 1e308: no NaN or infinity in the text report"
fi
run 30 --format json --import "$T/edge-values.json"
if [ "$rc" = 0 ] && python3 - "$T/out" <<'PY'
import json, math, sys
def bad(x):
    raise ValueError("non-finite number " + x)
r = json.load(open(sys.argv[1]), parse_constant=bad)
for k in r["kernels"]:
    assert k["share"] is not None and 0 <= k["share"] <= 1, k["share"]
for f in r["findings"]:
    for key in ("estimate", "saving"):
        assert f[key] is not None and 0 <= f[key] <= 1, (key, f[key])
PY
then
	ok "values near 1e308: --format json is strict JSON, shares and savings in 0..1"
else
	not_ok "values near 1e308: --format json -> $rc, bad numbers"
fi

# Metrics missing from the profile: rules do not fire; --verbose says why.
run 30 --import "$T/no-metrics.json"
check "profile without metric values -> 0, no findings" 0 out '^No findings'
run 30 --verbose --format json --import "$T/no-metrics.json"
check "profile without metric values, -v: notes name the missing metric" 0 out \
	"rule [a-z0-9-]+ not evaluated: .*metric '[a-z_]+__[a-z_.]+' not in profile"

# ---------------------------------------------------------------------------
# Output files: a temporary name, then a rename; nothing left behind.
# tmp_left DIR: temporary files (*.tmp.*) left in DIR.
tmp_left() {
	find "$1" -maxdepth 1 -name '*.tmp.*' | head -5
}

mkdir -p "$T/o"
run 30 --import "$REC/testapp-fma_loop.json" -o "$T/o/x.json" --log-file "$T/o/r.txt"
left=$(tmp_left "$T/o")
if [ "$rc" = 0 ] && [ -s "$T/o/x.json" ] && [ -s "$T/o/r.txt" ] && [ ! -s "$T/out" ] &&
	[ -z "$left" ]; then
	ok "-o FILE --log-file FILE -> 0, both written, no temporary file left"
else
	not_ok "-o FILE --log-file FILE -> $rc; left: $left"
fi
ino1=$(ls -i "$T/o/x.json" | awk '{print $1}')
run 30 --import "$REC/testapp-all.json" -f -o "$T/o/x.json"
ino2=$(ls -i "$T/o/x.json" | awk '{print $1}')
if [ "$rc" = 0 ] && [ "$ino1" != "$ino2" ] && grep -q matmul_naive "$T/o/x.json" &&
	[ -z "$(tmp_left "$T/o")" ]; then
	ok "-f -o over an existing file -> 0, replaced by rename (new inode)"
else
	not_ok "-f -o over an existing file -> $rc (inode $ino1 -> $ino2)"
fi
echo '{}' >"$T/o/real.json"
ln -s real.json "$T/o/link.json"
run 30 --import "$REC/testapp-fma_loop.json" -f -o "$T/o/link.json"
if [ "$rc" = 0 ] && [ -L "$T/o/link.json" ] && grep -q fma_loop "$T/o/real.json"; then
	ok "-f -o through a symbolic link -> 0, the link kept, its target replaced"
else
	not_ok "-f -o through a symbolic link -> $rc"
fi
mkdir -p "$T/o/dir"
run 30 --import "$REC/testapp-fma_loop.json" -o "$T/o/dir"
check "-o DIRECTORY -> 2" 2 err 'cannot write .*/o/dir: it is a directory'
left=$(tmp_left "$T/o")
[ -z "$left" ] && ok "-o DIRECTORY: no temporary file left" ||
	not_ok "-o DIRECTORY: left $left"
run 30 --import "$REC/testapp-fma_loop.json" --log-file "$T/o/missing/r.txt"
check "--log-file in a missing directory -> 2" 2 err 'cannot write .*/o/missing/r\.txt: No such file'
run 30 --import "$REC/testapp-fma_loop.json" --log-file /dev/stdout
check "--log-file /dev/stdout -> 0, the report on stdout" 0 out '^What to do first'

mkdir -p "$T/ro"
chmod a-w "$T/ro"
if touch "$T/ro/probe" 2>/dev/null; then
	# root (or a file system without permissions) writes anyway
	rm -f "$T/ro/probe"
	echo "ok - # SKIP read-only directory: writable anyway (running as root?)"
else
	run 30 --import "$REC/testapp-fma_loop.json" -o "$T/ro/x.json"
	check "-o into a read-only directory -> 2" 2 err \
		'cannot write .*/ro/x\.json: Permission denied'
	run 30 --import "$REC/testapp-fma_loop.json" --log-file "$T/ro/r.txt"
	check "--log-file into a read-only directory -> 2" 2 err \
		'cannot write .*/ro/r\.txt: Permission denied'
	[ -z "$(find "$T/ro" -mindepth 1 | head -1)" ] &&
		ok "read-only directory: nothing left in it" ||
		not_ok "read-only directory: files left in it"
fi
chmod u+w "$T/ro"

tap_end
