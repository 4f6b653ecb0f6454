#!/bin/bash
# External set of the accuracy bench: gpuadvise on before/after pairs from
# public code nobody here wrote (GPA-Benchmark's Rodinia apps; README.md).
# Needs a GPU, ncu and the gpuadvise build; run from anywhere.
#
# usage: bench/accuracy/external/run.sh [--dry-run] [--no-merge] [--only NAME,...]
#            BUILD_DIR [OUT_DIR]
#
# DEST (the fetched, patched and built sources; $EXTERNAL_SRC, default
# bench/accuracy/external/src) must hold rodinia/ (fetch.sh: the GPU
# machine cannot reach GitHub, so fetch before carrying DEST there); its
# binaries are built here when DEST/bin lacks one (build.sh, needs nvcc).
# For each pair of pairs.txt (--only: those named):
#   1. its inputs, unless present (gen_inputs.py into DEST/data);
#   2. the hot kernel's GPU time in the slow and the fast binary: ncu
#      --clock-control none --metrics gpu__time_duration.sum -k
#      regex:^KERNEL$ (-c LAUNCHES), summed over the measured launches, in
#      $NCU_RUNS runs (default 3) of each side; the medians and their ratio
#      go to OUT/times.txt (NAME SLOW_US FAST_US SPEEDUP), each run's launch
#      count and sum to OUT/launches.txt, a launch count that differs
#      between the sides to OUT/notes.txt;
#   3. gpuadvise with default settings on the slow binary: OUT/NAME.json
#      (its log OUT/NAME.log).
# Every command runs under `timeout $BENCH_STEP_LIMIT` (default 120 s) in
# DEST/run/NAME/w, so that the apps' relative data paths (../../data,
# ../../../data) reach DEST/data; a failing step is reported and the other
# pairs go on. Then bench/accuracy/score.py scores the set (rank of the
# labelled rule among the hot kernel's findings): OUT/results.json,
# OUT/table.md, and, unless --no-merge, the external rows of
# bench/accuracy/results.json (the other sets' rows are kept).
# OUT_DIR defaults to bench/accuracy/external/out. Logs: OUT/logs/.
# --dry-run prints the commands without running any.
# Exit status: 0 every step ran (whether or not the targets are met), 1 a
# step failed, 2 usage or a missing prerequisite.
set -u

usage() {
	echo "usage: $0 [--dry-run] [--no-merge] [--only NAME,...] BUILD_DIR [OUT_DIR]" >&2
	exit 2
}
dry=0
merge=1
only=""
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) dry=1 ;;
	--no-merge) merge=0 ;;
	--only) [ $# -ge 2 ] || usage; only=$2; shift ;;
	--only=*) only=${1#--only=} ;;
	-h|--help) usage ;;
	-*) echo "$0: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] && [ $# -le 2 ] || usage

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$1
out=${2:-$here/out}
dest=${EXTERNAL_SRC:-$here/src}
ncu=${NCU:-/usr/local/cuda/bin/ncu}
runs=${NCU_RUNS:-3}
limit=${BENCH_STEP_LIMIT:-120}
pairs_file=$here/pairs.txt
ga=$build/gpuadvise
start=$(date +%s)
status=0

say() { echo "$*" >&2; }
# run CMD...: print it (dry run) or run it.
run() {
	if [ $dry = 1 ]; then
		printf '  %s\n' "$*"
		return 0
	fi
	"$@"
}

# Prerequisites.
[ -x "$ga" ] || { say "$0: $ga is missing (meson setup $build; ninja -C $build)"; [ $dry = 1 ] || exit 2; }
command -v "$ncu" >/dev/null 2>&1 || { say "$0: no ncu at $ncu (set NCU)"; [ $dry = 1 ] || exit 2; }
if [ ! -d "$dest/rodinia" ]; then
	say "$0: $dest/rodinia is missing: run bench/accuracy/external/fetch.sh $dest (where GitHub is reachable)"
	[ $dry = 1 ] || exit 2
