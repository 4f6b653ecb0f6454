#!/bin/sh
# Run the whole test suite: configure (once) and build in ./build, then every
# meson test (unit, rules, cli; the GPU suite skips where there is no GPU).
# Prints one closing line "N passed, N failed, N skipped" and exits non-zero
# on any failure.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
if [ ! -f "$B/build.ninja" ]; then
	meson setup "$B" || exit 1
fi
ninja -C "$B" || exit 1
meson test -C "$B" --print-errorlogs --num-processes 2 "$@"
status=$?
python3 - "$B/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "ERROR": 0, "EXPECTEDFAIL": 0,
          "UNEXPECTEDPASS": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)
    counts[r["result"]] = counts.get(r["result"], 0) + 1
passed = counts["OK"] + counts["EXPECTEDFAIL"]
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["ERROR"] + counts["UNEXPECTEDPASS"]
print(f"{passed} passed, {failed} failed, {counts['SKIP']} skipped")
PY
exit $status
