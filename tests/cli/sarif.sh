# tests/cli/sarif.sh: --format sarif, sourced by run.sh (its run, ok, not_ok,
# golden_check, $T, $REC, $GOLDEN, $FIX).
#
# Golden SARIF logs (tests/fixtures/golden/*.sarif), compared byte for byte
# after one substitution: the source root's absolute file URI
# (originalUriBaseIds.SRCROOT.uri, the checkout's path) reads
# file:///SRCROOT/.  tests/cli/sarif-validate.sh checks every one of them
# with the SARIF multitool and the SARIF 2.1.0 schema.

# sarif_run ARGS...: gpuadvise --format sarif ARGS with the root URI replaced.
sarif_root=$(cd "$SRCDIR" && pwd -P)
sarif_run() {
	run --format sarif "$@"
	sed "s|\"file://$sarif_root/\"|\"file:///SRCROOT/\"|" "$T/out" >"$T/out.sarif"
	mv "$T/out.sarif" "$T/out"
}

# sarif_golden GOLD ARGS...
sarif_golden() {
	gold=$1
	shift
	sarif_run "$@"
	if [ "$rc" != 0 ]; then
		not_ok "golden $gold: gpuadvise --format sarif $* -> $rc"
		show stderr "$T/err"
		return
	fi
	golden_check "$gold"
}

# With source lines (SASS metrics), with stall samples and line text,
# with lines for some kernels only (every rule of the test app), against a
# baseline (new, unchanged, absent), and two imported profiles.
sarif_golden "$GOLDEN/demo-coalescing-source.sarif" --import "$REC/demo-coalescing-source.json"
sarif_golden "$GOLDEN/demo-coalescing-stalls.sarif" --import "$REC/demo-coalescing-stalls.json"
sarif_golden "$GOLDEN/testapp-all.sarif" --import "$REC/testapp-all.json"
sarif_golden "$GOLDEN/testapp-baseline.sarif" --import "$REC/testapp-all.json" \
	--baseline "$FIX/baseline/strided-was-coalesced.json"
sarif_golden "$GOLDEN/demos-two-imports.sarif" --import "$REC/demo-coalescing-source.json" \
	--import "$REC/demo-divergence-source.json"

# sarif_check NAME PYTHON: run the Python check on $T/out (the log as
# `log`); it prints what is wrong, nothing when all is right.
sarif_check() {
	name=$1
	if python3 - "$T/out" >"$T/why" 2>&1 <<PY && [ ! -s "$T/why" ]
import json, sys
log = json.load(open(sys.argv[1]))
run = log["runs"][0]
res = run["results"]
def loc(r):
    return r["locations"][0].get("physicalLocation")
$2
PY
	then
		ok "$name"
	else
		not_ok "$name"
		show why "$T/why"
	fi
}

# The done-when of issue 25: the coalescing demo's finding is on its line
# of kernels/demo_coalescing.cu, relative to the source root.
sarif_run --import "$REC/demo-coalescing-source.json"
sarif_check "--format sarif: the uncoalesced access is at kernels/demo_coalescing.cu:22 (SRCROOT)" '
r = res[0]
p = loc(r)
if (r["ruleId"], r["level"]) != ("uncoalesced-global-access", "error"):
    print("rule/level", r["ruleId"], r["level"])
if p is None or p["artifactLocation"] != {"uri": "kernels/demo_coalescing.cu", "uriBaseId": "SRCROOT"} \
        or p["region"]["startLine"] != 22:
    print("location", p)
lg = r["locations"][0]["logicalLocations"][0]
if (lg["name"], lg["kind"], lg["decoratedName"]) != ("coalescing_strided", "function", "_Z18coalescing_stridedPKfPfjj"):
    print("logical", lg)
# This recording (made before the model read DRAM bytes) has no
# dram__bytes.sum: the message names the missing input instead of a number.
for part in ("coalescing_strided(float const*", "the estimate needs dram__bytes.sum",
             "ld_sectors_per_req = 32", "Line 22: 32.0 sectors/request (ideal 4.0)"):
    if part not in r["message"]["text"]:
        print("message lacks", part)