fi
ga=$(cd "$(dirname "$ga")" 2>/dev/null && pwd)/gpuadvise
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)
dest=$(cd "$dest" 2>/dev/null && pwd) || dest=$dest

# Pairs: NAME|SLOW|FAST|KERNEL|LAUNCHES|LABEL|RULES|ARGS, blanks trimmed.
pairs=$(grep -v '^[[:space:]]*#' "$pairs_file" | grep '|' |
	sed -e 's/[[:space:]]*|[[:space:]]*/|/g' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
if [ -n "$only" ]; then
	pairs=$(echo "$pairs" | awk -F'|' -v only=",$only," 'index(only, "," $1 ",")')
	[ -n "$pairs" ] || { say "$0: --only $only matches no pair of $pairs_file"; exit 2; }
fi

# Binaries: built here when one is missing.
missing=""
while IFS='|' read -r name slow fast rest; do
	for b in "$slow" "$fast"; do
		[ -x "$dest/bin/$b" ] || missing="$missing $b"
	done
done <<EOF
$pairs
EOF
if [ -n "$missing" ]; then
	say "$0: building (missing:$missing)"
	if [ $dry = 1 ]; then
		echo "  $here/build.sh $dest"
	elif ! "$here/build.sh" "$dest" >"$out/logs/build.log" 2>&1; then
		say "$0: build.sh failed (see $out/logs/build.log)"
		exit 2
	fi
fi

# Inputs, and the directories the apps run in.
apps=$(echo "$pairs" | cut -d'|' -f1 | sed 's/-.*//' | sort -u)
say "$0: inputs in $dest/data"
# shellcheck disable=SC2086
run timeout "$limit" python3 "$here/gen_inputs.py" "$dest/data" $apps ||
	{ say "$0: gen_inputs.py failed"; status=1; }
run mkdir -p "$dest/run"
run ln -sfn ../data "$dest/run/data"
indir=../../../data

: >"$out/times.txt.new"
: >"$out/launches.txt"
: >"$out/notes.txt"
: >"$out/logs/measured"
rm -f "$out/times.txt"

# median of the numbers on standard input
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

while IFS='|' read -r name slow fast kernel launches label rules args; do
	[ -n "$name" ] || continue
	say "== $name: $slow -> $fast, $kernel ($label -> $rules)"
	wd=$dest/run/$name/w
	run mkdir -p "$wd"
	# shellcheck disable=SC2206
	argv=(${args//@IN@/$indir})
	count=()
	[ "$launches" = all ] || count=(-c "$launches")
	for side in slow fast; do
		bin=$slow
		[ $side = fast ] && bin=$fast
		# A binary measured already with the same kernel, launches and
		# arguments (myocyte-opt1 and -opt2 are the fast side of one step
		# and the slow side of the next) is not measured again.
		key="$bin|$kernel|$launches|$args"
		seen=$(awk -F'\t' -v k="$key" '$1 == k {print $2; exit}' "$out/logs/measured" 2>/dev/null)
		if [ -n "$seen" ] && [ $dry = 0 ]; then
			cp "$out/logs/$seen.sums" "$out/logs/$name.$side.sums"
			awk -v n="$name" -v s="$side" '{print n, s, NR, $0, "(measured for another pair)"}' \
			    "$out/logs/$name.$side.sums" >>"$out/launches.txt"
			continue
		fi
		: >"$out/logs/$name.$side.sums"
		[ $dry = 1 ] || printf '%s\t%s\n' "$key" "$name.$side" >>"$out/logs/measured"
		for r in $(seq 1 "$runs"); do
			csv=$out/logs/$name.$side.$r.csv
			log=$out/logs/$name.$side.$r.log
			if [ $dry = 1 ]; then
				echo "  (cd $wd && timeout $limit $ncu --clock-control none --metrics gpu__time_duration.sum -k regex:^$kernel\$ ${count[*]} --csv --print-units base --log-file $csv ../../../bin/$bin ${argv[*]})"
				continue
			fi
			rm -f "$csv"
			(cd "$wd" && timeout "$limit" "$ncu" --clock-control none --metrics gpu__time_duration.sum \
			    -k "regex:^$kernel\$" "${count[@]}" --csv --print-units base --log-file "$csv" \
			    "../../../bin/$bin" "${argv[@]}") >"$log" 2>&1 </dev/null
			rc=$?
			# The CSV is in the log file; should ncu have printed it with
			# the program's output instead, it is read from there.
			if ! sum=$(python3 "$here/ncu_sum.py" "$csv" "$kernel" 2>>"$log") &&
			    ! sum=$(python3 "$here/ncu_sum.py" "$log" "$kernel" 2>/dev/null); then
				say "$0: $name: ncu on $bin failed (exit $rc; see $log)"
				status=1
				continue
			fi
			[ $rc = 0 ] || echo "$name $side run $r: $bin exited $rc (measured anyway)" >>"$out/notes.txt"
			echo "$sum" >>"$out/logs/$name.$side.sums"
			echo "$name $side $r $sum" >>"$out/launches.txt"
		done
	done
	if [ $dry = 0 ]; then
		s=$(cut -d' ' -f2 "$out/logs/$name.slow.sums" | median)
		f=$(cut -d' ' -f2 "$out/logs/$name.fast.sums" | median)
		ns=$(cut -d' ' -f1 "$out/logs/$name.slow.sums" | sort -u | tr '\n' ' ')
		nf=$(cut -d' ' -f1 "$out/logs/$name.fast.sums" | sort -u | tr '\n' ' ')
		[ "$ns" = "$nf" ] || echo "$name: launches measured: slow ${ns}fast ${nf}(the sums compare different launch counts)" >>"$out/notes.txt"
		if [ -n "$s" ] && [ -n "$f" ]; then
			awk -v n="$name" -v s="$s" -v f="$f" 'BEGIN {printf "%s %.3f %.3f %.4f\n", n, s, f, (f > 0 ? s / f : 0)}' >>"$out/times.txt.new"
			say "   slow $s us, fast $f us (medians of $runs runs, launches: slow ${ns}fast ${nf% })"
		fi
	fi
	# gpuadvise on the slow side, default settings.
	if [ $dry = 1 ]; then
		echo "  (cd $wd && timeout $limit $ga --quiet --format json --log-file $out/$name.json -- ../../../bin/$slow ${argv[*]})"
		continue
	fi
	rm -f "$out/$name.json"
	(cd "$wd" && timeout "$limit" "$ga" --quiet --format json --log-file "$out/$name.json" -- \
	    "../../../bin/$slow" "${argv[@]}") >"$out/$name.log" 2>&1 </dev/null
	rc=$?
	if [ ! -s "$out/$name.json" ]; then
		say "$0: $name: gpuadvise on $slow failed (exit $rc; see $out/$name.log)"
		status=1
	elif [ $rc != 0 ]; then
		echo "$name: gpuadvise exited $rc (report written)" >>"$out/notes.txt"
	fi
	# Source paths relative to the repository, as the recordings keep them
	# (the binaries may have been built in another checkout).
	[ -f "$out/$name.json" ] &&
	    sed -i 's#"[^"]*/bench/accuracy/external/src/#"bench/accuracy/external/src/#g' "$out/$name.json"
done <<EOF
$pairs
EOF

[ $dry = 1 ] && { say "$0: dry run: nothing was run"; exit 0; }
mv "$out/times.txt.new" "$out/times.txt"
cp "$pairs_file" "$out/pairs.txt"
[ -s "$out/notes.txt" ] && { say "$0: notes:"; cat "$out/notes.txt" >&2; }
merge_args=()
[ $merge = 1 ] && merge_args=(--merge-into "$root/bench/accuracy/results.json")
timeout "$limit" python3 "$root/bench/accuracy/score.py" --set external --pairs "$out/pairs.txt" \
    --times "$out/times.txt" --reports "$out" --results "$out/results.json" --table "$out/table.md" \
    "${merge_args[@]}" || status=1
say "external accuracy bench: $(($(date +%s) - start)) s, table in $out/table.md"
exit $status
