#!/bin/sh
# Build every original and -opt variant of the external set with nvcc.
#
# usage: bench/accuracy/external/build.sh [DEST [NVCC]]
#
# DEST (default bench/accuracy/external/src) holds the fetched tree
# (fetch.sh); it is patched first (patch-cuda13.sh, idempotent). NVCC
# defaults to $NVCC, else /usr/local/cuda/bin/nvcc. Each variant is built
# from its own directory, the way its upstream Makefile does (same source
# files, same host compilers), with -arch=$GPU_ARCH (default sm_90) -O3
# -lineinfo for the device code, plus --use_fast_math where the variant's
# Makefile has it (cfd-opt and myocyte-opt1 to -opt3: their optimization);
# the Makefiles themselves are not run. Binaries: DEST/bin/VARIANT
# (srad/srad_v1 -> srad_v1), build logs: DEST/obj/VARIANT/build.log (the
# objects are removed once linked). A variant
# whose binary is newer than its sources is not built again.
# Exit status: 0 all built, 1 a variant failed (see DEST/obj/VARIANT/build.log),
# 2 usage.
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 2 ]; then
	echo "usage: $0 [DEST [NVCC]]" >&2
	exit 2
fi
dest=${1:-$here/src}
nvcc=${2:-${NVCC:-/usr/local/cuda/bin/nvcc}}
arch=${GPU_ARCH:-sm_90}
if [ ! -x "$nvcc" ] && ! command -v "$nvcc" >/dev/null 2>&1; then
	echo "$0: no nvcc at $nvcc (pass it as the second argument)" >&2
	exit 2
fi
"$here/patch-cuda13.sh" "$dest" || exit 1
dest=$(cd "$dest" && pwd)
src=$dest/rodinia
mkdir -p "$dest/bin" "$dest/obj" || exit 2

VARIANTS="b+tree b+tree-opt cfd cfd-opt heartwall heartwall-opt huffman huffman-opt
kmeans kmeans-opt myocyte myocyte-opt1 myocyte-opt2 myocyte-opt3 nw nw-opt
pathfinder pathfinder-opt srad/srad_v1 srad/srad_v1-opt streamcluster streamcluster-opt"

NV="-arch=$arch -O3 -lineinfo"
# The upstream C files call functions they never declare and mix pointer
# types; GCC 14 makes both errors by default, older GCCs warn.
OLDC="-Wno-error=implicit-function-declaration -Wno-error=implicit-int -Wno-error=incompatible-pointer-types -Wno-error=int-conversion"
# The CUDA runtime is linked shared (upstream links it statically), so that
# the 22 binaries stay small enough to carry to the GPU machine (about 5 MiB
# instead of 27); the runpath finds it in the toolkit beside nvcc.
cudalib=$(cd "$(dirname "$(command -v "$nvcc")")/.." && pwd)/lib64
LINK="-arch=$arch -cudart shared -Xlinker -rpath=$cudalib"

