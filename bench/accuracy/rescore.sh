#!/bin/sh
# Re-score a recorded accuracy bench run with the current rules, offline.
#
# usage: bench/accuracy/rescore.sh BUILD_DIR REPORTS_DIR [OUT_DIR]
#
# REPORTS_DIR is the OUT_DIR of an earlier bench/accuracy/run.sh (list.txt:
# the calibration set, or the set its set.txt names) or
# bench/accuracy/external/run.sh (pairs.txt, the external set) on the GPU
# machine, with times.txt and each slow side's JSON report NAME.json, which
# embeds the profile. Each report is analysed again
# with `gpuadvise --import` of this build (its rules, models and ranking; no
# GPU needed), into OUT_DIR/NAME.json, and score.py scores the new reports
# against the recorded times: OUT_DIR/results.json and OUT_DIR/table.md
# (bench/accuracy/results.json, the bench's recorded results, is left
# alone), and says how many rows differ from that set's rows of
# bench/accuracy/results.json. The measured speedups are those of the
# recorded run, so a pair whose kernels changed since must be run again on
# the GPU before its row means anything.
#
# OUT_DIR defaults to REPORTS_DIR/rescored. Exit status: 0 when every
# report was analysed and scored, 1 when one failed, 2 on usage errors.
set -u

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 BUILD_DIR REPORTS_DIR [OUT_DIR]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
ga=$1/gpuadvise
reports=$2
out=${3:-$reports/rescored}
if [ ! -x "$ga" ]; then
	echo "$0: $ga is missing (meson setup $1; ninja -C $1)" >&2
	exit 2
fi
# The set's list: list.txt (calibration, or the set set.txt names) or
# pairs.txt (external).
set_args=
if [ -f "$reports/pairs.txt" ]; then
	mode=--pairs
	listing=$reports/pairs.txt
	names=$(grep -v '^[[:space:]]*#' "$reports/pairs.txt" | grep '|' | cut -d'|' -f1 | tr -d ' \t')
elif [ -f "$reports/list.txt" ]; then
	mode=--list
	listing=$reports/list.txt
	names=$(cut -d' ' -f1 "$reports/list.txt")
	[ -f "$reports/set.txt" ] && set_args="--set $(cat "$reports/set.txt")"
else
	echo "$0: $reports/list.txt is missing (the OUT_DIR of bench/accuracy/run.sh)" >&2
	exit 2
fi
if [ ! -f "$reports/times.txt" ]; then
	echo "$0: $reports/times.txt is missing (the OUT_DIR of bench/accuracy/run.sh)" >&2
	exit 2
fi
mkdir -p "$out" || exit 2
status=0

for name in $names; do
	rm -f "$out/$name.json"
	report=$reports/$name.json
	# A large recording is kept xz-compressed (NAME.json.xz).
	if [ ! -f "$report" ] && [ -f "$report.xz" ]; then
		report=$out/$name.recorded.json
		xz -dc "$reports/$name.json.xz" >"$report" || status=1
	fi
	if [ ! -f "$report" ]; then
		echo "$0: $name: no recorded report $reports/$name.json" >&2
		status=1
		continue
	fi
	# --import exits 0 whatever it finds (no --fail-on here).
	if ! "$ga" --quiet --import "$report" --format json \
	    --log-file "$out/$name.json" >"$out/$name.log" 2>&1 </dev/null; then
		echo "$0: $name: gpuadvise --import failed (see $out/$name.log)" >&2
		status=1
	fi
done

# $set_args unquoted: empty, or --set and the set's one-word name.
python3 "$here/score.py" "$mode" "$listing" $set_args --times "$reports/times.txt" \
    --reports "$out" --results "$out/results.json" --table "$out/table.md" \
    --compare "$here/results.json" || status=1
exit $status
