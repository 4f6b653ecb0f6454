#!/bin/sh
# tests/dist.sh: `meson dist` makes a tarball that builds and passes its
# tests.  meson dist packs the committed tree (git archive) of a clean
# repository, so this clones the checkout's HEAD, runs
# `meson dist --no-tests` there, and then configures, builds and tests the
# unpacked tarball itself: the suites that need no GPU and no second build
# (unit, lint, rules, cli; the GPU suite skips anyway), which keeps it
# under about five minutes on 2 cores where meson dist's own full test run
# would not.  Uncommitted changes are not in the tarball.  Run by .ci/run.
#     tests/dist.sh [SRCDIR]
set -eu
SRCDIR=$(cd "${1:-$(dirname "$0")/..}" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuadvise-dist.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
start=$(date +%s)
git clone -q --no-hardlinks "$SRCDIR" "$T/clone"
meson setup "$T/clone/build" "$T/clone" -Ddemos=disabled >"$T/setup.log" ||
	{ cat "$T/setup.log"; exit 1; }
meson dist -C "$T/clone/build" --no-tests --formats xztar >"$T/dist.log" 2>&1 ||
	{ cat "$T/dist.log"; exit 1; }
tarball=$(ls "$T"/clone/build/meson-dist/gpuadvise-*.tar.xz)
echo "tarball: $(basename "$tarball"), $(du -k "$tarball" | cut -f1) KiB"
mkdir "$T/x"
tar -C "$T/x" -xJf "$tarball"
src=$(ls -d "$T"/x/gpuadvise-*)
# Nothing of the clone's build directory or of git in the tarball.
if [ -e "$src/build" ] || [ -e "$src/.git" ]; then
	echo "not ok - the tarball holds build/ or .git"
	exit 1
fi
meson setup "$src/build" "$src" -Ddemos=disabled >"$T/setup2.log" ||
	{ cat "$T/setup2.log"; exit 1; }
ninja -C "$src/build" >"$T/build.log" 2>&1 || { tail -30 "$T/build.log"; exit 1; }
# The SARIF multitool lives in the checkout's .ci/, not in the tarball: the
# goldens were validated there, so here its test may skip.
SARIF_REQUIRED= meson test -C "$src/build" --num-processes 2 --print-errorlogs \
	--suite unit --suite lint --suite rules --suite cli
echo "ok - the tarball builds and passes its tests ($(($(date +%s) - start)) s)"
