#!/bin/sh
# tests/cli/run.sh: the gpuadvise command line, table-driven.
#
# Each case runs the built binary from the source root with some arguments
# and checks the exit status and a pattern (grep -E) on stdout or stderr.
# Further checks: golden reports, the -o round trip, --log-file, the JSON and
# Markdown formats, --demo all, and the examples of README.md and the man
# page.  Prints "ok - ..." / "not ok - ..." per check and a final
# "N passed, N failed" line; exits 1 if anything failed.
#
# Environment (meson sets all of them, see tests/meson.build):
#   GPUADVISE  the binary          (default: $BUILDDIR/gpuadvise)
#   SRCDIR     the source root     (default: two levels above this script)
#   BUILDDIR   the build directory (default: $SRCDIR/build)
#   NO_COLOR   set to 1 here in any case
#
# Golden reports: tests/fixtures/golden/testapp-all.{txt,json,md} are the
# reports of `gpuadvise --import tests/fixtures/recorded/testapp-all.json`
# in each format (no colour, width 80), compared byte for byte.  After an
# intended change of the reports, regenerate them with
#     UPDATE_GOLDEN=1 tests/cli/run.sh
# then READ the diff (git diff tests/fixtures/golden) and check it is right
# before committing: these files are expectations, not snapshots.  A run
# that rewrote a golden file fails (it compared nothing); the next run
# without UPDATE_GOLDEN is the one that passes.
#
# Cases that need a machine without a GPU (PROGRAM -> "no NVIDIA GPU", the
# recorded demos) are skipped with a notice where a GPU is present; the GPU
# suite (tests/gpu) covers those machines.
set -u

here=$(cd "$(dirname "$0")" && pwd)
SRCDIR=${SRCDIR:-$(cd "$here/../.." && pwd)}
BUILDDIR=${BUILDDIR:-$SRCDIR/build}
GPUADVISE=${GPUADVISE:-$BUILDDIR/gpuadvise}
NO_COLOR=1
UPDATE_GOLDEN=${UPDATE_GOLDEN:-}
SANITIZED=${SANITIZED:-}    # 1 in a build with -Db_sanitize=address...
export GPUADVISE SRCDIR BUILDDIR NO_COLOR

T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
# No user rules (~/.config/gpuadvise/rules) and no rules-dir override: the
# shipped rules only, as in the golden files.
XDG_CONFIG_HOME=$T/config
export XDG_CONFIG_HOME
# The metric-set cache goes here, not into ~/.cache.
GPUADVISE_CACHE_DIR=$T/cache
export GPUADVISE_CACHE_DIR
unset GPUADVISE_RULES_DIR

FIX=tests/fixtures
REC=$FIX/recorded
CLI=$FIX/cli
GOLDEN=$FIX/golden

. "$here/tap.sh"

# Run gpuadvise from the source root: stdout in $T/out, stderr in $T/err,
# status in $rc.
run() {
	(cd "$SRCDIR" && "$GPUADVISE" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	# A sanitized build (-Db_sanitize=address,undefined) reports on
	# stderr, and its exit status may be one a case expects: any report
	# fails on its own.
	if grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/err"; then
		not_ok "sanitizer report from: gpuadvise $*"
		show stderr "$T/err"
	fi
}

# A machine with an NVIDIA GPU (device node present)?
have_gpu() {
	for d in /dev/nvidia[0-9]*; do
		[ -e "$d" ] && return 0
	done
	return 1
}

# The widest line of a file, in columns (code points: the reports are
# UTF-8 and use "…").
max_width() {
	python3 -c 'import sys; print(max([len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")] or [0]))' "$1"
}

# ---------------------------------------------------------------------------
# The table: STATUS STREAM PATTERN ARGS...
#   STREAM: out, err or any (either); PATTERN: grep -E, '' for none.
# Lines are shell words (evaluated with `eval set --`), so quote patterns and
# arguments with spaces; $REC, $CLI and $FIX may be used.  Runs in $SRCDIR.
cases() {
	cat <<'EOF'
0 out '--import'                                         --help
0 out 'Exit status: 0 ok'                                --help
0 out '^gpuadvise [0-9]+\.[0-9]+\.[0-9]+$'               --version
0 out '^Usage: gpuadvise'                                --usage
2 err 'no PROGRAM to profile'
2 err "unrecognized option '--bogus'"                    --bogus
2 err "invalid option -- 'Z'"                            -Z
2 err "unknown format 'yaml'"                            --format yaml --import $REC/testapp-all.json
2 err "unknown format 'yaml'"                            --format=yaml --import $REC/testapp-all.json
2 err "--fail-on expects low, medium, high or regression, not 'severe'" --fail-on severe --import $REC/testapp-all.json
2 err "--launch-count expects a non-negative integer, not 'many'" -c many /bin/true
2 err "--launch-count expects a non-negative integer, not '-3'" -c -3 /bin/true
2 err "--launch-skip expects a non-negative integer, not '1x'" -s 1x /bin/true
2 err "--max-per-kernel expects a non-negative integer, not ''" --max-per-kernel= /bin/true
2 err "--color expects auto, always or never, not 'sometimes'" --color=sometimes --import $REC/testapp-all.json
2 err 'give only one of PROGRAM, --import, --demo'       --import $REC/testapp-all.json --demo matmul
2 err 'give only one of PROGRAM, --import, --demo'       --import $REC/testapp-all.json /bin/true
2 err '--stalls runs the program again: give PROGRAM'     --stalls --import $REC/testapp-all.json
2 err '--stalls runs the program again: give PROGRAM'     --stalls --demo matmul
2 err 'drop --no-source'                                  --stalls --no-source /bin/true
0 out '^ +--stalls +Also give the dominant'           --help
0 out '^ +--min-share=PCT +With --max-passes N: profile'  --help
0 out '^ +--no-loop-replay +Measure every launch by'    --help
0 out '^ +--nvtx=WHEN +Group the findings by operation' --help
2 err "--nvtx expects auto, on or off, not 'maybe'"      --nvtx=maybe --import $REC/testapp-all.json
0 out '^Operations$'                                     --import $CLI/pytorch-nvtx.json
0 out '^    in aten::matmul/aten::mm$'                   --import $CLI/pytorch-nvtx.json
0 out '^    top finding: '                               --import $CLI/pytorch-nvtx.json
0 out '^#### Operations$'                                --format markdown --import $CLI/pytorch-nvtx.json
0 out '^\| `aten::mm` \| '                               --format markdown --import $CLI/pytorch-nvtx.json
0 out '^No launch was in an NVTX range'                  --nvtx=on --import $REC/testapp-all.json
2 err "--min-share expects a percentage such as 10 or 2\.5, not '101'" --min-share 101 ./app
2 err "--min-share expects a percentage .*not 'x'"     --min-share x ./app
2 err 'tests/fixtures/cli/no-such-file\.json'             --import $CLI/no-such-file.json
2 err '^gpuadvise: tests/fixtures/cli/broken\.json:4:53: invalid JSON' --import $CLI/broken.json
2 err "not-a-profile\.json: not a gpuadvise profile"     --import $CLI/not-a-profile.json
2 err 'missing-field\.json: launches\[0\]\.grid: missing' --import $CLI/missing-field.json
2 err 'missing-field\.json'                              --import $REC/testapp-fma_loop.json --import $CLI/missing-field.json
0 out '^What to do first'                                --import $REC/testapp-all.json
0 out '^9 kernels, 9 launches profiled'                   --import $REC/testapp-all.json
0 out '^Measured: 9 launches by kernel replay, 18 repeats not profiled' --import $REC/testapp-all.json
0 out '^2 kernels, 2 launches profiled'                  --import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json
0 out 'uncoalesced-global-access'                        --format json --import $REC/testapp-copy_strided.json
1 out '^What to do first'                                --fail-on high --import $REC/testapp-all.json
1 out ''                                                 --fail-on low --import $REC/testapp-all.json
0 out 'An arithmetic pipe is saturated'                  --fail-on high --import $REC/testapp-fma_loop.json
1 out '^    \[medium\] saves'                          --fail-on medium --import $REC/testapp-fma_loop.json
0 out '^No findings'                                    --fail-on low --import $REC/testapp-copy_coalesced.json
2 err 'cli/nonexistent-dir/x\.json'                      -o $CLI/nonexistent-dir/x.json --import $REC/testapp-fma_loop.json
2 err '/nonexistent/dir/app: program not found'          /nonexistent/dir/app --size 4096
2 err 'gpuadvise-no-such-program-xyz: program not found' gpuadvise-no-such-program-xyz
2 err 'tests/fixtures/cli/broken\.json'                  $CLI/broken.json
2 err "no demo 'nosuch'"                                 --demo nosuch
0 out '^matmul +'                                        --demo list
0 out '^uncoalesced-global-access: Uncoalesced global memory access$' --explain uncoalesced-global-access
0 out '^Fix:'                                            --explain uncoalesced-global-access
0 out 'file: .*rules/uncoalesced-global-access\.yaml'    --explain uncoalesced-global-access
0 out 'applies to: cublas, cudnn, cutlass, triton, aten'    --explain framework-tf32
0 out '^  mem = max\(dram__throughput'                  --explain uncoalesced-global-access
0 out '^Source lines measured when: wasted_share_wide >= 0\.1$' --explain uncoalesced-global-access
# the rule file's stock range is labelled as typical, not as this kernel's
0 out 'severity high, typical speedup 2-10x \(each finding.s range comes from the model below\)$' --explain uncoalesced-global-access
2 err "no rule 'no-such-rule'"                           --explain no-such-rule
0 out '^ID +CLASS +ORDER +SEVERITY +TITLE'               --list-rules
0 out '^uncoalesced-global-access +memory +1 +high'      --list-rules
0 out '^gpu__time_duration\.sum$'                        --list-metrics
0 out '^dram__throughput\.avg\.pct_of_peak_sustained_elapsed$' --list-metrics
0 out '^# 11 metrics on GH100: 1 set of at most 1 replay pass per launch'  --quick --list-metrics --chip GH100
0 out '^# [67][0-9] metrics on GH100: 3 sets of at most 3 replay passes per launch, .*\(all at once: [6-9] passes\)$' --max-passes 3 --list-metrics --chip GH100
0 out '^# [67][0-9] metrics on GH100: 1 set of at most [6-9] replay passes per launch$' --list-metrics --chip GH100
0 out '^# [67][0-9] metrics on GH100: 1 set of at most [6-9] replay passes per launch' --max-passes 0 --list-metrics --chip GH100
0 out '^rules: [0-9]+ rules and the classifier are valid$' --check-rules rules
0 out 'engine-rules: 3 rules and the classifier are valid' --check-rules $FIX/engine-rules
3 err '^rules-bad/[a-z0-9-]+\.yaml:[0-9]+:[0-9]+: error: |^tests/fixtures/rules-bad/[a-z0-9-]+\.yaml:[0-9]+:[0-9]+: error: ' --check-rules $FIX/rules-bad
3 err 'error in|errors in'                               --check-rules $FIX/rules-bad
3 err 'no-such-rules-dir'                                --check-rules $FIX/no-such-rules-dir
3 err 'classify\.yaml: the classifier does not define latency_line_pct as a constant' --check-rules $CLI/rules-no-constants
3 err 'rules-no-constants/classify\.yaml: the classifier does not define' --no-default-rules -r $CLI/rules-no-constants --import $REC/testapp-fma_loop.json
3 err 'yaml-syntax\.yaml:[0-9]+:[0-9]+: error: '         --rules $FIX/rules-bad --list-rules
0 out '^uncoalesced-global-access: Overridden uncoalesced rule \(CLI test fixture\)$' --rules $CLI/rules-override --explain uncoalesced-global-access
# The estimate's model, its range and a missing input (docs/RULE-FORMAT.md):
# --explain shows the model; a finding whose estimate lacks a metric names
# it in every format instead of a number.
0 out '^Model: excess sectors over the ideal'             --explain uncoalesced-global-access
0 out '^Range of the saving: low 1 - max\(ideal_dram_ns_slow, .*, high 1 - max\(ideal_dram_ns_peak, ' --explain uncoalesced-global-access
0 out 'needs-input: estimate.{1,2}needs nothere__synthetic\.sum$' -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out '^    estimate needs nothere__synthetic\.sum$'   --verbose -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out '^    model: synthetic: the value of a metric never collected$' --verbose -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out '"estimate_missing": "nothere__synthetic\.sum"'   --format json -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out '"estimated_speedup": null'                        --format json -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out 'estimate needs `nothere__synthetic\.sum`'        --format markdown -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out 'estimate needs <code>nothere__synthetic\.sum</code>' --format html -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out 'the estimate needs nothere__synthetic\.sum, which the profile lacks' --format sarif -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
1 out 'estimate needs nothere__synthetic\.sum'          --format junit --fail-on high -r $CLI/rules-needs-input --import $REC/testapp-tiny_add.json
0 out 'file: tests/fixtures/cli/rules-override/uncoalesced-global-access\.yaml' -r $CLI/rules-override --explain uncoalesced-global-access
0 out '^uncoalesced-global-access +memory +1 +low +Overridden' -r $CLI/rules-override --list-rules
1 out 'Uncoalesced global memory access'                 --fail-on high --import $REC/testapp-copy_strided.json
0 out 'Overridden uncoalesced rule'                      -r $CLI/rules-override --fail-on high --import $REC/testapp-copy_strided.json
1 out '^    \[low\] saves'                             -r $CLI/rules-override --fail-on low --import $REC/testapp-copy_strided.json
0 out '^test-extra '                                     --no-default-rules -r $FIX/rules-good -r $FIX/rules-override --list-rules
EOF
}

# Tests for a machine without a GPU only.
cases_no_gpu() {
	cat <<'EOF'
4 err 'no NVIDIA GPU'                                    /bin/true
4 err 'no NVIDIA GPU'                                    -k regex:gemm -c 5 /bin/true --some-arg
0 out 'RECORDED'                                         --demo matmul
0 out '^Demo matmul: naive -> '                          --demo matmul
EOF
}

check_table() {
	while IFS= read -r line; do
		case $line in '' | '#'*) continue ;; esac
		eval "set -- $line"
		want=$1 stream=$2 pat=$3
		shift 3
		# CUPTI's host library is dlopened with RTLD_DEEPBIND, which
		# the ASan runtime refuses: --chip cannot run sanitized.
		case "$SANITIZED $*" in
		1*--chip*)
			skip "gpuadvise $*: ASan build (CUPTI's RTLD_DEEPBIND)"
			continue ;;
		esac
		desc="gpuadvise $* -> $want"
		[ -n "$pat" ] && desc="$desc, $stream ~ /$pat/"
		run "$@"
		why=
		if [ "$rc" != "$want" ]; then
			why="exit status $rc, want $want"
		elif [ -n "$pat" ]; then
			case $stream in
			out) files=$T/out ;;
			err) files=$T/err ;;
			*) files="$T/out $T/err" ;;
			esac
			# shellcheck disable=SC2086
			if ! cat $files | grep -Eq -e "$pat"; then
				why="no match in std$stream"
			fi
		fi
		if [ -z "$why" ]; then
			ok "$desc"
		else
			not_ok "$desc: $why"
			show stdout "$T/out"
			show stderr "$T/err"
		fi
	done
}

