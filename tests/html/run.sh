#!/bin/sh
# tests/html/run.sh: --format html on the synthetic roofline fixture.  The page
# must be self-contained (no URL, no src= or href= at all), escape kernel
# names, hold the roofline SVG, the findings and the kernel table, and
# render in headless Chromium to a non-trivial screenshot (not one colour).
# Exit 77 (skipped) when Chromium is not installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRCDIR=${SRCDIR:-$(cd "$here/../.." && pwd)}
GPUADVISE=${GPUADVISE:-$SRCDIR/build/gpuadvise}
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-html.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
check() {  # DESCRIPTION COMMAND...
	d=$1; shift
	if "$@"; then echo "ok - $d"; else echo "not ok - $d"; fail=1; fi
}

fix=$SRCDIR/tests/fixtures/recorded/testapp-all.json
# A kernel name with < > & to check the escaping.
python3 - "$fix" "$T/in.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["launches"][0]["name"] = "apply<&op>(float<2> const*)"
json.dump(p, open(sys.argv[2], "w"))
PY
"$GPUADVISE" --format html --import "$T/in.json" >"$T/report.html" 2>"$T/err"
check "gpuadvise --format html exits 0" [ $? = 0 ]
check "no URL, src= or href= in the page" sh -c "! grep -Eiq 'https?:|src=|href=|@import|url\\(' '$T/report.html'"
check "no script" sh -c "! grep -qi '<script' '$T/report.html'"
check "kernel name escaped" grep -q 'apply&lt;&amp;op&gt;(float&lt;2&gt; const\*)' "$T/report.html"
check "raw name absent" sh -c "! grep -q 'apply<&op>' '$T/report.html'"
check "roofline SVG with roofs and labelled dots" sh -c \
	"grep -q '<svg' '$T/report.html' && grep -q 'class=\"roof\"' '$T/report.html' && grep -q '<g class=\"k memory\" data-k=\"[A-Za-z]\">' '$T/report.html' && grep -q '<g class=\"k compute\" data-k=' '$T/report.html'"
check "findings and kernel table" sh -c \
	"grep -q '<ol class=\"findings\">' '$T/report.html' && grep -q '<th>roofline vs class</th>' '$T/report.html'"
check "balanced tags" python3 - "$T/report.html" <<'PY'
import sys
from html.parser import HTMLParser
void = {"meta", "br", "line", "circle", "img", "input", "hr", "link"}
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.stack = []; s.bad = []
    def handle_starttag(s, t, a):
        if t not in void: s.stack.append(t)
    def handle_startendtag(s, t, a): pass
    def handle_endtag(s, t):
        if t in void: return
        if not s.stack or s.stack.pop() != t: s.bad.append(t)
p = P(); p.feed(open(sys.argv[1]).read())
sys.exit(1 if p.bad or p.stack else 0)
PY

# The occupancy column: achieved of theoretical, each its own value (the
# share was printed as both), and the chart's parts: a legend entry, a dot
# with a <title> giving its numbers and the level that placed it, for every
# kernel with a letter in the table; FP32 and FP16 with one peak make one
# roof named "FP32/FP16".  Also on the recorded PyTorch profile, where most
# kernels have no FLOP counts and some almost no DRAM traffic.
for prof in testapp-all pytorch; do
	"$GPUADVISE" --format html --import "$SRCDIR/tests/fixtures/recorded/$prof.json" >"$T/$prof.html" 2>/dev/null
	"$GPUADVISE" --format json --import "$SRCDIR/tests/fixtures/recorded/$prof.json" >"$T/$prof.json" 2>/dev/null
	check "$prof: occupancy column, legend, dots with titles, placed-by, one FP32/FP16 roof" \
		python3 - "$T/$prof.html" "$T/$prof.json" "$prof" <<'PY'
import json, re, sys
page, rep, prof = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
rows = re.findall(r"<tr><td>(.)</td><td><code>.*?</code></td>(.*?)</tr>", page)
bad = []
if len(rows) != len(rep["kernels"]):
    bad.append(f"{len(rows)} rows for {len(rep['kernels'])} kernels")
for (label, rest), k in zip(rows, rep["kernels"]):
    ro = k["roofline"]
    occ = re.search(r'<td class="occ">([^<%]*)% of ([^<%]*)%', rest)
    want_th = ro["occupancy"]["theoretical_pct"]
    if not occ or (want_th is not None and abs(float(occ.group(2)) - want_th) > 0.01 * want_th):
        bad.append(f"occupancy of {label}: {occ.group(0) if occ else rest[:80]}, theoretical {want_th}")
    if label == "-":
        if ro["verdict"] is not None:
            bad.append("a placed kernel without a letter")
        continue
    if ro["verdict"] is None:
        bad.append(f"{label}: a letter but not placed")
    dot = re.search(r'<g class="k [a-z]+" data-k="' + re.escape(label) +
                    r'">.*?<circle[^>]*><title>(.*?)</title>', page)
    if not dot:
        bad.append(f"no dot for {label}")
        continue
    t = dot.group(1)
    if "FLOP/s" not in t or "FLOP/byte at " + ro["placed_by"] not in t or "% of GPU time" not in t:
        bad.append(f"title of {label}: {t[:100]}")
    if f'<span class="sw {k["class"] or "unclassified"}">{label}</span>' not in page:
        bad.append(f"no legend entry for {label}")
    if f"<td>{ro['placed_by']}</td>" not in rest:
        bad.append(f"placed-by of {label}")
