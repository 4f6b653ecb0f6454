#!/bin/bash
# Build Rodinia's nw (GPA-Benchmark's copy, fetched and patched by
# bench/accuracy/external/fetch.sh and build.sh) with one column of padding
# in its diagonal tile, temp[17][17] -> temp[17][18]: the diagonal walk
# (row - tx, column + tx) then has a stride of 17 words instead of 16, and
# its 8-way bank conflicts go.  Nothing else changes.  Output: OUT/nw-pad.
#   bench/probe/nwpad/build.sh [OUT]      (default bench/probe/nwpad/out)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src=${EXTERNAL_SRC:-$root/bench/accuracy/external/src}/rodinia/nw
out=${1:-$here/out}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -f "$src/needle_kernel.cu" ] || { echo "$0: no $src (run bench/accuracy/external/fetch.sh)" >&2; exit 2; }
mkdir -p "$out/src"
cp "$src"/*.cu "$src"/*.h "$out/src/"
n=$(grep -c 'temp\[BLOCK_SIZE+1\]\[BLOCK_SIZE+1\]' "$out/src/needle_kernel.cu")
[ "$n" -eq 2 ] || { echo "$0: expected the tile in both kernels, found $n" >&2; exit 1; }
sed -i 's/temp\[BLOCK_SIZE+1\]\[BLOCK_SIZE+1\]/temp[BLOCK_SIZE+1][BLOCK_SIZE+2]/' "$out/src/needle_kernel.cu"
cudalib=$(cd "$(dirname "$nvcc")/.." && pwd)/lib64
(cd "$out/src" && "$nvcc" -arch=sm_90 -O3 -lineinfo -cudart shared -Xlinker -rpath="$cudalib" \
	needle.cu -o "$out/nw-pad")
echo "$out/nw-pad"