cases >"$T/cases"
check_table <"$T/cases"
if have_gpu; then
	skip "PROGRAM without a GPU, recorded demo matmul: a GPU is present"
else
	cases_no_gpu >"$T/cases"
	check_table <"$T/cases"
fi

# ---------------------------------------------------------------------------
# Checks that need more than one pattern.

# --demo list: the eleven demos, one line each.
run --demo list
n=$(grep -c . "$T/out")
if [ "$rc" = 0 ] && [ "$n" = 11 ]; then
	ok "gpuadvise --demo list -> 0, 11 demos"
else
	not_ok "gpuadvise --demo list -> $rc, $n lines (want 0, 11 demos)"
	show stdout "$T/out"
fi
awk '{print $1}' "$T/out" >"$T/demos"

# --demo matmul without a GPU: the recorded profile, with the GPU it was
# recorded on (read from the recording).
if ! have_gpu; then
	gpu=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["variants"][0]["profile"]["device"]["name"])' \
		"$SRCDIR/$REC/demo-matmul.json")
	run --demo matmul
	if [ "$rc" = 0 ] && grep -q 'RECORDED' "$T/out" && [ -n "$gpu" ] &&
		grep -q "RECORDED.*$gpu\|$gpu.*RECORDED" "$T/out"; then
		ok "gpuadvise --demo matmul -> 0, RECORDED on $gpu"
	else
		not_ok "gpuadvise --demo matmul -> $rc, want 0 and 'RECORDED' with '$gpu'"
		show stdout "$T/out"
		show stderr "$T/err"
	fi
fi

# --list-rules: one line per shipped rule file (classify.yaml is not a rule),
# each id listed.
nrules=0
missing=
for f in "$SRCDIR"/rules/*.yaml; do
	id=$(sed -n 's/^id: *//p' "$f")
	[ -n "$id" ] || continue
	nrules=$((nrules + 1))
	missing="$missing $id"
done
run --list-rules
lines=$(($(grep -c . "$T/out") - 1))
absent=
for id in $missing; do
	grep -q "^$id " "$T/out" || absent="$absent $id"
done
if [ "$rc" = 0 ] && [ "$lines" = "$nrules" ] && [ -z "$absent" ]; then
	ok "gpuadvise --list-rules -> 0, all $nrules shipped rules"
else
	not_ok "gpuadvise --list-rules -> $rc, $lines rules listed, want $nrules; missing:$absent"
fi
run --check-rules rules
if [ "$rc" = 0 ] && grep -q "^rules: $nrules rules and the classifier are valid$" "$T/out"; then
	ok "gpuadvise --check-rules rules -> 0, $nrules rules"
else
	not_ok "gpuadvise --check-rules rules -> $rc, want 0 and $nrules rules"
	show stdout "$T/out"
	show stderr "$T/err"
fi
# An override replaces the rule, it does not add one.
run -r "$CLI/rules-override" --list-rules
lines=$(($(grep -c . "$T/out") - 1))
if [ "$rc" = 0 ] && [ "$lines" = "$nrules" ]; then
	ok "gpuadvise -r rules-override --list-rules -> 0, still $nrules rules"
else
	not_ok "gpuadvise -r rules-override --list-rules -> $rc, $lines rules, want $nrules"
