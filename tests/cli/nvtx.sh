#!/bin/sh
# tests/cli/nvtx.sh: NVTX ranges on the way from the program to the report
# (issue 26, item 3), with no GPU.  The program, run through the stand-in
# driver library (fakecuda.c), plays the injection library: it writes the
# records a PyTorch step under emit_nvtx() would leave (launches with their
# range paths, unprofiled launches of one path) and what it found in its
# environment.  Checked: the launcher names the injection library as NVTX's
# (NVTX_INJECTION64_PATH, as CUDA's), --nvtx=off leaves NVTX alone, and the
# records become operations in the report and paths in the saved profile.
#
# Environment (tests/meson.build sets them): GPUADVISE, SRCDIR, FAKECUDA_DIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
cli_setup nvtx
unset NVTX_INJECTION64_PATH
mkdir -p "$T/bin"

run() {
	(cd "$T" && TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR NVTX_ENV_OUT=$T/env \
		timeout 60 "$GPUADVISE" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# Two launches of gemm (300 and 100 ns) and two unprofiled ones in
# train_step/aten::linear/aten::addmm, one of norm (100 ns) in
# train_step/aten::layer_norm/aten::native_layer_norm.
cat >"$T/bin/step.sh" <<'EOF'
#!/bin/sh
echo "nvtx=${NVTX_INJECTION64_PATH:-unset} cuda=${CUDA_INJECTION64_PATH:-unset}" >"$NVTX_ENV_OUT"
r=$GPUADVISE_RUN_DIR/$$.rec
printf '{"type":"start","pid":%d,"ppid":1}\n' $$ >>"$r"
printf '{"type":"device","pid":%d,"context":1,"device":{"name":"Stand-in","sm_count":2},"passes":1,"metrics":["gpu__time_duration.sum"],"sets":[{"passes":1,"metrics":["gpu__time_duration.sum"]}]}\n' $$ >>"$r"
launch() {
	printf '{"type":"launch","pid":%d,"name":"%s","mangled":"%s","index":%d,"grid":[1,1,1],"block":[32,1,1],"duration_ns":%s,"metric_set":0,"values":{"gpu__time_duration.sum":%s},"nvtx":"%s"}\n' \
		$$ "$1" "$1" "$2" "$3" "$3" "$4" >>"$r"
}
launch gemm 0 300 "train_step/aten::linear/aten::addmm"
launch norm 1 100 "train_step/aten::layer_norm/aten::native_layer_norm"
launch gemm 2 100 "train_step/aten::linear/aten::addmm"
printf '{"type":"unprofiled","pid":%d,"mangled":"gemm","grid":[1,1,1],"block":[32,1,1],"launches":2,"nvtx":"train_step/aten::linear/aten::addmm"}\n' $$ >>"$r"
printf '{"type":"end","pid":%d,"launches":5,"matched":5,"profiled":3}\n' $$ >>"$r"
EOF
chmod +x "$T/bin/step.sh"

run /bin/true
if grep -q 'built without CUPTI' "$T/err"; then
	skip "NVTX through a live run: this gpuadvise was built without CUPTI"
	tap_end
	exit $?
fi

run --format json -o "$T/profile.json" "$T/bin/step.sh"
check "a step under emit_nvtx -> 0, JSON report" 0 out '"operations"'
cp "$T/out" "$T/report.json"
same_library() {
	n=$(sed -n 's/^nvtx=\([^ ]*\) .*/\1/p' "$T/env")
	c=$(sed -n 's/.* cuda=//p' "$T/env")
	[ "$n" = "$c" ] && [ "${n##*/}" = libgpuadvise-inject.so ]
}
expect "NVTX_INJECTION64_PATH names the injection library, as CUDA_INJECTION64_PATH" same_library
# The expected times from the records above: gemm's mean is (300 + 100) / 2,
# charged to its two unprofiled launches.
ops_right() {
	python3 - "$T/report.json" "$T/profile.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
gemm = 300 + 100 + 2 * (300 + 100) / 2
norm = 100
ops = {o["name"]: o for o in r["operations"]}
assert list(ops) == ["aten::addmm", "aten::native_layer_norm"], list(ops)
a, n = ops["aten::addmm"], ops["aten::native_layer_norm"]
assert abs(a["time_ns"] - gemm) < 1e-9 and a["launches"] == 4, a
assert abs(a["share"] - gemm / (gemm + norm)) < 1e-12, a
assert a["path"] == "train_step/aten::linear/aten::addmm", a
assert abs(n["share"] - norm / (gemm + norm)) < 1e-12, n
assert [k["fraction"] for k in a["kernels"]] == [1.0], a
assert [l["nvtx"] for l in p["launches"]].count("train_step/aten::linear/aten::addmm") == 2
assert p["unprofiled"][0]["nvtx"] == "train_step/aten::linear/aten::addmm"
PY
}
expect "... operations: aten::addmm with its unprofiled launches at gemm's mean, then layer norm" \
	ops_right
run --no-roofline "$T/bin/step.sh"
check "text report: the Operations section" 0 out '^ 1\. aten::addmm: 88\.9% of GPU time, 1 kernel, 4 launches$'

# NVTX takes the injection library as its tool, as it would in a program
# with NVTX ranges: the library exports InitializeInjectionNvtx2 and hands
# NVTX's table to CUPTI's, which accepts it (returns 1).  Without a GPU
# CUPTI takes no subscriber, so the callbacks themselves are the GPU
# suite's (tests/gpu/pytorch_nvtx.py).
if [ -n "${NVTXAPP:-}" ] && [ -n "${INJECT:-}" ]; then
	NVTX_INJECTION64_PATH=$INJECT LD_LIBRARY_PATH=$FAKECUDA_DIR "$NVTXAPP" >"$T/out" 2>"$T/err"
	rc=$?
	check "NVTX's InitializeInjectionNvtx2 in the injection library: CUPTI's accepts NVTX" 0 out \
		'^InitializeInjectionNvtx2: 1$'
else
	skip "NVTX handing over to CUPTI: no injection library in this build"
fi

NVTX_INJECTION64_PATH=/opt/some/other/tool.so
export NVTX_INJECTION64_PATH
run --nvtx=off --no-roofline "$T/bin/step.sh"
unset NVTX_INJECTION64_PATH
check "--nvtx=off -> 0" 0 out '^What to do first'
expect "... leaves the program's NVTX_INJECTION64_PATH as it was" \
	grep -q '^nvtx=/opt/some/other/tool.so ' "$T/env"
expect "... and shows no operations" sh -c "! grep -q '^Operations' '$T/out'"

tap_end
