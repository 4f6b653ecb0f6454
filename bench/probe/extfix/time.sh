#!/bin/bash
# The kernel time a fix of build.sh saves: ncu's gpu__time_duration of the
# kernels it changes, summed over their launches of each grid and over all,
# in 3 runs of the original (the external set's binary) and 3 of the fix.
# Run from the repository root on the GPU machine, after build.sh:
#   bench/probe/extfix/time.sh FIX [OUT]
set -u
root=$(pwd)
ext=${EXTERNAL_SRC:-$root/bench/accuracy/external/src}
fix=${1:?usage: $0 nw-pad|srad-shfl|srad-float [OUT]}
out=$(cd "${2:-bench/probe/extfix/out}" && pwd)
case $fix in
nw-pad) orig=$ext/bin/nw; kernels=regex:needle_cuda_shared; args="4096 10"; wd=$ext/run/nw/w ;;
srad-shfl|srad-float) orig=$ext/bin/srad_v1; args="100 0.5 2048 2048"; wd=$ext/run/srad/w
	kernels=regex:^reduce$; [ "$fix" = srad-float ] && kernels=regex:^srad$
	python3 "$root/bench/accuracy/external/gen_inputs.py" "$ext/data" srad >/dev/null || exit 1 ;;
*) echo "$0: unknown fix $fix" >&2; exit 2 ;;
esac
mkdir -p "$wd" && cd "$wd" || exit 1
for side in orig fix; do
	b=$orig; [ $side = fix ] && b=$out/$fix
	for _ in 1 2 3; do
		# shellcheck disable=SC2086
		ncu --csv --print-units base --clock-control none --metrics gpu__time_duration.sum \
			-k "$kernels" "$b" $args 2>/dev/null |
			python3 -c '
import csv, sys, collections
rows = [r for r in csv.reader(sys.stdin) if len(r) > 5]
h = rows[0]; k = h.index("Kernel Name"); v = h.index("Metric Value"); g = h.index("Grid Size")
t = collections.Counter(); n = collections.Counter()
for r in rows[1:]:
    key = "%s grid %s" % (r[k].split("(")[0], r[g].replace(" ", ""))
    t[key] += float(r[v].replace(",", "")); n[key] += 1
for x, s in sorted(t.items()):
    print(sys.argv[1], x, "%d launches %.1f us" % (n[x], s / 1e3))
print(sys.argv[1], "total_us %.1f" % (sum(t.values()) / 1e3))
' "$side"
	done
done
# srad writes its image: the fix's against the original's (the bytes that
# differ, of all): the order of the float sums, or FP32 for FP64
# intermediates, may change the last bits.
if [ "$fix" != nw-pad ]; then
	# shellcheck disable=SC2086
	"$orig" $args >/dev/null 2>&1 && cp image_out.pgm orig.pgm &&
		"$out/$fix" $args >/dev/null 2>&1 &&
		echo "image_out.pgm: $(cmp -l orig.pgm image_out.pgm | wc -l) of $(stat -c %s orig.pgm) bytes differ"
fi
