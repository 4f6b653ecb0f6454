#!/bin/sh
# tests/cli/selftest.sh: the test setup checked.  The scripts' helpers
# (tap.sh), on a scratch directory: a golden file that matches passes; one
# that differs fails; UPDATE_GOLDEN rewrites it, says so and makes the run
# fail, so an update run is never reported as passing.  And every unit test
# file is built: tests/meson.build lists it (a listed file that is missing
# stops meson itself).  And tests/lint/structure.py catches each kind of
# layout problem it checks.
set -u
here=$(cd "$(dirname "$0")" && pwd)
S=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-selftest.XXXXXX") || exit 1
trap 'rm -rf "$S"' EXIT INT TERM
bad=0
expect() { # description, condition...
	d=$1; shift
	if "$@"; then echo "ok - $d"; else echo "not ok - $d"; bad=$((bad + 1)); fi
}

# golden MODE OUT GOLD: run golden_check and tap_end in a subshell, with
# $T/out holding OUT and the golden file GOLD ("" for none); prints
# "passed failed rewritten status" and leaves the golden file in $S/src.
golden() {
	rm -rf "$S/src" "$S/t"
	mkdir -p "$S/src/g" "$S/t"
	printf '%s' "$2" >"$S/t/out"
	[ -n "$3" ] && printf '%s' "$3" >"$S/src/g/gold.txt"
	(
		SRCDIR=$S/src T=$S/t UPDATE_GOLDEN=$1
		. "$here/tap.sh"
		golden_check g/gold.txt >"$S/log"
		tap_end >>"$S/log"
		echo "$passed $failed $rewritten $?"
	)
}

expect "same bytes: a pass" [ "$(golden "" same same)" = "1 0 0 0" ]
expect "different bytes: a failure" [ "$(golden "" new old)" = "0 1 0 1" ]
expect "different bytes: the golden file untouched" [ "$(cat "$S/src/g/gold.txt")" = old ]
expect "missing golden file: a failure" [ "$(golden "" new "")" = "0 1 0 1" ]
expect "UPDATE_GOLDEN, same bytes: a pass" [ "$(golden 1 same same)" = "1 0 0 0" ]
expect "UPDATE_GOLDEN, different bytes: no pass, the run fails" \
	[ "$(golden 1 new old)" = "0 0 1 1" ]
expect "UPDATE_GOLDEN: the golden file rewritten" [ "$(cat "$S/src/g/gold.txt")" = new ]
expect "UPDATE_GOLDEN: the run says it rewrote the file" grep -q 'REWRITTEN' "$S/log"
expect "UPDATE_GOLDEN: the summary says the run does not pass" \
	grep -q 'this run does not pass' "$S/log"
expect "UPDATE_GOLDEN, missing golden file: written, no pass" \
	[ "$(golden 1 new "")" = "0 0 1 1" ]
expect "UPDATE_GOLDEN, missing golden file: its content" \
	[ "$(cat "$S/src/g/gold.txt")" = new ]

# Every tests/unit/test_NAME.c is in tests/meson.build's unit_tests (or is
# the CUPTI evaluation test, built on its own there).
sed -n '/^unit_tests = \[/,/\]/p' "$here/../meson.build" >"$S/unit_tests"
for f in "$here"/../unit/test_*.c; do
	t=$(basename "$f" .c)
	t=${t#test_}
	[ "$t" = cupti_eval ] && continue
	expect "tests/unit/test_$t.c is built and run by meson" \
		grep -q "'$t'" "$S/unit_tests"
done

# tests/lint/structure.py finds what it is there to find, on a scratch tree:
# a long file, a long function, a collector file that includes the
# analysis, a GPUADVISE_ literal in the collector, a private reference, a
# file outside the stages' folders, two files that call each other (one
# through a variable), two headers that include each other, and a diary.
mkdir -p "$S/lint/src/collect" "$S/lint/src/analyze" "$S/lint/src/util" "$S/lint/src/profile"
awk 'BEGIN { for (i = 0; i < 1001; i++) print "/* line */" }' >"$S/lint/src/util/util.c"
{ echo "static int f(void)"; echo "{"
  awk 'BEGIN { for (i = 0; i < 121; i++) print "\t;" }'; echo "}"; } >"$S/lint/src/profile/profile.c"
printf '#include "../analyze/analyze.h"\nconst char *v = "GPUADVISE_X";\n' \
	>"$S/lint/src/collect/inject.c"
touch "$S/lint/src/analyze/analyze.h"
printf 'As seed 001 says.\nFound in the %s session.\n' ninth >"$S/lint/README.md"
printf 'int loose(void) { return 0; }\n' >"$S/lint/src/loose.c"
mkdir -p "$S/lint/src/rules"
printf '#include "b.h"\nint a_f(void)\n{\n\treturn b_count + 1;\n}\n' >"$S/lint/src/rules/a.c"
printf '#include "a.h"\nint b_count;\nstatic int a_g(void) { return 0; }\nint b_f(void)\n{\n\treturn a_f() + a_g();\n}\n' \
	>"$S/lint/src/rules/b.c"
printf '#include "b.h"\nint a_f(void);\n' >"$S/lint/src/rules/a.h"
printf '#include "a.h"\nextern int b_count;\n' >"$S/lint/src/rules/b.h"
python3 "$here/../lint/structure.py" "$S/lint" >"$S/lint.out"
expect "structure.py fails on a bad tree" [ $? = 1 ]
expect "structure.py: a file over 1,000 lines" grep -q '^src/util/util.c: 1001 lines' "$S/lint.out"
expect "structure.py: a function over 120 lines" grep -q 'f() is 123 lines' "$S/lint.out"
expect "structure.py: the collector including the analysis" \
	grep -q 'collect may not include analyze' "$S/lint.out"
expect "structure.py: a GPUADVISE_ literal outside protocol.h" \
	grep -q 'inject.c:2: a GPUADVISE_ variable' "$S/lint.out"
expect "structure.py: a private reference" grep -q '^README.md:1: a private' "$S/lint.out"
expect "structure.py: a diary" grep -q '^README.md:2: tells of a work session' "$S/lint.out"
expect "structure.py: a file outside the stages' folders" \
	grep -q '^src/loose.c: outside a stage' "$S/lint.out"
expect "structure.py: a circle of calls" \
	grep -q 'a circle of calls between rules/a.c, rules/b.c: rules/a.c -> rules/b.c (b_count); rules/b.c -> rules/a.c (a_f)' "$S/lint.out"
expect "structure.py: an include cycle" \
	grep -q 'an include cycle between rules/a.h, rules/b.h' "$S/lint.out"
# and passes on the same files without the circle
rm -rf "$S/lint2" && mkdir -p "$S/lint2/src/rules"
cp "$S/lint/src/rules/a.h" "$S/lint/src/rules/a.c" "$S/lint2/src/rules/"
printf 'int a_f(void);\n' >"$S/lint2/src/rules/a.h"
printf '#include "a.h"\nint a_f(void)\n{\n\treturn 1;\n}\n' >"$S/lint2/src/rules/a.c"
printf '#include "a.h"\nint b_f(void)\n{\n\treturn a_f();\n}\n' >"$S/lint2/src/rules/b.c"
python3 "$here/../lint/structure.py" "$S/lint2" >"$S/lint2.out"
expect "structure.py passes a tree whose calls run one way" [ $? = 0 ]

echo "$bad failed"
[ "$bad" = 0 ]
