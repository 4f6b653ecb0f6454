#!/bin/sh
# Accuracy bench: how well gpuadvise's first fix and its estimate predict
# what the fix measures, on before/after kernel pairs. Needs a GPU.
#
# usage: bench/accuracy/run.sh [--fast] [--set calibration|validation] BUILD_DIR [OUT_DIR]
#
# The set picks the program: calibration (the default), the pairs of
# kernels/accuracy/ (gpuadvise-pairs); validation, the steps of public CUDA
# teaching code in kernels/validation/ (gpuadvise-validation). For each
# pair and control of the program's --list:
#   1. `--time NAME --reps 7`: both sides' medians and the measured speedup
#      (OUT/times.txt: NAME slow_us fast_us speedup);
#   2. gpuadvise with default settings on the slow side, one launch:
#      OUT/NAME.json (its log in OUT/NAME.log);
#   3. with --fast, gpuadvise on the fast side too, with the slow side's
#      report as --baseline: OUT/NAME.fast.json and OUT/NAME.fast.txt (the
#      "predicted ..., measured ..." comparison; adds about half the time).
# Then bench/accuracy/score.py writes OUT/results.json, replaces the set's
# rows of bench/accuracy/results.json with them (the other sets' rows
# stay), writes OUT/table.md (the tables for docs/ACCURACY.md) and prints
# it. OUT/set.txt names the set, for rescore.sh.
#
# OUT_DIR defaults to bench/accuracy/out (calibration) or
# bench/accuracy/out/validation. Exit status: 0 when every step
# ran (whether or not the targets are met), 1 when a pair failed its check
# or gpuadvise failed, 2 on usage errors.
set -u

usage() {
	echo "usage: $0 [--fast] [--set calibration|validation] BUILD_DIR [OUT_DIR]" >&2
	exit 2
}
fast=0
set_name=calibration
while [ $# -gt 0 ]; do
	case $1 in
	--fast) fast=1; shift ;;
	--set) [ $# -ge 2 ] || usage; set_name=$2; shift 2 ;;
	--set=*) set_name=${1#--set=}; shift ;;
	-*) usage ;;
	*) break ;;
	esac
done
case $set_name in
calibration) program=gpuadvise-pairs; default_out=out ;;
validation) program=gpuadvise-validation; default_out=out/validation ;;
*) usage ;;
esac
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	usage
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd) || exit 2
out=${2:-$here/$default_out}
ga=$build/gpuadvise
# The pairs binary as the caller named its folder: each report records the
# command it profiled, and a recorded run must not carry this machine's path.
pairs=${1%/}/kernels/$program
for f in "$ga" "$pairs"; do
	if [ ! -x "$f" ]; then
		echo "$0: $f is missing (build with nvcc: meson setup $1 -Ddemos=enabled; ninja -C $1)" >&2
		exit 2
	fi
done
mkdir -p "$out" || exit 2
# A hung pair must not hold the whole run: each step gets a bound.
step_limit=${BENCH_STEP_LIMIT:-90}
start=$(date +%s)
status=0

"$pairs" --list >"$out/list.txt" || exit 1
echo "$set_name" >"$out/set.txt"
: >"$out/times.txt"
while read -r name rule kind what; do
	printf '%-26s %-28s %s\n' "$name" "$rule" "$kind" >&2
	# </dev/null: the loop reads the list on standard input.
	if ! timeout "$step_limit" "$pairs" --time "$name" --reps 7 >>"$out/times.txt" \
	    2>"$out/$name.time.err" </dev/null; then
		echo "$0: $name: timing failed: $(tail -n 1 "$out/$name.time.err")" >&2
		status=1
	fi
	rm -f "$out/$name.json"
	if ! timeout "$step_limit" "$ga" --quiet --format json --log-file "$out/$name.json" -- \
	    "$pairs" --pair "$name" --side slow --launches 1 >"$out/$name.log" 2>&1 </dev/null; then
		echo "$0: $name: gpuadvise on the slow side failed (see $out/$name.log)" >&2
		status=1
	fi
	# Source lines name the kernels' files by this checkout's path: made
	# relative to the repository, as the recordings keep them.
	[ -f "$out/$name.json" ] && sed -i "s#\"$root/kernels/#\"kernels/#g" "$out/$name.json"
	if [ "$fast" = 1 ] && [ "$kind" = pair ]; then
		timeout "$step_limit" "$ga" --quiet --format json --log-file "$out/$name.fast.json" \
		    --baseline "$out/$name.json" -- \
		    "$pairs" --pair "$name" --side fast --launches 1 >"$out/$name.fast.log" 2>&1 </dev/null &&
		"$ga" --import "$out/$name.fast.json" --baseline "$out/$name.json" \
		    >"$out/$name.fast.txt" 2>>"$out/$name.fast.log" </dev/null ||
		echo "$0: $name: gpuadvise on the fast side failed (see $out/$name.fast.log)" >&2
	fi
done <"$out/list.txt"

python3 "$here/score.py" --list "$out/list.txt" --set "$set_name" --times "$out/times.txt" --reports "$out" \
    --results "$out/results.json" --merge-into "$here/results.json" --table "$out/table.md" || status=1
echo "accuracy bench: $(($(date +%s) - start)) s, results in $here/results.json, table in $out/table.md" >&2
exit $status
