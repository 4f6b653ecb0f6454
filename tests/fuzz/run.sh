#!/bin/sh
# tests/fuzz/run.sh BUILD_DIR [SECONDS]: replay the regression inputs through
# each libFuzzer harness, then fuzz each one for SECONDS (default 60; 0 only
# replays).  Fails on any crash, leak, sanitizer report or timeout; the
# input that caused it is left in $FUZZ_ARTIFACTS (default
# BUILD_DIR/fuzz-artifacts) - copy it to tests/fuzz/regressions/HARNESS/
# after fixing the bug (docs/FUZZING.md).
#
# BUILD_DIR must be configured with clang and -Dfuzz=true:
#     CC=clang meson setup build-fuzz -Dfuzz=true && ninja -C build-fuzz
#
# Environment:
#   FUZZ_HARNESSES  which harnesses (default: "expr rules profile")
#   FUZZ_WORK       keep the grown corpora in FUZZ_WORK/HARNESS (default: a
#                   temporary directory, removed at the end); the seeds in
#                   tests/fuzz/corpus are only read
#   FUZZ_ARTIFACTS  where crash inputs and logs go
#   FUZZ_JOBS       parallel fuzzing processes per harness (default 1: no
#                   fork mode)
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [SECONDS]" >&2
	exit 2
fi
B=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no build directory $1" >&2; exit 2; }
S=${2:-60}
case $S in '' | *[!0-9]*) echo "$0: SECONDS must be a whole number, not '$S'" >&2; exit 2 ;; esac
ART=${FUZZ_ARTIFACTS:-$B/fuzz-artifacts}
JOBS=${FUZZ_JOBS:-1}
mkdir -p "$ART" || exit 2
ART=$(cd "$ART" && pwd)
if [ -n "${FUZZ_WORK:-}" ]; then
	W=$FUZZ_WORK
	mkdir -p "$W" || exit 2
else
	W=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-fuzz.XXXXXX") || exit 2
	trap 'rm -rf "$W"' EXIT INT TERM
fi
# Leaks are bugs too; a sanitizer report aborts so libFuzzer records it.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS

failed=0
for h in ${FUZZ_HARNESSES:-expr rules profile}; do
	exe=$B/tests/fuzz/fuzz_$h
	if [ ! -x "$exe" ]; then
		echo "not ok - fuzz_$h: $exe is not built (CC=clang meson setup BUILD_DIR -Dfuzz=true)"
		failed=$((failed + 1))
		continue
	fi

	# Every input that ever crashed a harness, once each.
	set --
	for f in "$here/regressions/$h"/*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	if [ $# -gt 0 ]; then
		if "$exe" -timeout=10 "$@" >"$ART/$h-regressions.log" 2>&1; then
			echo "ok - fuzz_$h: $# regression inputs replayed"
		else
			echo "not ok - fuzz_$h: a regression input fails again:"
			grep -E 'ERROR|Running|runtime error|check failed' "$ART/$h-regressions.log" |
				tail -20 | sed 's/^/#   /'
			failed=$((failed + 1))
			continue
		fi
	fi
	[ "$S" -gt 0 ] || continue

	mkdir -p "$W/$h"
	extra=
	[ -f "$here/$h.dict" ] && extra=-dict=$here/$h.dict
	[ "$JOBS" -gt 1 ] && extra="$extra -fork=$JOBS"
	start=$(date +%s)
	# shellcheck disable=SC2086
	if "$exe" -max_total_time="$S" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$ART/$h-" $extra "$W/$h" "$here/corpus/$h" \
		>"$ART/$h.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$ART/$h.log" | tail -1)
		echo "ok - fuzz_$h: $(( $(date +%s) - start )) s clean, ${runs:-?} runs, corpus $(ls "$W/$h" | wc -l) files"
	else
		echo "not ok - fuzz_$h: crashed after $(( $(date +%s) - start )) s; log $ART/$h.log"
		grep -E '^==[0-9]+==ERROR|SUMMARY|runtime error|check failed|Test unit written' \
			"$ART/$h.log" | head -20 | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
done
[ "$failed" = 0 ]
