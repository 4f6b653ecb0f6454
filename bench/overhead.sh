#!/bin/bash
# Overhead benchmark, run on the GPU machine (tests/gpu/run-on-device.sh calls
# it): the time each tool adds over the plain run of the same program, in the
# same run on the same machine.  Usage: bench/overhead.sh BUILD_DIR [REPS]
# Prints a table: program, launches, plain, gpuadvise, ncu SOL, ncu full (s,
# medians of REPS runs; ncu --set full runs once), added-time ratios
# gpuadvise/ncu, passes, peak RSS of the profiled process, and the kernels
# whose class agrees with ncu's Speed-of-Light composites in the same run
# (with ncu's base-clock locking, and at the GPU's own clocks).
set -u
B=${1:?build dir}; REPS=${2:-3}
GA=$B/gpuadvise
K=$B/kernels
T=$(mktemp -d)
HERE=$(cd "$(dirname "$0")" && pwd)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { # seconds for one run of "$@", output discarded
	wall_to /dev/null "$@"
}
wall_to() { # file for the output, command...
	local s e out=$1
	shift
	s=$(date +%s.%N); "$@" >"$out" 2>/dev/null; e=$(date +%s.%N)
	awk "BEGIN { print $e - $s }"
}
measure() { # reps, command...
	local n=$1; shift
	for _ in $(seq "$n"); do wall "$@"; done | median
}

