#!/bin/bash
# Which part of a default run keeps kernel records out of the timeline of a
# program killed with SIGKILL (tests/gpu/timeline.sh, check 3): the same
# program under the default run, --no-source, --no-loop-replay and
# --timeline-only, each killed after 7 s; its last snapshot's kernel count.
# On the GPU machine, from the repository root, with build-dev built:
# OUT=DIR bench/probe/kill-kernels.sh
B=build-dev; GA=$B/gpuadvise; APP=$B/kernels/gpuadvise-testapp; T=$OUT/kk
mkdir -p $T
for v in default no-source no-loop timeline-only; do
	case $v in
	default) opt= ;; no-source) opt=--no-source ;; no-loop) opt=--no-loop-replay ;;
	timeline-only) opt=--timeline-only ;;
	esac
	export TMPDIR=$T/$v; mkdir -p $TMPDIR
	$GA $opt -o $T/$v.json $APP --only tiny_add --repeat 100 --rounds 100000 >/dev/null 2>$T/$v.err &
	ga=$!
	sleep 7
	f=$(ls $TMPDIR/gpuadvise-run-*/*.timeline.json 2>/dev/null | head -1)
	[ -n "$f" ] && python3 -c "
import json;t=json.load(open('$f'))
print('$v: snapshot wall_s', round(t['wall_ns']/1e9,2), 'kernels', sum(k['launches'] for k in t['kernels']), 'launch calls', t['host_calls']['launch'], 'dropped', t.get('dropped_records'))" || echo "$v: no snapshot"
	pkill -9 -x gpuadvise-testa; wait $ga
	python3 -c "
import json;p=json.load(open('$T/$v.json'));print('  final: errors', [e for e in p.get('errors',[])][:3], '| note', (p['collection'].get('note') or '')[:160])" 2>&1 | head -3
done
echo "== child processes: each measured (counters retried while the other's teardown holds them)"
for i in 1 2 3 4; do
	$GA -o $T/fork$i.json $APP --only tiny_add,copy_coalesced --fork 2 >/dev/null 2>$T/fork$i.err
	python3 -c "
import json;p=json.load(open('$T/fork$i.json'))
print('fork $i: processes measured', len({l.get('pid') for l in p['launches']}), '| note', (p['collection'].get('note') or '')[:120])"
done
