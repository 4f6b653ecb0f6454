#!/bin/sh
# The second run's cost on the test app (its nine kernels launched once):
# gpuadvise with the default (second runs for the kernels whose rules read
# opcodes), with GPUADVISE_SOURCE_REPLAY=0 (none) and =all (every flagged
# kernel), and the plain app, in turns, ROUNDS times.
# usage: bench/probe/replay-ab.sh BUILD OUT [ROUNDS]
b=${1:?build}; out=${2:?out}; rounds=${3:-3}
app=$b/kernels/gpuadvise-testapp
mkdir -p "$out"
t() { s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); awk "BEGIN { printf \"%.2f\", $e - $s }"; }
for i in $(seq "$rounds"); do
	for v in default 0 all plain; do
		rm -f "$out/ab-$v.json"   # -o does not overwrite
		case $v in
		plain) x=$(t "$app") ;;
		default) x=$(t env GPUADVISE_SOURCE_LOG="$out/ab-$v.log" "$b/gpuadvise" -o "$out/ab-$v.json" "$app") ;;
		*) x=$(t env GPUADVISE_SOURCE_REPLAY=$v GPUADVISE_SOURCE_LOG="$out/ab-$v.log" "$b/gpuadvise" -o "$out/ab-$v.json" "$app") ;;
		esac
		echo "round $i $v $x s"
	done
done
for v in default 0 all; do
	echo "$v: $(grep -c 'replay of' "$out/ab-$v.log") second runs, $(grep -c 'nvdisasm of' "$out/ab-$v.log") listings, $(grep -c 'cuptiCheckpointSave' "$out/ab-$v.log") saves (all rounds)"
done