printf '%-28s %8s %8s %9s %8s %9s %9s %9s %6s %4s %8s %7s %7s %5s %7s %7s\n' program launches plain gpuadvise ncu_sol ncu_full 'ga/sol' 'ga/full' passes sets rss_MiB setup_s meas_s loop cls_base cls_own
run_case() { # name, which ncu runs (both|sol|none), gpuadvise options, command...
	local name=$1 ncu=$2 opts=$3; shift 3
	local plain ga sol=nan full=nan
	[ -z "$ncu" ] && ncu=sol
	# The tools take turns within each repetition, so that the machine's
	# drift (the plain test app took 3.2 to 4.1 s within an hour) falls on
	# all of them alike rather than on whichever ran last.
	: >"$T/plain.t"; : >"$T/ga.t"; : >"$T/sol.t"; rm -f "$T/sol.csv"
	for _ in $(seq "$REPS"); do
		wall "$@" >>"$T/plain.t"
		wall "$GA" $opts -f -o "$T/p.json" "$@" >>"$T/ga.t"
		# CSV: the last run's Speed-of-Light values give the classes
		# column (bench/sol_agree.py).
		[ "$ncu" != none ] && wall_to "$T/sol.csv" ncu --section SpeedOfLight --csv --print-kernel-base mangled "$@" >>"$T/sol.t"
	done
	plain=$(median <"$T/plain.t")
	ga=$(median <"$T/ga.t")
	[ "$ncu" != none ] && sol=$(median <"$T/sol.t")
	[ "$ncu" = both ] && full=$(measure 1 ncu --set full "$@")
	read -r launches passes sets rss setup meas loop < <(python3 -c "
import json; c=json.load(open('$T/p.json'))['collection']; p=json.load(open('$T/p.json'))
print(len(p['launches']), c['passes'], c.get('metric_sets', 1), c.get('app_peak_rss_kb', 0) // 1024,
      round(c.get('profiler_setup_seconds', 0), 2), round(c.get('profiler_measure_seconds', 0), 2),
      c.get('loop_replay_launches', 0))")
	# Classes agreeing: this run's classes against ncu's Speed-of-Light
	# composites (kernels agreeing / kernels in both; why not, on stderr),
	# as ncu measures by default, with the SM clock locked to base
	# (cls_base), and in one more, untimed run at the GPU's own clocks, as
	# the program and gpuadvise run (cls_own): kernels near the balance of
	# SM and memory throughput tip to compute under base clocks.
	local agree=- agree_own=-
	[ -s "$T/sol.csv" ] && agree=$(python3 "$HERE/sol_agree.py" "$GA" "$T/p.json" "$T/sol.csv")
	if [ "$ncu" != none ]; then
		wall_to "$T/sol_own.csv" ncu --section SpeedOfLight --csv --print-kernel-base mangled --clock-control none "$@" >/dev/null
		agree_own=$(python3 "$HERE/sol_agree.py" "$GA" "$T/p.json" "$T/sol_own.csv")
	fi
	# BENCH_KEEP=DIR: keep each row's profile and ncu output there.
	if [ -n "${BENCH_KEEP:-}" ]; then
		cp "$T/p.json" "$BENCH_KEEP/${name// /_}.json"
		[ -s "$T/sol.csv" ] && cp "$T/sol.csv" "$BENCH_KEEP/${name// /_}.sol.csv"
		[ -s "$T/sol_own.csv" ] && cp "$T/sol_own.csv" "$BENCH_KEEP/${name// /_}.sol_own.csv"
	fi
	echo "$plain $ga $sol $full $agree $agree_own $name" >>"$T/rows"
	python3 - "$name" "$launches" "$plain" "$ga" "$sol" "$full" "$passes" "$sets" "$rss" "$setup" "$meas" "$loop" "$agree" "$agree_own" <<'PY'
import sys
n, l, plain, ga, sol, full, passes, sets, rss, setup, meas, loop, agree, own = sys.argv[1:]
plain, ga, sol, full = map(float, (plain, ga, sol, full))
add = lambda t: max(t - plain, 1e-9)
r = lambda t: add(ga) / add(t) if t == t else float("nan")
print(f"{n:28} {l:>8} {plain:8.2f} {ga:9.2f} {sol:8.2f} {full:9.2f} "
      f"{r(sol):9.3f} {r(full):9.3f} {passes:>6} {sets:>4} {rss:>8} {setup:>7} {meas:>7} {loop:>5}"
      f" {agree:>7} {own:>7}"
      f"  (x{ga/plain:.2f} of plain)")
PY
}

# The transformer's training loop (tests/gpu/transformer_train.py), its
# step run plain and captured in a CUDA graph (--graph): in rounds, plain,
# gpuadvise with default settings and ncu Speed-of-Light (in the first
# BENCH_NCU_ROUNDS rounds, default all), each run's own loop time (steps
# after the warm-up) and the process's; medians.  ncu measures the first
# launch of each launch configuration (name, grid, block: what
# bench/sol_agree.py compares), every kernel of the run in a minute or two;
# BENCH_NCU_LAUNCHES=N measures the first N launches instead (1,000 took
# about 7 minutes and held 29 of the step's 37 kernels of 1 % share).
run_train2() { # name, script options...
	local name=$1; shift
	local cmd=(python3 tests/gpu/transformer_train.py "$@") n=${BENCH_NCU_LAUNCHES:-}
	local filter=(--filter-mode per-launch-config --launch-count 1) what="1 per config"
	[ -n "$n" ] && filter=(--launch-count "$n") what="-c $n"
	local ncu_rounds=${BENCH_NCU_ROUNDS:-$REPS} round=0 tools
	: >"$T/t2"
	for _ in $(seq "$REPS"); do
		# BENCH_NCU_ROUNDS=K: ncu in the first K rounds only (a run of
		# ncu on 2,000 launches takes a minute or more).
		round=$((round + 1)); tools="plain ga"
		[ "$round" -le "$ncu_rounds" ] && tools="plain ga sol"
		for tool in $tools; do
			case $tool in
			plain) set -- "${cmd[@]}";;
			ga) set -- "$GA" -f --log-file /dev/null -o "$T/t2.json" "${cmd[@]}";;
			sol) set -- ncu --section SpeedOfLight --csv --print-kernel-base mangled \
				"${filter[@]}" --log-file "$T/t2.sol.csv" "${cmd[@]}";;
			esac
			w=$(wall_to "$T/t2.out" "$@")
			echo "$tool $w $(awk '/^loop_s/ { print $2 }' "$T/t2.out")" >>"$T/t2"
			# The printed loss, plain and under gpuadvise (last round's).
			[ "$tool" = sol ] || grep '^loss' "$T/t2.out" >"$T/t2.$tool.loss"
		done
	done
	local loss=differs
	[ -s "$T/t2.plain.loss" ] && cmp -s "$T/t2.plain.loss" "$T/t2.ga.loss" &&
		loss="identical ($(wc -l <"$T/t2.plain.loss") lines)"
	if [ -n "${BENCH_KEEP:-}" ]; then
		cp "$T/t2.json" "$BENCH_KEEP/${name//[ ,]/_}.json" 2>/dev/null
		cp "$T/t2.sol.csv" "$BENCH_KEEP/${name//[ ,]/_}.sol.csv" 2>/dev/null
		cp "$T/t2" "$BENCH_KEEP/${name//[ ,]/_}.times" 2>/dev/null
	fi
	local agree=-
	# the issue's bar: kernels of at least 1 % of the GPU time
	[ -s "$T/t2.sol.csv" ] && agree=$(python3 "$HERE/sol_agree.py" "$GA" "$T/t2.json" "$T/t2.sol.csv" 1)
	python3 - "$name" "$T/t2" "$T/t2.json" "$agree" "$what" "$loss" <<'PY'
