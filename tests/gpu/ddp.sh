#!/bin/sh
# Two ranks of data-parallel training (tests/gpu/ddp_train.py) under
# torchrun, one GPU each, NCCL all-reduce: the run gpuadvise must finish.
# Exits 77 with fewer than 2 GPUs or without torch.  Environment:
#   GPUADVISE  the gpuadvise binary   STEPS  training steps (default 50)
#   DDP_OUT    a directory to keep the profiles and reports in (below)
# Checks: gpuadvise ends (no hang) with status 0, the loss is the one of
# the plain run, both ranks were measured at once (each on its GPU: no rank
# waited for the other's counters), the collectives were never replayed
# (the note says so), every other kernel of at least 1 % of a rank's GPU
# time has every rule checked, each process recorded its rank, world size
# and GPU and the report has a Ranks table of two with communication time
# on both, and no run directory is left.  Then the way of several hosts:
# torchrun starts gpuadvise once per rank, each writing prof-RANK.json
# (-o prof-%q{RANK}.json), and one --import of both gives the Ranks table
# again.  Prints the wall times.  With DDP_OUT, keeps there:
#   ddp-2rank-pooled.json          the profile of the first way (both ranks)
#   ddp-2rank-pooled.report.json   its JSON report, .txt its text report
#   ddp-2rank-rank0.json, -rank1.json   the second way's per-rank profiles
#   ddp-2rank-merged.txt, .json    their --import report
# (the recordings tests/fixtures/recorded/ddp-2rank-*.json are made from).
set -u
GA=${GPUADVISE:-build/gpuadvise}
# absolute: the per-rank run starts it from its own directory
GA=$(cd "$(dirname "$GA")" && pwd)/$(basename "$GA")
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
python3 - "$T/ddp.report.json" "$T/ddp.json" <<'PY' && pass "DDP: both ranks recorded (rank, world size, host, GPU), a Ranks table of two, communication on both" || fail "DDP: ranks not recorded or not reported"
import json, sys
r = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
bad = []
procs = [x for x in p.get("processes", []) if x.get("rank") is not None]
if sorted(x["rank"] for x in procs) != [0, 1]:
    bad.append("ranks recorded: %s" % [x.get("rank") for x in p.get("processes", [])])
for x in procs:
    if x.get("world_size") != 2 or x.get("rank_from") != "RANK" or not x.get("host"):
        bad.append("rank %s: %s" % (x.get("rank"), x))
    if not x.get("gpus") or not x["gpus"][0].get("uuid"):
        bad.append("rank %s: no GPU UUID" % x.get("rank"))
uuids = {x["gpus"][0].get("uuid") for x in procs if x.get("gpus")}
if len(uuids) != 2:
    bad.append("the ranks' GPUs: %s" % uuids)
rk = r.get("ranks")
if not rk or rk["count"] != 2:
    bad.append("report ranks: %s" % (rk and rk["count"]))
else:
    for x in rk["ranks"]:
        print("#   rank %d: GPU time %.1f ms, communication %.1f%%, busy %s, top %s" % (
            x["rank"], x["gpu_ns"] / 1e6, 100 * (x["comm_share"] or 0), x["busy_share"],
            x["top"] and x["top"]["rule"]))
        if not x["comm_ns"]:
            bad.append("rank %d: no communication kernel time" % x["rank"])
for f in r.get("program_findings", []):
    print("#   %s on pid %d: %s" % (f["rule"], f["pid"], f["estimate"]))
for b in bad:
    print("   ", b)
sys.exit(1 if bad else 0)
PY
if [ -n "${DDP_OUT:-}" ]; then
	mkdir -p "$DDP_OUT"
	cp "$T/ddp.json" "$DDP_OUT/ddp-2rank-pooled.json"
	cp "$T/ddp.report.json" "$DDP_OUT/ddp-2rank-pooled.report.json"
	"$GA" --import "$T/ddp.json" >"$DDP_OUT/ddp-2rank-pooled.txt" 2>&1
fi

# The way of several hosts (srun or mpirun start gpuadvise once per rank):
# here torchrun starts it, and it runs the training script of its rank.
mkdir -p "$T/ranks"
t3=$(date +%s.%N)
(cd "$T/ranks" && STEPS=${RANK_STEPS:-30} timeout -k 10 600 python3 -m torch.distributed.run \
	--standalone --nproc_per_node 2 --no-python "$GA" -o 'prof-%q{RANK}.json' \
	python3 "$HERE/ddp_train.py") >"$T/ranks.out" 2>"$T/ranks.err"
st=$?
t4=$(date +%s.%N)
if [ $st -eq 0 ] && [ -s "$T/ranks/prof-0.json" ] && [ -s "$T/ranks/prof-1.json" ]; then
	pass "DDP, gpuadvise per rank: status 0, prof-0.json and prof-1.json"
else fail "DDP, gpuadvise per rank: status $st"; tail -30 "$T/ranks.err"; fi
(cd "$T/ranks" && "$GA" --import prof-*.json) >"$T/merged.txt" 2>"$T/merged.err" &&
	(cd "$T/ranks" && "$GA" --format json --import prof-*.json) >"$T/merged.json" 2>>"$T/merged.err"
st=$?
if [ $st -eq 0 ] && grep -q '^Ranks$' "$T/merged.txt" &&
	python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r['ranks']['count'] != 2)" "$T/merged.json"; then
	pass "DDP, per-rank files: one --import, a Ranks table of two"
else fail "DDP, per-rank files: --import status $st"; cat "$T/merged.err"; fi
sed -n '/^Ranks$/,/^$/p' "$T/merged.txt" | sed 's/^/# /'
if [ -n "${DDP_OUT:-}" ]; then
	cp "$T/ranks/prof-0.json" "$DDP_OUT/ddp-2rank-rank0.json" 2>/dev/null
	cp "$T/ranks/prof-1.json" "$DDP_OUT/ddp-2rank-rank1.json" 2>/dev/null
	cp "$T/merged.txt" "$DDP_OUT/ddp-2rank-merged.txt"
	cp "$T/merged.json" "$DDP_OUT/ddp-2rank-merged.json"
fi

# (torchrun leaves its own torchelastic_* folders in TMPDIR)
left=$(ls -d "$TMPDIR"/gpuadvise-run-* 2>/dev/null)
[ -z "$left" ] && pass "DDP: no run directory left behind" ||
	fail "DDP: run directory left behind: $left"
python3 -c "import sys; a, b, c, d, e = map(float, sys.argv[1:]); print(f'# DDP wall: plain {b - a:.1f} s, under gpuadvise {c - b:.1f} s (x{(c - b) / (b - a):.2f}), gpuadvise per rank {e - d:.1f} s')" "$t0" "$t1" "$t2" "$t3" "$t4"
grep '^loop_s' "$T/plain.out" "$T/prof.out" | sed 's/^/# /'
rm -rf "$T"
echo "$fails failed"
[ $fails -eq 0 ]