if run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] != r["ruleId"]:
    print("ruleIndex")
if "withoutLineInfo" in run["properties"] or "withoutSourceLines" in run["properties"]:
    print("a note on missing lines, with lines", run["properties"])
'

# sfu-heavy-math points at the line holding the XU pipe's instructions
# (the H200 recording of the accuracy bench's expf kernel, whose opcodes
# were read): the expf call, not the kernel's first line.
EXPF_LINE=$(grep -n 'acc += expf(-(float)k \* x);' "$SRCDIR/kernels/accuracy/compute.cu" | cut -d: -f1)
sarif_run --import "$SRCDIR/bench/accuracy/recorded/sfu-exp.json"
sarif_check "--format sarif: sfu-heavy-math at the line of its XU instructions (compute.cu:$EXPF_LINE)" '
r = [x for x in res if x["ruleId"] == "sfu-heavy-math"]
p = loc(r[0]) if r else None
if p is None or p["artifactLocation"]["uri"] != "kernels/accuracy/compute.cu" \
        or p["region"]["startLine"] != '"${EXPF_LINE:-0}"':
    print("location", p)
elif "33.6 million XU instructions: MUFU.EX2 100%" not in r[0]["message"]["text"]:
    print("message", r[0]["message"]["text"])
'

# Levels from severity, and a physical location only for the kernels whose
# source lines the recording holds (the collector measures them where a
# rule with source_lines fires): the run names the others, which option
# adds their lines and what it costs.
sarif_run --import "$REC/testapp-all.json"
sarif_check "--format sarif: levels by severity, physical locations only where lines were measured, the rest named with --source" '
import os
prof = json.load(open(os.path.join(os.environ["SRCDIR"], "tests/fixtures/recorded/testapp-all.json")))
with_lines = {s["mangled"] for s in prof.get("sources", []) if any(pc.get("line") for pc in s["pcs"])}
if not with_lines or len(with_lines) == len({l["mangled"] for l in prof["launches"]}):
    print("the recording should have lines for some kernels only", with_lines)
rules = run["tool"]["driver"]["rules"]
want = {"high": "error", "medium": "warning", "low": "note"}
for r in res:
    sev = rules[r["ruleIndex"]]["properties"]["severity"]
    if r["level"] != want[sev]:
        print(r["ruleId"], sev, r["level"])
    mangled = r["locations"][0]["logicalLocations"][0]["decoratedName"]
    if (loc(r) is not None) != (mangled in with_lines):
        print("physical location", loc(r) is not None, "for", r["ruleId"], mangled)
note = run["properties"].get("withoutSourceLines", {})
without = sorted(l["name"] for l in prof["launches"] if l["mangled"] not in with_lines)
if sorted(note.get("kernels", [])) != without:
    print("kernels without lines", note.get("kernels"), "want", without)
text = note.get("text", "")
if "--source" not in text or "--stalls" not in text or "0.3 s" not in text:
    print("note", text)
if len(set(r["ruleId"] for r in res)) != len(rules):
    print("rules listed that did not fire, or the reverse")
'

# --baseline: new, unchanged and absent, by fingerprint.
sarif_run --import "$REC/testapp-all.json" --baseline "$FIX/baseline/strided-was-coalesced.json"
sarif_check "--format sarif --baseline: copy_strided uncoalesced new, its kernel-fusion absent, the rest unchanged" '
st = [(r["ruleId"], r["properties"]["kernel"].split("(")[0], r["baselineState"], r["level"]) for r in res]
new = [s for s in st if s[2] == "new"]
gone = [s for s in st if s[2] == "absent"]
if new != [("uncoalesced-global-access", "copy_strided", "new", "error")]:
    print("new", new)
if gone != [("kernel-fusion", "copy_strided", "absent", "none")]:
    print("absent", gone)