import json, statistics, sys
name, rows, prof, agree, n, loss = sys.argv[1:]
t = {}
for l in open(rows):
    tool, w, *loop = l.split()
    t.setdefault(tool, []).append((float(w), float(loop[0]) if loop else float("nan")))
# ncu's rounds can be none (BENCH_NCU_ROUNDS=0): its time is then nan.
med = lambda tool, i: statistics.median(r[i] for r in t[tool]) if tool in t else float("nan")
spread = lambda tool, i: (f"{min(r[i] for r in t[tool]):.2f}-{max(r[i] for r in t[tool]):.2f}"
                          if tool in t else "-")
try:
    p = json.load(open(prof))
    c = p["collection"]
    loop = c.get("loop_replay_launches", 0)
    mech = {"kernel_replay": len(p["launches"]) - loop, "loop_replay": loop,
            "unprofiled_at_mean": sum(u["launches"] for u in p.get("unprofiled", [])),
            "graph_launches": c.get("graph_launches", 0)}
except (KeyError, ValueError, OSError):
    mech = {}
print(f"{name}: process plain {med('plain', 0):.2f} s ({spread('plain', 0)}), "
      f"gpuadvise {med('ga', 0):.2f} s ({spread('ga', 0)}) "
      f"(x{med('ga', 0) / med('plain', 0):.2f}), ncu SOL ({n}) {med('sol', 0):.2f} s; "
      f"loop plain {med('plain', 1):.3f} s ({spread('plain', 1)}), gpuadvise {med('ga', 1):.3f} s "
      f"({spread('ga', 1)}) (x{med('ga', 1) / med('plain', 1):.2f}); classes agreeing {agree}; "
      f"loss {loss}; measured {mech}")
PY
}
if [ -n "${BENCH_TRAIN2:-}" ]; then
	# BENCH_TRAIN2=1: the transformer rows alone; =step or =graph: one of
	# them (each with ncu on 1,000 launches takes about 7 minutes).
	[ "$BENCH_TRAIN2" = graph ] || run_train2 "transformer 100 steps"
	[ "$BENCH_TRAIN2" = step ] || run_train2 "transformer 100 steps, CUDA graph" --graph
	rm -rf "$T"
	exit 0
fi

