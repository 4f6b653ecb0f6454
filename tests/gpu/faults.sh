#!/bin/sh
# GPU suite, fault injection (issue 23): SIGTERM, SIGINT and SIGKILL sent to
# gpuadvise and to the profiled program at random points of real runs, of
# the test application and of a PyTorch script.  After each:
#   - the status is the documented one (gpuadvise(1), EXIT STATUS, SIGNALS):
#     128 + N for signal N to gpuadvise or to the program, 137 when
#     gpuadvise itself got SIGKILL, 0 when the run had ended before the
#     signal came;
#   - no run directory is left under the private TMPDIR (except after
#     SIGKILL to gpuadvise, which the man page says leaves it), and no
#     temporary output file (*.tmp.*);
#   - the program is not running (after SIGKILL to gpuadvise, within 5 s:
#     PR_SET_PDEATHSIG);
#   - the profile written with -o, when there is one, is JSON that
#     gpuadvise --import reads; it is there whenever kernels were reported.
# Exits 77 (skipped) without a usable NVIDIA GPU; the PyTorch part is
# skipped without torch (or without CUDA in it).  About 1 to 2 minutes.
#
# Environment (meson test sets GPUADVISE and BUILDDIR):
#   GPUADVISE     the gpuadvise binary   BUILDDIR  the build directory
#   FAULT_SEED    the random seed (printed; give it again to replay a run)
#   FAULT_REPEAT  --repeat of the test application (default 20)
set -u
GA=${GPUADVISE:-build/gpuadvise}
BUILDDIR=${BUILDDIR:-$(dirname "$GA")}
APP="$BUILDDIR/kernels/gpuadvise-testapp"
HERE=$(cd "$(dirname "$0")" && pwd)
SEED=${FAULT_SEED:-$(date +%s)}
REPEAT=${FAULT_REPEAT:-20}

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no NVIDIA GPU here: skipping the fault tests"
	exit 77
fi
if [ ! -x "$APP" ]; then
	echo "test application $APP not built: skipping"
	exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-faults.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR" "$T/out"
fails=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; fails=$((fails + 1)); }
echo "# FAULT_SEED=$SEED"

# The program is started through this wrapper, which writes its pid and
# execs the real program (the pid stays the same).
cat >"$T/wrap.sh" <<'EOF'
#!/bin/sh
echo $$ >"$FAULT_PIDFILE"
exec "$@"
EOF
chmod +x "$T/wrap.sh"
FAULT_PIDFILE=$T/program.pid
export FAULT_PIDFILE

