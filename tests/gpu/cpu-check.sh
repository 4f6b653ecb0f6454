#!/bin/bash
# The GPU machine's scripts, checked where there is no GPU (meson test
# gpu-scripts): every Python file of tests/gpu/ and bench/ compiles, the shell
# scripts parse, and check_train2.py (run-on-device.sh's train2 step) passes
# a good run and fails a run whose loss changed or whose large kernel was
# not fully checked.
set -u
SRC=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fail=1; }

# One interpreter for them all: starting one per file is most of the time.
python3 - "$SRC" "$T/c.pyc" "$SRC"/tests/gpu/*.py "$SRC"/bench/*.py >"$T/compiled" <<'PY' || fail=1
import py_compile, sys
src, out, rc = sys.argv[1], sys.argv[2], 0
for f in sys.argv[3:]:
    try:
        py_compile.compile(f, cfile=out, doraise=True)
        print("ok - compiles:", f[len(src) + 1:])
    except py_compile.PyCompileError as e:
        print("not ok - compiles:", f[len(src) + 1:], e.msg.splitlines()[-1])
        rc = 1
sys.exit(rc)
PY
cat "$T/compiled"
for f in "$SRC"/tests/gpu/*.sh "$SRC"/bench/*.sh; do
	bash -n "$f" && ok "parses: ${f#$SRC/}" || bad "parses: ${f#$SRC/}"
done

# transformer_train.py without torch (or without a GPU) exits 77.
if ! python3 -c 'import torch' 2>/dev/null; then
	python3 "$SRC/tests/gpu/transformer_train.py" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 77 ] && ok "transformer_train.py without torch: 77" ||
		bad "transformer_train.py without torch: status $rc, not 77"
	python3 "$SRC/tests/gpu/ddp_train.py" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 77 ] && ok "ddp_train.py without torch: 77" ||
		bad "ddp_train.py without torch: status $rc, not 77"
fi
# ddp.sh without two GPUs skips (77), whatever else is there.
PATH="$T/nogpu:$PATH"
mkdir -p "$T/nogpu" && printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-0)"\n' >"$T/nogpu/nvidia-smi"
chmod +x "$T/nogpu/nvidia-smi"
sh "$SRC/tests/gpu/ddp.sh" >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] && ok "ddp.sh with one GPU: 77" || bad "ddp.sh with one GPU: status $rc, not 77"

printf 'loss 9.1\nloss 8.2\nsteps 20 warmup 5 graph 0\nloop_s 2.0\n' >"$T/plain"
printf 'loss 9.1\nloss 8.2\nsteps 20 warmup 5 graph 0\nloop_s 2.5\n' >"$T/prof"
printf 'loss 9.1\nloss 8.3\nsteps 20 warmup 5 graph 0\nloop_s 2.5\n' >"$T/drift"
report() { # unchecked rules of the 40 % kernel, the small one's owner, its source, its class
	local src=''
	[ -n "${3:-}" ] && src=', "source": {"lineinfo": false}'
	cat <<JSON
{"kernels": [{"name": "big", "share": 0.4, "unchecked_rules": [$1], "owner": "user",
              "class": "memory", "source": {"lineinfo": true}},
             {"name": "small", "share": 0.005, "unchecked_rules": ["barrier-stalls"],
              "owner": "${2:-aten}", "class": ${4:-\"latency\"}, "timeline_launches": 1$src}],
 "summary": {"measured": {"kernel_replay": 9, "loop_replay": 3, "unprofiled_at_mean": 5,
             "graph_launches": 0}},
 "profile": {"collection": {"loop_replay_launches": 3}}}
JSON
}
report '' >"$T/good.json"
report '"barrier-stalls"' >"$T/partial.json"
C="$SRC/tests/gpu/check_train2.py"
out=$(python3 "$C" "$T/plain" "$T/prof" "$T/good.json" 10 12)
[ $? -eq 0 ] && ok "check_train2: a good run passes" || bad "check_train2: a good run passes"
case $out in *"loop 2.000 s plain, 2.500 s profiled: x1.25"*"x1.20"*) ok "check_train2: ratios";;
	*) bad "check_train2: ratios: $out";; esac
case $out in *"measured: kernel_replay 9, loop_replay 3, unprofiled_at_mean 5, graph_launches 0"*)
	ok "check_train2: launches by mechanism";;
	*) bad "check_train2: launches by mechanism: $out";; esac
case $out in *"1 of 1 kernels"*) ok "check_train2: the 0.5 % kernel is not counted";;
	*) bad "check_train2: kernels counted: $out";; esac
report '' aten yes >"$T/libsrc.json"
python3 "$C" "$T/plain" "$T/prof" "$T/libsrc.json" 10 12 >"$T/o" &&
	bad "check_train2: a library kernel with source lines fails" ||
	ok "check_train2: a library kernel with source lines fails"
grep -q 'FAIL aten kernel small measured for source lines' "$T/o" &&
	ok "check_train2: names the library kernel" || bad "check_train2: names the library kernel: $(cat "$T/o")"
report '' triton yes >"$T/tritonsrc.json"
python3 "$C" "$T/plain" "$T/prof" "$T/tritonsrc.json" 10 12 >"$T/o" &&
	ok "check_train2: a Triton kernel may have source lines" ||
	bad "check_train2: a Triton kernel may have source lines: $(cat "$T/o")"
python3 "$C" "$T/plain" "$T/drift" "$T/good.json" 10 12 >"$T/o" &&
	bad "check_train2: a changed loss fails" || ok "check_train2: a changed loss fails"
python3 "$C" "$T/plain" "$T/prof" "$T/partial.json" 10 12 >"$T/o" &&
	bad "check_train2: a large kernel not fully checked fails" ||
	ok "check_train2: a large kernel not fully checked fails"
grep -q 'FAIL 40.0 % big: not checked: barrier-stalls' "$T/o" &&
	ok "check_train2: names the rule" || bad "check_train2: names the rule"
report '' aten '' null >"$T/bare.json"
python3 "$C" "$T/plain" "$T/prof" "$T/bare.json" 10 12 >"$T/o" &&
	bad "check_train2: a kernel left unmeasured fails" ||
	ok "check_train2: a kernel left unmeasured fails"
grep -q 'FAIL not measured: small (launches timed: 1)' "$T/o" &&
	ok "check_train2: names the unmeasured kernel" ||
	bad "check_train2: names the unmeasured kernel: $(cat "$T/o")"
exit $fail
