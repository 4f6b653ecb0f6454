#!/bin/sh
# Source lines of kernels launched once (sassreplay.c), on the GPU machine:
# each pair's slow side once, with --source (every kernel measured again
# after its memory is restored) and the default source mode; the pairs
# binary checks the kernel's output, so a launch whose effect went in twice
# (atomics-sum adds into one total) or not at all fails.  Also the nvdisasm
# listing the opcodes come from.  usage: bench/probe/replay.sh BUILD OUT
b=${1:?build}; out=${2:?out}
mkdir -p "$out"
pairs=$b/kernels/gpuadvise-pairs
nvidia-smi -L
command -v nvdisasm || ls -l /usr/local/cuda/bin/nvdisasm
ls /usr/local/cuda/extras/CUPTI/lib64 2>/dev/null | grep -i checkpoint
for p in poly-pow atomics-sum reduce-tree sfu-exp intdiv-modulo; do
	for mode in default source; do
		flag=; [ $mode = source ] && flag=--source
		GPUADVISE_SOURCE_LOG=$out/$p.$mode.srclog timeout 120 "$b/gpuadvise" $flag --format json \
		    --log-file "$out/$p.$mode.json" -- "$pairs" --pair "$p" --side slow --launches 1 \
		    >"$out/$p.$mode.log" 2>&1
		echo "$p $mode: rc=$? $(grep -ci 'check\|mismatch\|fail' "$out/$p.$mode.log") check lines"
		grep -i "replay\|checkpoint\|nvdisasm\|opcodes\|note" "$out/$p.$mode.srclog" | head -12
		python3 - "$out/$p.$mode.json" <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
srcs = d['profile'].get('sources', [])
for s in srcs:
    c = collections.Counter()
    for pc in s['pcs']:
        if pc.get('op') and pc.get('inst'):
            c[pc['op']] += pc['inst']
    print(' source', s['mangled'][:40], len(s['pcs']), 'pcs; top ops', c.most_common(6))
for f in d['findings'][:3]:
    print(' ', f['kernel_name'][:40], f['rule'], round(f.get('estimated_speedup') or 0, 2),
          [round(x, 2) for x in f.get('expected_speedup') or []])
PY
	done
done
# The listing the opcodes come from.
mkdir -p "$out/elf" && (cd "$out/elf" && cuobjdump -xelf all "$OLDPWD/$pairs" >/dev/null 2>&1; ls)
for f in "$out"/elf/*.cubin; do
	nvdisasm -c "$f" >"$f.sass" 2>&1
	echo "$f: $(wc -l <"$f.sass") lines"
done
