#!/bin/sh
# tests/cli/harden.sh: gpuadvise against a hostile but fair user (issue 23).
#   - signals: SIGTERM, SIGHUP, SIGINT (twice), `timeout` sent to gpuadvise
#     while it runs a program: status 128 + N, no run directory left, the
#     program and its children gone (not running on under init);
#   - a run that profiles no launch (the qsort of no launches, UBSan), and
#     one whose program fails where the driver sees no GPU;
#   - endless input: --import and --baseline of /dev/zero and /dev/urandom,
#     the input limit (GPUADVISE_MAX_INPUT), a FIFO with no writer;
#   - rule folders: a FIFO named *.yaml, an empty folder, an unknown name in
#     'when' (FILE:LINE:COL);
#   - terminal controls in an imported profile: none reaches stdout in the
#     text, Markdown, JUnit or HTML report;
#   - one file named by two outputs, or by an output and an input; an
#     empty output name;
#   - negative durations and counts in a profile.
# Programs run through a stand-in driver library (fakecuda.c, built by
# meson into FAKECUDA_DIR), so that this needs no GPU.  Prints "ok -" or
# "not ok -" per check and exits 1 if any failed.
#
# Environment (tests/meson.build sets them): GPUADVISE, SRCDIR, FAKECUDA_DIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
cli_setup harden
REC=$SRCDIR/tests/fixtures/recorded

# run SECONDS ARGS...: timed_run (tap.sh).
run() {
	timed_run "$@"
}

# check and expect: tap.sh.

# ---- signals ---------------------------------------------------------

# The program: writes its pid (and its child's) and sleeps; prog-deaf.sh
# also ignores SIGINT, SIGTERM and SIGHUP.
mkdir -p "$T/bin" "$T/tmp"
cat >"$T/bin/prog.sh" <<'EOF'
#!/bin/sh
echo $$ >"$PIDS/prog"
sleep 60 &
echo $! >"$PIDS/child"
wait
EOF
cat >"$T/bin/prog-deaf.sh" <<'EOF'
#!/bin/sh
trap '' INT TERM HUP
echo $$ >"$PIDS/prog"
while :; do sleep 0.2; done
EOF
printf '#!/bin/sh\nexit 3\n' >"$T/bin/fail.sh"
printf '#!/bin/sh\nkill -SEGV $$\n' >"$T/bin/crash.sh"
chmod +x "$T/bin/"*.sh

PIDS=$T/pids
export PIDS
# env(1) of coreutils 8.31 or later resets the signals and execs at once.
# SIGHUP and SIGTERM too: under nohup SIGHUP comes ignored, and gpuadvise
# keeps a signal ignored at its start ignored (by design), so the SIGHUP
# check would hang for the test's environment, not for gpuadvise's.
if env --default-signal=INT,HUP,TERM true 2>/dev/null; then
	DEFAULT_INT="env --default-signal=INT,HUP,TERM"
else
	printf 'import os, signal, sys\nfor s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):\n    signal.signal(s, signal.SIG_DFL)\n%s\n' \
		'os.execv(sys.argv[1], sys.argv[1:])' >"$T/default-int.py"
	DEFAULT_INT="python3 $T/default-int.py"
fi

# start PROG ARGS...: gpuadvise on a program, in the background with a
# private TMPDIR and the stand-in driver; waits until the program has
# written its pid (at most 10 s).  $gp: gpuadvise's pid.
start() {
	rm -rf "$PIDS" && mkdir -p "$PIDS"
	rm -rf "$T/tmp" && mkdir -p "$T/tmp"
	# A background job of a script starts with SIGINT ignored (and
	# gpuadvise, like any program, keeps a signal ignored): the default
	# back, as on a terminal.
	# shellcheck disable=SC2086
	TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR $DEFAULT_INT \
		"$GPUADVISE" "$@" >"$T/out" 2>"$T/err" </dev/null &
	gp=$!
	t0=$(date +%s%N)
	for _ in $(seq 100); do
		[ -s "$PIDS/prog" ] && break
		sleep 0.1
	done
}

