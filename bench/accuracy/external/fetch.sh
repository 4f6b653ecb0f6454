#!/bin/sh
# Fetch the external set's sources: ten Rodinia applications of the
# GPA-Benchmark repository (https://github.com/Jokeren/GPA-Benchmark), each
# original and its -opt variant(s), at one pinned commit, into DEST.
#
# usage: bench/accuracy/external/fetch.sh [DEST]
#
# DEST defaults to bench/accuracy/external/src (ignored by git). The files
# come from $GPA_BENCHMARK_DIR when it is set (a checkout or a bare git
# directory holding the commit), else from a clone of the repository's URL
# ($GPA_BENCHMARK_URL overrides it) into DEST/.clone, without the blobs of
# other paths, removed at the end. Only the apps' sources are copied: the
# output files the upstream tree carries (cfd's density, density_energy and
# momentum, srad's image_out.pgm, result.txt, kmeans.h.gch) are left out, so
# DEST/rodinia takes 3.4 MiB. The other programs of the repository are
# deliberately not fetched: they are kept aside as an independent check of
# the bench.
#
# DEST/rodinia/ keeps the upstream layout (the apps include ../common);
# DEST/COMMIT records the commit. Running it again replaces DEST/rodinia
# (patches must then be applied again: patch-cuda13.sh).
# Exit status: 0 done, 1 fetch or verification failed, 2 usage.
set -u

URL=${GPA_BENCHMARK_URL:-https://github.com/Jokeren/GPA-Benchmark}
COMMIT=e9690616fc16e2e843a7529e0f7c301d1685bc7b
# The apps of the external set (issue 38) and the files they share.
DIRS="common b+tree b+tree-opt cfd cfd-opt heartwall heartwall-opt huffman huffman-opt
kmeans kmeans-opt myocyte myocyte-opt1 myocyte-opt2 myocyte-opt3 nw nw-opt pathfinder
pathfinder-opt srad/srad_v1 srad/srad_v1-opt streamcluster streamcluster-opt"

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 1 ]; then
	echo "usage: $0 [DEST]" >&2
	exit 2
fi
dest=${1:-$here/src}
mkdir -p "$dest" || exit 2
dest=$(cd "$dest" && pwd)

if [ -n "${GPA_BENCHMARK_DIR:-}" ]; then
	repo=$GPA_BENCHMARK_DIR
	if ! git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
		echo "$0: GPA_BENCHMARK_DIR=$repo is not a git checkout or git directory" >&2
		exit 1
	fi
else
	repo=$dest/.clone
	rm -rf "$repo"
	echo "$0: cloning $URL (tree only; blobs fetched on demand)" >&2
	if ! git clone --quiet --filter=blob:none --no-checkout "$URL" "$repo"; then
		echo "$0: partial clone failed; trying a full clone" >&2
		rm -rf "$repo"
		git clone --quiet --no-checkout "$URL" "$repo" || {
			echo "$0: cannot clone $URL (set GPA_BENCHMARK_DIR to a local copy)" >&2
			exit 1
		}
	fi
fi

# The commit must be the pinned one, in full.
got=$(git -C "$repo" rev-parse --verify --quiet "$COMMIT^{commit}")
if [ "$got" != "$COMMIT" ]; then
	echo "$0: $repo does not hold commit $COMMIT" >&2
	exit 1
fi

paths=""
for d in $DIRS; do
	paths="$paths rodinia/$d"
done
list=$dest/.files
# Mode, object and path of every file under the apps; upstream outputs out.
# shellcheck disable=SC2086
git -C "$repo" ls-tree -r "$COMMIT" -- $paths >"$list.all" || exit 1
grep -Ev '/(density|density_energy|momentum|result\.txt|output\.txt)$|\.(gch|pgm|qdrep|sqlite)$' \
    "$list.all" >"$list" || true
for d in $DIRS; do
	if ! grep -q "	rodinia/$d/" "$list"; then
		echo "$0: commit $COMMIT has no rodinia/$d" >&2
		exit 1
	fi
done

# In a partial clone, fetch the blobs in one batch (a checkout of the paths
# does) rather than one request per file as they are read.
if [ -z "${GPA_BENCHMARK_DIR:-}" ]; then
	# shellcheck disable=SC2086
	git -C "$repo" checkout -q "$COMMIT" -- $paths ||
		echo "$0: batch fetch failed; reading the files one by one" >&2
fi

rm -rf "$dest/rodinia"
status=0
n=0
# Each blob by its object id: git archive would also read the tree's other,
# unrelated blobs, which a partial mirror may lack.
while IFS='	' read -r meta path; do
	set -- $meta
	mode=$1 obj=$3
	[ "$2" = blob ] || continue
	mkdir -p "$dest/$(dirname "$path")"
	if ! git -C "$repo" cat-file blob "$obj" >"$dest/$path"; then
		echo "$0: cannot read $path ($obj)" >&2
		status=1
		continue
	fi
	[ "$mode" = 100755 ] && chmod +x "$dest/$path"
	n=$((n + 1))
done <"$list"
rm -f "$list" "$list.all"
[ -d "$dest/.clone" ] && [ -z "${GPA_BENCHMARK_DIR:-}" ] && rm -rf "$dest/.clone"
[ $status = 0 ] || exit 1
echo "$COMMIT" >"$dest/COMMIT"
echo "$URL" >>"$dest/COMMIT"
echo "$0: $n files of $URL at $COMMIT in $dest/rodinia ($(du -sk "$dest" | cut -f1) KiB)" >&2
