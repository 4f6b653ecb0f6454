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
# before committing: these files are expectations, not snapshots.
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
export GPUADVISE SRCDIR BUILDDIR NO_COLOR

T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
# No user rules (~/.config/gpuadvise/rules) and no rules-dir override: the
# shipped rules only, as in the golden files.
XDG_CONFIG_HOME=$T/config
export XDG_CONFIG_HOME
unset GPUADVISE_RULES_DIR

FIX=tests/fixtures
REC=$FIX/recorded
CLI=$FIX/cli
GOLDEN=$FIX/golden

passed=0
failed=0
skipped=0

ok() {
	passed=$((passed + 1))
	echo "ok - $*"
}

not_ok() {
	failed=$((failed + 1))
	echo "not ok - $*"
}

skip() {
	skipped=$((skipped + 1))
	echo "ok - # SKIP $*"
}

# Show a file indented, at most 20 lines, after a failure.
show() {
	if [ -s "$2" ]; then
		echo "#   $1:"
		head -n 20 "$2" | sed 's/^/#     /'
	fi
}

# Run gpuadvise from the source root: stdout in $T/out, stderr in $T/err,
# status in $rc.
run() {
	(cd "$SRCDIR" && "$GPUADVISE" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# A machine with an NVIDIA GPU (device node present)?
have_gpu() {
	for d in /dev/nvidia[0-9]*; do
		[ -e "$d" ] && return 0
	done
	return 1
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
2 err "unknown format 'yaml'"                            -f yaml --import $REC/testapp-all.json
2 err "unknown format 'yaml'"                            --format=yaml --import $REC/testapp-all.json
2 err "--fail-on expects low, medium or high, not 'severe'" --fail-on severe --import $REC/testapp-all.json
2 err "--launch-count expects a non-negative integer, not 'many'" -c many /bin/true
2 err "--launch-count expects a non-negative integer, not '-3'" -c -3 /bin/true
2 err "--launch-skip expects a non-negative integer, not '1x'" -s 1x /bin/true
2 err "--max-per-kernel expects a non-negative integer, not ''" --max-per-kernel= /bin/true
2 err "--color expects auto, always or never, not 'sometimes'" --color=sometimes --import $REC/testapp-all.json
2 err 'give only one of PROGRAM, --import, --demo'       --import $REC/testapp-all.json --demo matmul
2 err 'give only one of PROGRAM, --import, --demo'       --import $REC/testapp-all.json /bin/true
2 err 'tests/fixtures/cli/no-such-file\.json'             --import $CLI/no-such-file.json
2 err '^gpuadvise: tests/fixtures/cli/broken\.json:4:53: invalid JSON' --import $CLI/broken.json
2 err "not-a-profile\.json: not a gpuadvise profile"     --import $CLI/not-a-profile.json
2 err 'missing-field\.json: launches\[0\]\.grid: missing' --import $CLI/missing-field.json
2 err 'missing-field\.json'                              --import $REC/testapp-fma_loop.json --import $CLI/missing-field.json
0 out '^What to do first'                                --import $REC/testapp-all.json
0 out '^9 kernels, 9 launches profiled'                  --import $REC/testapp-all.json
0 out '^2 kernels, 2 launches profiled'                  --import $REC/testapp-copy_strided.json --import $REC/testapp-fma_loop.json
0 out 'uncoalesced-global-access'                        -f json --import $REC/testapp-copy_strided.json
1 out '^What to do first'                                --fail-on high --import $REC/testapp-all.json
1 out ''                                                 --fail-on low --import $REC/testapp-all.json
0 out 'An arithmetic pipe is saturated'                  --fail-on high --import $REC/testapp-fma_loop.json
1 out 'medium severity'                                  --fail-on medium --import $REC/testapp-fma_loop.json
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
2 err "no rule 'no-such-rule'"                           --explain no-such-rule
0 out '^ID +CLASS +ORDER +SEVERITY +TITLE'               --list-rules
0 out '^uncoalesced-global-access +memory +1 +high'      --list-rules
0 out '^gpu__time_duration\.sum$'                        --list-metrics
0 out '^dram__throughput\.avg\.pct_of_peak_sustained_elapsed$' --list-metrics
0 out '^rules: [0-9]+ rules and the classifier are valid$' --check-rules rules
0 out 'engine-rules: 3 rules and the classifier are valid' --check-rules $FIX/engine-rules
3 err '^rules-bad/[a-z0-9-]+\.yaml:[0-9]+:[0-9]+: error: |^tests/fixtures/rules-bad/[a-z0-9-]+\.yaml:[0-9]+:[0-9]+: error: ' --check-rules $FIX/rules-bad
3 err 'error in|errors in'                               --check-rules $FIX/rules-bad
3 err 'no-such-rules-dir'                                --check-rules $FIX/no-such-rules-dir
3 err 'yaml-syntax\.yaml:[0-9]+:[0-9]+: error: '         --rules $FIX/rules-bad --list-rules
0 out '^uncoalesced-global-access: Overridden uncoalesced rule \(CLI test fixture\)$' --rules $CLI/rules-override --explain uncoalesced-global-access
0 out 'file: tests/fixtures/cli/rules-override/uncoalesced-global-access\.yaml' -r $CLI/rules-override --explain uncoalesced-global-access
0 out '^uncoalesced-global-access +memory +1 +low +Overridden' -r $CLI/rules-override --list-rules
1 out 'Uncoalesced global memory access'                 --fail-on high --import $REC/testapp-copy_strided.json
0 out 'Overridden uncoalesced rule'                      -r $CLI/rules-override --fail-on high --import $REC/testapp-copy_strided.json
1 out 'low severity'                                     -r $CLI/rules-override --fail-on low --import $REC/testapp-copy_strided.json
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

# --demo list: the ten demos, one line each.
run --demo list
n=$(grep -c . "$T/out")
if [ "$rc" = 0 ] && [ "$n" = 10 ]; then
	ok "gpuadvise --demo list -> 0, 10 demos"
else
	not_ok "gpuadvise --demo list -> $rc, $n lines (want 0, 10 demos)"
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
run --fail-on high -f json --log-file "$T/report.json" --import "$REC/testapp-all.json"
if [ "$rc" = 1 ] && python3 -m json.tool "$T/report.json" >/dev/null 2>&1; then
	ok "gpuadvise --fail-on high -f json --log-file FILE -> 1, FILE is JSON"
else
	not_ok "gpuadvise --fail-on high -f json --log-file FILE -> $rc, want 1 and JSON in FILE"
fi
run --import "$REC/testapp-all.json" --log-file "$T/no-such-dir/report.txt"
if [ "$rc" = 2 ] && grep -q "no-such-dir/report.txt" "$T/err"; then
	ok "gpuadvise --log-file in a missing directory -> 2, names the file"
else
	not_ok "gpuadvise --log-file in a missing directory -> $rc, want 2 naming the file"
	show stderr "$T/err"
fi

# -f json parses, and says what the text report says about the classes.
run -f json --import "$REC/testapp-all.json"
if [ "$rc" = 0 ] && python3 -m json.tool "$T/out" >/dev/null 2>"$T/err"; then
	ok "gpuadvise -f json -> 0, valid JSON (python3 -m json.tool)"
else
	not_ok "gpuadvise -f json -> $rc, not valid JSON"
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
	ok "gpuadvise -f json: classes, shares and ranking of testapp-all"
else
	not_ok "gpuadvise -f json: wrong content"
	sed 's/^/#   /' "$T/diff"
fi

# -f markdown has a table: a header row, a separator row, data rows.
run -f markdown --import "$REC/testapp-all.json"
if [ "$rc" = 0 ] && grep -q '^| *# *|.*|$' "$T/out" &&
	grep -Eq '^\|(:?-+:?\|)+$' "$T/out" &&
	[ "$(grep -c '^| [0-9]* |' "$T/out")" -ge 1 ]; then
	ok "gpuadvise -f markdown -> 0, has a table"
else
	not_ok "gpuadvise -f markdown -> $rc, no table"
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
[ -n "$UPDATE_GOLDEN" ] && mkdir -p "$SRCDIR/$GOLDEN"
for fmt in text:txt json:json markdown:md; do
	name=${fmt%%:*}
	ext=${fmt#*:}
	gold=$GOLDEN/testapp-all.$ext
	run -f "$name" --import "$REC/testapp-all.json"
	if [ "$rc" != 0 ]; then
		not_ok "golden $gold: gpuadvise -f $name -> $rc"
		show stderr "$T/err"
		continue
	fi
	if [ -n "$UPDATE_GOLDEN" ]; then
		cp "$T/out" "$SRCDIR/$gold"
		ok "golden $gold: rewritten (UPDATE_GOLDEN) - review it before committing"
	elif [ ! -f "$SRCDIR/$gold" ]; then
		not_ok "golden $gold: missing (UPDATE_GOLDEN=1 $0 writes it)"
	elif cmp -s "$T/out" "$SRCDIR/$gold"; then
		ok "golden $gold: same bytes"
	else
		not_ok "golden $gold: report differs (UPDATE_GOLDEN=1 $0 rewrites it; review the diff)"
		diff -u "$SRCDIR/$gold" "$T/out" | head -40 | sed 's/^/#   /'
	fi
done

# The text report fits in 80 columns (counted in characters, not bytes),
# except where a line holds a token that cannot fit even at the start of a
# line at its indentation.
run --import "$REC/testapp-all.json" -v --per-launch
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
        bad.append(f"{'-v ' if 'verbose' in path else ''}line {n} ({len(line)} columns): {line}")
print("\n".join(bad[:20]))
sys.exit(1 if bad else 0)
PY
then
	ok "text report (and -v --per-launch): no line over 80 columns"
else
	not_ok "text report: lines over 80 columns"
	sed 's/^/#   /' "$T/diff"
fi

# ---------------------------------------------------------------------------
# --demo all without a GPU (recorded): exits 0, and the Summary shows for
# every demo a top finding, the variant that fixes it and a verdict of
# "inside the range" or "above the range".
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
		# demo before after top fixed-by expected estimate measured verdict...
		verdict=$(echo "$row" | awk '{for (i = 9; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "")}')
		top=$(echo "$row" | awk '{print $4}')
		fixed=$(echo "$row" | awk '{print $5}')
		if [ -z "$row" ]; then
			not_ok "demo all summary: no row for $demo"
		elif [ -z "$top" ] || [ "$top" = "-" ] || [ -z "$fixed" ] || [ "$fixed" = "(none)" ]; then
			not_ok "demo all summary: $demo: top finding '$top' not fixed by a variant ('$fixed')"
			echo "#   $row"
		else
			case $verdict in
			"inside the range" | "above the range" | \
			"inside the range (finding remains)" | "above the range (finding remains)")
				ok "demo all summary: $demo: $top fixed by $fixed, $verdict" ;;
			*)
				not_ok "demo all summary: $demo: verdict '$verdict'"
				echo "#   $row" ;;
			esac
		fi
	done <"$T/demos"
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

echo "$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
[ "$failed" = 0 ]