# finish: wait for gpuadvise (at most 30 s: then SIGKILL and status
# "hung"); status in $rc, seconds since $t1 in $secs.
finish() {
	for _ in $(seq 300); do
		kill -0 "$gp" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$gp" 2>/dev/null; then
		kill -KILL "$gp"
		wait "$gp"
		rc=hung
	else
		wait "$gp"
		rc=$?
	fi
	secs=$(awk -v a="$t1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
}

# left_behind: what a run left: run directories, and the program or its
# child still running.
left_behind() {
	found=
	for d in "$T/tmp"/gpuadvise-run-*; do
		[ -e "$d" ] && found="$found run directory $(basename "$d");"
	done
	for f in prog child; do
		if [ -s "$PIDS/$f" ] && kill -0 "$(cat "$PIDS/$f")" 2>/dev/null; then
			found="$found $f $(cat "$PIDS/$f") still running;"
			kill -KILL "$(cat "$PIDS/$f")" 2>/dev/null
		fi
	done
	echo "$found"
}

# Is this gpuadvise able to run a program at all (built with CUPTI)?
TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR "$GPUADVISE" /bin/true >"$T/out" 2>"$T/err"
if grep -q 'built without CUPTI' "$T/err"; then
	skip "signals: this gpuadvise was built without CUPTI"
else
	for sig in TERM:15 HUP:1 INT:2; do
		n=${sig#*:}
		sig=${sig%:*}
		start "$T/bin/prog.sh"
		t1=$(date +%s%N)
		kill -"$sig" "$gp"
		finish
		check "SIG$sig to gpuadvise -> $((128 + n))" $((128 + n)) err \
			"interrupted by signal $n"
		lb=$(left_behind)
		expect "SIG$sig: nothing left behind:$lb" [ -z "$lb" ]
	done

	# A program that ignores the signal: SIGKILL after the grace time.
	start "$T/bin/prog-deaf.sh"
	t1=$(date +%s%N)
	kill -TERM "$gp"
	finish
	check "SIGTERM, program ignores it -> 143 after the grace time" 143 err ''
	expect "... within 10 s ($secs s)" awk -v s="$secs" 'BEGIN { exit !(s >= 4 && s < 10) }'
	lb=$(left_behind)
	expect "... nothing left behind:$lb" [ -z "$lb" ]

	# A second SIGINT: at once.
	start "$T/bin/prog-deaf.sh"
	kill -INT "$gp"
	sleep 0.5
	t1=$(date +%s%N)
	kill -INT "$gp"
	finish
	check "second SIGINT -> 130" 130 err ''
	expect "... at once ($secs s after it)" awk -v s="$secs" 'BEGIN { exit !(s < 2) }'
	lb=$(left_behind)
	expect "... nothing left behind:$lb" [ -z "$lb" ]

	# timeout(1): SIGTERM after 2 s; its own status is 124.
	rm -rf "$PIDS" "$T/tmp" && mkdir -p "$PIDS" "$T/tmp"
	t1=$(date +%s%N)
	TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR timeout 2 "$GPUADVISE" "$T/bin/prog.sh" \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	secs=$(awk -v a="$t1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	check "timeout 2 gpuadvise PROG" 124 err 'interrupted by signal 15'
	lb=$(left_behind)
	expect "... nothing left behind:$lb" [ -z "$lb" ]

	# No launch profiled: no sort of no launches (qsort(NULL, 0) is
	# undefined; UBSan reports it in a sanitized build).
	TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR run 30 /bin/true
	check "/bin/true profiles no launch -> 4" 4 err 'did not initialise CUDA'
	# ... nor says that kernels profiled before are reported.
	TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR run 30 "$T/bin/fail.sh"
	check "a failing program, no launch -> its status" 3 err 'exited with status 3'
	expect "... no 'kernels profiled before that are reported'" \
		sh -c "! grep -q 'profiled before that' '$T/err'"
	# A driver that sees no GPU, and a program that crashed: both said.
	FAKECUDA_DEVICES=0 TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR run 30 "$T/bin/crash.sh"
	check "no usable GPU and a crash -> 4, both said" 4 err \
		'no usable GPU.*killed by signal 11'
	FAKECUDA_DEVICES=0 TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR run 30 "$T/bin/fail.sh"
	check "no usable GPU and a failure -> 4, both said" 4 err \
		'no usable GPU.*exited with status 3'
	expect "no run directory left by these" [ -z "$(ls "$T/tmp")" ]

	# A launcher killed with SIGKILL (torchrun, say) whose workers run in
	# sessions of their own: gpuadvise stops them (SIGTERM), waits for
	# them, writes its report, and leaves nothing behind.
	printf '%s\n' '#!/bin/sh' \
		"setsid sleep 300 & echo \$! >'$PIDS/prog'" \
		"setsid sleep 301 & echo \$! >'$PIDS/child'" \
		'sleep 0.5' 'kill -9 $$' >"$T/bin/launcher.sh"
	chmod +x "$T/bin/launcher.sh"
	rm -rf "${PIDS:?}" "${T:?}/tmp" && mkdir -p "$PIDS" "$T/tmp"
	t1=$(date +%s%N)
	TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR run 30 --format json --log-file "$T/l.json" \
		"$T/bin/launcher.sh"
	secs=$(awk -v a="$t1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	check "a launcher killed with SIGKILL, its workers in their own sessions -> 137" 137 err \
		'killed by signal 9'
	expect "... its workers stopped at once, not waited out ($secs s)" \
		awk -v s="$secs" 'BEGIN { exit !(s < 5) }'
	lb=$(left_behind)
	expect "... nothing left behind:$lb" [ -z "$lb" ]
	expect "... the report written all the same" \
		python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$T/l.json"

	# gpuadvise itself killed with SIGKILL: the program gets SIGTERM, which
	# a launcher passes on to its workers (it catches it here).
	printf '%s\n' '#!/bin/bash' "trap 'echo term >\"$PIDS/term\"; exit 0' TERM" \
		"echo \$\$ >'$PIDS/prog'" 'while :; do sleep 0.1; done' >"$T/bin/catcher.sh"
	chmod +x "$T/bin/catcher.sh"
	rm -rf "${PIDS:?}" "${T:?}/tmp" && mkdir -p "$PIDS" "$T/tmp"
	TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR "$GPUADVISE" "$T/bin/catcher.sh" \
		>/dev/null 2>&1 </dev/null &
	ga=$!
	for _ in $(seq 50); do [ -s "$PIDS/prog" ] && break; sleep 0.1; done
	kill -KILL "$ga"
	wait "$ga" 2>/dev/null
	for _ in $(seq 30); do [ -s "$PIDS/term" ] && break; sleep 0.1; done
	expect "gpuadvise killed with SIGKILL: the program gets SIGTERM" [ -s "$PIDS/term" ]
	for _ in $(seq 30); do kill -0 "$(cat "$PIDS/prog")" 2>/dev/null || break; sleep 0.1; done
	lb=$(left_behind)
	rm -rf "$T/tmp"/gpuadvise-run-*
	expect "... and ends:$lb" sh -c "! echo '$lb' | grep -q 'prog'"
fi

# ---- endless and large input -----------------------------------------

for dev in /dev/zero /dev/urandom; do
	run 30 --import $dev
	check "--import $dev -> 2, the limit named" 2 err \
		"$dev: larger than the input limit of 256 MiB \(set GPUADVISE_MAX_INPUT"
	run 30 --import "$REC/testapp-all.json" --baseline $dev
	check "--baseline $dev -> 2" 2 err "larger than the input limit"
done
GPUADVISE_MAX_INPUT=64K run 30 --import "$REC/testapp-all.json"
check "a profile over GPUADVISE_MAX_INPUT=64K -> 2" 2 err 'input limit of 64 KiB'
GPUADVISE_MAX_INPUT=1G run 30 --import "$REC/testapp-all.json"
check "... read with GPUADVISE_MAX_INPUT=1G" 0 out 'kernels'
GPUADVISE_MAX_INPUT=lots run 30 --import "$REC/testapp-all.json"
check "GPUADVISE_MAX_INPUT=lots -> 2" 2 err "GPUADVISE_MAX_INPUT: expected a size"
mkfifo "$T/fifo.json"
run 10 --import "$T/fifo.json"
check "--import of a FIFO with no writer ends -> 2" 2 err 'invalid JSON'

# ---- rule folders ----------------------------------------------------

mkdir "$T/rules-fifo" && cp "$SRCDIR"/rules/*.yaml "$T/rules-fifo/" &&
	mkfifo "$T/rules-fifo/zz-fifo.yaml"
run 10 --check-rules "$T/rules-fifo"
check "a FIFO named *.yaml in --check-rules DIR -> 3, named" 3 err \
	'zz-fifo\.yaml: error: a FIFO, not a regular file: skipped'
run 10 -r "$T/rules-fifo" --list-rules
check "... and in -r DIR -> 3" 3 err 'zz-fifo\.yaml: error: a FIFO'
mkdir "$T/rules-empty"
run 10 --check-rules "$T/rules-empty"
check "--check-rules on an empty folder -> 3" 3 err 'no rule files \(\*\.yaml\)'
mkdir "$T/rules-unknown"
cat >"$T/rules-unknown/r.yaml" <<'EOF'
id: unknown-name
title: A rule with an unknown name
class: memory
checklist: 3
severity: low
speedup: [1, 2]
when: |
  sm > 10 and
    no_such_metric > 3
estimate: 0.1
fix: f
example: e
explain: x
EOF
run 10 --check-rules "$T/rules-unknown"
check "unknown name in a block 'when' -> FILE:LINE:COL of the name" 3 err \
	"r\.yaml:9:5: error: rule 'unknown-name': unknown name 'no_such_metric' in 'when'"
sed -i 's/^when: |$/when: sm > 10 and no_such_metric > 3/; /^  sm > 10 and$/d; /^    no_such_metric > 3$/d' \
	"$T/rules-unknown/r.yaml"
run 10 --check-rules "$T/rules-unknown"
check "unknown name in a plain 'when' -> FILE:LINE:COL" 3 err \
	"r\.yaml:7:19: error: rule 'unknown-name': unknown name 'no_such_metric'"

# ---- terminal controls in a profile ----------------------------------

python3 - "$REC/testapp-all.json" "$T" <<'PY' || not_ok "making the hostile profiles"
import json, sys
p = json.load(open(sys.argv[1]))
evil = "\x1b[2J\rALL CLEAR\x07\u202eevil\u2066\x9b"
for l in p["launches"]:
    l["name"] = evil + l["name"]
p["device"]["name"] = "GPU\x1b]0;title\x07"
p["collection"]["note"] = "note\x1b[2J\rhere"
json.dump(p, open(sys.argv[2] + "/evil.json", "w"))
q = json.load(open(sys.argv[1]))
q["launches"][0]["duration_ns"] = -1
json.dump(q, open(sys.argv[2] + "/negative.json", "w"))
q = json.load(open(sys.argv[1]))
q["launches"][0]["values"]["dram__bytes_read.sum"] = -4096
json.dump(q, open(sys.argv[2] + "/negative-count.json", "w"))
PY
for fmt in text markdown junit html; do
	run 30 --import "$T/evil.json" --format $fmt --verbose
	check "--format $fmt of a profile with terminal controls" 0 out 'x1b\[2J'
	bad=$(python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
raw = {"ESC": b"\x1b", "CR": b"\r", "BEL": b"\x07", "U+202E": "\u202e".encode(),
       "U+2066": "\u2066".encode(), "U+009B": "\x9b".encode()}
print(" ".join(k for k, v in raw.items() if v in d))' "$T/out")
	expect "... no control reaches stdout: ${bad:-none}" [ -z "$bad" ]
done
run 30 --import "$T/evil.json" --color=always
bad=$(python3 -c '
import re, sys
d = open(sys.argv[1], "rb").read()
d = re.sub(rb"\x1b\[[0-9;]*m", b"", d)   # the report'"'"'s own colours
print("raw" if re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", d) else "")' "$T/out")
expect "--color=always: only the report's own colours: ${bad:-none}" [ -z "$bad" ]

# ---- negative values -------------------------------------------------

run 30 --import "$T/negative.json"
check "a negative duration_ns -> 2, the field named" 2 err \
	'launches\[0\]\.duration_ns: -1 is negative'
run 30 --import "$T/negative-count.json"
check "a negative count -> 2, the field named" 2 err \
	'values\["dram__bytes_read\.sum"\]: -4096 is negative'

# ---- outputs ---------------------------------------------------------

cd "$T" || exit 1
run 30 --import "$REC/testapp-all.json" -o "$T/same.json" --log-file "$T/same.json"
check "-o F --log-file F -> 2" 2 err 'are the same file'
expect "... nothing written" [ ! -e "$T/same.json" ]
mkdir -p "$T/sub"
run 30 --import "$REC/testapp-all.json" -o "$T/same.json" --log-file "$T/sub/../same.json"
check "-o F --log-file DIR/../F -> 2" 2 err 'are the same file'
echo '{}' >"$T/real.json" && ln -s real.json "$T/link.json"
run 30 --import "$REC/testapp-all.json" -o "$T/real.json" --log-file "$T/link.json"
check "-o F --log-file LINK-TO-F -> 2" 2 err 'one output would replace the other'
cp "$REC/testapp-all.json" "$T/in.json"
run 30 --import "$T/in.json" --log-file "$T/./in.json"
check "--import F --log-file ./F -> 2" 2 err 'the output would replace the input'
expect "... the input kept" cmp -s "$T/in.json" "$REC/testapp-all.json"
run 30 --import "$REC/testapp-all.json" -o ''
check "-o '' -> 2" 2 err '^gpuadvise: -o: the output file name is empty$'
run 30 --import "$REC/testapp-all.json" --log-file ''
check "--log-file '' -> 2" 2 err 'the output file name is empty'
run 30 --import "$REC/testapp-all.json" -o /dev/null --log-file /dev/null
check "/dev/null twice is fine" 0 err ''

tap_end
