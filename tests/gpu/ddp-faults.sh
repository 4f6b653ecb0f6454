#!/bin/bash
# Faults in a two-GPU data-parallel run under gpuadvise: FAULT_RUNS runs
# (default 20) of tests/gpu/ddp_train.py under one gpuadvise over torchrun,
# each sent SIGTERM, SIGINT or SIGKILL after a random 3 to 12 s, in turn to
# gpuadvise, to torchrun and to one rank.  Checks, for every run:
#   - gpuadvise ends within WAIT_S (default 60) of the signal: no hang past
#     the watchdog's bound (--watchdog 30 here);
#   - the report is written unless gpuadvise itself got SIGKILL;
#   - no process of the run is left (ranks, torchrun) and, unless
#     gpuadvise got SIGKILL, no run directory.
# Skips (exit 77) with fewer than two GPUs or without torch.
# Environment: GPUADVISE, FAULT_RUNS, FAULT_SEED, WAIT_S, OUT (kept logs).
set -u
GA=${GPUADVISE:-build/gpuadvise}
GA=$(cd "$(dirname "$GA")" && pwd)/$(basename "$GA")
HERE=$(cd "$(dirname "$0")" && pwd)
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$n" -lt 2 ]; then
	echo "fewer than two GPUs: skipping the DDP fault runs"
	exit 77
fi
python3 -c 'import torch' 2>/dev/null || { echo "no torch: skipping"; exit 77; }
export NCCL_NVLS_ENABLE=0 STEPS=${STEPS:-200}
RUNS=${FAULT_RUNS:-20}
WAIT_S=${WAIT_S:-60}
RANDOM=${FAULT_SEED:-7}
T=$(mktemp -d)
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
fails=0
signals=(TERM INT KILL)
targets=(gpuadvise torchrun rank)

# the run's processes still alive: torchrun's and the ranks' python
leftovers() {
	pgrep -f "ddp_train.py" | grep -v "^$$\$" || true
}

for i in $(seq "$RUNS"); do
	sig=${signals[$(( (i - 1) % 3 ))]}
	target=${targets[$(( (i - 1) / 3 % 3 ))]}
	delay=$(( 3 + RANDOM % 10 ))
	rep=$T/r$i.report.json
	"$GA" --watchdog 30 --format json --log-file "$rep" -o "$T/r$i.json" \
		python3 -m torch.distributed.run --standalone --nproc_per_node 2 \
		"$HERE/ddp_train.py" >"$T/r$i.out" 2>"$T/r$i.err" &
	ga=$!
	sleep "$delay"
	case $target in
	gpuadvise) pid=$ga ;;
	# gpuadvise's own command line names torchrun too: its child is torchrun
	torchrun) pid=$(pgrep -P "$ga" -f "torch.distributed.run" | head -1) ;;
	rank) pid=$(pgrep -f "ddp_train.py" | while read -r p; do
		grep -q "torch.distributed.run" "/proc/$p/cmdline" 2>/dev/null || echo "$p"; done | head -1) ;;
	esac
	t0=$(date +%s)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -s "$sig" "$pid"
		sent=yes
	else
		sent="no (the run had ended)"
	fi
	# wait for gpuadvise, bounded
	ended=no
	for _ in $(seq "$WAIT_S"); do
		if ! kill -0 "$ga" 2>/dev/null; then ended=yes; break; fi
		sleep 1
	done
	if [ $ended = no ]; then
		kill -9 "$ga" 2>/dev/null
	fi
	wait "$ga" 2>/dev/null
	st=$?
	took=$(( $(date +%s) - t0 ))
	sleep 2
	left=$(leftovers | tr '\n' ' ')
	[ -n "$left" ] && pkill -9 -f "ddp_train.py"
	rundirs=$(ls -d "$TMPDIR"/gpuadvise-run-* 2>/dev/null | tr '\n' ' ')
	rm -rf "$TMPDIR"/gpuadvise-run-*
	report=no
	[ -s "$rep" ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$rep" 2>/dev/null &&
		report=yes
	want_report=yes
	[ "$target:$sig" = gpuadvise:KILL ] && want_report=no
	ok=yes
	why=
	[ $ended = yes ] || { ok=no; why="$why hang;"; }
	[ $want_report = no ] || [ $report = yes ] || { ok=no; why="$why no report;"; }
	[ -z "$left" ] || { ok=no; why="$why left: $left;"; }
	[ $want_report = no ] || [ -z "$rundirs" ] || { ok=no; why="$why run directory left;"; }
	line="run $i: SIG$sig to $target after ${delay}s (sent: $sent): gpuadvise status $st after ${took}s, report $report"
	if [ $ok = yes ]; then
		echo "ok - $line"
	else
		echo "not ok - $line:$why"
		fails=$((fails + 1))
		tail -3 "$T/r$i.err" | sed 's/^/#   /'
	fi
done
[ -n "${OUT:-}" ] && mkdir -p "$OUT/ddp-faults" && cp "$T"/r*.err "$OUT/ddp-faults/" 2>/dev/null
echo "$fails of $RUNS runs failed"
rm -rf "$T"
[ $fails -eq 0 ]
