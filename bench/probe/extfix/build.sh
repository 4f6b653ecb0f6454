#!/bin/bash
# Build a fix that a gpuadvise finding gives, applied by hand to code nobody
# here wrote (GPA-Benchmark's Rodinia apps, fetched and patched by
# bench/accuracy/external/fetch.sh), to check the finding's estimate on it.
# Nothing else in the app changes.
#   nw-pad     Rodinia's nw, one column of padding in its diagonal tile,
#              temp[17][17] -> temp[17][18] (shared-bank-conflicts): the
#              diagonal walk (row - tx, column + tx) then has a stride of 17
#              words instead of 16, and its 8-way conflicts go;
#   srad-shfl  srad_v1's reduce by warp shuffles (warp-shuffle-reduction):
#              reduce_shfl.cu in place of reduce_kernel.cu;
#   srad-2elem srad_v1's reduce with two elements a thread
#              (reduction-work-per-thread): reduce_2elem.cu in place of
#              reduce_kernel.cu, and main.cu's reduction loop launching
#              blocks of 2 x NUMBER_THREADS elements;
#   srad-float srad_v1's srad kernel with float literals (fp64-in-fp32-code):
#              0.5, 1.0/16.0, 0.25 and 1.0 get an f suffix, so its FP32
#              arithmetic is no longer promoted to FP64.
#   srad-fastdiv srad_v1 unchanged, built with -prec-div=false
#              -prec-sqrt=false (fp32-accurate-math): the srad kernel's
#              four FP32 divisions are rounded to 2 ulp (div.full) instead
#              of IEEE; its double division (1.0 / (1.0 + d_den)) stays;
#   srad-fastmath the same with -use_fast_math: the divisions become a
#              reciprocal and a multiply (div.approx, as __fdividef), and
#              denormals are flushed.
#   bench/probe/extfix/build.sh FIX [OUT]    (default OUT bench/probe/extfix/out)
# Output: OUT/FIX.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rodinia=${EXTERNAL_SRC:-$root/bench/accuracy/external/src}/rodinia
fix=${1:?usage: $0 nw-pad|srad-shfl|srad-2elem|srad-float|srad-fastdiv|srad-fastmath [OUT]}
out=${2:-$here/out}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
cudalib=$(cd "$(dirname "$nvcc")/.." && pwd)/lib64
flags=(-arch=sm_90 -O3 -lineinfo -cudart shared -Xlinker "-rpath=$cudalib")
case $fix in
nw-pad) app=nw ;;
srad-shfl|srad-2elem|srad-float|srad-fastdiv|srad-fastmath) app=srad/srad_v1 ;;
*) echo "$0: unknown fix $fix (nw-pad, srad-shfl, srad-2elem, srad-float, srad-fastdiv, srad-fastmath)" >&2
	exit 2 ;;
esac
[ -d "$rodinia/$app" ] || { echo "$0: no $rodinia/$app (run bench/accuracy/external/fetch.sh)" >&2; exit 2; }
rm -rf "$out/$fix.src"
mkdir -p "$out"
cp -r "$rodinia/$app" "$out/$fix.src"
cd "$out/$fix.src"
case $fix in
nw-pad)
	n=$(grep -c 'temp\[BLOCK_SIZE+1\]\[BLOCK_SIZE+1\]' needle_kernel.cu)
	[ "$n" -eq 2 ] || { echo "$0: expected the tile in both kernels, found $n" >&2; exit 1; }
	sed -i 's/temp\[BLOCK_SIZE+1\]\[BLOCK_SIZE+1\]/temp[BLOCK_SIZE+1][BLOCK_SIZE+2]/' needle_kernel.cu
	"$nvcc" "${flags[@]}" needle.cu -o "$out/$fix" ;;
srad-shfl)
	cp "$here/reduce_shfl.cu" reduce_kernel.cu
	"$nvcc" "${flags[@]}" main.cu -lm -o "$out/$fix" ;;
srad-2elem)
	cp "$here/reduce_2elem.cu" reduce_kernel.cu
	sed -i -e 's|blocks2\.x = blocks\.x;|blocks2.x = (Ne + 2 * NUMBER_THREADS - 1) / (2 * NUMBER_THREADS);|' \
		-e 's|mul = mul \* NUMBER_THREADS;|mul = mul * 2 * NUMBER_THREADS;|' \
		-e 's|blocks_x = blocks2\.x/threads\.x;|blocks_x = blocks2.x / (2 * threads.x);|' \
		-e 's|if (blocks2\.x % threads\.x != 0)|if (blocks2.x % (2 * threads.x) != 0)|' main.cu
	n=$(grep -c '2 \* NUMBER_THREADS\|(2 \* threads\.x)' main.cu)
	[ "$n" -eq 4 ] || { echo "$0: expected 4 lines of the reduction loop changed, found $n" >&2; exit 1; }
	"$nvcc" "${flags[@]}" main.cu -lm -o "$out/$fix" ;;
srad-float)
	sed -i -e 's/(0\.5\*d_G2)/(0.5f*d_G2)/' -e 's|((1\.0/16\.0)\*|((1.0f/16.0f)*|' \
		-e 's/(0\.25\*d_L)/(0.25f*d_L)/' -e 's|1\.0 / (1\.0+d_den)|1.0f / (1.0f+d_den)|' \
		srad_kernel.cu
	n=$(grep -o '0\.5f\*d_G2\|1\.0f/16\.0f\|0\.25f\*d_L\|1\.0f / (1\.0f+d_den)' srad_kernel.cu | wc -l)
	[ "$n" -eq 4 ] || { echo "$0: expected 4 literals changed, found $n" >&2; exit 1; }
	if grep -v '^\s*//' srad_kernel.cu | grep -Eq '[0-9]\.[0-9]+[^0-9f]'; then
		echo "$0: a double literal is left in srad_kernel.cu" >&2; exit 1
	fi
	"$nvcc" "${flags[@]}" main.cu -lm -o "$out/$fix" ;;
srad-fastdiv)
	"$nvcc" "${flags[@]}" -prec-div=false -prec-sqrt=false main.cu -lm -o "$out/$fix" ;;
srad-fastmath)
	"$nvcc" "${flags[@]}" -use_fast_math main.cu -lm -o "$out/$fix" ;;
esac
echo "$out/$fix"
