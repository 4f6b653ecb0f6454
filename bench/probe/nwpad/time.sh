#!/bin/bash
# Kernel time of nw (Rodinia, GPA-Benchmark) with and without one column of
# padding in its temp tile: needle_cuda_shared_1 and _2 summed over all
# launches, ncu's gpu__time_duration, 3 runs a side.  Run from the
# repository root on the GPU machine, after build.sh:
#   bench/probe/nwpad/time.sh [PADDED_BINARY]
set -u
src=bench/accuracy/external/src/bin/nw
pad=${1:-bench/probe/nwpad/out/nw-pad}
for side in orig pad; do
	b=$src; [ $side = pad ] && b=$pad
	for _ in 1 2 3; do
		ncu --csv --print-units base --clock-control none --metrics gpu__time_duration.sum \
			-k regex:needle_cuda_shared "$b" 4096 10 2>/dev/null |
			python3 -c '
import csv, sys, collections
rows = [r for r in csv.reader(sys.stdin) if len(r) > 5]
h = rows[0]; k = h.index("Kernel Name"); v = h.index("Metric Value")
t = collections.Counter()
for r in rows[1:]:
    t[r[k].split("(")[0]] += float(r[v].replace(",", ""))
print(sys.argv[1], " ".join("%s %.1f" % (n, s / 1e3) for n, s in sorted(t.items())), "total_us %.1f" % (sum(t.values()) / 1e3))
' "$side"
	done
done
