#!/bin/bash
# Every GPU-machine step in one call (device time is scarce):
#   GPU suite, fixture recording, demos, a PyTorch workload, and ncu
#   side by side.  Usage, from the repository root on the GPU machine:
#     tests/gpu/run-on-device.sh BUILD_DIR [STEP...]
#   steps: suite faults record demos models demorun torch nvtx train train2 ddp timeline ncu bench
#   phases framework (default: all but demorun, train2, phases and framework)
# Everything lands in $OUT: logs, and results.tar.xz with the recordings.
set -u
B=${1:?build directory}; shift
STEPS=${*:-suite faults record demos models torch nvtx ncu bench}
OUT=${OUT:-/tmp/gpuadvise-out}
R=$OUT/work
mkdir -p "$R/recorded"
GA=$B/gpuadvise
APP=$B/kernels/gpuadvise-testapp
# Recordings (test fixtures) measure everything on one launch (--max-passes
# 0): the rules' metrics, the Speed-of-Light composites they are checked
# against, the pipe-cycle counters the classifier's instruction rates stand
# in for, and the roofline's FLOP, byte and peak counters.
EXTRA=sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
EXTRA=$EXTRA,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active
for op in fadd fmul ffma dadd dmul dfma hadd hmul hfma; do
	EXTRA=$EXTRA,sm__sass_thread_inst_executed_op_${op}_pred_on.sum
done
EXTRA=$EXTRA,dram__bytes.sum,lts__t_bytes.sum,l1tex__t_bytes.sum
EXTRA=$EXTRA,dram__bytes.sum.peak_sustained,lts__t_bytes.sum.peak_sustained,l1tex__t_bytes.sum.peak_sustained
EXTRA=$EXTRA,dram__cycles_elapsed.avg.per_second,lts__cycles_elapsed.avg.per_second,l1tex__cycles_elapsed.avg.per_second,sm__cycles_elapsed.avg.per_second
EXTRA=$EXTRA,sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained,sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained,sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained
REC="--max-passes 0 --metrics $EXTRA"
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
step() { echo; echo "=== $* ($(date +%T))"; }

step device
nvidia-smi -L
"$GA" --version
ls -la "$B" "$B/kernels" | head -40

step smoke: two kernels, twice each, verbose
timeout 120 "$GA" --verbose -o "$R/smoke.json" "$APP" --only tiny_add,copy_strided --repeat 3 2>&1 | tee "$R/smoke.txt" | head -70
python3 -c "
import json; p = json.load(open('$R/smoke.json')); c = p['collection']
print('passes', c['passes'], 'sets', c.get('metric_sets'), 'setup', c.get('profiler_setup_seconds'),
      'measure', c.get('profiler_measure_seconds'))
for l in p['launches']:
    print(l['name'][:40], l.get('metric_set'), sum(v is not None for v in l['values'].values()), 'values')
"
echo "status ${PIPESTATUS[0]}"
if ! grep -q 'copy_strided' "$R/smoke.txt"; then
	echo "smoke failed: does the driver load the injection library?"
	CUDA_INJECTION64_PATH=$(readlink -f "$B/libgpuadvise-inject.so") LD_DEBUG=libs \
		"$APP" --only tiny_add 2>&1 | grep -iE 'inject|jansson|cupti|error' | head -20
fi

step no usable GPU: the driver loads but sees no device
CUDA_VISIBLE_DEVICES= timeout 60 "$GA" "$APP" --only tiny_add >"$R/nogpu.out" 2>&1
echo "status $? (expected 4)"; tail -4 "$R/nogpu.out"

if has suite; then
	step GPU suite
	GPUADVISE=$GA BUILDDIR=$B timeout 560 tests/gpu/run.sh 2>&1 | tee "$R/gpu-suite.log"
	step source lines of kernels launched once
	GPUADVISE=$GA BUILDDIR=$B timeout 200 tests/gpu/replay.sh 2>&1 | tee "$R/gpu-replay.log"
fi

