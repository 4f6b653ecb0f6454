#!/bin/bash
# The kernel time a fix of build.sh saves: ncu's gpu__time_duration of the
# kernels it changes, summed over their launches (of each grid, for srad's
# reduce) by bench/accuracy/external/ncu_sum.py, in 3 runs of the original
# (the external set's binary) and 3 of the fix: SIDE KERNEL [GRID]
# LAUNCHES MICROSECONDS.
# Run from the repository root on the GPU machine, after build.sh:
#   bench/probe/extfix/time.sh FIX [OUT]
set -u
root=$(pwd)
ext=${EXTERNAL_SRC:-$root/bench/accuracy/external/src}
fix=${1:?usage: $0 nw-pad|srad-shfl|srad-2elem|srad-float|srad-fastdiv|srad-fastmath [OUT]}
out=$(cd "${2:-bench/probe/extfix/out}" && pwd)
case $fix in
nw-pad) orig=$ext/bin/nw; names="needle_cuda_shared_1 needle_cuda_shared_2"; grids=
	args="4096 10"; wd=$ext/run/nw/w ;;
srad-shfl|srad-2elem|srad-float|srad-fastdiv|srad-fastmath) orig=$ext/bin/srad_v1; args="100 0.5 2048 2048"
	wd=$ext/run/srad/w; names=reduce; grids=--by-grid; [ "$fix" != srad-shfl ] && [ "$fix" != srad-2elem ] && names=srad
	python3 "$root/bench/accuracy/external/gen_inputs.py" "$ext/data" srad >/dev/null || exit 1 ;;
*) echo "$0: unknown fix $fix" >&2; exit 2 ;;
esac
sum=$root/bench/accuracy/external/ncu_sum.py
mkdir -p "$wd" && cd "$wd" || exit 1
for side in orig fix; do
	b=$orig; [ $side = fix ] && b=$out/$fix
	for r in 1 2 3; do
		csv=$out/$fix.$side.$r.csv
		# shellcheck disable=SC2086
		ncu --csv --print-units base --clock-control none --metrics gpu__time_duration.sum \
			-k "regex:^(${names// /|})\$" --log-file "$csv" "$b" $args >/dev/null 2>&1
		# per kernel (per grid with --by-grid): launches and microseconds
		for k in $names; do
			# shellcheck disable=SC2086
			python3 "$sum" $grids "$csv" "$k" | sed "s/^/$side $k /"
		done
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
