#!/bin/bash
# The timeline on a GPU machine, quickly: the test app, the transfers
# demo's variants, the transformer step (plain, --timeline-only, default)
# against torch.profiler's busy share.  Usage: bench/probe/timeline.sh BUILD
set -u
B=${1:?build directory}
GA=$B/gpuadvise
OUT=${OUT:-/tmp/tl-probe}
mkdir -p "$OUT"
S="python3 bench/probe/tl_summary.py"
echo "== test app, default run"
timeout 120 "$GA" -o "$OUT/app.json" "$B/kernels/gpuadvise-testapp" >/dev/null 2>"$OUT/app.err"
echo "status $?"; tail -3 "$OUT/app.err"; $S "$OUT/app.json"
echo "== transfers demo, plain"
for v in pageable_sync pinned_sync pinned_async; do
	"$B/kernels/gpuadvise-demo-transfers" --variant $v --reps 3 | tail -1
done
for v in pageable_sync pinned_sync pinned_async; do
	echo "== transfers $v under --timeline-only"
	timeout 120 "$GA" --timeline-only -o "$OUT/tr-$v.json" "$B/kernels/gpuadvise-demo-transfers" \
		--variant $v --reps 3 2>"$OUT/tr-$v.err" | tail -1
	echo "status $?"; tail -2 "$OUT/tr-$v.err"; $S "$OUT/tr-$v.json"
done
export LAYERS=4 STEPS=40
T=tests/gpu/transformer_train.py
echo "== transformer: plain, timeline-only, default (loop_s)"
for i in 1 2; do python3 $T | grep loop_s; done
for i in 1 2; do timeout 200 "$GA" --timeline-only -o "$OUT/tf-tl$i.json" python3 $T 2>"$OUT/tf-tl$i.err" | grep loop_s; done
tail -3 "$OUT/tf-tl1.err"
$S "$OUT/tf-tl1.json"
timeout 300 "$GA" -o "$OUT/tf-def.json" python3 $T 2>"$OUT/tf-def.err" | grep loop_s
tail -3 "$OUT/tf-def.err"
$S "$OUT/tf-def.json"
echo "== torch.profiler"
python3 tests/gpu/torch_busy.py