if has ddp; then
	step data-parallel training on two GPUs under torchrun
	# one gpuadvise over torchrun, then one per rank (-o prof-%q{RANK}.json)
	# and one --import: the profiles and reports in recorded/ddp-2rank-*
	DDP_OUT=$R/recorded GPUADVISE=$GA timeout 900 tests/gpu/ddp.sh 2>&1 | tee "$R/ddp.log"
fi

if has faults; then
	step fault injection: signals at random points of live runs
	GPUADVISE=$GA BUILDDIR=$B timeout 400 tests/gpu/faults.sh 2>&1 | tee "$R/gpu-faults.log"
fi

if has record; then
	step record test-app kernels, with the Speed-of-Light composites for calibration
	for k in $("$APP" --list); do
		timeout 120 "$GA" $REC -o "$R/recorded/testapp-$k.json" "$APP" --only "$k" \
			>"$R/report-$k.txt" 2>&1 || echo "record $k: status $?"
		head -30 "$R/report-$k.txt"
	done
	step one raw counter-data image for the offline evaluation test
	timeout 60 "$GA" --max-passes 0 --save-counter-data "$R/recorded/counter-image.bin" -c 1 \
		-o "$R/recorded/counter-image-profile.json" "$APP" --only copy_strided >/dev/null 2>&1
	ls -la "$R/recorded/counter-image.bin" && xz -9 -f "$R/recorded/counter-image.bin"
	step default metric set: passes and a full test-app report
	"$GA" --list-metrics --chip GH100 | tail -1
	timeout 120 "$GA" --min-share 0 --format json -o "$R/recorded/testapp-all.json" "$APP" --repeat 3 >"$R/testapp-all.report.json" 2>"$R/testapp-all.err"
	cat "$R/testapp-all.err"
	timeout 60 "$GA" --import "$R/recorded/testapp-all.json" | tee "$R/testapp-all.txt" | head -80
	step stall reasons: the coalescing demo with --stalls
	timeout 120 "$GA" --stalls -o "$R/recorded/demo-coalescing-stalls.json" \
		"$B/kernels/gpuadvise-demo-coalescing" --reps 4 --warmup 1 2>&1 | grep -A8 'source lines'
	# the kernel paths as the build recorded them, made repository-relative
	sed -i -E 's#"[^"]*/kernels/(demo_[a-z_]+\.cu)"#"kernels/\1"#g' \
		"$R/recorded/demo-coalescing-stalls.json"
fi

if has demos; then
	step demos, recorded for machines without a GPU
	timeout 420 "$GA" --demo all $REC -o "$R/recorded" >"$R/demo-all.txt" 2>"$R/demo-all.err"
	echo "status $?"
	tail -20 "$R/demo-all.err"
	grep -A14 '^Summary' "$R/demo-all.txt"
fi

if has models; then
	step the rules' estimate models on the fresh recordings
	# Recorded with the width-aware coalescing inputs
	# (smsp__sass_data_bytes_mem_global_op_{ld,st}.sum): every finding's
	# estimate and range recomputed from the metrics (tests/models).
	python3 tests/models/check_models.py "$GA" . "$R/recorded" >"$R/models.txt" 2>&1
	echo "status $?"
	tail -40 "$R/models.txt"
fi

if has demorun; then
	step demos with the default metric sets, not recorded
	timeout 420 "$GA" --demo all >"$R/demorun.txt" 2>"$R/demorun.err"
	echo "status $?"
	tail -3 "$R/demorun.err"
	grep -A14 '^Summary' "$R/demorun.txt"
	grep -c 'not checked' "$R/demorun.txt"
fi

if has torch; then
	step "PyTorch workload, plain and profiled under emit_nvtx, recording each launch's operation"
	timeout 120 python3 tests/gpu/pytorch_workload.py >"$R/torch-plain.txt" 2>&1
	timeout 300 "$GA" -o "$R/recorded/pytorch.json" python3 tests/gpu/pytorch_nvtx.py --workload \
		>"$R/torch-prof.txt" 2>"$R/torch-prof.err"
	echo "status $?"
	tail -5 "$R/torch-prof.err"
	grep -v '^ ' "$R/torch-plain.txt" | grep -E '(^| )ok$|checksum' >"$R/torch-plain.lines"
	grep -E '(^| )ok$|checksum' "$R/torch-prof.txt" | grep -v '^ ' >"$R/torch-prof.lines"
	cmp "$R/torch-plain.lines" "$R/torch-prof.lines" && echo "pytorch output unchanged"
	head -60 "$R/torch-prof.txt"
