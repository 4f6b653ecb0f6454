# tests/cli/tap.sh: the "ok -" / "not ok -" lines and counters of the
# command-line test scripts (sourced by run.sh, limits.sh, habits.sh,
# harden.sh and nvtx.sh), and their common set-up (cli_setup).
# cli_setup NAME: the environment of a stand-alone test script ($here is
# its directory): SRCDIR, GPUADVISE and FAKECUDA_DIR default to the source
# tree's build, no colours, a private directory $T (removed at exit, made
# writable first) holding the config home and $T/tmp, and no rules
# directory or input limit from the caller's environment.
cli_setup() {
	SRCDIR=${SRCDIR:-$(cd "$here/../.." && pwd)}
	GPUADVISE=${GPUADVISE:-$SRCDIR/build/gpuadvise}
	FAKECUDA_DIR=${FAKECUDA_DIR:-$SRCDIR/build/tests}
	NO_COLOR=1
	export NO_COLOR
	T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-$1.XXXXXX") || exit 1
	trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
	XDG_CONFIG_HOME=$T/config
	export XDG_CONFIG_HOME
	unset GPUADVISE_RULES_DIR GPUADVISE_MAX_INPUT
	mkdir -p "$T/tmp"
}

passed=0
failed=0
skipped=0
rewritten=0

ok() {
	passed=$((passed + 1))
	echo "ok - $*"
}

not_ok() {
	failed=$((failed + 1))
	echo "not ok - $*"
}

skip() {
	skipped=$((skipped + 1))
	echo "ok - # SKIP $*"
}

# show LABEL FILE: the file indented, at most 20 lines and 2000 bytes,
# after a failure.
show() {
	if [ -s "$2" ]; then
		echo "#   $1:"
		head -c 2000 "$2" | head -n 20 | sed 's/^/#     /'
	fi
}

# golden_check GOLD: compare $T/out with the golden file GOLD (relative to
# $SRCDIR).  With UPDATE_GOLDEN set, a golden file that differs (or is
# missing) is rewritten instead: that compares nothing, so it is no pass,
# and the run ends failing (tap_end) until it is run again without it.
golden_check() {
	gold=$1
	if [ -f "$SRCDIR/$gold" ] && cmp -s "$T/out" "$SRCDIR/$gold"; then
		ok "golden $gold: same bytes"
	elif [ -n "${UPDATE_GOLDEN:-}" ]; then
		mkdir -p "$(dirname "$SRCDIR/$gold")"
		cp "$T/out" "$SRCDIR/$gold"
		rewritten=$((rewritten + 1))
		echo "not ok - golden $gold: REWRITTEN (UPDATE_GOLDEN), not compared"
	elif [ ! -f "$SRCDIR/$gold" ]; then
		not_ok "golden $gold: missing (UPDATE_GOLDEN=1 $0 writes it)"
	else
		not_ok "golden $gold: report differs (UPDATE_GOLDEN=1 $0 rewrites it; review the diff)"
		diff -u "$SRCDIR/$gold" "$T/out" | head -40 | sed 's/^/#   /'
	fi
}

# The summary; its status is the script's: 1 if any check failed or a
# golden file was rewritten.
tap_end() {
	echo "$passed passed, $failed failed"
	[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
	if [ "$rewritten" -gt 0 ]; then
		echo "# $rewritten golden file(s) rewritten by UPDATE_GOLDEN: review git diff, then"
		echo "# run again without UPDATE_GOLDEN; until then this run does not pass"
	fi
	[ "$failed" = 0 ] && [ "$rewritten" = 0 ]
}

# timed_run SECONDS ARGS...: gpuadvise from $SRCDIR with a time limit and no
# standard input; stdout in $T/out, stderr in $T/err, status in $rc, wall
# time in $secs.
timed_run() {
	limit=$1
	shift
	t0=$(date +%s%N)
	(cd "$SRCDIR" && timeout "$limit" "$GPUADVISE" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
}

# check DESC WANT_STATUS STREAM PATTERN: the last run (status $rc, output in
# $T/out and $T/err) exited WANT_STATUS, no sanitizer reported, and STREAM
# (out or err) matches the grep -E PATTERN ('' for none).  A timed run
# shows its time.
check() {
	desc=$1 want=$2 stream=$3 pat=$4
	why=
	if [ "$rc" = 124 ] && [ "$want" != 124 ]; then
		why="timed out"
	elif grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/err"; then
		why="sanitizer report"
	elif [ "$rc" != "$want" ]; then
		why="exit status $rc, want $want"
	elif [ -n "$pat" ] && ! grep -Eq -e "$pat" "$T/$stream"; then
		why="no /$pat/ in std$stream"
	fi
	if [ -z "$why" ]; then
		ok "$desc${secs:+ ($secs s)}"
	else
		not_ok "$desc: $why"
		show stdout "$T/out"
		show stderr "$T/err"
	fi
}

# expect DESC CONDITION...: a shell test.
expect() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
