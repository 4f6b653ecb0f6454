# tests/cli/tap.sh: the "ok -" / "not ok -" lines and counters of the
# command-line test scripts (sourced by run.sh and limits.sh).
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

# show LABEL FILE: the file indented, at most 20 lines and 2000 bytes,
# after a failure.
show() {
	if [ -s "$2" ]; then
		echo "#   $1:"
		head -c 2000 "$2" | head -n 20 | sed 's/^/#     /'
	fi
}

# The summary; its status is the script's: 1 if any check failed.
tap_end() {
	echo "$passed passed, $failed failed"
	[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
	[ "$failed" = 0 ]
}
