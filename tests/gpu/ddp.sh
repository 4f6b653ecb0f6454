#!/bin/sh
# Two ranks of data-parallel training (tests/gpu/ddp_train.py) under
# torchrun, one GPU each, NCCL all-reduce: the run gpuadvise must finish.
# Exits 77 with fewer than 2 GPUs or without torch.  Environment:
#   GPUADVISE  the gpuadvise binary   STEPS  training steps (default 50)
# Checks: gpuadvise ends (no hang) with status 0, the loss is the one of
# the plain run, both ranks were measured at once (each on its GPU: no rank
# waited for the other's counters), the collectives were never replayed
# (the note says so), every other kernel of at least 1 % of a rank's GPU
# time has every rule checked, and no run directory is left.  Prints the
# two wall times.
set -u
GA=${GPUADVISE:-build/gpuadvise}
HERE=$(cd "$(dirname "$0")" && pwd)
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$n" -lt 2 ]; then
	echo "ok - # SKIP DDP: $n GPU(s) here, 2 needed"
	exit 77
fi
if ! python3 -c 'import torch.distributed' 2>/dev/null; then
	echo "ok - # SKIP DDP: torch is not installed"
	exit 77
fi
# NVLink multicast stays off (shared hosts).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export STEPS=${STEPS:-50}
T=$(mktemp -d)
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
fails=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; fails=$((fails + 1)); }
RUN="python3 -m torch.distributed.run --standalone --nproc_per_node 2 $HERE/ddp_train.py"

t0=$(date +%s.%N)
$RUN >"$T/plain.out" 2>"$T/plain.err"
st=$?
t1=$(date +%s.%N)
[ $st -eq 0 ] && pass "DDP reference run" || { fail "DDP reference run (status $st)"; tail -20 "$T/plain.err"; }

# The hang this guards against ran for ever: a bound well above the run.
timeout -k 10 600 "$GA" --format json --log-file "$T/ddp.report.json" -o "$T/ddp.json" $RUN \
	>"$T/prof.out" 2>"$T/prof.err"
st=$?
t2=$(date +%s.%N)
if [ $st -eq 0 ]; then pass "DDP under gpuadvise: status 0, no hang"
else fail "DDP under gpuadvise: status $st"; tail -30 "$T/prof.err"; fi
grep '^loss ' "$T/plain.out" >"$T/plain.loss"
grep '^loss ' "$T/prof.out" >"$T/prof.loss"
if [ -s "$T/plain.loss" ] && cmp -s "$T/plain.loss" "$T/prof.loss"; then
	pass "DDP: the loss is the plain run's ($(wc -l <"$T/plain.loss") lines)"
else fail "DDP: the loss differs"; diff "$T/plain.loss" "$T/prof.loss" | head; fi
if grep -q "held the counters" "$T/prof.err"; then
	fail "DDP: a rank waited for the other's counters"; grep "held the counters" "$T/prof.err"
else pass "DDP: both ranks measured at once, each on its GPU"; fi
if grep -q "communication kernel" "$T/prof.err"; then
	pass "DDP: the collectives were not replayed, and the note says so"
else fail "DDP: no note on the collectives"; cat "$T/prof.err" | tail -5; fi
python3 - "$T/ddp.report.json" "$T/ddp.json" <<'PY' && pass "DDP: two ranks, every kernel of >= 1 % of a rank's GPU time fully checked" || fail "DDP: ranks or kernels not checked"
import json, sys
r = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
pids = {l["pid"] for l in p["launches"]}
bad = []
if len(pids) != 2:
    bad.append(f"{len(pids)} processes measured (expected 2)")
if any(l["name"].startswith("ncclDevKernel") or l["name"].startswith("ncclKernel")
       for l in p["launches"]):
    bad.append("a collective was measured")
for k in r["kernels"]:
    # grouped per process: a share of both ranks' time, so 0.5 % is 1 % of one
    if k.get("share", 0) >= 0.005 and k.get("unchecked_rules"):
        bad.append(f"{k['name'][:60]}: {len(k['unchecked_rules'])} rules unchecked")
for b in bad:
    print("   ", b)
sys.exit(1 if bad else 0)
PY
# (torchrun leaves its own torchelastic_* folders in TMPDIR)
left=$(ls -d "$TMPDIR"/gpuadvise-run-* 2>/dev/null)
[ -z "$left" ] && pass "DDP: no run directory left behind" ||
	fail "DDP: run directory left behind: $left"
python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); print(f'# DDP wall: plain {b - a:.1f} s, under gpuadvise {c - b:.1f} s (x{(c - b) / (b - a):.2f})')" "$t0" "$t1" "$t2"
grep '^loop_s' "$T/plain.out" "$T/prof.out" | sed 's/^/# /'
rm -rf "$T"
echo "$fails failed"
[ $fails -eq 0 ]
