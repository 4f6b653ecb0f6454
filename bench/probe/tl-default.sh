#!/bin/bash
# What the timeline costs inside a default run, taken apart: the 4-layer
# transformer's loop and process (tests/gpu/transformer_train.py) plain,
# under the default run, with --no-timeline, and with the timeline's GPU
# records cut down by GPUADVISE_TIMELINE_KINDS (kernel records only; none,
# the host's calls alone).  ROUNDS rounds of STEPS steps, the variants'
# order rotated each round; prints each round and the medians, with their
# spread, against plain (docs/PERFORMANCE.md, "The timeline").
# On the GPU machine, from the repository root, with build-dev built:
#   bench/probe/tl-default.sh [ROUNDS [STEPS]]
set -u
GA=build-dev/gpuadvise
ROUNDS=${1:-3}
STEPS=${2:-40}
P=$(mktemp)
variants="plain default notl kernel none"
for i in $(seq "$ROUNDS"); do
	line="round $i loop_s"
	pline="round $i proc_s"
	for v in $variants; do
		case $v in
		plain) cmd="python3" ;;
		default) cmd="$GA -f -o $P python3" ;;
		notl) cmd="$GA -f --no-timeline -o $P python3" ;;
		kernel) cmd="env GPUADVISE_TIMELINE_KINDS=kernel $GA -f -o $P python3" ;;
		none) cmd="env GPUADVISE_TIMELINE_KINDS= $GA -f -o $P python3" ;;
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
for (what, k), xs in sorted(v.items()):
    xs = [x for x in xs if not math.isnan(x)]
    base = [x for x in v.get((what, "plain"), []) if not math.isnan(x)]
    if not xs or not base:
        print(f"{what} {k}: no run gave a time")
        continue
    m, b = statistics.median(xs), statistics.median(base)
    print(f"median {what} {k} {m:.4f} s ({m / b - 1:+.1%} on plain; "
          f"spread {min(xs):.4f}-{max(xs):.4f}, {len(xs)} rounds)")
PY
rm -f "$P" "$P.rounds"