fi

if has nvtx; then
	step PyTorch model under emit_nvtx: operations from NVTX ranges
	timeout 300 "$GA" --format json --log-file "$R/nvtx.report.json" -o "$R/recorded/pytorch-nvtx.json" \
		python3 tests/gpu/pytorch_nvtx.py >"$R/nvtx.out" 2>"$R/nvtx.err"
	echo "status $?"
	tail -5 "$R/nvtx.err"
	python3 tests/gpu/pytorch_nvtx.py --check "$R/nvtx.report.json"
	echo "check status $?"
	timeout 300 "$GA" python3 tests/gpu/pytorch_nvtx.py 2>/dev/null | sed -n '/^Operations/,/^$/p'
	python3 - "$R/recorded/pytorch.json" <<'PY'
import collections, json, sys
p = json.load(open(sys.argv[1]))
n = collections.Counter(l.get("nvtx") for l in p["launches"])
print("pytorch.json launches by nvtx path:")
for k, v in n.most_common(12):
    print(f"  {v:4} {k}")
PY
fi

if has framework; then
	step PyTorch framework-level fixes measured: TF32, bf16, torch.compile, SDPA kernels
	timeout 300 python3 bench/framework_fixes.py "$R/framework-fixes.json" >/dev/null \
		2>"$R/framework-fixes.err"
	echo "status $?"
	tail -3 "$R/framework-fixes.err"
	cat "$R/framework-fixes.json" 2>/dev/null
	# What gpuadvise estimated for the same fixes on the workload.
	"$GA" --format json --import tests/fixtures/recorded/pytorch.json 2>/dev/null |
		python3 -c 'import json, sys
r = json.load(sys.stdin)
for a in r["summary"]["actions"]:
    print("estimated: %-26s saves %5.1f %% of GPU time" % (a["rule"], 100 * a["saving"]))
    for i in a["findings"]:
        f = r["findings"][i]
        print("    %-60s kernel speedup %s" % (r["kernels"][f["kernel"]]["name"][:60],
                                               f.get("estimated_speedup")))'
fi

if has train; then
	step PyTorch training loop: which kernels --min-share leaves at one launch
	for s in 0 1; do
		timeout 200 "$GA" --min-share $s --format json --log-file "$R/train-share$s.report.json" \
			-o "$R/train-share$s.json" python3 tests/gpu/pytorch_train.py 100 >/dev/null 2>&1
		echo "--min-share $s: status $?"
		python3 - "$R/train-share$s.report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["profile"]["collection"]
print(f"  {len(r['kernels'])} kernels, {len(r['profile']['launches'])} launches profiled, "
      f"measure {c.get('profiler_measure_seconds', 0):.2f} s, wall {c['wall_seconds']:.2f} s")
for k in sorted(r["kernels"], key=lambda k: -k["share"]):
    print(f"  {100 * k['share']:6.2f} %  {k['launches']:2} + {k['unprofiled_launches']:4}  "
          f"{'below ' if k['below_min_share'] else '      '} {k['class']:10} {k['name'][:60]}")
PY
	done
fi

