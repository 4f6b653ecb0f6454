#!/bin/sh
# GPU check: the transformer's training loop (tests/gpu/transformer_train.py,
# 6 layers, bf16, SDPA, AdamW, 909 launches a step) plain and under
# gpuadvise with the defaults, step by step and with the step captured in a
# CUDA graph (--graph).  The loss lines must be identical and every kernel
# of at least 1 % of the GPU time fully checked (check_train2.py); the graph
# variant's report must count its graph launches and say its kernels were
# not profiled.  The time ratios are printed, not judged: bench/overhead.sh
# (BENCH_TRAIN2=1) measures them in rounds.  Run by tests/gpu/run.sh, or
# alone: GPUADVISE=build/gpuadvise tests/gpu/train2.sh.  Exits 77 without
# torch or a GPU; otherwise the number of failed checks.
set -u
GA=${GPUADVISE:-build/gpuadvise}
HERE=$(cd "$(dirname "$0")" && pwd)
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "ok - # SKIP transformer training: no torch or no GPU"
	exit 77
fi
T=$(mktemp -d)
fails=0
# 30 steps: the step repeats from the third, a 7-pass set takes seven more.
export STEPS=${STEPS:-30}
for v in "" --graph; do
	n=train${v:+-graph}
	s0=$(date +%s.%N)
	python3 "$HERE/transformer_train.py" $v >"$T/$n-plain.txt" 2>"$T/$n-plain.err"
	st=$?; s1=$(date +%s.%N)
	"$GA" --format json --log-file "$T/$n.report.json" python3 "$HERE/transformer_train.py" $v \
		>"$T/$n-prof.txt" 2>"$T/$n-prof.err"
	sg=$?; s2=$(date +%s.%N)
	if [ $st -ne 0 ] || [ $sg -ne 0 ]; then
		echo "not ok - transformer${v:+ $v}: status $st plain, $sg under gpuadvise"
		tail -5 "$T/$n-prof.err"
		fails=$((fails + 1))
		continue
	fi
	if python3 "$HERE/check_train2.py" "$T/$n-plain.txt" "$T/$n-prof.txt" "$T/$n.report.json" \
		"$(awk "BEGIN { print $s1 - $s0 }")" "$(awk "BEGIN { print $s2 - $s1 }")" >"$T/check.out"; then
		echo "ok - transformer${v:+ $v}: loss identical, kernels of 1 % share fully checked"
	else
		echo "not ok - transformer${v:+ $v}: loss or checks"
		fails=$((fails + 1))
	fi
	sed 's/^/    /' "$T/check.out"
done
if [ -s "$T/train-graph.report.json" ] &&
	"$GA" --import "$T/train-graph.report.json" 2>/dev/null | tr -s ' \n' '  ' |
	grep -q "CUDA graph launches: kernels inside CUDA graphs are not profiled"; then
	echo "ok - transformer --graph: the report counts the graph launches and says their kernels are not profiled"
else
	echo "not ok - transformer --graph: no sentence on the graph launches"
	fails=$((fails + 1))
fi
rm -rf "$T"
exit $fails