if len(st) - len(new) - len(gone) != 12 or any(s[2] not in ("new", "unchanged", "absent") for s in st):
    print("states", st)
'

# Fingerprints: the line's text, not its number.  The stalls profile
# records the text; moved down three lines it keeps every fingerprint, a
# changed text changes the finding's.
python3 - "$SRCDIR/$REC/demo-coalescing-stalls.json" "$T" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for pc in d["sources"][0]["pcs"]:
    if pc.get("line"):
        pc["line"] += 3
json.dump(d, open(sys.argv[2] + "/moved.json", "w"))
for pc in d["sources"][0]["pcs"]:
    if pc.get("text", "").startswith("out[i]"):
        pc["text"] = "out[i] = 3.0f * in[i];"
json.dump(d, open(sys.argv[2] + "/edited.json", "w"))
PY
fps() {
	python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["runs"][0]["results"]:
    print(r["ruleId"], r["partialFingerprints"]["gpuadvise/v1"], r["locations"][0]["physicalLocation"]["region"]["startLine"])' "$1"
}
run --format sarif --import "$REC/demo-coalescing-stalls.json"
fps "$T/out" >"$T/fp.orig"
run --format sarif --import "$T/moved.json"
fps "$T/out" >"$T/fp.moved"
run --format sarif --import "$T/edited.json"
fps "$T/out" >"$T/fp.edited"
if [ -s "$T/fp.orig" ] && [ "$(cut -d' ' -f1,2 "$T/fp.orig")" = "$(cut -d' ' -f1,2 "$T/fp.moved")" ] &&
	[ "$(cut -d' ' -f3 "$T/fp.orig")" != "$(cut -d' ' -f3 "$T/fp.moved")" ] &&
	[ "$(cut -d' ' -f2 "$T/fp.orig")" != "$(cut -d' ' -f2 "$T/fp.edited")" ]; then
	ok "--format sarif fingerprints: same after the lines move, another when the line's text changes"
else
	not_ok "--format sarif fingerprints: not stable by text"
	show orig "$T/fp.orig"
	show moved "$T/fp.moved"
	show edited "$T/fp.edited"
fi

# A program built without -lineinfo: the source entry has PCs but no
# lines; the result has the kernel's logical location only and the run
# says how to add line information.
python3 - "$SRCDIR/$REC/demo-coalescing-source.json" "$T/nolines.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["sources"]:
    s["lineinfo"] = False
    for pc in s["pcs"]:
        pc.pop("file", None)
        pc.pop("line", None)
        pc.pop("text", None)
json.dump(d, open(sys.argv[2], "w"))
PY
sarif_run --import "$T/nolines.json"
sarif_check "--format sarif without -lineinfo: logical location only, the run says nvcc -lineinfo" '
r = res[0]
if loc(r) is not None or r["locations"][0]["logicalLocations"][0]["name"] != "coalescing_strided":
    print("location", r["locations"])
note = run["properties"].get("withoutLineInfo", {})
if "nvcc -lineinfo" not in note.get("text", "") or not note.get("kernels", [""])[0].startswith("coalescing_strided("):
    print("note", note)
'

# --source-root: an absolute path under the root is made relative to it;
# one outside stays an absolute file URI; a root that is no directory is
# a usage error.
python3 - "$SRCDIR/$REC/demo-coalescing-source.json" "$T/abs.json" "$sarif_root" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["sources"]:
    for pc in s["pcs"]:
        if pc.get("file"):
            pc["file"] = sys.argv[3] + "/" + pc["file"]
json.dump(d, open(sys.argv[2], "w"))
PY
run --format sarif --import "$T/abs.json" --source-root "$SRCDIR"
sarif_check "--format sarif --source-root: an absolute path under it becomes relative" '
p = loc(res[0])["artifactLocation"]
if p != {"uri": "kernels/demo_coalescing.cu", "uriBaseId": "SRCROOT"}:
    print(p)