roofs = re.findall(r'<text x="[0-9.]+" y="[0-9.]+">(FP32[^<]*|FP64|FP16|tensor)</text>', page)
if "FP32/FP16" not in roofs or "FP16" in roofs:
    bad.append(f"roof labels {roofs}")
# Every kernel is placed but those with no floating-point work (copies,
# gathers: no intensity to place them by), and PyTorch's workload has
# plenty of both.
placed = sum(1 for k in rep["kernels"] if k["roofline"]["verdict"])
no_flop = sum(1 for k in rep["kernels"] if not k["roofline"]["verdict"]
              and (k["roofline"].get("reason") or "").startswith("no floating-point work"))
if placed + no_flop != len(rep["kernels"]):
    bad.append(f"{len(rep['kernels']) - placed - no_flop} kernels with FLOPs not placed")
if prof == "pytorch" and placed < 20:
    bad.append(f"only {placed} of {len(rep['kernels'])} kernels placed")
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
PY
done

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
	echo "# chromium not installed: screenshot skipped"
	[ "$fail" = 0 ] && exit 77
	exit 1
fi
(cd "$T" && timeout 120 "$chrome" --headless --disable-gpu --no-sandbox \
	--user-data-dir="$T/profile" --screenshot="$T/shot.png" --window-size=1200,1600 \
	"file://$T/report.html") >"$T/chrome.log" 2>&1
check "chromium took a screenshot" test -s "$T/shot.png"
check "the screenshot is a PNG of 1200x1600, not blank" python3 - "$T/shot.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", data[16:24])
pos, idat = 8, b""
while pos < len(data):
    n, = struct.unpack(">I", data[pos:pos + 4]); kind = data[pos + 4:pos + 8]
    if kind == b"IDAT": idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
# many distinct byte values: text, lines and dots, not one colour
distinct = len(set(raw[::97]))
sys.exit(0 if (w, h) == (1200, 1600) and len(data) > 20000 and distinct > 8 else 1)
PY

# The layout as Chromium draws it: a copy of each page with measure.js (the
# report itself has no script), which measures every text of the chart with
# getBoundingClientRect and finds each table letter's dot inside the chart,
# then writes its findings into the page; --dump-dom prints the page after
# the script ran.
for prof in testapp-all pytorch; do
	python3 - "$T/$prof.html" "$here/measure.js" "$T/$prof-measure.html" <<'PY'
import sys
page, js = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", js + "</body>"))
PY
	(cd "$T" && timeout 120 "$chrome" --headless --disable-gpu --no-sandbox \
		--user-data-dir="$T/profile" --window-size=1400,900 --dump-dom \
		"file://$T/$prof-measure.html") >"$T/$prof-dom.html" 2>"$T/chrome.log"
	check "$prof in Chromium: no two chart texts overlap, every kernel of the table has its dot" \
		python3 - "$T/$prof-dom.html" <<'PY'
import html, json, re, sys
m = re.search(r"LAYOUT (\{.*?\})</pre>", open(sys.argv[1]).read())
if not m:
    print("# no layout result in the DOM")
    sys.exit(1)
r = json.loads(html.unescape(m.group(1)))
print(f"# {r['texts']} texts, {r['lettered']} kernels with a letter")
for o in r["overlaps"]:
    print(f"# overlap: {o}")
for l in r["missing"]:
    print(f"# no dot in the chart for {l}")
sys.exit(0 if r["texts"] > 10 and r["lettered"] > 0 and not r["overlaps"] and not r["missing"] else 1)
PY
done
(cd "$T" && timeout 120 "$chrome" --headless --disable-gpu --no-sandbox \
	--user-data-dir="$T/profile" --screenshot="$T/pytorch.png" --window-size=1400,900 \
	"file://$T/pytorch.html") >"$T/chrome.log" 2>&1
check "chromium took a screenshot of the PyTorch report" test -s "$T/pytorch.png"
# HTML_SHOTS=DIR keeps the screenshots, to look at.
if [ -n "${HTML_SHOTS:-}" ]; then
	cp "$T/pytorch.png" "$HTML_SHOTS/pytorch.png"
	cp "$T/shot.png" "$HTML_SHOTS/testapp-roofline.png"
fi
exit $fail
