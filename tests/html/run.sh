#!/bin/sh
# tests/html/run.sh: -f html on the synthetic roofline fixture.  The page
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
"$GPUADVISE" -f html --import "$T/in.json" >"$T/report.html" 2>"$T/err"
check "gpuadvise -f html exits 0" [ $? = 0 ]
check "no URL, src= or href= in the page" sh -c "! grep -Eiq 'https?:|src=|href=|@import|url\\(' '$T/report.html'"
check "no script" sh -c "! grep -qi '<script' '$T/report.html'"
check "kernel name escaped" grep -q 'apply&lt;&amp;op&gt;(float&lt;2&gt; const\*)' "$T/report.html"
check "raw name absent" sh -c "! grep -q 'apply<&op>' '$T/report.html'"
check "roofline SVG with roofs and labelled dots" sh -c \
	"grep -q '<svg' '$T/report.html' && grep -q 'class=\"roof\"' '$T/report.html' && grep -q '<g class=\"k memory\">' '$T/report.html' && grep -q '<g class=\"k compute\">' '$T/report.html'"
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
exit $fail
