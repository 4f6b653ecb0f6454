#!/bin/bash
# Import benchmark (no GPU): how long `gpuadvise --import` takes on large
# profiles.  A benchmark, not a test: it checks nothing and fails only when
# gpuadvise does.  Usage: bench/import.sh [BUILD_DIR] [REPS]
# (defaults: build, 5).  Inputs are made as tests/cli/limits.sh makes them
# (tests/cli/large_profiles.py: copies of recorded launches with their 35
# metric values), plus the recorded testapp-all.json, each with an
# "old" variant for --baseline: every 5th kernel 20 % slower, every 7th
# with another grid (paired by name only), in reverse launch order.
# Prints one row per input: wall seconds (median of REPS runs) of the text
# report, the JSON report and the text report against the old variant;
# CPU seconds (user + system) of the text report; its peak RSS.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/.." && pwd)
B=${1:-$SRC/build}
REPS=${2:-5}
GA=$B/gpuadvise
[ -x "$GA" ] || { echo "bench/import.sh: no $GA (build first)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-import.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export NO_COLOR=1 GPUADVISE_RULES_DIR=$SRC/rules
REC=$SRC/tests/fixtures/recorded

python3 - "$T" "$REC" "$SRC/tests/cli" <<'PY' || exit 1
import json, os, shutil, sys
t, rec = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
sys.dont_write_bytecode = True
import large_profiles
large_profiles.write(t, rec)
shutil.copy(os.path.join(rec, "testapp-all.json"), t)
for name in ("kernels-10000", "launches-10000", "huge", "testapp-all"):
    p = json.load(open(os.path.join(t, name + ".json")))
    for i, l in enumerate(p["launches"]):
        if i % 5 == 0 and l.get("duration_ns") is not None:
            l["duration_ns"] *= 1.2
        if i % 7 == 0:
            l["grid"] = [l["grid"][0] * 2, l["grid"][1], l["grid"][2]]
    p["launches"].reverse()
    large_profiles.dump(os.path.join(t, name + "-old.json"), p)
PY

median() { sort -n | awk '{a[NR] = $1} END {printf "%.2f", a[int((NR + 1) / 2)]}'; }
# one_run FILE ARGS...: "wall cpu rss_kb" of one run, output discarded.
one_run() {
	local f=$1
	shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%e %U %S %M' -o "$T/time" "$GA" "$@" --import "$f" >/dev/null 2>"$T/err" ||
			{ cat "$T/err" >&2; exit 1; }
		awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$T/time"
	else
		local s e
		s=$(date +%s%N)
		"$GA" "$@" --import "$f" >/dev/null 2>"$T/err" || { cat "$T/err" >&2; exit 1; }
		e=$(date +%s%N)
		awk -v a="$s" -v b="$e" 'BEGIN {printf "%.3f - 0\n", (b - a) / 1e9}'
	fi
}
# col N FILE ARGS...: median of field N over REPS runs.
col() {
	local k=$1
	shift
	for _ in $(seq "$REPS"); do one_run "$@"; done >"$T/runs"
	cut -d' ' -f"$k" "$T/runs" | median
}

echo "gpuadvise import benchmark: $(nproc) CPUs, $(uname -m), medians of $REPS runs"
printf '| %-28s | %6s | %7s | %7s | %8s | %7s | %8s |\n' \
	input file 'text s' 'JSON s' 'base s' 'CPU s' 'peak RSS'
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ------------------------------ -------- --------- \
	--------- ---------- --------- ----------
for name in kernels-10000 launches-10000 huge testapp-all; do
	f=$T/$name.json
	for _ in $(seq "$REPS"); do one_run "$f"; done >"$T/text"
	text=$(cut -d' ' -f1 "$T/text" | median)
	cpu=$(cut -d' ' -f2 "$T/text" | median)
	rss=$(cut -d' ' -f3 "$T/text" | sort -n | tail -1)
	json=$(col 1 "$f" --format json)
	base=$(col 1 "$f" --baseline "$T/$name-old.json")
	size=$(wc -c <"$f" | awk '{ if ($1 >= 1e6) printf "%d MB", $1 / 1e6; else printf "%d KB", $1 / 1e3 }')
	rss_mib=$([ "$rss" = 0 ] && echo - || echo "$((rss / 1024)) MiB")
	printf '| %-28s | %6s | %7s | %7s | %8s | %7s | %8s |\n' "$name" "$size" "$text" "$json" \
		"$base" "$cpu" "$rss_mib"
done
