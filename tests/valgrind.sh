#!/bin/sh
# tests/valgrind.sh: gpuadvise under valgrind's memcheck: no invalid reads
# or writes, no use of uninitialised memory, no definite or indirect leaks.
# Runs the import of the recorded test program in every report format and
# --check-rules on the shipped rules (and, when built, the fuzz replay
# programs on their regression inputs).  Exits 77 (skipped) without
# valgrind, or when the binary is built with sanitizers (SANITIZED=1),
# which valgrind cannot run.
#
# Environment (tests/meson.build sets them): GPUADVISE, SRCDIR, SANITIZED.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRCDIR=${SRCDIR:-$(cd "$here/.." && pwd)}
GPUADVISE=${GPUADVISE:-$SRCDIR/build/gpuadvise}

if ! command -v valgrind >/dev/null 2>&1; then
	echo "# SKIP valgrind is not installed"
	exit 77
fi
if [ -n "${SANITIZED:-}" ]; then
	echo "# SKIP sanitized build: valgrind cannot run it"
	exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-vg.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
XDG_CONFIG_HOME=$T/config
export XDG_CONFIG_HOME
unset GPUADVISE_RULES_DIR

failed=0
vg() {
	desc=$1
	shift
	if (cd "$SRCDIR" && valgrind -q --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		"$@") >"$T/out" 2>"$T/err" </dev/null; then
		rc=0
	else
		rc=$?
	fi
	# 99: valgrind found errors; 128 and above: killed by a signal
	# (an abort, for instance), which gpuadvise never exits with.
	if [ "$rc" -ge 99 ] || grep -q '^==[0-9]*== ' "$T/err"; then
		failed=$((failed + 1))
		echo "not ok - valgrind $desc (exit $rc)"
		sed 's/^/#   /' "$T/err" | head -60
	else
		echo "ok - valgrind $desc (exit $rc)"
	fi
}

for fmt in text json markdown; do
	vg "gpuadvise --format $fmt --import testapp-all.json" \
		"$GPUADVISE" --format "$fmt" --import tests/fixtures/recorded/testapp-all.json
done
vg "gpuadvise --format sarif --import testapp-all.json --baseline strided-was-coalesced.json" \
	"$GPUADVISE" --format sarif --import tests/fixtures/recorded/testapp-all.json \
	--baseline tests/fixtures/baseline/strided-was-coalesced.json
vg "gpuadvise --format sarif --import demo-coalescing-stalls.json --import demo-divergence-source.json" \
	"$GPUADVISE" --format sarif --import tests/fixtures/recorded/demo-coalescing-stalls.json \
	--import tests/fixtures/recorded/demo-divergence-source.json
vg "gpuadvise --verbose --per-launch --import testapp-all.json -o FILE --log-file FILE" \
	"$GPUADVISE" --verbose --per-launch --import tests/fixtures/recorded/testapp-all.json \
	-o "$T/export.json" --log-file "$T/report.txt"
vg "gpuadvise --check-rules rules" "$GPUADVISE" --check-rules rules
vg "gpuadvise --check-rules tests/fixtures/rules-bad" \
	"$GPUADVISE" --check-rules tests/fixtures/rules-bad

# The fuzz replay programs, next to the binary in a meson build.
fuzzdir=$(dirname "$GPUADVISE")/tests/fuzz
for h in expr rules profile; do
	exe=$fuzzdir/fuzz_$h-replay
	[ -x "$exe" ] || continue
	vg "fuzz_$h-replay regressions" "$exe" "tests/fuzz/regressions/$h"
done

[ "$failed" = 0 ]
