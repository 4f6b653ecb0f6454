#!/bin/bash
# Two GPU-suite checks that fail now and then, watched closely: child
# processes (--fork 2) each measured, and the timeline's snapshots of a
# program later killed with SIGKILL.  On the GPU machine, from the
# repository root, with build-dev built: OUT=DIR bench/probe/fork-kill.sh
B=build-dev; GA=$B/gpuadvise; APP=$B/kernels/gpuadvise-testapp; T=$OUT
for i in 1 2 3 4; do
	/usr/bin/time -f "wall %e s" $GA -o $T/fork$i.json $APP --only tiny_add,copy_coalesced --fork 2 >/dev/null 2>$T/fork$i.err
	echo "fork run $i: status $?; $(tail -1 $T/fork$i.err)"
	python3 - $T/fork$i.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
c = p["collection"]
print("  pids with launches", sorted({l.get("pid") for l in p["launches"]}),
      "timelines", [t["pid"] for t in p.get("timelines", [])])
print("  note", c.get("note"), "| errors", [e for e in p.get("errors", [])][:4])
PY
	grep -v "^wall" $T/fork$i.err | head -5
done
echo "== SIGKILL: the run directory's snapshots over time"
export TMPDIR=$T/tmp; mkdir -p $TMPDIR
$GA -o $T/kill.json $APP --only tiny_add --repeat 100 --rounds 100000 >/dev/null 2>$T/kill.err &
ga=$!
for s in 2 4 6 9 12; do
	sleep $(( s - ${prev:-0} )); prev=$s
	for f in $TMPDIR/gpuadvise-run-*/*.timeline.json; do
		[ -f "$f" ] || { echo "t=$s no snapshot yet"; continue; }
		python3 -c "
import json,sys;t=json.load(open('$f'))
print('t=$s', 'wall_s', round(t['wall_ns']/1e9,2), 'kernels', sum(k['launches'] for k in t['kernels']), 'busy_ns', [d['busy_ns'] for d in t['devices']], 'host_calls', t['host_calls'], 'dropped', t.get('dropped_records'))"
	done
	ls $TMPDIR/gpuadvise-run-*/ 2>/dev/null | head -8 | tr '\n' ' '; echo
done
pkill -9 -x gpuadvise-testa
wait $ga; echo "status $?"; tail -3 $T/kill.err
python3 -c "
import json;p=json.load(open('$T/kill.json'));t=p.get('timelines',[])
print('final', len(t), [x.get('complete') for x in t], sum(k['launches'] for x in t for k in x['kernels']), 'launches profiled', len(p['launches']), p['summary'].get('measured') if 'summary' in p else '')"
echo "== GPUADVISE_TIMELINE_KINDS=memcpy,memset (no kernel records): the report is written"
GPUADVISE_TIMELINE_KINDS=memcpy,memset $GA --format json --log-file $T/kinds.json $B/kernels/gpuadvise-demo-divergence --reps 4 --warmup 1 >/dev/null 2>$T/kinds.err
echo "status $?; report $(test -s $T/kinds.json && echo written || echo missing)"; tail -4 $T/kinds.err
echo "== owners by module: the test app and a PyTorch step"
$GA --format json --log-file $T/own-app.json $APP --only tiny_add,matmul_naive >/dev/null 2>&1
python3 - $T/own-app.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("  testapp owners", sorted({(k["name"][:30], k["owner"]) for k in r["kernels"]}))
PY
$GA -o $T/own-app-prof.json $APP --only tiny_add >/dev/null 2>&1
python3 -c "import json;p=json.load(open('$T/own-app-prof.json'));print('  testapp modules', sorted({l.get('module') for l in p['launches']}))"
if python3 -c 'import torch' 2>/dev/null; then
	LAYERS=2 STEPS=12 $GA -o $T/own-torch-prof.json --format json --log-file $T/own-torch.json python3 tests/gpu/transformer_train.py >/dev/null 2>$T/own-torch.err
	echo "torch status $?"
	python3 - $T/own-torch-prof.json $T/own-torch.json <<'PY'
import collections, json, sys
p = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
mods = collections.Counter(l.get("module") for l in p["launches"])
print("  torch modules", dict(mods))
own = collections.Counter(k["owner"] for k in r["kernels"])
print("  torch owners", dict(own))
src = [(f["rule"], r["kernels"][f["kernel"]]["owner"]) for f in r["findings"]
       if r["kernels"][f["kernel"]]["owner"] not in ("user", "triton") and not f["rule"].startswith("framework-")]
print("  source-level findings on library kernels:", src[:10])
PY
	tail -3 $T/own-torch.err | grep -v Warn
fi
