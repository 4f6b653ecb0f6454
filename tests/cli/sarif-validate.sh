#!/bin/sh
# tests/cli/sarif-validate.sh: every golden SARIF log
# (tests/fixtures/golden/*.sarif) through the SARIF multitool's validator
# (npm package @microsoft/sarif-multitool, a self-contained .NET program in
# its platform package @microsoft/sarif-multitool-linux), and against the
# SARIF 2.1.0 JSON schema that package ships (sarif-2.1.0.json), with
# Python's jsonschema.
#
# Both, because neither is enough alone: the multitool exits 0 whatever it
# finds (its verdict is in its output: "error JSONnnnn" / "error SARIFnnnn"
# lines, which fail here), and it passes some logs the schema refuses (one
# with a result of level "bogus", below).  Its warnings (no
# informationUri: gpuadvise has no web page) do not fail.
#
# Finds the multitool as $SARIF_MULTITOOL, `sarif-multitool` on PATH, or
# .ci/node_modules/.bin/sarif-multitool (where .ci/run installs it).  Exits
# 77 (skipped) without it, unless SARIF_REQUIRED=1 (CI), where that fails.
# Also checks that both validators fail a broken log, so that a validator
# that cannot fail does not pass the goldens.
set -u

here=$(cd "$(dirname "$0")" && pwd)
SRCDIR=${SRCDIR:-$(cd "$here/../.." && pwd)}
SARIF_REQUIRED=${SARIF_REQUIRED:-}
# The validator needs no ICU for what it does here.
DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1
export DOTNET_SYSTEM_GLOBALIZATION_INVARIANT

. "$here/tap.sh"

mt=${SARIF_MULTITOOL:-}
if [ -z "$mt" ]; then
	if command -v sarif-multitool >/dev/null 2>&1; then
		mt=$(command -v sarif-multitool)
	elif [ -x "$SRCDIR/.ci/node_modules/.bin/sarif-multitool" ]; then
		mt=$SRCDIR/.ci/node_modules/.bin/sarif-multitool
	fi
fi
if [ -z "$mt" ]; then
	echo "# the SARIF multitool is not installed (.ci/run installs it:"
	echo "#   npm install --prefix .ci @microsoft/sarif-multitool)"
	if [ -n "$SARIF_REQUIRED" ]; then
		not_ok "SARIF multitool missing and SARIF_REQUIRED is set"
		tap_end
		exit 1
	fi
	exit 77
fi
# The schema ships in the platform package, beside the program.
mtdir=$(cd "$(dirname "$(readlink -f "$mt")")/.." && pwd)
schema=
for d in "$mtdir/sarif-multitool-linux" "$mtdir/sarif-multitool"; do
	[ -f "$d/sarif-2.1.0.json" ] && schema=$d/sarif-2.1.0.json && break
done
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import jsonschema' 2>/dev/null; then
		py=$p
		break
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-sarif.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

# multitool FILE: 0 when the validator ran and reported no error.
multitool() {
	"$mt" validate "$1" >"$T/mt.out" 2>&1
	grep -q "Analysis completed successfully" "$T/mt.out" &&
		! grep -Eq ': error [A-Z]+[0-9]+:' "$T/mt.out"
}

# schema FILE: 0 when the log is valid under the SARIF 2.1.0 schema.
schema() {
	"$py" - "$schema" "$1" >"$T/schema.out" 2>&1 <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
errors = sorted(cls(schema).iter_errors(json.load(open(sys.argv[2]))), key=str)
for e in errors[:10]:
    print("/".join(str(p) for p in e.absolute_path) + ": " + e.message[:300])
sys.exit(1 if errors else 0)
PY
}

# A broken log: a result without its message, a line number below 1.
# Each validator must refuse it.  And one with level "bogus", which the
# multitool 5.7.0 passes without a word (an unknown enum value seems to
# end its checks of the file): the schema check must refuse that one.
printf '%s\n' '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},' \
	'"results": [{"ruleId": "a", "locations": [{"physicalLocation":' \
	'{"region": {"startLine": -3}}}]}]}]}' >"$T/broken.sarif"
printf '%s\n' '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},' \
	'"results": [{"ruleId": "a", "level": "bogus", "message": {"text": "m."}}]}]}' \
	>"$T/bogus.sarif"
if multitool "$T/broken.sarif"; then
	not_ok "the multitool passes a broken log: it cannot fail here"
	show output "$T/mt.out"
else
	ok "the multitool refuses a broken log"
fi

n=0
for f in "$SRCDIR"/tests/fixtures/golden/*.sarif; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	name=tests/fixtures/golden/$(basename "$f")
	if multitool "$f"; then
		ok "multitool validate $name"
	else
		not_ok "multitool validate $name"
		grep -E ': (error|warning) ' "$T/mt.out" | head -20 | sed 's/^/#   /'
	fi
done
[ "$n" -gt 0 ] || not_ok "no golden SARIF logs in tests/fixtures/golden"

if [ -z "$schema" ] || [ -z "$py" ]; then
	msg="schema check: ${schema:+no Python jsonschema}${schema:-no sarif-2.1.0.json beside the multitool}"
	if [ -n "$SARIF_REQUIRED" ]; then
		not_ok "$msg"
	else
		skip "$msg"
	fi
else
	for b in broken bogus; do
		if schema "$T/$b.sarif"; then
			not_ok "the schema check passes the $b log: it cannot fail here"
		else
			ok "the schema check refuses the $b log"
		fi
	done
	for f in "$SRCDIR"/tests/fixtures/golden/*.sarif; do
		[ -f "$f" ] || continue
		name=tests/fixtures/golden/$(basename "$f")
		if schema "$f"; then
			ok "SARIF 2.1.0 schema: $name"
		else
			not_ok "SARIF 2.1.0 schema: $name"
			show errors "$T/schema.out"
		fi
	done
fi
tap_end