if has train2; then
	step transformer training, plain and under gpuadvise, step and CUDA graph
	timeout 120 python3 tests/gpu/transformer_train.py --count-launches 2>&1 | tail -1
	for v in "" --graph; do
		n=train2${v:+-graph}
		s0=$(date +%s.%N)
		timeout 300 python3 tests/gpu/transformer_train.py $v >"$R/$n-plain.txt" 2>"$R/$n-plain.err"
		echo "plain $v: status $?"; s1=$(date +%s.%N)
		rm -f "$R/$n.timing"
		GPUADVISE_TIMING_LOG=$R/$n.timing timeout 540 "$GA" --format json \
			--log-file "$R/$n.report.json" -o "$R/$n.json" \
			python3 tests/gpu/transformer_train.py $v >"$R/$n-prof.txt" 2>"$R/$n-prof.err"
		echo "gpuadvise $v: status $?"; s2=$(date +%s.%N)
		tail -3 "$R/$n-prof.err"
		# loop replay's own account: passes, broken passes, launches
		# serialized, which budget ended it (loop_over 1: launches, 2: breaks)
		grep -o 'loop_[a-z]* [0-9]*' "$R/$n.timing" 2>/dev/null | paste -sd' '
		python3 -c 'import json,sys; print("note:", json.load(open(sys.argv[1]))["collection"].get("note", ""))' \
			"$R/$n.json" 2>/dev/null
		python3 tests/gpu/check_train2.py "$R/$n-plain.txt" "$R/$n-prof.txt" "$R/$n.report.json" \
			"$(awk "BEGIN { print $s1 - $s0 }")" "$(awk "BEGIN { print $s2 - $s1 }")"
		echo "check $v: status $?"
	done
	cp "$R/train2.json" "$R/recorded/pytorch-transformer.json" 2>/dev/null
fi

if has timeline; then
	step "timeline: the transfers demo and a PyTorch step recorded, and the timeline's cost"
	timeout 200 "$GA" --demo transfers $REC -o "$R/recorded/demo-transfers.json" >"$R/demo-transfers.txt" 2>"$R/demo-transfers.err"
	echo "status $? (transfers demo)"; tail -3 "$R/demo-transfers.err"; grep -B3 -A12 'Step 2' "$R/demo-transfers.txt"
	# A PyTorch timeline for the tests without a GPU: the 4-layer
	# transformer's steps, no counters.
	LAYERS=4 STEPS=40 timeout 200 "$GA" --timeline-only -o "$R/recorded/pytorch-transformer-timeline.json" \
		python3 tests/gpu/transformer_train.py >"$R/tf-tl.txt" 2>"$R/tf-tl.err"
	echo "status $? (transformer, --timeline-only)"; grep -v Warning "$R/tf-tl.err" | tail -3
	grep -A3 'busy' "$R/tf-tl.txt" | head -8
	python3 tests/gpu/torch_busy.py
	# The timeline's cost: the step loop plain, under --timeline-only, and
	# with only some of its GPU records (GPUADVISE_TIMELINE_KINDS),
	# TL_ROUNDS rounds of TL_STEPS steps in rotated order.
	bench/probe/tl-cost.sh --timeline-only "$B" "${TL_ROUNDS:-3}" "${TL_STEPS:-40}" |
		tee "$R/tl-overhead.txt"
	# and inside a default run, against the same run with --no-timeline
	VARIANTS="plain default notl" bench/probe/tl-cost.sh "$B" "${TL_ROUNDS:-3}" "${TL_STEPS:-40}" |
		tee "$R/tl-default.txt"
fi


if has ncu; then
	step ncu Speed-of-Light on the test app, for comparison
	timeout 200 ncu --section SpeedOfLight --csv "$APP" >"$R/ncu-sol.csv" 2>"$R/ncu-sol.err"
	echo "status $?"; tail -3 "$R/ncu-sol.err"
fi

if has phases; then
	step where the injection library spends its time
	timeout 300 bench/phases.sh "$B" 2>&1 | tee "$R/phases.txt"
fi

if has bench; then
	step overhead benchmark
	timeout 540 bench/overhead.sh "$B" "${BENCH_REPS:-2}" 2>&1 | tee "$R/overhead.txt"
fi

step pack
# Kernel source paths as the build recorded them, made repository-relative,
# so that the fixtures mean the same in any checkout.
for f in "$R"/recorded/*.json; do
	[ -f "$f" ] && sed -i -E -e 's#"[^"]*/kernels/([A-Za-z0-9_/]+\.cu)"#"kernels/\1"#g' \
		-e "s#$PWD/##g" "$f"
done
tar -C "$R" -cJf "$OUT/results.tar.xz" .
cp "$R/gpu-suite.log" "$R/gpu-faults.log" "$R/gpu-timeline.log" "$R/tl-overhead.txt" "$OUT/" 2>/dev/null
ls -la "$OUT"
