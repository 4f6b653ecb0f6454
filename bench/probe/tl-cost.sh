#!/bin/bash
# What the timeline costs the 4-layer transformer's loop and process
# (tests/gpu/transformer_train.py), taken apart: ROUNDS rounds of STEPS
# steps, the variants' order rotated each round so that none always runs
# first on a cool GPU; prints each round, then the medians with their
# spread against plain (docs/PERFORMANCE.md, "The timeline").
#   --timeline-only: plain; --timeline-only with every GPU record (all),
#     with kernel records only (kernel), with none, the host's calls alone
#     (none: GPUADVISE_TIMELINE_KINDS);
#   otherwise, inside a default run: plain; the default run; with
#     --no-timeline (notl); with kernel records only; with none.
#   VARIANTS="plain default notl" (say) runs only those, so that more
#   rounds fit one call.
# On the GPU machine, from the repository root:
#   bench/probe/tl-cost.sh [--timeline-only] BUILD [ROUNDS [STEPS]]
set -u
only=0
if [ "${1:-}" = --timeline-only ]; then
	only=1
	shift
fi
GA=${1:?build directory}/gpuadvise
ROUNDS=${2:-3}
STEPS=${3:-40}
P=$(mktemp)
if [ $only = 1 ]; then
	variants="plain all kernel none"
	run="$GA --timeline-only"
else
	variants="plain default notl kernel none"
	run="$GA -f -o $P"
fi
variants=${VARIANTS:-$variants}
for i in $(seq "$ROUNDS"); do
	line="round $i loop_s"
	pline="round $i proc_s"
	for v in $variants; do
		case $v in
		plain) cmd="python3" ;;
		all | default) cmd="$run python3" ;;
		notl) cmd="$GA -f --no-timeline -o $P python3" ;;
		kernel) cmd="env GPUADVISE_TIMELINE_KINDS=kernel $run python3" ;;
		none) cmd="env GPUADVISE_TIMELINE_KINDS= $run python3" ;;
		esac
		t0=$(date +%s.%N)
		x=$(LAYERS=4 STEPS=$STEPS timeout 200 $cmd tests/gpu/transformer_train.py 2>/dev/null |
			awk '/^loop_s/ { print $2 }')
		line="$line $v ${x:-nan}"
		pline="$pline $v $(awk "BEGIN { print $(date +%s.%N) - $t0 }")"
	done
	variants="${variants#* } ${variants%% *}"
	echo "$line"
	echo "$pline"
done | tee "$P.rounds"
python3 - "$P.rounds" <<'PY'
import math, statistics, sys
v = {}
for line in open(sys.argv[1]):
    w = line.split()
    for k, x in zip(w[3::2], w[4::2]):
        v.setdefault((w[2], k), []).append(float(x))
for (what, k), xs in v.items():
    xs = [x for x in xs if not math.isnan(x)]
    base = [x for x in v.get((what, "plain"), []) if not math.isnan(x)]
    if not xs or not base:
        print(f"median {what} {k}: no run gave a time")
        continue
    m, b = statistics.median(xs), statistics.median(base)
    print(f"median {what} {k} {m:.4f} s ({m / b - 1:+.1%} on plain; "
          f"spread {min(xs):.4f}-{max(xs):.4f}, {len(xs)} rounds)")
PY
rm -f "$P" "$P.rounds"
