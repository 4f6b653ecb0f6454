#!/bin/bash
# Ranks benchmark (no GPU): how long `gpuadvise --import prof-*.json` takes
# and how much memory it holds for the per-rank profiles of a data-parallel
# job, 64, 256 and 1024 ranks.  A benchmark, not a test: it checks nothing
# and fails only when gpuadvise does.
# Usage: bench/ranks-merge.sh [BUILD_DIR] [ROUNDS]   (defaults: build, 3)
# The rank files are tests/cli/make_ranks.py's (8 ranks a host, a
# straggler, a finding planted on a tenth of the ranks): "light" as the
# tests make them (one measured kernel and a timeline of 600 kernel runs a
# rank), "heavy" with the nine measured kernels of the test program as
# well.  One row per job: the files' total size, then medians of ROUNDS
# runs of the text report: wall seconds, CPU seconds (user + system), peak
# RSS (/usr/bin/time -v's maximum resident set size).
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/.." && pwd)
B=$(cd "${1:-$SRC/build}" && pwd) || exit 2
ROUNDS=${2:-3}
GA=$B/gpuadvise
[ -x "$GA" ] || { echo "bench/ranks-merge.sh: no $GA (build first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/ranks-merge.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-ranks.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export NO_COLOR=1 GPUADVISE_RULES_DIR=$SRC/rules

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "gpuadvise ranks benchmark: $(nproc) CPUs, $(uname -m), medians of $ROUNDS rounds"
printf '| %-5s | %5s | %8s | %6s | %6s | %8s |\n' ranks files size 'wall s' 'CPU s' 'peak RSS'
printf '|%s|%s|%s|%s|%s|%s|\n' ------- ------- ---------- -------- -------- ----------
for kind in light heavy; do
	for n in 64 256 1024; do
		d=$T/$kind-$n
		extra=()
		[ "$kind" = heavy ] && extra=(--heavy)
		python3 "$SRC/tests/cli/make_ranks.py" "$d" "$n" --straggler $((n / 3)) \
			--planted $((n / 10)) "${extra[@]}" >/dev/null || exit 1
		: >"$T/runs"
		for _ in $(seq "$ROUNDS"); do
			(cd "$d" && /usr/bin/time -v "$GA" --import prof-*.json >/dev/null 2>"$T/err") ||
				{ cat "$T/err" >&2; exit 1; }
			awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0
			                for (i = 1; i <= n; i++) w = w * 60 + p[i] }
			            /User time/ { u = $2 } /System time/ { s = $2 }
			            /Maximum resident/ { m = $2 }
			            END { printf "%.2f %.2f %d\n", w, u + s, m }' "$T/err" >>"$T/runs"
		done
		wall=$(cut -d' ' -f1 "$T/runs" | median)
		cpu=$(cut -d' ' -f2 "$T/runs" | median)
		rss=$(cut -d' ' -f3 "$T/runs" | median)
		size=$(du -sb "$d" | awk '{ if ($1 >= 1e6) printf "%d MB", $1 / 1e6; else printf "%d KB", $1 / 1e3 }')
		printf '| %5s | %5s | %8s | %6s | %6s | %4s MiB |\n' "$n" "$kind" "$size" "$wall" "$cpu" \
			"$((rss / 1024))"
		rm -rf "$d"
	done
done