# A number in [lo, hi) from the seeded sequence, the $calls-th (which the
# caller counts: this runs in a subshell).
calls=0
random_between() {
	awk -v s="$SEED" -v n="$calls" -v lo="$1" -v hi="$2" \
		'BEGIN { srand(s); for (i = 0; i < n; i++) r = rand(); printf "%.2f", lo + r * (hi - lo) }'
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# running PID: the process exists and is not a zombie.
running() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] &&
		[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# wait_gone PID SECONDS: until PID is no longer running; 1 if it still is.
wait_gone() {
	i=0
	while running "$1"; do
		[ $i -ge $(($2 * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 0
}

# start OUT ARGS...: gpuadvise $OPTS -o OUT on the program ARGS, in the
# background ($gp).  A background job of a script starts with SIGINT
# ignored, and gpuadvise keeps an ignored signal ignored (gpuadvise(1),
# SIGNALS): the default is set back first, as on a terminal.
start() {
	o=$1
	shift
	# shellcheck disable=SC2086
	$DEFAULT_INT "$GA" $OPTS -f -o "$o" "$T/wrap.sh" "$@" >/dev/null 2>"$T/err" </dev/null &
	gp=$!
}
# env(1) of coreutils 8.31 or later resets SIGINT and execs at once; the
# fallback is python3 (a plain binary: a pyenv shim is a shell script for a
# while, with SIGINT still ignored).
if env --default-signal=INT true 2>/dev/null; then
	DEFAULT_INT="env --default-signal=INT"
else
	printf 'import os, signal, sys\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\n%s\n' \
		'os.execv(sys.argv[1], sys.argv[1:])' >"$T/default-int.py"
	DEFAULT_INT="python3 $T/default-int.py"
fi

# reference NAME ARGS...: one whole run; sets $ref_secs.
reference() {
	name=$1
	shift
	rm -f "$FAULT_PIDFILE"
	t0=$(now)
	# shellcheck disable=SC2086
	timeout 300 "$GA" $OPTS -f -o "$T/out/ref-$name.json" "$T/wrap.sh" "$@" \
		>/dev/null 2>"$T/ref.err"
	st=$?
	ref_secs=$(elapsed "$t0")
	if [ $st -eq 0 ]; then
		pass "$name: reference run ($ref_secs s)"
	else
		fail "$name: reference run exits 0 (got $st)"
		sed 's/^/    /' "$T/ref.err"
	fi
	rm -rf "${TMPDIR:?}"/* "${T:?}/out"/*
}

# fault NAME TARGET SIG ARGS...: run ARGS under gpuadvise with -o, send SIG
# to TARGET (gpuadvise or program) after a random delay within the
# reference run's time, and check what is left.
fault() {
	name=$1 target=$2 sig=$3
	shift 3
	out=$T/out/$name-$target-$sig.json
	rm -f "$FAULT_PIDFILE"
	rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
	calls=$((calls + 1))
	delay=$(random_between 0.05 "$(awk -v r="$ref_secs" 'BEGIN { print r * 0.9 }')")
	start "$out" "$@"
	sleep "$delay"
	# The program's pid, once it has started (at most 10 s more).
	i=0
	while [ "$target" = program ] && [ ! -s "$FAULT_PIDFILE" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	prog=$(cat "$FAULT_PIDFILE" 2>/dev/null)
	if [ "$target" = gpuadvise ]; then
		kill -"$sig" "$gp" 2>/dev/null
	elif [ -n "$prog" ]; then
		kill -"$sig" "$prog" 2>/dev/null
	fi
	# gpuadvise must end: at most 60 s (5 s grace, the report, the driver).
	i=0
	while running "$gp" && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if running "$gp"; then
		kill -KILL "$gp"
		wait "$gp"
		fail "$name: SIG$sig to $target at $delay s: gpuadvise still running after 60 s"
		sed 's/^/    /' "$T/err"
		return
	fi
	wait "$gp"
	st=$?
	prog=${prog:-$(cat "$FAULT_PIDFILE" 2>/dev/null)}
	desc="$name: SIG$sig to $target at $delay s"
	case $sig in TERM) n=15 ;; INT) n=2 ;; KILL) n=9 ;; esac
	why=
	# The status.
	if [ $st -eq 0 ] && ! grep -q 'interrupted\|killed by signal' "$T/err"; then
		desc="$desc (the run had ended)"
	elif [ $st -ne $((128 + n)) ]; then
		why="$why status $st, want $((128 + n));"
	fi
	# The program.
	if [ -n "$prog" ] && ! wait_gone "$prog" 5; then
		why="$why program $prog still running;"
		kill -KILL "$prog" 2>/dev/null
	fi
	# Run directories and temporary files.
	left=$(ls -A "$TMPDIR")
	if [ -n "$left" ] && [ "$target" = gpuadvise ] && [ "$sig" = KILL ]; then
		desc="$desc (run directory left, as documented)"
	elif [ -n "$left" ]; then
		why="$why left in TMPDIR: $left;"
	fi
	for f in "$T/out"/*.tmp.*; do
		[ -e "$f" ] && why="$why temporary output file $(basename "$f");"
	done
	# The profile.
	if [ -e "$out" ]; then
		if ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$out" 2>/dev/null; then
			why="$why -o is not valid JSON;"
		elif ! "$GA" --import "$out" >/dev/null 2>"$T/import.err"; then
			why="$why --import of -o fails: $(head -c 300 "$T/import.err");"
		fi
	elif grep -q 'profiled before that are reported' "$T/err"; then
		why="$why kernels reported but no -o written;"
	fi
	if [ -z "$why" ]; then
		pass "$desc: status $st, nothing left"
	else
		fail "$desc:$why"
		sed 's/^/    /' "$T/err" | head -20
	fi
	rm -f "$out"
}

# Each workload: SIGTERM, SIGINT and SIGKILL to gpuadvise and to the
# program.
faults() {
	name=$1
	shift
	for target in gpuadvise program; do
		for sig in TERM INT KILL; do
			fault "$name" "$target" "$sig" "$@"
		done
	done
}

OPTS=
reference testapp "$APP" --repeat "$REPEAT"
faults testapp "$APP" --repeat "$REPEAT"

if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
	>/dev/null 2>&1; then
	# At most 40 launches profiled: the rest of the script runs at full
	# speed, and a signal may come in either part.
	OPTS="-c 40"
	reference pytorch python3 "$HERE/pytorch_workload.py"
	faults pytorch python3 "$HERE/pytorch_workload.py"
else
	echo "ok - # SKIP pytorch: torch with CUDA is not available"
fi

echo "$fails failed"
[ $fails -eq 0 ]