# build_variant DIR: compile one variant in a subshell from its directory.
build_variant() {
	dir=$1
	name=${dir#srad/}
	app=${name%-opt*}
	o=$dest/obj/$name
	bin=$dest/bin/$name
	mkdir -p "$o"
	# Up to date: the binary is newer than its sources, ../common and this script.
	if [ -x "$bin" ] && [ -z "$(find "$src/$dir" "$src/common" "$0" "$here/patches" -newer "$bin" -type f 2>/dev/null | head -n 1)" ]; then
		echo "$name: up to date"
		return 0
	fi
	# The optimization of cfd-opt and myocyte-opt*: a flag in the Makefile.
	fm=""
	mk=$src/$dir/Makefile
	[ -f "$mk" ] || mk=$src/$dir/makefile
	if grep -v '^[[:space:]]*#' "$mk" | grep -q -- '--use_fast_math'; then
		fm=--use_fast_math
	fi
	rm -f "$bin"
	(
		cd "$src/$dir" || exit 1
		set -x
		case $app in
		b+tree)
			gcc -O3 $OLDC -c main.c -o "$o/main.o" &&
			gcc -O3 $OLDC -c util/timer/timer.c -o "$o/timer.o" &&
			gcc -O3 $OLDC -c util/num/num.c -o "$o/num.o" &&
			$nvcc $NV $fm -c kernel/kernel_gpu_cuda_wrapper.cu -o "$o/wrapper.o" &&
			$nvcc $NV $fm -c kernel/kernel_gpu_cuda_wrapper_2.cu -o "$o/wrapper_2.o" &&
			$nvcc $NV $fm -c util/cuda/cuda.cu -o "$o/cuda.o" &&
			$nvcc $LINK "$o/main.o" "$o/timer.o" "$o/num.o" "$o/wrapper.o" \
			    "$o/wrapper_2.o" "$o/cuda.o" -lm -o "$bin" ;;
		cfd)
			$nvcc $NV $LINK $fm euler3d.cu -I../common -o "$bin" ;;
		heartwall)
			gcc -O3 $OLDC -c AVI/avilib.c -o "$o/avilib.o" &&
			gcc -O3 $OLDC -IAVI -c AVI/avimod.c -o "$o/avimod.o" &&
			$nvcc $NV $fm -I./AVI -c main.cu -o "$o/main.o" &&
			$nvcc $LINK "$o/main.o" "$o/avilib.o" "$o/avimod.o" -lm -o "$bin" ;;
		huffman)
			# main_test_cu.cu includes the kernels (vlc_kernel_sm64huff.cu,
			# scan.cu, pack_kernels.cu).
			g++ -O3 -c stats_logger.cpp -o "$o/stats_logger.o" &&
			g++ -O3 -c cpuencode.cpp -o "$o/cpuencode.o" &&
			$nvcc $NV $fm -c main_test_cu.cu -o "$o/main_test_cu.o" &&
			$nvcc $LINK "$o/main_test_cu.o" "$o/stats_logger.o" "$o/cpuencode.o" -o "$bin" ;;
		kmeans)
			for f in cluster getopt kmeans kmeans_clustering rmse; do
				gcc -O2 -fopenmp $OLDC -c $f.c -o "$o/$f.o" || exit 1
			done &&
			$nvcc $NV $fm -c kmeans_cuda.cu -o "$o/kmeans_cuda.o" &&
			$nvcc $LINK -Xcompiler -fopenmp "$o/cluster.o" "$o/getopt.o" "$o/kmeans.o" \
			    "$o/kmeans_clustering.o" "$o/rmse.o" "$o/kmeans_cuda.o" -lm -o "$bin" ;;
		myocyte)
			$nvcc $NV $LINK $fm main.cu -lm -o "$bin" ;;
		nw)
			$nvcc $NV $LINK $fm needle.cu -o "$bin" ;;
		pathfinder)
			$nvcc $NV $LINK $fm pathfinder.cu -o "$bin" ;;
		srad_v1)
			$nvcc $NV $LINK $fm main.cu -lm -o "$bin" ;;
		streamcluster)
			$nvcc $NV $LINK $fm streamcluster_cuda_cpu.cpp streamcluster_cuda.cu \
			    streamcluster_header.cu -o "$bin" ;;
		*)
			echo "no recipe for $app"; exit 1 ;;
		esac
	) >"$o/build.log" 2>&1
	if [ -x "$bin" ]; then
		rm -f "$o"/*.o
		echo "$name: built${fm:+ ($fm)}"
	else
		echo "$name: FAILED (see $o/build.log)"
		return 1
	fi
}

jobs=${BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}
status=0
results=$dest/obj/.results
: >"$results"
n=0
for v in $VARIANTS; do
	build_variant "$v" >>"$results" &
	n=$((n + 1))
	if [ $n -ge "$jobs" ]; then
		wait
		n=0
	fi
done
wait
sort "$results" >&2
grep -q FAILED "$results" && status=1
rm -f "$results"
[ $status = 0 ] && echo "$0: $(ls "$dest/bin" | wc -l) binaries in $dest/bin" >&2
exit $status
