#!/bin/sh
# Patch the external set's sources (fetch.sh's DEST) so that they build and
# run with CUDA 13. Idempotent: running it again changes nothing.
#
# usage: bench/accuracy/external/patch-cuda13.sh [DEST]
#
# DEST defaults to bench/accuracy/external/src. Every change applies to an
# original and its -opt variants alike, so a pair still differs only by the
# upstream optimization:
#   1. line ends: the carriage returns at the ends of lines go from the C,
#      C++ and CUDA files (many upstream files end lines with CR LF, and
#      pathfinder.cu with CR CR LF; the patch files below are LF);
#   2. CUDA 12/13 removed APIs, by sed: cudaThreadSynchronize ->
#      cudaDeviceSynchronize, cudaThreadExit -> cudaDeviceReset, the
#      cudaDeviceProp field deviceOverlap -> (asyncEngineCount > 0)
#      (huffman's hist.cu);
#   3. patches/kmeans-texture-objects.patch (kmeans, kmeans-opt): CUDA 12
#      removed texture references (texture<>, cudaBindTexture); each becomes
#      a texture object whose handle sits in __constant__ memory, read with
#      tex1Dfetch<float>, so the kernel still loads through the texture path.
#      The same patch names c_clusters by symbol in cudaMemcpyToSymbol: the
#      upstream string form ("c_clusters") was removed in CUDA 5 and fails at
#      run time, which left the cluster centres at zero on the GPU.
# The -arch flag is not patched into the upstream Makefiles: build.sh does
# not use them (it compiles each app with -arch=sm_90 -O3 -lineinfo and the
# flags its Makefile adds, such as --use_fast_math).
# Exit status: 0 patched (or already patched), 1 a step failed, 2 usage.
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 1 ]; then
	echo "usage: $0 [DEST]" >&2
	exit 2
fi
dest=${1:-$here/src}
src=$dest/rodinia
if [ ! -d "$src/common" ]; then
	echo "$0: $src is not a fetched tree (run fetch.sh $dest first)" >&2
	exit 2
fi
status=0

# 1 and 2: line ends and removed runtime calls. Only the files that need a
# change are rewritten, so a second run leaves every timestamp alone.
cr=$(printf '\r')
files=$(find "$src" -type f \( -name '*.cu' -o -name '*.c' -o -name '*.cpp' -o -name '*.h' \) \
    -exec grep -lE "$cr\$|cudaThread(Synchronize|Exit)|prop\.deviceOverlap" {} +)
# The fetched paths have no blanks (fetch.sh takes them from the upstream tree).
for f in $files; do
	sed -i \
	    -e 's/\r*$//' \
	    -e 's/\bcudaThreadSynchronize\b/cudaDeviceSynchronize/g' \
	    -e 's/\bcudaThreadExit\b/cudaDeviceReset/g' \
	    -e 's/\bprop\.deviceOverlap\b/(prop.asyncEngineCount > 0)/g' \
	    "$f" || status=1
done

# 3: patch files, each applied to the directories it names; skipped where
# it is already applied (its reverse applies cleanly).
apply() { # PATCH DIR...
	p=$here/patches/$1
	shift
	for d in "$@"; do
		if patch -s -f -R --dry-run -p1 -d "$src/$d" <"$p" >/dev/null 2>&1; then
			continue
		fi
		if ! patch -s -f -p1 --no-backup-if-mismatch -d "$src/$d" <"$p"; then
			echo "$0: $1 does not apply to $d" >&2
			status=1
		fi
	done
}
apply kmeans-texture-objects.patch kmeans kmeans-opt

# What is left of the removed APIs would break the build: say so here.
left=$(grep -rlE '\bcudaThread(Synchronize|Exit)\b|\.deviceOverlap\b|\btexture<|cudaBindTexture\b|cudaMemcpyToSymbol\("' \
    --include='*.cu' --include='*.c' --include='*.cpp' --include='*.h' "$src" | grep -v '/common/' || true)
if [ -n "$left" ]; then
	echo "$0: removed CUDA APIs still used in:" >&2
	echo "$left" >&2
	status=1
fi
[ $status = 0 ] && echo "$0: $src patched for CUDA 13" >&2
exit $status