'
run --format sarif --import "$T/abs.json" --source-root "$SRCDIR/tests"
sarif_check "--format sarif --source-root elsewhere: an absolute file URI" '
p = loc(res[0])["artifactLocation"]
if "uriBaseId" in p or not p["uri"].startswith("file:///") or not p["uri"].endswith("/kernels/demo_coalescing.cu"):
    print(p)
'
run --format sarif --import "$REC/demo-coalescing-source.json" --source-root "$T/no-such-dir"
if [ "$rc" = 2 ] && grep -q "^gpuadvise: --source-root .*no-such-dir: No such file or directory" "$T/err"; then
	ok "--format sarif --source-root MISSING -> 2"
else
	not_ok "--format sarif --source-root MISSING -> $rc"
	show stderr "$T/err"
fi

# --log-file writes the same log.
run --format sarif --import "$REC/demo-coalescing-source.json"
cp "$T/out" "$T/stdout.sarif"
run --format sarif --import "$REC/demo-coalescing-source.json" --log-file "$T/log.sarif"
if [ "$rc" = 0 ] && [ ! -s "$T/out" ] && cmp -s "$T/stdout.sarif" "$T/log.sarif"; then
	ok "--format sarif --log-file: the same log as on standard output"
else
	not_ok "--format sarif --log-file -> $rc"
fi

# Several --import files: each file's kernels keep their source lines.
sarif_run --import "$REC/demo-coalescing-source.json" --import "$REC/demo-divergence-source.json"
sarif_check "--format sarif, two imports: each finding on its own file's line" '
got = [(r["ruleId"], loc(r) and loc(r)["artifactLocation"]["uri"], loc(r) and loc(r)["region"]["startLine"]) for r in res]
if sorted(got) != [("thread-divergence", "kernels/demo_divergence.cu", 41),
                   ("uncoalesced-global-access", "kernels/demo_coalescing.cu", 22)]:
    print(got)
if [p.split("/")[-1] for p in run["properties"]["profiles"]] != ["demo-coalescing-source.json", "demo-divergence-source.json"]:
    print(run["properties"])
'

# A finding whose kind of line the source view did not rank (here the
# divergence demo without its active-lane counts) points at the kernel's
# first line, so that every result of a kernel with line information has
# a file: GitHub code scanning refuses a log with a result that has none.
python3 - "$SRCDIR/$REC/demo-divergence-source.json" "$T/nothreads.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["sources"]:
    for pc in s["pcs"]:
        pc.pop("threads", None)
json.dump(d, open(sys.argv[2], "w"))
PY
sarif_run --import "$T/nothreads.json"
sarif_check "--format sarif: no line of the finding's kind -> the kernel's first line (demo_divergence.cu:36)" '
r = res[0]
p = loc(r)
if r["ruleId"] != "thread-divergence" or p is None or p["region"]["startLine"] != 36 \
        or p["artifactLocation"]["uri"] != "kernels/demo_divergence.cu":
    print(r["ruleId"], p)
if "first line" not in r["locations"][0]["message"]["text"] or "withoutSourceLines" in run["properties"]:
    print(r["locations"][0], run["properties"])
'

# The collector records a build-relative file as the compile directory
# joined with it ("/src/build/../kernels/x.cu"): the path is normalised
# before it is made relative to the source root.
for f in "$sarif_root/build/../kernels/demo_coalescing.cu" "./kernels/./demo_coalescing.cu"; do
	python3 - "$SRCDIR/$REC/demo-coalescing-source.json" "$T/norm.json" "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["sources"]:
    for pc in s["pcs"]:
        if pc.get("file"):
            pc["file"] = sys.argv[3]
json.dump(d, open(sys.argv[2], "w"))
PY
	run --format sarif --import "$T/norm.json" --source-root "$SRCDIR"
	sarif_check "--format sarif: $f -> kernels/demo_coalescing.cu" '
p = loc(res[0])["artifactLocation"]
if p != {"uri": "kernels/demo_coalescing.cu", "uriBaseId": "SRCROOT"}:
    print(p)
'
done
