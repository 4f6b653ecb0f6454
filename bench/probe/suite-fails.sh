#!/bin/bash
# The GPU suite's checks that the timeline touches, alone and quickly, with
# controls: source lines with kernel records paused for the SASS launch
# (the default) and with no kernel records at all, child processes with
# and without the timeline, a program with no kernel, loop replay's counts,
# NVTX operations.  On the GPU machine, from the repository root, with
# build-dev built: OUT=DIR bench/probe/suite-fails.sh
B=build-dev; GA=$B/gpuadvise; APP=$B/kernels/gpuadvise-testapp; C="python3 tests/gpu/check_profile.py"
K=$PWD/kernels; T=$OUT
echo "== source lines, divergence (fix: kernel records paused)"
$GA --format json --log-file $T/div.json $B/kernels/gpuadvise-demo-divergence --reps 4 --warmup 1 >/dev/null 2>$T/div.err; echo "status $?"
$C source_line $T/div.json divergence_evenodd $K/demo_divergence.cu divergent-branch && echo "div OK"
echo "== control: no kernel records"
GPUADVISE_TIMELINE_KINDS=memcpy,memset $GA --format json --log-file $T/div2.json $B/kernels/gpuadvise-demo-divergence --reps 4 --warmup 1 >/dev/null 2>&1
$C source_line $T/div2.json divergence_evenodd $K/demo_divergence.cu divergent-branch && echo "div-nokernel OK"
echo "== transpose tiled"
$GA --format json --log-file $T/tr.json $B/kernels/gpuadvise-demo-transpose --variant tiled --reps 5 --warmup 0 >/dev/null 2>&1
$C source_line $T/tr.json transpose_tiled $K/demo_transpose.cu bank-conflict && echo "tr OK"
echo "== fork"
$GA -o $T/fork.json $APP --only tiny_add,copy_coalesced --fork 2 >/dev/null 2>$T/fork.err; echo "status $?"
$C pids $T/fork.json 2 && echo "fork OK"
python3 -c "import json;p=json.load(open('$T/fork.json'));print('note',p['collection'].get('note'));print('tl pids',[t['pid'] for t in p.get('timelines',[])])"
GPUADVISE_TIMELINE=0 $GA -o $T/fork0.json $APP --only tiny_add,copy_coalesced --fork 2 >/dev/null 2>&1
$C pids $T/fork0.json 2 && echo "fork no-timeline OK"
echo "== no kernels"
$GA $APP --no-kernels >/dev/null 2>$T/nok.err; echo "status $? (want 4)"; tail -2 $T/nok.err
echo "== loop defaults"
$GA --format json --log-file $T/lf.json $APP --only branch_evenodd,chain_one_warp,fma_loop,smem_conflict,tiny_add --rounds 12 >/dev/null 2>&1
python3 -c "import json;r=json.load(open('$T/lf.json'));print(r['summary']['measured'])"
echo "== nvtx ops"
$GA --format json --log-file $T/nvtx.json python3 tests/gpu/pytorch_nvtx.py >/dev/null 2>$T/nvtx.err; echo "status $?"
python3 tests/gpu/pytorch_nvtx.py --check $T/nvtx.json && echo "nvtx OK"
rm -f $T/*.json