if [ -n "${BENCH_QUICK:-}" ]; then
	# A short check between full runs: no demos, and ncu --set full only on
	# the test app and the PyTorch workload with BENCH_NCU_FULL=1.
	# BENCH_PYTORCH_ONLY=1: the PyTorch rows alone.
	T_ROWS=${BENCH_PYTORCH_ONLY:+no}
	[ "${BENCH_SOURCE:-}" = only ] || [ -n "$T_ROWS" ] ||
		run_case testapp "${BENCH_NCU_FULL:+both}" "" "$K/gpuadvise-testapp"
	# BENCH_TESTAPP_ONLY=1: that row alone, for more repetitions.
	[ -n "${BENCH_TESTAPP_ONLY:-}" ] && [ -z "${BENCH_DEMOS:-}" ] && { rm -rf "$T"; exit 0; }
	# BENCH_DEMOS=1: every demo program (all its variants, each launched
	# once), both ncu runs, and the suite's added times summed.
	if [ -n "${BENCH_DEMOS:-}" ]; then
		: >"$T/rows"
		for d in "$K"/gpuadvise-demo-*; do
			run_case "demo ${d##*-demo-}" both "" "$d" --reps 1 --warmup 0
		done
		awk '{ p += $1; g += $2; s += $3; f += $4; n++
			if (split($5, a, "/") == 2) { ka += a[1]; kn += a[2] }
			if (split($6, a, "/") == 2) { oa += a[1]; on += a[2] } }
			END { printf "demo suite, %d programs: plain %.2f gpuadvise %.2f ncu_sol %.2f ncu_full %.2f " \
				"ga/sol %.3f ga/full %.3f, classes agreeing %d/%d (base clocks), %d/%d (own)\n",
				n, p, g, s, f, (g - p) / (s - p), (g - p) / (f - p), ka, kn, oa, on }' "$T/rows"
		[ -n "${BENCH_TESTAPP_ONLY:-}" ] && { rm -rf "$T"; exit 0; }
	fi
	if [ "${BENCH_SOURCE:-}" != only ] && [ -z "$T_ROWS" ]; then
		run_case "testapp --max-passes 0" none "--max-passes 0" "$K/gpuadvise-testapp"
		run_case "testapp --quick" none "--quick" "$K/gpuadvise-testapp"
	fi
	if [ -n "${BENCH_SOURCE:-}" ]; then
		# What source lines add: flagged kernels (the default) and every
		# kernel (--source), against none; then stall reasons.
		run_case "testapp x5 --no-source" none "--no-source" "$K/gpuadvise-testapp" --repeat 5
		run_case "testapp x5 (flagged kernels)" none "" "$K/gpuadvise-testapp" --repeat 5
		run_case "testapp x5 --source" none "--source" "$K/gpuadvise-testapp" --repeat 5
		# --stalls: the second run, PC sampling the kernels with source lines.
		run_case "testapp x5 --stalls" none "--stalls" "$K/gpuadvise-testapp" --repeat 5
		run_case "testapp x5 --source --stalls" none "--source --stalls" "$K/gpuadvise-testapp" --repeat 5
		[ "$BENCH_SOURCE" = only ] && { rm -rf "$T"; exit 0; }
	fi
	# BENCH_TRAIN_ONLY=1: the training loop's rows alone.
	if [ -z "${BENCH_TRAIN_ONLY:-}" ]; then
		# With BENCH_NCU_FULL=1 ncu --set full too (minutes: every
		# launch measured in full); BENCH_NO_TRAIN=1 stops after it.
		run_case "pytorch workload" "${BENCH_NCU_FULL:+both}" "" python3 tests/gpu/pytorch_workload.py
		[ -n "${BENCH_NO_TRAIN:-}" ] && { rm -rf "$T"; exit 0; }
		# Loop replay (the default) against replaying every launch.
		run_case "pytorch workload, no loop" none "--no-loop-replay" python3 tests/gpu/pytorch_workload.py
	fi
	run_case "pytorch train 100 steps" none "" python3 tests/gpu/pytorch_train.py 100
	run_case "pytorch train, no loop" none "--no-loop-replay" python3 tests/gpu/pytorch_train.py 100
	# Every kernel measured in full (--min-share 0), and classes alone.
	[ -n "${BENCH_TRAIN_ONLY:-}" ] ||
		run_case "pytorch train, --min-share 0" none "--min-share 0" python3 tests/gpu/pytorch_train.py 100
	run_case "pytorch train, --quick" none "--quick" python3 tests/gpu/pytorch_train.py 100
	rm -rf "$T"
	exit 0
fi
run_case testapp both "" "$K/gpuadvise-testapp"
run_case "testapp --quick" both "--quick" "$K/gpuadvise-testapp"
# Source lines: the default measures flagged kernels once more with SASS
# metrics; --source every kernel; --no-source none (the baseline for both).
run_case "testapp x2 --no-source" none "--no-source" "$K/gpuadvise-testapp" --repeat 2
run_case "testapp x2 (flagged kernels)" none "" "$K/gpuadvise-testapp" --repeat 2
run_case "testapp x2 --source" none "--source" "$K/gpuadvise-testapp" --repeat 2
run_case "demo coalescing --no-source" none "--no-source" "$K/gpuadvise-demo-coalescing" --reps 2 --warmup 1
run_case "demo coalescing --source" none "--source" "$K/gpuadvise-demo-coalescing" --reps 2 --warmup 1
for d in matmul transpose reduction fusion; do
	run_case "demo $d (all variants)" both "" "$K/gpuadvise-demo-$d" --reps 1 --warmup 0
done
# ncu --set full on every PyTorch launch takes minutes: Speed-of-Light only.
run_case "pytorch workload" sol "" python3 tests/gpu/pytorch_workload.py
run_case "pytorch train 100 steps" none "" python3 tests/gpu/pytorch_train.py 100
run_case "pytorch train, no loop" none "--no-loop-replay" python3 tests/gpu/pytorch_train.py 100
run_case "pytorch train, --min-share 0" none "--min-share 0" python3 tests/gpu/pytorch_train.py 100
rm -rf "$T"
