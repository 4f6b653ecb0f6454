#!/bin/sh
# Replay passes as launches of their own (user replay from a checkpoint,
# the default) against CUPTI's kernel replay (GPUADVISE_PASS_REPLAY=0), and
# with the range profiler configured before every launch (=reconfig), on
# the test app and three demo programs (PROGS: also torch, the PyTorch
# workload, and transformer, 100 training steps), in turns (VARIANTS),
# ROUNDS times; then every metric of every launch compared between the
# modes (last round's profiles), and the reports.
# usage: bench/probe/pass-ab.sh BUILD OUT [ROUNDS]
b=${1:?build}; out=${2:?out}; rounds=${3:-3}
k=$b/kernels
progs=${PROGS:-testapp demo-atomics demo-matmul demo-reduction}
variants=${VARIANTS:-user kernel reconfig plain}
mkdir -p "$out"
t() { s=$(date +%s.%N); "$@" >"$out/$prog-$v.stdout" 2>&1; e=$(date +%s.%N); awk "BEGIN { printf \"%.2f\", $e - $s }"; }
for prog in $progs; do
	case $prog in
	torch) app=python3; args=tests/gpu/pytorch_workload.py ;;
	transformer) app=python3; args=tests/gpu/transformer_train.py ;;
	demo-*) app=$k/gpuadvise-$prog; args="--reps 1 --warmup 0" ;;
	*) app=$k/gpuadvise-$prog; args= ;;
	esac
	for i in $(seq "$rounds"); do
		for v in $variants; do
			rm -f "$out/$prog-$v.json"   # -o does not overwrite
			case $v in
			plain) x=$(t "$app" $args) ;;
			user) x=$(t env GPUADVISE_TIMING_LOG="$out/$prog-$v.timing" GPUADVISE_SOURCE_LOG="$out/$prog-$v.log" "$b/gpuadvise" -o "$out/$prog-$v.json" "$app" $args) ;;
			kernel) x=$(t env GPUADVISE_PASS_REPLAY=0 GPUADVISE_TIMING_LOG="$out/$prog-$v.timing" "$b/gpuadvise" -o "$out/$prog-$v.json" "$app" $args) ;;
			reconfig) x=$(t env GPUADVISE_PASS_REPLAY=reconfig GPUADVISE_TIMING_LOG="$out/$prog-$v.timing" "$b/gpuadvise" -o "$out/$prog-$v.json" "$app" $args) ;;
			esac
			echo "$prog round $i $v $x s"
		done
	done
	for v in $variants; do
		[ "$v" = plain ] && continue
		python3 - "$out/$prog-kernel.json" "$out/$prog-$v.json" "$prog $v" <<'PY'
import json, math, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
def launches(p):
    d = {}
    for l in p['launches']:
        d.setdefault((l['name'], tuple(l.get('grid', [])), tuple(l.get('block', []))), l)
    return d
la, lb = launches(a), launches(b)
bad = []; n = 0; ratios = []
for key, x in la.items():
    y = lb.get(key)
    if y is None:
        bad.append(('missing', key[0][:40])); continue
    for m, v in x['values'].items():
        w = y['values'].get(m)
        if v is None or w is None:
            if (v is None) != (w is None): bad.append(('null', key[0][:30], m))
            continue
        n += 1
        if max(abs(v), abs(w)) < 1e-9: continue
        r = w / v if v else float('inf')
        ratios.append(r)
        if abs(r - 1) > 0.05 and abs(w - v) > 1e-3 * max(abs(v), 1):
            bad.append((key[0][:30], m, round(v, 4), round(w, 4)))
ratios.sort()
print(sys.argv[3], 'launches', len(la), len(lb), 'values', n,
      'ratio median', ratios[len(ratios)//2] if ratios else None, 'off by >5 %', len(bad))
for x in bad[:40]: print('  ', x)
print('  classes', [(l['name'][:20], l.get('class')) for l in b['launches']][:12])
PY
		python3 - "$out/$prog-$v.timing" <<'PY'
import sys
keep = ('profiled', 'objects', 'user_launches', 'user_relaunches', 'user_fallbacks',
        'user_relaunch_s', 'start', 'kernel', 'stop', 'config')
for line in open(sys.argv[1]):
    t = line.split(); d = dict(zip(t[0::2], t[1::2]))
    if d.get('profiled', '0') != '0':
        print('   ', ' '.join('%s %s' % (k, d[k]) for k in keep if k in d))
PY
	done
done
grep -h "Restore\|replay of\|note" "$out"/*-user.log 2>/dev/null | sort | uniq -c | sort -rn | head
for prog in $progs; do
	grep -h "^loss" "$out/$prog-"*.stdout | sort | uniq -c | head -20
	for v in user kernel; do
		"$b/gpuadvise" --color=never --import "$out/$prog-$v.json" >"$out/$prog-$v.report" 2>&1
	done
	echo "== $prog report, kernel replay -> user replay"
	diff "$out/$prog-kernel.report" "$out/$prog-user.report" | head -40
done