fi
# Every file of rules-bad is reported with FILE:LINE:COL (several-errors.yaml
# three times), and the count line agrees.
run --check-rules "$FIX/rules-bad"
nbad=$(grep -cE '^[^ :]+\.yaml:[0-9]+:[0-9]+: error: ' "$T/err")
nfiles=$(ls "$SRCDIR/$FIX/rules-bad"/*.yaml | wc -l)
if [ "$rc" = 3 ] && [ "$nbad" -ge "$nfiles" ] &&
	grep -q "^gpuadvise: $nbad errors in " "$T/err"; then
	ok "gpuadvise --check-rules rules-bad -> 3, $nbad FILE:LINE:COL errors for $nfiles files"
else
	not_ok "gpuadvise --check-rules rules-bad -> $rc, $nbad FILE:LINE:COL errors for $nfiles files"
	show stderr "$T/err"
fi

# ---------------------------------------------------------------------------
# -o: the exported profile re-imports identically.  Export the recorded
# profile (a), import a and export again (b): a and b are the same bytes,
# every field of the recording is in a with the same value, and the reports
# of the recording and of a are the same.
run --import "$REC/testapp-all.json" -o "$T/a.json"
rc_a=$rc
cp "$T/out" "$T/report-orig"
run --import "$T/a.json" -o "$T/b.json"
rc_b=$rc
cp "$T/out" "$T/report-a"
if [ "$rc_a" = 0 ] && [ "$rc_b" = 0 ] && [ -s "$T/a.json" ] && cmp -s "$T/a.json" "$T/b.json"; then
	ok "gpuadvise -o: export, import, export gives the same bytes"
else
	not_ok "gpuadvise -o: export ($rc_a), re-import and export ($rc_b) differ"
	diff "$T/a.json" "$T/b.json" | head -20 | sed 's/^/#   /'
fi
if python3 - "$SRCDIR/$REC/testapp-all.json" "$T/a.json" >"$T/diff" 2>&1 <<'PY'
import json, sys
orig = json.load(open(sys.argv[1]))
back = json.load(open(sys.argv[2]))
bad = []
def sub(a, b, path):
    """Every value of a is in b (b may add fields with defaults)."""
    if isinstance(a, dict):
        if not isinstance(b, dict):
            bad.append(path); return
        for k, v in a.items():
            if k not in b:
                bad.append(f"{path}.{k} missing")
            else:
                sub(v, b[k], f"{path}.{k}")
    elif isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            bad.append(path); return
        for i, (x, y) in enumerate(zip(a, b)):
            sub(x, y, f"{path}[{i}]")
    elif a != b or type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        bad.append(f"{path}: {a!r} != {b!r}")
sub(orig, back, "")
print("\n".join(bad[:20]))
sys.exit(1 if bad else 0)
PY
then
	ok "gpuadvise -o: the exported profile holds every value of the recording"
else
	not_ok "gpuadvise -o: the exported profile differs from the recording"
	sed 's/^/#   /' "$T/diff"
fi
if cmp -s "$T/report-orig" "$T/report-a"; then
	ok "gpuadvise -o: the re-imported profile gives the same report"
else
	not_ok "gpuadvise -o: the re-imported profile gives another report"
	diff "$T/report-orig" "$T/report-a" | head -20 | sed 's/^/#   /'
fi

# --log-file: the report goes to the file, nothing to stdout, and it is the
# report stdout would have had.
run --import "$REC/testapp-all.json"
cp "$T/out" "$T/report-stdout"
run --import "$REC/testapp-all.json" --log-file "$T/report.log"
if [ "$rc" = 0 ] && [ ! -s "$T/out" ] && cmp -s "$T/report.log" "$T/report-stdout"; then
	ok "gpuadvise --log-file FILE -> 0, report in FILE only"
else
	not_ok "gpuadvise --log-file FILE -> $rc (stdout $(wc -c <"$T/out") bytes; file same as stdout report? no)"
fi
run --fail-on high --format json --log-file "$T/report.json" --import "$REC/testapp-all.json"
if [ "$rc" = 1 ] && python3 -m json.tool "$T/report.json" >/dev/null 2>&1; then
	ok "gpuadvise --fail-on high --format json --log-file FILE -> 1, FILE is JSON"
else
	not_ok "gpuadvise --fail-on high --format json --log-file FILE -> $rc, want 1 and JSON in FILE"
fi
run --import "$REC/testapp-all.json" --log-file "$T/no-such-dir/report.txt"
if [ "$rc" = 2 ] && grep -q "no-such-dir/report.txt" "$T/err"; then
	ok "gpuadvise --log-file in a missing directory -> 2, names the file"
else
	not_ok "gpuadvise --log-file in a missing directory -> $rc, want 2 naming the file"
	show stderr "$T/err"
fi

# --format json parses, and says what the text report says about the classes.
run --format json --import "$REC/testapp-all.json"
if [ "$rc" = 0 ] && python3 -m json.tool "$T/out" >/dev/null 2>"$T/err"; then
	ok "gpuadvise --format json -> 0, valid JSON (python3 -m json.tool)"
else
	not_ok "gpuadvise --format json -> $rc, not valid JSON"
	show stderr "$T/err"
fi
if python3 - "$T/out" >"$T/diff" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
want = {"matmul_naive": "memory", "copy_strided": "memory", "branch_evenodd": "divergence",
        "chain_one_warp": "latency", "fma_loop": "compute"}
got = {k["name"].split("(")[0]: k["class"] for k in r["kernels"]}
bad = [f"{n}: {got.get(n)} != {c}" for n, c in want.items() if got.get(n) != c]
shares = sum(k["share"] for k in r["kernels"])
if abs(shares - 1) > 1e-9:
    bad.append(f"shares add up to {shares}")
savings = [f["saving"] for f in r["findings"]]
if savings != sorted(savings, reverse=True):
    bad.append("findings not ranked by saving")
if r["summary"]["kernels"] != len(r["kernels"]):
    bad.append("summary.kernels")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
then
	ok "gpuadvise --format json: classes, shares and ranking of testapp-all"
else
	not_ok "gpuadvise --format json: wrong content"
	sed 's/^/#   /' "$T/diff"
fi

# --format markdown has a table: a header row, a separator row, data rows.
run --format markdown --import "$REC/testapp-all.json"
if [ "$rc" = 0 ] && grep -q '^| *# *|.*|$' "$T/out" &&
	grep -Eq '^\|(:?-+:?\|)+$' "$T/out" &&
	[ "$(grep -c '^| [0-9]* |' "$T/out")" -ge 1 ]; then
	ok "gpuadvise --format markdown -> 0, has a table"
else
	not_ok "gpuadvise --format markdown -> $rc, no table"
	show stdout "$T/out"
fi

# Colour: none with NO_COLOR (and not on a terminal), ANSI with --color=always.
esc=$(printf '\033')
run --import "$REC/testapp-all.json"
if ! grep -q "$esc" "$T/out"; then
	ok "gpuadvise with NO_COLOR: no escape sequences"
else
	not_ok "gpuadvise with NO_COLOR: escape sequences in the report"
fi
run --color=always --import "$REC/testapp-all.json"
if [ "$rc" = 0 ] && grep -q "$esc\[" "$T/out"; then
	ok "gpuadvise --color=always: escape sequences"
else
	not_ok "gpuadvise --color=always -> $rc, no escape sequences"
fi

# ---------------------------------------------------------------------------
# Golden reports.
# golden_check (tap.sh) compares $T/out with a golden file, or rewrites it
# with UPDATE_GOLDEN.
for fmt in text:txt json:json markdown:md; do
	name=${fmt%%:*}
	ext=${fmt#*:}
	gold=$GOLDEN/testapp-all.$ext
	run --format "$name" --import "$REC/testapp-all.json"
	if [ "$rc" != 0 ]; then
		not_ok "golden $gold: gpuadvise --format $name -> $rc"
		show stderr "$T/err"
		continue
	fi
	golden_check "$gold"
done

# The roofline (--roofline) on the H200 recording, golden like the others:
# tests/fixtures/golden/testapp-roofline.txt.  Without --roofline and off a
# terminal the text report has no roofline.
ROOF=$REC/testapp-all.json
gold=$GOLDEN/testapp-roofline.txt
run --roofline --import "$ROOF"
if [ "$rc" != 0 ]; then
	not_ok "golden $gold: gpuadvise --roofline -> $rc"
	show stderr "$T/err"
else
	golden_check "$gold"
fi
if python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 80 for l in open(sys.argv[1], encoding="utf-8")))' "$T/out"; then
	ok "--roofline report fits in 80 columns"
else
	not_ok "--roofline report has lines over 80 columns"
fi

# A report that fits a screen: the recorded PyTorch profile (36 kernels,
# all of them PyTorch's or cuBLAS's) in at most 250 lines of at most 80
# columns.  Each kernel shows its owner; What to do first ranks the
# framework-level actions, each naming its kernels; no kernel-source advice
# (coalescing, launch bounds) lands on a library kernel; each rule's fix
# text and example come once, under "How to fix"; kernels whose names read
# the same once shortened are told apart by "#n"; --verbose keeps the fix
# under every finding.
PT=$REC/pytorch.json
run --import "$PT"
lines=$(wc -l <"$T/out")
wide=$(max_width "$T/out")
if [ "$rc" = 0 ] && [ "$lines" -le 250 ] && [ "$wide" -le 80 ]; then
	ok "pytorch report: $lines lines (<= 250) of at most $wide columns (<= 80)"
else
	not_ok "pytorch report: rc $rc, $lines lines (want <= 250), $wide columns (want <= 80)"
fi
cp "$T/out" "$T/pytorch.txt"
n_fix=$(grep -c '^framework-torch-compile: Unfused elementwise and reduction kernels' "$T/out")
n_ex=$(grep -c 'block = torch.compile(block)' "$T/out")
if grep -q '^How to fix$' "$T/out" && [ "$n_fix" = 1 ] && [ "$n_ex" = 1 ] &&
   [ "$(grep -c '^  \[medium\] framework-torch-compile: saves' "$T/out")" -gt 1 ]; then
	ok "pytorch report: framework-torch-compile's fix and example once, under How to fix"
else
	not_ok "pytorch report: fix title $n_fix times, example $n_ex times (want 1 and 1)"
fi
if ! grep -Eq 'uncoalesced|low-occupancy|__launch_bounds__|grid-too-small' "$T/out"; then
	ok "pytorch report: no kernel-source advice on library kernels"
else
	not_ok "pytorch report: kernel-source advice on library kernels"
	grep -E 'uncoalesced|low-occupancy|__launch_bounds__|grid-too-small' "$T/out" | head -3
fi
for pat in \
	'^100% of the GPU time is in library kernels' \
	'^ 1\. Unfused elementwise and reduction kernels \(fuse with torch\.compile\)$' \
	'^ 2\. FP32 matrix products off the tensor cores \(enable TF32 or bf16\)$' \
	'^      cutlass::Kernel2<…>\(…\) \(cuBLAS\)$' \
	'^at::native::reduce_kernel<…>\(…\) #1 \(ATen\) \[memory\]$' \
	'^at::native::reduce_kernel<…>\(…\) #2 \(ATen\) \[latency\]$' \
	'^cutlass::Kernel2<…>\(…\) \(cuBLAS\) \[compute\]$' \
	'^  6\.9% of GPU time, 1 launch \(\+2 not profiled\), mean 41\.8 us, grid 1x528x1,$' \
	'^   2\.3%  at::native::reduce_kernel<… #3 \(ATen\) \[memory\]: framework-torch-compile$' \
	'^  \[high\] framework-tf32: saves ~16%, estimated 7\.1x, fix 4-14x$' \
	'^    in operation aten::mm$'; do
	if grep -Eq "$pat" "$T/out"; then
		ok "pytorch report: line $pat"
	else
		not_ok "pytorch report: no line $pat"
	fi
done
"$GPUADVISE" --import "$SRCDIR/$PT" --format json >"$T/pt.json" 2>/dev/null
if python3 - "$T/pt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
owners = {k["name"].split("<")[0]: k["owner"] for k in r["kernels"]}
ok = (owners["void cutlass::Kernel2"] == "cublas"
      and owners["void at::native::reduce_kernel"] == "aten"
      and {k["owner"] for k in r["kernels"]} == {"aten", "cublas"})
sys.exit(0 if ok else 1)
PY
then
	ok "pytorch report --format json: each kernel's owner"
else
	not_ok "pytorch report --format json: owners"
fi
# Library kernels next to the user's own: the actions first, then the
# user's kernels' findings in the room left, numbered on.
run --import "$SRCDIR/tests/fixtures/owner-rules/framework-synthetic.json"
if [ "$rc" = 0 ] && grep -q '^ 1\. Short library kernels dominated by launch overhead (use CUDA graphs)$' "$T/out" &&
   grep -q '^ 3\. Communication (NCCL) holds a share of the GPU time$' "$T/out" &&
   grep -q '^ 4\. my_add(float\*, float const\*, int): Short kernels dominated by launch$' "$T/out" &&
   grep -q '^ncclDevKernel_AllReduce_Sum_f32_RING_LL(…) (NCCL) \[latency\]$' "$T/out"; then
	ok "framework actions, then the user's kernels' findings"
else
	not_ok "framework actions, then the user's kernels' findings (rc $rc)"
fi
run --verbose --import "$PT"
n_ex=$(grep -c 'block = torch.compile(block)' "$T/out")
n_find=$(grep -c '^  \[medium\] Unfused elementwise and reduction kernels (fuse with torch.compile) —' "$T/out")
if [ "$rc" = 0 ] && [ "$n_ex" -gt 1 ] && [ "$n_ex" = "$n_find" ] &&
   ! grep -q '^How to fix$' "$T/out" && grep -q '^  full name: void at::native::reduce_kernel<512, 1' "$T/out"; then
	ok "pytorch report --verbose: the fix and example under each of its $n_find findings, full names"
else
	not_ok "pytorch report --verbose: example $n_ex times for $n_find findings (rc $rc)"
fi

run --import "$ROOF"
if [ "$rc" = 0 ] && ! grep -q '^Roofline$' "$T/out"; then
	ok "no roofline off a terminal without --roofline"
else
	not_ok "roofline drawn off a terminal without --roofline (rc $rc)"
fi
run --format json --import "$ROOF"
if [ "$rc" = 0 ] && python3 - "$T/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k = {x["name"].split("(")[0]: x["roofline"] for x in r["kernels"]}
assert r["roofline"]["flops_source"]["FP32"] == "counters"
assert r["roofline"]["flops_source"]["tensor"] == "table"
assert k["tiny_add"]["verdict"] == "memory" and k["tiny_add"]["agrees_with_class"] is True
assert k["fma_loop"]["verdict"] == "compute" and k["fma_loop"]["agrees_with_class"] is True
assert k["matmul_naive"]["binding_roof"] == "L2" and k["matmul_naive"]["agrees_with_class"] is True
assert k["smem_conflict"]["agrees_with_class"] is False and k["smem_conflict"]["reason"]
assert k["copy_strided"]["verdict"] is None
PY
then
	ok "JSON roofline: verdicts, agreement and peak sources on the recording"
else
	not_ok "JSON roofline on the recording"
fi

# The text report fits in 80 columns (counted in characters, not bytes),
# except where a line holds a token that cannot fit even at the start of a
# line at its indentation.
run --import "$REC/testapp-all.json" --verbose --per-launch
cp "$T/out" "$T/report-verbose"
run --import "$REC/testapp-all.json"
if python3 - "$T/out" "$T/report-verbose" >"$T/diff" 2>&1 <<'PY'
import sys
bad = []
for path in sys.argv[1:]:
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if len(line) <= 80:
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent + max(len(t) for t in line.split()) > 80:
            continue          # an unbreakable token
        bad.append(f"{'--verbose ' if 'verbose' in path else ''}line {n} ({len(line)} columns): {line}")
print("\n".join(bad[:20]))
sys.exit(1 if bad else 0)
PY
then
	ok "text report (and --verbose --per-launch): no line over 80 columns"
else
	not_ok "text report: lines over 80 columns"
	sed 's/^/#   /' "$T/diff"
fi

# --format sarif: golden logs, locations, fingerprints, --baseline, --source-root.
. "$here/sarif.sh"

# ---------------------------------------------------------------------------
# --demo all without a GPU (recorded): exits 0, and the Summary shows for
# every demo a top finding, the variant that fixes it and a verdict of
# "inside" or "above" (the range); every line fits in 80 columns.
if have_gpu; then
	skip "gpuadvise --demo all (recorded): a GPU is present"
else
	run --demo all
	if [ "$rc" = 0 ]; then
		ok "gpuadvise --demo all -> 0"
	else
		not_ok "gpuadvise --demo all -> $rc, want 0"
		show stderr "$T/err"
	fi
	sed -n '/^Summary/,$p' "$T/out" >"$T/summary"
	if [ ! -s "$T/summary" ]; then
		not_ok "gpuadvise --demo all: no Summary"
	fi
	while read -r demo; do
		row=$(grep -E "^  $demo " "$T/summary")
		# demo top fixed-by expected estimate measured verdict [*]
		verdict=$(echo "$row" | awk '{for (i = 7; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "")}')
		top=$(echo "$row" | awk '{print $2}')
		fixed=$(echo "$row" | awk '{print $3}')
		if [ -z "$row" ]; then
			not_ok "demo all summary: no row for $demo"
		elif [ -z "$top" ] || [ "$top" = "-" ] || [ -z "$fixed" ] || [ "$fixed" = "(none)" ]; then
			not_ok "demo all summary: $demo: top finding '$top' not fixed by a variant ('$fixed')"
			echo "#   $row"
		else
			est=$(echo "$row" | awk '{print $5}')
			case $verdict in
			"inside" | "above" | "inside *" | "above *")
				ok "demo all summary: $demo: $top fixed by $fixed, $verdict" ;;
			"n/a" | "n/a *")
				# A recording without an input of the top finding's model
				# (instruction counts added after it was recorded): no
				# estimate, no range, and the summary says so.
				if [ "$est" = "n/a" ]; then
					ok "demo all summary: $demo: $top fixed by $fixed, no estimate in the recording"
				else
					not_ok "demo all summary: $demo: verdict n/a with an estimate ($est)"
				fi ;;
			*)
				not_ok "demo all summary: $demo: verdict '$verdict'"
				echo "#   $row" ;;
			esac
		fi
	done <"$T/demos"
	# The report, the variant tables and the Summary: 80 columns at most.
	wide=$(max_width "$T/out")
	if [ "$wide" -le 80 ]; then
		ok "gpuadvise --demo all: lines of at most 80 columns ($wide)"
	else
		not_ok "gpuadvise --demo all: a line of $wide columns, want <= 80"
		awk 'length($0) > 80' "$T/out" | head -3 | sed 's/^/#   /'
	fi
fi

# ---------------------------------------------------------------------------
# --baseline, --regression-threshold, --fail-on regression, --format junit, output
# names with %p/%h/%q{ENV}, several --import files, and the JSON report
# against docs/report.schema.json.  The baselines in tests/fixtures/baseline
# are SYNTHETIC variations of recorded/testapp-all.json (see the README
# there); the profile compared with them is the recording itself.
BASE=$FIX/baseline
ALL=$REC/testapp-all.json

cases_baseline() {
	cat <<'EOF'
0 out '^9 matched, 0 only in this profile, 0 only in the baseline; no regression' --import $ALL --baseline $ALL --fail-on regression
0 out '^Compared with baseline tests/fixtures/golden/testapp-all\.json$' --import $ALL --baseline $FIX/golden/testapp-all.json --fail-on regression
1 out '^REGRESSION matmul_naive\(…\): 2\.51 ms -> 3\.13 ms per launch \(\+25\.0%\), slower' --import $ALL --baseline $BASE/matmul-faster.json --fail-on regression
0 out '^REGRESSION matmul_naive'                         --import $ALL --baseline $BASE/matmul-faster.json
0 out '^9 matched kernels unchanged: within 30%,'        --import $ALL --baseline $BASE/matmul-faster.json --fail-on regression --regression-threshold 30
1 out '^  the 2\.5% threshold$'                         --import $ALL --baseline $BASE/matmul-faster.json --fail-on regression --regression-threshold 2.5%
1 out ''                                                 --import $ALL --baseline $BASE/matmul-faster.json --fail-on high
0 out '^matmul_naive\(…\): 3\.92 ms -> 3\.13 ms per launch \(-20\.0%\)$' --import $ALL --baseline $BASE/all-slower.json --fail-on regression
1 out '^  new finding: \[high\] Uncoalesced global memory access' --import $ALL --baseline $BASE/strided-was-coalesced.json --fail-on regression
1 out '^REGRESSION copy_strided'                         --import $ALL --baseline $BASE/strided-was-coalesced.json --fail-on regression
0 out '^  class compute -> divergence$'                  --import $ALL --baseline $BASE/divergence-was-uniform.json --fail-on regression
0 out '^  new finding: \[medium\] Threads of a warp take different paths' --import $ALL --baseline $BASE/divergence-was-uniform.json --fail-on regression
0 out '^7 matched, 2 only in this profile, 1 only in the baseline' --import $ALL --baseline $BASE/renamed.json --fail-on regression
0 out '^  tiny_add_v0\(…\): mean 1\.92 us per launch$'   --import $ALL --baseline $BASE/renamed.json
0 out '^  fma_loop\(float\*, float, int\): mean 588 us'  --import $ALL --baseline $BASE/renamed.json
0 out '^  matched by name only, grid 64x512x1 -> 128x1024x1$' --import $ALL --baseline $BASE/renamed.json
0 out '^\| DIFFERENT GPU: The baseline was recorded on another GPU' --import $ALL --baseline $BASE/other-gpu.json --fail-on regression --baseline-any-gpu
2 err 'regression: the baseline tests/fixtures/baseline/other-gpu\.json was recorded on NVIDIA H100 80GB HBM3 \(GH100\), this profile on NVIDIA H200 \(GH100\)' --import $ALL --baseline $BASE/other-gpu.json --fail-on regression
2 err '--baseline-any-gpu needs --baseline'               --baseline-any-gpu --import $ALL
0 err 'warning: The baseline was recorded on another GPU, NVIDIA H100 80GB HBM3' --import $ALL --baseline $BASE/other-gpu.json --format junit
0 out 'Only in this run: `fma_loop'                     --import $ALL --baseline $BASE/renamed.json --format markdown
0 out '^> \*\*Warning: different GPU\.\*\*'              --import $ALL --baseline $BASE/other-gpu.json --format markdown
1 out '^\| \*\*regression\*\* `matmul_naive.* \| 2\.51 ms \| 3\.13 ms \| \+25\.0% \|' --import $ALL --baseline $BASE/matmul-faster.json --format markdown --fail-on regression
2 err '^gpuadvise: --baseline: tests/fixtures/baseline/broken\.json:7:70: invalid JSON' --import $ALL --baseline $BASE/broken.json
2 err '^gpuadvise: --baseline: tests/fixtures/cli/missing-field\.json: launches\[0\]\.grid: missing' --import $ALL --baseline $CLI/missing-field.json
2 err 'cannot open tests/fixtures/baseline/no-such-file\.json' --import $ALL --baseline $BASE/no-such-file.json
2 err '^gpuadvise: --baseline: tests/fixtures/baseline/broken\.json:7:70' --baseline $BASE/broken.json /bin/true
2 err '--fail-on regression needs --baseline'            --fail-on regression --import $ALL
2 err '--regression-threshold needs --baseline'          --regression-threshold 5 --import $ALL
2 err "--regression-threshold expects a percentage such as 10 or 2\.5, not 'lots'" --regression-threshold lots --baseline $ALL --import $ALL
2 err "--regression-threshold expects a percentage .*not '-5'" --regression-threshold -5 --baseline $ALL --import $ALL
2 err '--baseline compares a profile: give PROGRAM or --import' --baseline $ALL --demo matmul
2 err "unknown format 'xml' \(text, json, markdown, junit, html, sarif\)" --format xml --import $ALL
0 out '^<testsuites name="gpuadvise" tests="9" failures="0"' --format junit --import $ALL
1 out '^<testsuites name="gpuadvise" tests="9" failures="3"' --format junit --fail-on high --import $ALL
2 err "-o 'x%q\{GA_NO_SUCH_VARIABLE_FOR_TEST\}\.json': environment variable GA_NO_SUCH_VARIABLE_FOR_TEST is not set" -o x%q{GA_NO_SUCH_VARIABLE_FOR_TEST}.json --import $ALL
2 err "--log-file 'r%y\.txt': unknown '%y'"              --log-file r%y.txt --import $ALL
0 out '^Processes$'                                      --import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json
0 out '^total: 2 processes, 2 kernels, 2 launches, 1\.18 ms from 2 files$' --import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json
0 out '^pid [0-9]+: 1 kernel, 1 launch, [0-9.]+ us \([0-9.]+% of GPU time\); from$' --import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json
0 out '^  grid [0-9]+x1x1, block 256x1x1, pid [0-9]+$'    --verbose --import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json
0 out '^    pid [0-9]+$'                                  --import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json
EOF
}
cases_baseline >"$T/cases"
check_table <"$T/cases"

# Predicted against measured: strided-fixed.json is the recording with
# copy_strided fixed (measured like copy_coalesced); compared with the
# recording as the baseline, the uncoalesced-access finding is gone from a
# kernel that got faster, and every format gives what it predicted (the
# baseline report's estimate and range) against what the fix measured (the
# ratio of the mean durations in the two files, computed here).
FIXED=$BASE/strided-fixed.json
MEAS=$(python3 - "$SRCDIR/$ALL" "$SRCDIR/$FIXED" <<'PY'
import json, sys
def mean(path):
    d = [l["duration_ns"] for l in json.load(open(path))["launches"]
         if l["name"].startswith("copy_strided(") and l.get("duration_ns") is not None]
    return sum(d) / len(d)
print("%.1f" % (mean(sys.argv[1]) / mean(sys.argv[2])))
PY
)
# ... and its first digits as the JSON report has them (not rounded).
MEAS_JSON=$(python3 - "$SRCDIR/$ALL" "$SRCDIR/$FIXED" <<'PY'
import json, sys
def mean(path):
    d = [l["duration_ns"] for l in json.load(open(path))["launches"]
         if l["name"].startswith("copy_strided(") and l.get("duration_ns") is not None]
    return sum(d) / len(d)
print(repr(mean(sys.argv[1]) / mean(sys.argv[2]))[:6].replace(".", "\\."))
PY
)
run --import "$ALL" --format json
PRED=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
f = [f for f in r["findings"] if f["rule"] == "uncoalesced-global-access"
     and f["kernel_name"].startswith("copy_strided(")][0]
def end(s):   # a range end at the precision of the speedups: 2.7, 4.5, 12
    t = "%.1f" % s if s < 9.95 else "%.0f" % s
    return t[:-2] if t.endswith(".0") else t
print("%.1fx \\(%s-%sx\\)" % (f["estimated_speedup"], end(f["expected_speedup"][0]),
                                end(f["expected_speedup"][1])))
' "$T/out")
SAY="finding uncoalesced-global-access: predicted $PRED, measured ${MEAS}x"
cat >"$T/cases" <<CASES
0 out '^    $SAY\$'                  --import $FIXED --baseline $ALL --fail-on regression
0 out '^- \`copy_strided.*\`: $SAY\$' --import $FIXED --baseline $ALL --format markdown
0 out '^gone: $SAY\$'                 --import $FIXED --baseline $ALL --format junit
0 out 'Uncoalesced global memory access in copy_strided[^"]*; $SAY\.' --import $FIXED --baseline $ALL --format sarif
0 out '"measured": ${MEAS_JSON}[0-9]*,' --import $FIXED --baseline $ALL --format json
0 out '^<li><code>copy_strided.*</code>: $SAY</li>\$' --import $FIXED --baseline $ALL --format html
0 out '^  gone: \[high\] Uncoalesced global memory access \(uncoalesced-global-access\)\$' --import $FIXED --baseline $ALL
CASES
check_table <"$T/cases"
# The demos word their first finding's fix the same way: in the recorded
# matmul demo, tiled does not apply tensor-cores-unused and wmma does, with
# the measured speedup the ratio of the recorded variant times.
if have_gpu; then
	skip "gpuadvise --demo matmul (recorded): a GPU is present"
else
	run --demo matmul
	said=$(tr '\n' ' ' <"$T/out" | tr -s ' ')
	meas=$(python3 -c '
import json, sys
v = {x["name"]: x["time_ms"] for x in json.load(open(sys.argv[1]))["variants"]}
print("%.1fx %.1fx" % (v["naive"] / v["tiled"], v["naive"] / v["wmma"]))' "$SRCDIR/$REC/demo-matmul.json")
	tiled=${meas% *} wmma=${meas#* }
	# The range: the finding's, in a report of the naive variant's profile.
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
json.dump(next(v["profile"] for v in d["variants"] if v["name"] == "naive"), open(sys.argv[2], "w"))
' "$SRCDIR/$REC/demo-matmul.json" "$T/naive.json"
	range=$("$GPUADVISE" --format json --import "$T/naive.json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
f = [f for f in r["findings"] if f["rule"] == "tensor-cores-unused"][0]
def end(s):   # at the precision of the speedups: 1.2, 4.5, 12
    t = "%.1f" % s if s < 9.95 else "%.0f" % s
    return t[:-2] if t.endswith(".0") else t
print("%s-%sx" % (end(f["expected_speedup"][0]), end(f["expected_speedup"][1])))')
	case $said in
	*"Variant tiled does not apply that fix (measured $tiled). Variant wmma applies that fix: finding tensor-cores-unused: predicted "*"x ($range), measured $wmma, inside the range; the finding is gone."*)
		ok "demo matmul: tiled does not apply the first fix, wmma does: predicted against measured $wmma" ;;
	*)
		not_ok "demo matmul: no 'does not apply' / 'predicted ... ($range), measured $wmma' sentence"
		echo "$said" | grep -o 'The advice for.*' | sed 's/^/#   /' ;;
	esac
fi

run --import "$ALL" --baseline "$FIXED"
if grep -q 'predicted' "$T/out"; then
	not_ok "a finding gone from a kernel that got slower gets no predicted-against-measured line"
else
	ok "a finding gone from a kernel that got slower gets no predicted-against-measured line"
fi

# ---------------------------------------------------------------------------
# Metric sets (--max-passes): no set over the limit, and the classifier's
# metrics (what --quick collects) all in the first set, so that a kernel
# launched once is still classified on everything the classifier reads.
metric_sets_check() {
	limit=$1
	if [ "$SANITIZED" = 1 ]; then
		skip "metric sets, --max-passes $limit: ASan build (CUPTI's RTLD_DEEPBIND)"
		return
	fi
	run --max-passes "$limit" --list-metrics --chip GH100
	cp "$T/out" "$T/sets"
	run --quick --list-metrics
	cp "$T/out" "$T/classifier"
	over=$(awk -v lim="$limit" '/^# set [0-9]+:/ && $(NF-2) + 0 > lim' "$T/sets")
	first=$(awk '/^# set 1:/ { on = 1; next } /^#/ { on = 0 } on' "$T/sets")
	missing=$(printf '%s\n' "$first" | grep -vxF -f - "$T/classifier")
	nsets=$(grep -c '^# set [0-9]*:' "$T/sets")
	if [ -n "$over" ]; then
		not_ok "--max-passes $limit: a set over the limit: $over"
	elif [ -n "$missing" ]; then
		not_ok "--max-passes $limit: classifier metrics outside set 1: $missing"
	elif [ "$nsets" -lt 2 ]; then
		not_ok "--max-passes $limit: $nsets metric set(s), want the rules split over 2 or more"
	else
		ok "--max-passes $limit: $nsets metric sets, none over $limit passes, classifier in set 1"
	fi
}
metric_sets_check 3
metric_sets_check 4

# The metric-set cache (of a --max-passes N packing; with no bound, the
# default, everything is one set): written once, then read instead of packing again.
# Proof that it is read: a set change made in the file (still within the
# limit) shows in the listing; one that breaks the limit, or a damaged
# file, is ignored and the packing done again.
cache_check() {
	if [ "$SANITIZED" = 1 ]; then
		skip "metric-set cache: ASan build (CUPTI's RTLD_DEEPBIND)"
		return
	fi
	rm -rf "$T/cache"
	run --max-passes 3 --list-metrics --chip GH100
	cp "$T/out" "$T/sets-first"
	f=$(ls "$T"/cache/sets-GH100-* 2>/dev/null | head -1)
	if [ -z "$f" ] || [ "$(head -1 "$f")" != "gpuadvise metric sets 1" ]; then
		not_ok "metric-set cache: no cache file written under \$GPUADVISE_CACHE_DIR"
		return
	fi
	run --max-passes 3 --list-metrics --chip GH100
	if cmp -s "$T/out" "$T/sets-first"; then
		ok "metric-set cache: a second listing from the cache is the same"
	else
		not_ok "metric-set cache: the listing changed with the cache"
	fi
	# Move a metric of set 2 into set 3 (set 3 has room): the listing follows.
	m=$(awk '$1 == 1 && $3 == "l1tex__t_sector_hit_rate.pct"' "$f")
	sed 's/^1 \([0-9]*\) l1tex__t_sector_hit_rate\.pct$/2 \1 l1tex__t_sector_hit_rate.pct/' "$f" >"$f.new" && mv "$f.new" "$f"
	run --max-passes 3 --list-metrics --chip GH100
	n3=$(awk '/^# set 3:/ { on = 1; next } /^#/ { on = 0 } on' "$T/out" | grep -c 'l1tex__t_sector_hit_rate')
	if [ -n "$m" ] && [ "$n3" = 1 ]; then
		ok "metric-set cache: read (a set edited in the file shows in the listing)"
	else
		not_ok "metric-set cache: an edited set did not show (metric in set 2: '$m', in set 3: $n3)"
	fi
	# Everything into set 1: over the limit, so packed again.
	awk '$1 ~ /^[0-9]+$/ { $1 = 0 } { print }' "$f" >"$f.new" && mv "$f.new" "$f"
	run --max-passes 3 --list-metrics --chip GH100
	if cmp -s "$T/out" "$T/sets-first"; then
		ok "metric-set cache: a cached packing over the pass limit is packed again"
	else
		not_ok "metric-set cache: a cached packing over the limit was used"
	fi
	echo "gpuadvise metric sets 1" >"$f"
	echo "0 0 not-a-metric" >>"$f"
	run --max-passes 3 --list-metrics --chip GH100
	if cmp -s "$T/out" "$T/sets-first"; then
		ok "metric-set cache: a damaged cache file is ignored"
	else
		not_ok "metric-set cache: a damaged cache file changed the listing"
	fi
	rm -rf "$T/cache"
	(cd "$SRCDIR" && GPUADVISE_CACHE_DIR=off "$GPUADVISE" --max-passes 3 --list-metrics --chip GH100) >"$T/out" 2>&1
	if [ ! -e "$SRCDIR/off" ] && [ ! -e "$T/cache" ] && cmp -s "$T/out" "$T/sets-first"; then
		ok "metric-set cache: GPUADVISE_CACHE_DIR=off lists the same sets"
	else
		not_ok "metric-set cache: GPUADVISE_CACHE_DIR=off"
	fi
}
cache_check

# Single-process reports say nothing about processes in text.
run --import "$ALL"
if [ "$rc" = 0 ] && ! grep -q '^Processes$' "$T/out"; then
	ok "one process, one file: no Processes section"
else
	not_ok "one process, one file: a Processes section, or status $rc"
fi

# The JSON comparisons, field by field.
json_check() {
	desc=$1
	shift
	if python3 - "$T/out" >"$T/diff" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc"
		sed 's/^/#   /' "$T/diff"
	fi
}
run --format json --import "$ALL" --baseline "$ALL" --fail-on regression
json_check "--baseline (identical) --format json -> $rc: nothing changed" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
bad = []
if b["regressions"] != 0 or b["slower"] != 0: bad.append("regressions")
if len(b["kernels"]) != 9 or b["only_new"] or b["only_baseline"]: bad.append("matching")
for k in b["kernels"]:
    if k["change_pct"] != 0 or k["new_findings"] or k["gone_findings"] or k["class_changed"]:
        bad.append(k["name"])
if not b["same_gpu"] or b["warning"] is not None: bad.append("same GPU")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
run --format json --import "$ALL" --baseline "$BASE/matmul-faster.json" --fail-on regression
json_check "--baseline matmul-faster --format json -> $rc: matmul_naive +25%, the only regression" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = r["baseline"]
bad = []
reg = [k for k in b["kernels"] if k["regression"]]
if b["regressions"] != 1 or len(reg) != 1: bad.append(f"{b['regressions']} regressions")
elif not reg[0]["name"].startswith("matmul_naive(") or abs(reg[0]["change_pct"] - 25.0) > 1e-6 \
        or not reg[0]["slower"] or reg[0]["new_findings"]:
    bad.append(f"wrong regression: {reg[0]}")
elif r["kernels"][reg[0]["kernel"]]["name"] != reg[0]["name"]: bad.append("kernel index")
if b["threshold_pct"] != 10 or b["severity"] != "high": bad.append("threshold/severity")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
[ "$rc" = 1 ] || not_ok "--baseline matmul-faster --fail-on regression --format json -> $rc, want 1"
run --format json --import "$ALL" --baseline "$BASE/strided-was-coalesced.json"
json_check "--baseline strided-was-coalesced --format json: uncoalesced-global-access is new" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
k = [k for k in b["kernels"] if k["name"].startswith("copy_strided(")][0]
new = {f["rule"]: f["regression"] for f in k["new_findings"]}
bad = []
if new.get("uncoalesced-global-access") is not True: bad.append(f"new findings {new}")
if not k["regression"] or k["slower"]: bad.append("regression by finding, not by time")
if [x["name"] for x in b["kernels"] if x["regression"]] != [k["name"]]: bad.append("others")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
run --format json --import "$ALL" --baseline "$BASE/divergence-was-uniform.json"
json_check "--baseline divergence-was-uniform --format json: class change, medium finding no regression" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
k = [k for k in b["kernels"] if k["name"].startswith("branch_evenodd(")][0]
bad = []
if not k["class_changed"] or k["baseline_class"] != "compute" or k["class"] != "divergence":
    bad.append(f"classes {k['baseline_class']} -> {k['class']}")
if [f["rule"] for f in k["new_findings"]] != ["thread-divergence"]: bad.append("new findings")
if k["regression"] or b["regressions"]: bad.append("a medium finding is no regression at high")
if k["metrics"]["warp_eff"]["baseline"] < 99.9 or k["metrics"]["warp_eff"]["current"] > 60:
    bad.append("warp_eff")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
run --format json --import "$ALL" --baseline "$BASE/renamed.json"
json_check "--baseline renamed --format json: unmatched kernels on each side, reshaped one by name" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
short = lambda n: n.split("(")[0]
bad = []
if sorted(short(k["name"]) for k in b["only_new"]) != ["fma_loop", "tiny_add"]: bad.append("only_new")
if [short(k["name"]) for k in b["only_baseline"]] != ["tiny_add_v0"]: bad.append("only_baseline")
t = [k for k in b["kernels"] if short(k["name"]) == "transpose_naive"][0]
if t["match"] != "name" or t["baseline_grid"] != [64, 512, 1]: bad.append("transpose_naive")
if any(k["match"] != "shape" for k in b["kernels"] if k is not t): bad.append("others by shape")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
run --format json --import "$ALL" --baseline "$BASE/other-gpu.json" --fail-on regression --baseline-any-gpu
json_check "--baseline other-gpu --format json -> $rc: flagged, durations not compared" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
bad = []
if b["same_gpu"] or b["durations_compared"]: bad.append("same_gpu/durations_compared")
if not b["warning"] or "NVIDIA H100 80GB HBM3" not in b["warning"]: bad.append("warning")
if b["device"]["name"] != "NVIDIA H100 80GB HBM3": bad.append("device")
if b["total_change_pct"] is not None or b["slower"] or b["regressions"]: bad.append("compared")
if any(k["change_pct"] is not None or k["slower"] for k in b["kernels"]): bad.append("kernels")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
[ "$rc" = 0 ] || not_ok "--baseline other-gpu --fail-on regression -> $rc, want 0 (twice as fast elsewhere)"
run --format junit --import "$ALL" --baseline "$BASE/other-gpu.json"
if grep -q '<property name="baseline_warning" value="The baseline was recorded on another GPU' "$T/out" &&
	grep -q '<system-err>DIFFERENT GPU: ' "$T/out"; then
	ok "--baseline other-gpu --format junit: flagged in a property and in system-err"
else
	not_ok "--baseline other-gpu --format junit: no warning"
fi

# Several --import files: one entry per process in JSON, with its file.
run --format json --import "$REC/testapp-copy_strided.json" --import "$REC/testapp-fma_loop.json"
json_check "several --import files --format json: processes with pid, file and totals" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["processes"]
bad = []
import os
src = os.environ["SRCDIR"]
want = [json.load(open(f"{src}/tests/fixtures/recorded/testapp-{k}.json"))["launches"][0]["pid"]
        for k in ("copy_strided", "fma_loop")]
if [x["pid"] for x in p] != want: bad.append(f"pids {[x['pid'] for x in p]}, want {want}")
elif [x["files"] for x in p] != [["tests/fixtures/recorded/testapp-copy_strided.json"],
                                 ["tests/fixtures/recorded/testapp-fma_loop.json"]]:
    bad.append("files")
if sum(x["launches"] for x in p) != r["summary"]["launches"]: bad.append("launches")
if abs(sum(x["total_ns"] for x in p) - r["summary"]["total_gpu_ns"]) > 1e-6: bad.append("total")
if abs(sum(x["share"] for x in p) - 1) > 1e-9: bad.append("shares")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY

# Output names: %p, %h, %q{ENV}, %%.
host=$(python3 -c 'import socket; print(socket.gethostname())')
GA_TEST_RANK=3
export GA_TEST_RANK
run --import "$REC/testapp-fma_loop.json" -o "$T/rank%q{GA_TEST_RANK}-%h-%p.json" \
	--log-file "$T/log-%q{GA_TEST_RANK}-100%%.txt"
unset GA_TEST_RANK
made=$(ls "$T" | grep -E "^rank3-$host-[0-9]+\.json\$")
pid=$(echo "$made" | sed -E 's/.*-([0-9]+)\.json$/\1/')
if [ "$rc" = 0 ] && [ -n "$made" ] && [ "$pid" -gt 1 ] && [ -s "$T/log-3-100%.txt" ]; then
	ok "-o rank%q{GA_TEST_RANK}-%h-%p.json, --log-file log-%q{..}-100%%.txt -> $made, log-3-100%.txt"
else
	not_ok "%-expansion -> $rc: made '$made' (host $host); log file: $(ls "$T" | grep '^log-')"
	show stderr "$T/err"
fi
rm -f "$T"/rank3-*.json "$T"/log-3-*.txt
run --import "$REC/testapp-fma_loop.json" -o "$T/rank%q{GA_TEST_RANK}.json"
if [ "$rc" = 2 ] && grep -q 'GA_TEST_RANK is not set' "$T/err" && ! ls "$T" | grep -q '^rank'; then
	ok "-o with %q{UNSET} -> 2, names the variable, writes nothing"
else
	not_ok "-o with %q{UNSET} -> $rc, want 2 naming GA_TEST_RANK and no file"
fi

# JUnit: well-formed XML; failing test cases are exactly the kernels with a
# finding at or above the --fail-on severity (none without --fail-on, as the
# exit status is 0 then), or the regressing kernels with --fail-on
# regression; a failure's type is its highest severity; the classname never
# holds the kernel's class.
run --format json --import "$ALL"
cp "$T/out" "$T/all.json"
junit_check() {
	# $1: description, $2: "high"/"medium"/"low" or a file of expected failing names
	python3 - "$T/out" "$T/all.json" "$2" >"$T/diff" 2>&1 <<'PY'
import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
report = json.load(open(sys.argv[2]))
want = sys.argv[3]
order = {"low": 0, "medium": 1, "high": 2}
bad = []
if root.tag != "testsuites": bad.append(f"root {root.tag}")
suites = root.findall("testsuite")
cases = [c for s in suites for c in s.findall("testcase")]
if len(cases) != len(report["kernels"]): bad.append(f"{len(cases)} test cases")
if want in order:
    expect = {k["name"] for k in report["kernels"]
              if any(order[report["findings"][i]["severity"]] >= order[want] for i in k["findings"])}
else:
    expect = set(open(want).read().splitlines())
failing = {c.get("name") for c in cases if c.find("failure") is not None}
if failing != expect: bad.append(f"failing {sorted(failing)} != {sorted(expect)}")
for c in cases:
    k = [k for k in report["kernels"] if k["name"] == c.get("name")]
    if len(k) != 1 or c.get("classname") != "gpuadvise.kernel":
        bad.append(f"classname of {c.get('name')}")
    f = c.find("failure")
    if f is not None and ("Fix:" not in (f.text or "") and want in order):
        bad.append(f"no fix in the failure of {c.get('name')}")
    if f is not None and want in order:
        top = max((report["findings"][i]["severity"] for i in k[0]["findings"]),
                  key=order.get)
        if f.get("type") != top:
            bad.append(f"failure type {f.get('type')} of {c.get('name')}, want {top}")
n_fail = sum(1 for c in cases if c.find("failure") is not None)
for s in suites + [root]:
    if int(s.get("failures")) != n_fail or int(s.get("tests")) != len(cases):
        bad.append(f"counts of {s.tag}")
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
	if [ $? = 0 ]; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/#   /' "$T/diff"
	fi
}
: >"$T/want-none"
run --format junit --import "$ALL"
junit_check "--format junit -> $rc: well-formed, no failure without --fail-on" "$T/want-none"
run --format junit --fail-on high --import "$ALL"
junit_check "--format junit --fail-on high -> $rc: failing exactly the kernels with high findings" high
run --format junit --fail-on medium --import "$ALL"
junit_check "--format junit --fail-on medium -> $rc: failing the kernels with medium or high findings" medium
printf '%s\n' 'matmul_naive(float const*, float const*, float*, int)' >"$T/want-fail"
run --format junit --fail-on regression --import "$ALL" --baseline "$BASE/matmul-faster.json"
junit_check "--format junit --fail-on regression -> $rc: failing only the slower kernel" "$T/want-fail"
grep -q '<failure message="25.0% slower than the baseline" type="regression">' "$T/out" ||
	not_ok "--format junit --fail-on regression: failure message"
run --format junit --fail-on regression --import "$ALL" --baseline "$ALL"
junit_check "--format junit --fail-on regression, identical baseline -> $rc: nothing fails" "$T/want-none"

# XML escaping: a kernel name with markup, quotes, "]]>" and a control
# character (a SYNTHETIC profile made from a recorded one).
python3 - "$SRCDIR/$REC/testapp-fma_loop.json" "$T/odd.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
l = p["launches"][0]
l["name"] = 'apply<op&"x\'>]]>\u0001(int)'
l["mangled"] = "_Z5applyIXadL_Z2opEEEvi"
json.dump(p, open(sys.argv[2], "w"))
PY
run --format junit --fail-on low --import "$T/odd.json"
if python3 - "$T/out" <<'PY'
import sys
import xml.etree.ElementTree as ET
c = ET.parse(sys.argv[1]).getroot().find("testsuite/testcase")
sys.exit(0 if c.get("name") == 'apply<op&"x\'>]]>\\x01(int)' and c.find("failure") is not None else 1)
PY
then
	ok "--format junit: names with markup and control characters are escaped"
else
	not_ok "--format junit: escaping of an odd kernel name"
	show stdout "$T/out"
fi

# The JSON report matches docs/report.schema.json: plain, verbose, several
# processes, and each kind of baseline.
n=0
for args in "--import $ALL" "--verbose --per-launch --import $ALL" \
	"--import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json" \
	"--import $REC/pytorch.json" "--import $ALL --baseline $BASE/matmul-faster.json" \
	"--import $ALL --baseline $BASE/renamed.json" "--import $ALL --baseline $BASE/other-gpu.json" \
	"--import $ALL --baseline $BASE/divergence-was-uniform.json" \
	"--roofline --import $ALL" "--import $CLI/pytorch-nvtx.json" \
	"--import $BASE/strided-fixed.json --baseline $ALL"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	run --format json $args
	cp "$T/out" "$T/schema-$n.json"
done
if python3 "$SRCDIR/tests/cli/check-schema.py" "$SRCDIR/docs/report.schema.json" \
	"$T"/schema-*.json >"$T/diff" 2>&1; then
	ok "JSON reports ($n kinds) conform to docs/report.schema.json"
else
	not_ok "JSON reports do not conform to docs/report.schema.json"
	sed 's/^/#   /' "$T/diff"
fi
# A kernel launched with several grids is a group per launch shape; "What
# to do first" lists each rule on it once, ranked by the shapes' summed
# saving, with the estimate over those launches (tests/cli/shapes.py checks
# the JSON's figures against its own findings and kernels).
python3 "$SRCDIR/tests/cli/shapes.py" make "$SRCDIR/$REC/testapp-smem_conflict.json" "$T/shapes.json"
run --format json --import "$T/shapes.json"
cp "$T/out" "$T/shapes-report.json"
if [ "$rc" -eq 0 ] && python3 "$SRCDIR/tests/cli/shapes.py" check "$T/shapes-report.json" \
	>"$T/diff" 2>&1 && python3 "$SRCDIR/tests/cli/check-schema.py" \
	"$SRCDIR/docs/report.schema.json" "$T/shapes-report.json" >>"$T/diff" 2>&1; then
	ok "one entry per kernel and rule over its launch shapes, savings summed (JSON)"
else
	not_ok "launch shapes of one kernel in What to do first (JSON)"
	sed 's/^/#   /' "$T/diff"
fi
for fmt in text markdown html; do
	run --format $fmt --import "$T/shapes.json"
	# markdown's table: one row of the kernel's bank conflicts, its shapes named
	want='on 3 launch shapes'
	[ $fmt = markdown ] && want='^| [0-9]* | `smem_conflict.*(3 launch shapes) .*bank conflicts'
	if [ "$rc" -eq 0 ] && [ "$(grep -c "$want" "$T/out")" -eq 1 ] &&
		[ "$(grep -c 'bank conflicts' "$T/out")" -ge 1 ]; then
		ok "$fmt: the bank conflicts of 3 launch shapes are one entry"
	else
		not_ok "$fmt: '$want' not once in What to do first"
		show stdout "$T/out"
	fi
done
# Kernels launched with more grids than the report has kernel blocks (a
# wavefront over its diagonals): the tail lists the kernel once, its shares
# summed, and says why; a kernel of one shape keeps its block.
python3 "$SRCDIR/tests/cli/shapes.py" many "$SRCDIR/$REC/testapp-smem_conflict.json" "$T/many.json"
run --import "$T/many.json"
share=$(python3 - "$T/many.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
t = [l["duration_ns"] for l in p["launches"]]
print("%.1f%%" % (100 * sum(t[:-1]) / sum(t)))
PY
)
if [ "$rc" -eq 0 ] && grep -q "^20 more kernels (.*a kernel's launch shapes share a line):$" "$T/out" &&
	[ "$(sed -n '/^Kernels$/,/^How to fix$/p' "$T/out" | grep -c 'smem_conflict')" -eq 1 ] &&
	grep -q "^ *$share  smem_conflict(…) 20 shapes \[memory\]: shared-bank-conflicts" "$T/out"; then
	ok "Kernels: 20 launch shapes of one kernel on one line ($share of the GPU time)"
else
	not_ok "Kernels: 20 launch shapes of one kernel not on one line of $share"
	show stdout "$T/out"
fi
# Markdown's kernels table: one row, the shapes' share summed, no "more
# kernels" line (every group is on a row); --verbose keeps a row per shape.
md_kernel_rows() {
	awk '/^#### Kernels$/ { on = 1; next } on && /^\|/ { print; seen = 1; next } seen { exit }' "$T/out" |
		grep -c '^| `smem_conflict'
}
run --format markdown --import "$T/many.json"
if [ "$rc" -eq 0 ] && [ "$(md_kernel_rows)" -eq 1 ] &&
	grep -q '^| `smem_conflict.*` (20 launch shapes) | memory | '"$share"' | .* | 20 | ' "$T/out" &&
	! grep -q 'more kernels in the full report' "$T/out"; then
	ok "markdown: 20 launch shapes of one kernel in one row ($share)"
else
	not_ok "markdown: 20 launch shapes of one kernel not in one row of $share"
	show stdout "$T/out"
fi
run --format markdown --verbose --import "$T/many.json"
if [ "$rc" -eq 0 ] && [ "$(md_kernel_rows)" -eq 20 ]; then
	ok "markdown --verbose: a row per launch shape"
else
	not_ok "markdown --verbose: not 20 rows of smem_conflict"
	show stdout "$T/out"
fi
# SARIF: one result for the rule's findings on the 20 shapes (they share a
# fingerprint), with the figures of the JSON report's entry for them.
run --format json --import "$T/many.json"
cp "$T/out" "$T/many-report.json"
run --format sarif --import "$T/many.json"
if [ "$rc" -eq 0 ] && python3 - "$T/many-report.json" "$T/out" >"$T/diff" 2>&1 <<'PY'
import json, math, sys
rep, sarif = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
entry = [e for e in rep["first"] if "shapes" in e]
assert len(entry) == 1, entry
f = rep["findings"][entry[0]["index"]]
sh = entry[0]["shapes"]
res = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == f["rule"]
       and r["properties"]["kernel"].startswith("smem_conflict")]
assert len(res) == 1, [r["message"]["text"] for r in res]
p = res[0]["properties"]
assert p["shapes"] == sh["count"] == 20, (p, sh)
assert math.isclose(p["saving"], sh["saving"], rel_tol=1e-5), (p["saving"], sh["saving"])
assert math.isclose(p["speedup"], sh["speedup"], rel_tol=1e-5), (p["speedup"], sh["speedup"])
assert math.isclose(p["low"], 1 - 1 / sh["speedup_min"], rel_tol=1e-5), p
assert "on 20 launch shapes" in res[0]["message"]["text"], res[0]["message"]["text"]
fps = [r["partialFingerprints"] for r in sarif["runs"][0]["results"]]
assert len({json.dumps(x, sort_keys=True) for x in fps}) == len(fps), "a fingerprint twice"
PY
then
	ok "sarif: 20 launch shapes of one kernel and rule are one result, every fingerprint once"
else
	not_ok "sarif: the launch shapes of one kernel and rule are not one result"
	sed 's/^/#   /' "$T/diff"
fi
run --format html --import "$T/many.json"
if [ "$rc" -eq 0 ] && [ "$(grep -c '<tr><td>.</td><td><code>smem_conflict' "$T/out")" -eq 1 ] &&
	grep -q "the largest of 20 launch shapes; all of them: $share of GPU time" "$T/out"; then
	ok "html: 20 launch shapes of one kernel in one row ($share)"
else
	not_ok "html: 20 launch shapes of one kernel not in one row of $share"
	show stdout "$T/out"
fi
# that of the launches whose innermost range it is, the unprofiled ones at
# their kernel's mean duration, computed here from the profile alone;
# without ranges (--nvtx=auto) or with --nvtx=off there is no section.
run --format json --import $CLI/pytorch-nvtx.json
cp "$T/out" "$T/ops.json"
if python3 - "$SRCDIR/$CLI/pytorch-nvtx.json" "$T/ops.json" >"$T/diff" 2>&1 <<'PY'
import collections, json, sys
p = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
key = lambda o: (o.get("pid", 0), o["mangled"], tuple(o["grid"]), tuple(o["block"]))
runs = collections.defaultdict(list)
for l in p["launches"]:
    runs[key(l)].append(l["duration_ns"])
want = collections.Counter()
for l in p["launches"]:
    want[l["nvtx"].split("/")[-1]] += l["duration_ns"]
for u in p.get("unprofiled", []):
    d = runs[key(u)]
    want[u["nvtx"].split("/")[-1]] += u["launches"] * sum(d) / len(d)
got = {o["name"]: o["time_ns"] for o in r["operations"]}
assert set(got) == set(want), (sorted(got), sorted(want))
for name, t in want.items():
    assert abs(got[name] - t) <= 1e-9 * t, (name, got[name], t)
assert [o["name"] for o in r["operations"]] == sorted(want, key=lambda n: (-want[n], n))
PY
then
	ok "JSON operations: each one's time from its launches' NVTX paths"
else
	not_ok "JSON operations: times differ from the profile's launches"
	show diff "$T/diff"
fi
run --nvtx=off --format json --import $CLI/pytorch-nvtx.json
n_off=$(grep -c '"operations"' "$T/out")
run --import $REC/pytorch-transformer.json
if [ "$n_off" -eq 0 ] && ! grep -q '^Operations' "$T/out"; then
	ok "no operations with --nvtx=off, nor by default without ranges"
else
	not_ok "operations shown with --nvtx=off or without ranges"
fi
# The checker does catch a report that breaks the schema.
python3 - "$T/schema-5.json" "$T/broken-report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
del r["baseline"]["kernels"][0]["change_pct"]
r["summary"]["kernels"] = "nine"
json.dump(r, open(sys.argv[2], "w"))
PY
if ! python3 "$SRCDIR/tests/cli/check-schema.py" "$SRCDIR/docs/report.schema.json" \
	"$T/broken-report.json" >"$T/diff" 2>&1 && grep -q "change_pct" "$T/diff" &&
	grep -q "summary.kernels" "$T/diff"; then
	ok "schema check: a broken report is refused, naming the fields"
else
	not_ok "schema check: a broken report passed"
	sed 's/^/#   /' "$T/diff"
fi

# ---------------------------------------------------------------------------
# Examples from README.md (```sh blocks, lines "$ ...") and the man page
# (lines "$ gpuadvise ..."), except those marked "# needs a GPU": each must
# exit 0 or 1 (1: a --fail-on example with findings).  `gpuadvise` and
# ./build/gpuadvise are replaced by the built binary.  They run from a
# scratch directory whose entries link to the source root's, so relative
# paths read the same files while files they write land in the scratch
# directory.
ex=$T/examples
: >"$ex"
if [ -f "$SRCDIR/README.md" ]; then
	awk '/^```sh([ \t].*)?$/ { inb = 1; next }
	     /^```/ { inb = 0; next }
	     inb && /^\$ / { sub(/^\$ /, ""); print "README.md:" NR "\t" $0 }' \
		"$SRCDIR/README.md" >>"$ex"
fi
if [ -f "$SRCDIR/man/gpuadvise.1.scd" ]; then
	awk '/^[ \t]*\$ gpuadvise/ { sub(/^[ \t]*\$ /, ""); print "man/gpuadvise.1.scd:" NR "\t" $0 }' \
		"$SRCDIR/man/gpuadvise.1.scd" >>"$ex"
fi
grep -v '# needs a GPU[[:space:]]*$' "$ex" >"$ex.run"
if [ ! -s "$ex.run" ]; then
	echo "# notice: README.md and man/gpuadvise.1.scd have no runnable examples yet; skipped"
	skip "README and man page examples: none found"
else
	scratch=$T/examples-cwd
	mkdir -p "$scratch"
	for e in "$SRCDIR"/* "$SRCDIR"/.[!.]*; do
		[ -e "$e" ] && ln -s "$e" "$scratch/$(basename "$e")"
	done
	while IFS="$(printf '\t')" read -r where cmd; do
		# Only command words: at the start, or after | ; & ( .
		run_cmd=$(printf '%s\n' "$cmd" | sed -E \
			's#(^|[|;&(][[:space:]]*)(\./build/)?gpuadvise([[:space:]]|$)#\1"$GPUADVISE"\3#g')
		(cd "$scratch" && timeout 300 sh -c "$run_cmd") >"$T/out" 2>"$T/err" </dev/null
		rc=$?
		if [ "$rc" = 0 ] || [ "$rc" = 1 ]; then
			ok "example $where: $cmd -> $rc"
		else
			not_ok "example $where: $cmd -> $rc (want 0 or 1)"
			show stderr "$T/err"
		fi
	done <"$ex.run"
fi

# The README's --list-metrics example shows what the binary prints.
want=$(awk '/--list-metrics --chip GH100 \| tail -1/ { f = 1 } f && /^# [0-9]+ metrics/ { print; exit }' \
	"$SRCDIR/README.md")
got=$("$GPUADVISE" --list-metrics --chip GH100 2>/dev/null | tail -1)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
	ok "README: the --list-metrics example's output is the binary's"
elif "$GPUADVISE" --list-metrics --chip GH100 >/dev/null 2>&1; then
	not_ok "README: the --list-metrics example says '$want', the binary '$got'"
else
	skip "README --list-metrics example: no CUPTI host API in this build"
fi

# Source lines from profiles recorded on an H200 (SASS metrics of one later
# launch): each demo's top line is the line its fix changes.
srcline() { # fixture, expected text
	"$GPUADVISE" --import "$SRCDIR/$REC/$1" >"$T/src.out" 2>"$T/src.err"
	if grep -A4 'source lines' "$T/src.out" | tr -s ' \n' ' ' | grep -qF "$2"; then
		ok "source lines: $1 -> $2"
	else
		not_ok "source lines: $1 (want $2)"
		grep -A6 'source lines' "$T/src.out" | head -20
	fi
}
srcline demo-coalescing-source.json "demo_coalescing.cu:22 32.0 sectors/request (ideal 4.0) (100%)"
srcline demo-divergence-source.json "demo_divergence.cu:41 divergent branch: 32.0 threads arrive, 16.0 of 32 active after it (100%)"
"$GPUADVISE" --format json --import "$SRCDIR/$REC/demo-coalescing-source.json" >"$T/src.json" 2>/dev/null
if python3 -c "
import json, sys
k = [k for k in json.load(open('$T/src.json'))['kernels'] if k['name'].startswith('coalescing_strided')][0]
l = k['source']['lines'][0]
sys.exit(0 if (l['line'], l['sectors_per_request'], l['issues']) == (22, 32.0, ['uncoalesced']) else 1)"; then
	ok "source lines in the JSON report"
else
	not_ok "source lines in the JSON report"
fi

# Stall reasons per line: from an H200 run with --stalls (the coalescing
# demo, recorded), and SYNTHETIC ones on the real SASS counts of the same
# demo: the report names the line's most sampled reason other than
# "selected" and "not_selected", with its share of the line's samples, as the file's numbers
# give them.
for STALLS in $REC/demo-coalescing-stalls.json tests/fixtures/cli/synthetic-stalls.json; do
"$GPUADVISE" --import "$SRCDIR/$STALLS" >"$T/stall.out" 2>"$T/stall.err"
"$GPUADVISE" --format json --import "$SRCDIR/$STALLS" >"$T/stall.json" 2>/dev/null
if python3 - "$SRCDIR/$STALLS" "$T/stall.json" "$T/stall.out" <<'PY'
import json, sys
prof, rep, text = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
by = {}
for pc in prof["sources"][0]["pcs"]:
    if pc.get("line") == 22:
        for r, n in pc.get("stalls", {}).items():
            by[r] = by.get(r, 0) + n
total = sum(by.values())
reason, n = max(((r, v) for r, v in by.items() if r not in ("selected", "not_selected")),
                key=lambda x: x[1])
want = f"stalls: {reason} {100 * n / total:.0f}% of the line's {total:.0f} samples"
k = [k for k in rep["kernels"] if k["name"].startswith("coalescing_strided")][0]
l = k["source"]["lines"][0]
ok = (total > 0 and l["line"] == 22 and l["stall_reason"] == reason and l["samples"] == total and
      "uncoalesced" in l["issues"] and want in l["summary"] and
      k["source"]["pc_sampling"]["samples"] == prof["sources"][0]["pc_sampling"]["samples"] and
      want in " ".join(text.split()))
if not ok:
    print("want", want, "got", l, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
then
	ok "stall reasons, $(basename "$STALLS"): dominant reason and share of the line's samples (text and JSON)"
else
	not_ok "stall reasons, $(basename "$STALLS"): dominant reason and share of the line's samples"
	grep -A4 'source lines' "$T/stall.out" | head
fi
if python3 "$SRCDIR/tests/cli/check-schema.py" "$SRCDIR/docs/report.schema.json" "$T/stall.json" \
	>"$T/diff" 2>&1; then
	ok "stall reasons, $(basename "$STALLS"): the report matches its schema"
else
	not_ok "stall reasons, $(basename "$STALLS"): schema"
	sed 's/^/#   /' "$T/diff"
fi
done
# --min-share: kernels left with fewer metric sets because of their small
# share of GPU time are told apart from those launched too few times.  The
# recorded PyTorch profile has both kinds of unchecked kernel once one of its
# unprofiled entries is marked.  The recording is the PyTorch workload as
# the 11-21 H200 run measured it, in three metric sets (--max-passes 3, then
# the default): tests/fixtures/cli/pytorch-3sets.json.
python3 - "$SRCDIR/$CLI/pytorch-3sets.json" "$T/share.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["collection"]["min_share_pct"] = 2.5
p["collection"]["loop_replay_launches"] = 12
p["collection"]["graph_launches"] = 40
# The kernel with grid 12: launched twice, so it lacks a metric set.
l = [l for l in p["launches"] if l["grid"] == [12, 1, 1]][0]
p["unprofiled"].append({"mangled": l["mangled"], "pid": l["pid"], "grid": l["grid"],
                        "block": l["block"], "launches": 1, "below_min_share": True})
json.dump(p, open(sys.argv[2], "w"))
PY
# --verbose names each kernel's unchecked rules; the default says how many
# kernels have some, at the end.
# The rules without owners.yaml: every kernel is the user's, so that the
# kernel-source rules apply and some go unchecked.
mkdir -p "$T/no-owners"
cp "$SRCDIR"/rules/*.yaml "$T/no-owners/"
rm "$T/no-owners/owners.yaml"
NO_OWNERS="--no-default-rules --rules $T/no-owners"
"$GPUADVISE" $NO_OWNERS --verbose --import "$T/share.json" >"$T/share.out" 2>&1
"$GPUADVISE" $NO_OWNERS --import "$T/share.json" --format json >"$T/share.rep.json" 2>/dev/null
"$GPUADVISE" $NO_OWNERS --import "$SRCDIR/$CLI/pytorch-3sets.json" --format json >"$T/noshare.rep.json" 2>/dev/null
"$GPUADVISE" $NO_OWNERS --import "$SRCDIR/$CLI/pytorch-3sets.json" >"$T/noshare.out" 2>&1
if python3 - "$T/share.out" "$T/share.rep.json" "$T/noshare.rep.json" "$T/noshare.out" <<'PY'
import json, re, sys
text = " ".join(open(sys.argv[1]).read().split())
rep, before = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
small = [k for k in rep["kernels"] if k["below_min_share"]]
few = [k for k in before["kernels"] if k["unchecked_rules"]]
ok = (len(small) == 1 and small[0]["grid"] == [12, 1, 1] and small[0]["unchecked_rules"]
      and small[0]["unprofiled_launches"] == 1
      and text.count("not checked, under --min-share:") == 1
      and "1 kernel had rules not checked: it took less than 2.5 % of the GPU time" in text
      and "%d kernels had rules not checked: the metrics were measured in 3 sets" % (len(few) - 1) in text
      and not any(k["below_min_share"] for k in before["kernels"])
      and "launches by kernel replay, 12 across a loop's iterations with no replay" in text
      and "40 CUDA graph launches: kernels inside CUDA graphs are not profiled." in text
      and "across a loop" not in " ".join(open(sys.argv[4]).read().split())
      and "CUDA graph" not in " ".join(open(sys.argv[4]).read().split()))
# Which mechanism measured how many launches, from the profile itself.
prof = rep["profile"]
n, unp = len(prof["launches"]), sum(u["launches"] for u in prof["unprofiled"])
want = {"kernel_replay": n - 12, "loop_replay": 12, "unprofiled_at_mean": unp,
        "graph_launches": 40, "timeline": 0}
ok = ok and rep["summary"]["measured"] == want and (
    "Measured: %d launches by kernel replay, 12 across a loop's iterations with no replay, "
    "%d repeats not profiled and counted at their kernel's mean; 40 CUDA graph launches"
    % (n - 12, unp)) in text
ok = ok and before["summary"]["measured"]["loop_replay"] == 0
sys.exit(0 if ok else 1)
PY
then
	ok "--min-share: a kernel below the share is reported apart, with the share and how to measure it; launches by mechanism (kernel replay, loop replay, at the mean, graph launches) in the header and in JSON"
else
	not_ok "--min-share: below-share kernel in the report"
	grep -A3 'not checked' "$T/share.out" | tail -8
fi
# --quick: the report says that --quick is why rules went unchecked (the
# test-app recording cut down to its first 12 metrics, told it was a
# --quick run of one set: the user's kernels lack what most rules read),
# and only when the profile says so.
python3 - "$SRCDIR/$REC/testapp-all.json" "$T/quick.json" "$T/noquick.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
keep = set(p["metrics"][:12])
p["metrics"] = [m for m in p["metrics"] if m in keep]
for l in p["launches"]:
    l["values"] = {k: v for k, v in l["values"].items() if k in keep}
p["collection"].pop("metric_sets", None)
json.dump(p, open(sys.argv[3], "w"))
p["collection"]["quick"] = True
json.dump(p, open(sys.argv[2], "w"))
PY
"$GPUADVISE" --verbose --import "$T/quick.json" >"$T/quick.out" 2>&1
"$GPUADVISE" --verbose --import "$T/noquick.json" >"$T/noquick.out" 2>&1
q=$(tr -s ' \n' ' ' <"$T/quick.out"); nq=$(tr -s ' \n' ' ' <"$T/noquick.out")
case $q in
*"not checked, --quick:"*"had rules not checked: --quick collected only the classifier's metrics"*)
	case $nq in
	*"not checked, --quick:"*|*"--quick collected only"*) not_ok "--quick: a profile not marked quick blames --quick";;
	*"not checked, metrics not measured:"*) ok "--quick: unchecked rules are put down to --quick only in a --quick profile";;
	*) not_ok "--quick: the unmarked profile lists no unchecked rules";;
	esac;;
*) not_ok "--quick: the report does not name --quick"; grep -A2 'not checked' "$T/quick.out" | head -6;;
esac
# refused FILE SED PATTERN WHAT: FILE edited by the sed script SED is
# refused by --import with status 2 and an error matching PATTERN.
refused() {
	sed "$2" "$1" >"$T/bad.json"
	"$GPUADVISE" --import "$T/bad.json" >/dev/null 2>"$T/bad.err"
	rc=$?
	if [ $rc = 2 ] && grep -q "$3" "$T/bad.err"; then
		ok "$4"
	else
		not_ok "$4 (status $rc)"
		cat "$T/bad.err"
	fi
}
refused "$T/share.json" 's/"min_share_pct": 2.5/"min_share_pct": 250/' \
	'min_share_pct: expected a percentage from 0 to 100' \
	"--min-share: a profile's out-of-range min_share_pct is refused with the field named"
refused "$T/share.json" 's/"loop_replay_launches": 12/"loop_replay_launches": -12/' \
	'loop_replay_launches' \
	"loop replay: a negative loop_replay_launches is refused with the field named"
refused "$T/share.json" 's/"below_min_share": true/"below_min_share": "yes"/' \
	'unprofiled\[6\]: below_min_share: expected true or false' \
	"--min-share: a non-boolean below_min_share is refused with the entry named"
# Bad stalls in a profile: a clear error naming the field.
refused "$SRCDIR/$STALLS" 's/"long_scoreboard": 70,/"long_scoreboard": "70",/' \
	'stalls.long_scoreboard: expected a number of samples' \
	"stall reasons: a non-number is refused with the field named"

tap_end
