#!/bin/sh
# tests/cli/habits.sh: the habits of daily use (issue 22, items 2, 5, 8, 9).
#   - user-visible text speaks to the user: --explain of every shipped rule
#     and --help name no private document (no "seed", "anchor", "checklist
#     item" numbering);
#   - error texts: a script without a '#!' line is "not a program the
#     system can run" (status 2, not 127 with "Exec format error"); a
#     message about a 4,000-byte path keeps its reason, and one longer than
#     the message buffer loses its middle, not its end;
#   - Nsight Compute's short options: -f is --force-overwrite, -v is
#     --version; -o keeps an existing file unless -f;
#   - progress of a live run: one stderr line on a terminal, nothing when
#     stderr is a file or with --quiet.
# Programs run through the stand-in driver library (fakecuda.c).  Prints
# "ok -" or "not ok -" per check and exits 1 if any failed.
#
# Environment (tests/meson.build sets them): GPUADVISE, SRCDIR, FAKECUDA_DIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
cli_setup habits
REC=$SRCDIR/tests/fixtures/recorded

# run ARGS...: gpuadvise (stand-in driver, private TMPDIR) from $T; stdout
# in $T/out, stderr in $T/err, status in $rc.
run() {
	(cd "$T" && TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR timeout 60 "$GPUADVISE" "$@") \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# check and expect: tap.sh.

# ---- user-visible text (item 8) -------------------------------------

# Words that point into documents the user does not have.
PRIVATE='seed|anchor|checklist item|ANCHORS\.md|CUPTI\.md|private'
run --list-rules
ids=$(sed -n '2,$s/ .*//p' "$T/out")
n=0 bad=
for id in $ids; do
	n=$((n + 1))
	"$GPUADVISE" --explain "$id" >"$T/explain" 2>&1
	if grep -inE "$PRIVATE" "$T/explain" >"$T/hits"; then
		bad="$bad $id: $(head -1 "$T/hits");"
	fi
done
expect "--explain of all $n shipped rules names no private document:$bad" \
	[ "$n" -ge 10 -a -z "$bad" ]
run --explain uncoalesced-global-access
check "--explain gives the rule's order as gpuadvise-rules(5) defines it" 0 out \
	'^class memory, order 1 \(lower is fixed first\), severity'
"$GPUADVISE" --help >"$T/help" 2>&1
expect "--help names no private document" sh -c "! grep -iqE '$PRIVATE' '$T/help'"

# ---- error texts (item 9) -------------------------------------------

# Is this gpuadvise able to run a program at all (built with CUPTI)?
run /bin/true
if grep -q 'built without CUPTI' "$T/err"; then
	live=
	skip "programs: this gpuadvise was built without CUPTI"
else
	live=1
fi

mkdir -p "$T/bin"
printf 'echo hello from a script\n' >"$T/bin/noshebang"
chmod +x "$T/bin/noshebang"
if [ -n "$live" ]; then
	run "$T/bin/noshebang"
	check "a script without '#!' -> 2, 'not a program the system can run'" 2 err \
		"bin/noshebang is not a program the system can run \(no '#!' line and not an ELF executable\): run it with its interpreter, e.g. gpuadvise sh $T/bin/noshebang\$"
	expect "... and not 'Exec format error' or 'could not be started'" \
		sh -c "! grep -qE 'Exec format error|could not be started' '$T/err'"
fi

# A path of 4,000 bytes (components of 250), the file at its end.
long=$T
while [ ${#long} -lt 3740 ]; do
	long=$long/$(printf '%0250d' 0 | tr 0 d)
done
mkdir -p "$long"
long=$long/$(printf '%0*d' $((3999 - ${#long})) 0 | tr 0 s)
cp "$T/bin/noshebang" "$long"
expect "the long path is 4,000 bytes" [ ${#long} = 4000 ]
if [ -n "$live" ]; then
	run "$long"
	check "a script without '#!' at a 4,000-byte path -> 2, the reason and the advice kept" 2 err \
		"/s+ is not a program the system can run .* e\.g\. gpuadvise sh /.*/s+\$"
fi
run --import "$long.json"
check "--import of a missing 4,000-byte path -> 2, the reason at the end" 2 err \
	'/s+\.json: (No such file or directory|not found)'
# Longer than any message buffer: the middle goes, the end stays.
huge=/$(printf '%010000d' 0 | tr 0 x)/prog
run "$huge"
check "a program path of 10,000 bytes -> 2, the message keeps its end" 2 err \
	'^gpuadvise: /x+ \.\.\. x+/prog: program not found$'

# ---- Nsight Compute's short options (item 5) ------------------------

run -v
check "-v prints the version, as Nsight Compute's" 0 out '^gpuadvise [0-9]+\.[0-9]+\.[0-9]+$'
cp "$T/out" "$T/v"
run --version
expect "... the same as --version" cmp -s "$T/out" "$T/v"
echo keep >"$T/old.json"
run -o "$T/old.json" --import "$REC/testapp-all.json"
check "-o over an existing file without -f -> 2, the message names -f" 2 err \
	'-o .*/old\.json: the file exists; -f \(--force-overwrite\) replaces it'
expect "... and the file is kept" [ "$(cat "$T/old.json")" = keep ]
expect "... and no report was printed" [ ! -s "$T/out" ]
run -f -o "$T/old.json" --import "$REC/testapp-all.json"
check "-f -o over an existing file -> 0" 0 out ''
expect "... the file is the profile now" grep -q '"gpuadvise-profile"' "$T/old.json"
echo keep >"$T/old.json"
run --force-overwrite -o "$T/old.json" --import "$REC/testapp-all.json"
check "--force-overwrite -o over an existing file -> 0" 0 out ''
expect "... the file is the profile now" grep -q '"gpuadvise-profile"' "$T/old.json"
run -o "$T/new.json" --import "$REC/testapp-all.json"
check "-o of a new file needs no -f -> 0" 0 out ''
run -o /dev/null --import "$REC/testapp-all.json"
check "-o /dev/null (no regular file) needs no -f -> 0" 0 out ''
run --format json --verbose --import "$REC/testapp-all.json"
check "--format json --verbose -> 0, JSON" 0 out '^\{'
run -f json --import "$REC/testapp-all.json"
check "-f json (0.1's format option) -> 2, the message says --format json" 2 err \
	'^gpuadvise: -f is --force-overwrite \(as in Nsight Compute\); the report format is --format json$'

# ---- progress of a live run (item 2) --------------------------------

# The program plays the injection library: a device record (one metric set
# of 2 passes) and the launch of index 6 (7 launches seen, 1 profiled).
cat >"$T/bin/records.sh" <<'EOF'
#!/bin/sh
r=$GPUADVISE_RUN_DIR/$$.rec
printf '{"type":"device","pid":%d,"passes":2,"sets":[{"passes":2,"metrics":[]}]}\n' $$ >>"$r"
printf '{"type":"launch","pid":%d,"index":6,"metric_set":0}\n' $$ >>"$r"
sleep 0.7
EOF
chmod +x "$T/bin/records.sh"
# on_pty ARGS...: gpuadvise with its terminal a pseudo-terminal; all it
# wrote there in $T/pty, status in $rc.
on_pty() {
	(cd "$T" && TMPDIR=$T/tmp LD_LIBRARY_PATH=$FAKECUDA_DIR timeout 60 \
		python3 "$here/on_pty.py" "$T/pty" "$GPUADVISE" "$@") </dev/null
	rc=$?
}
# has_line FILE: the progress line, drawn with \r, ended with \033[K, and
# cleared (\r\033[K) when the program has ended.
has_line() {
	python3 -c '
import re, sys
b = open(sys.argv[1], "rb").read()
line = rb"\rgpuadvise: 7 launches seen, 1 profiled, 2 passes, 0\.[2-9] s\x1b\[K"
sys.exit(0 if re.search(line, b) and b"\r\x1b[K" in b else 1)' "$1"
}
if [ -n "$live" ] && python3 -c 'import pty' 2>/dev/null; then
	on_pty "$T/bin/records.sh"
	expect "on a terminal: the progress line (7 seen, 1 profiled, 2 passes, time), cleared at the end" \
		has_line "$T/pty"
	run "$T/bin/records.sh"
	plain=$rc
	expect "stderr a file: no progress line" sh -c "! grep -q 'launches seen' '$T/err'"
	expect "... but the notes" grep -q 'gpuadvise: note:' "$T/err"
	on_pty --quiet "$T/bin/records.sh"
	quiet_ok() { [ "$rc" = "$plain" -a "$rc" != 2 ] && grep -q 'did not initialise CUDA' "$T/pty"; }
	expect "--quiet on a terminal: the same status ($rc, $plain), the error kept" quiet_ok
	expect "... no progress line" sh -c "! grep -q 'launches seen' '$T/pty'"
	expect "... and no notes" sh -c "! grep -q 'gpuadvise: note:' '$T/pty'"
else
	skip "progress line: no live runs or no python3 pty module"
fi

tap_end
