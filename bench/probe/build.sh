#!/bin/sh
# Build the probes into $1 (default build-dev/probe), here (CPU machine):
# rp_probe and pcs_probe for the GPU machine, pass_map for either (it needs
# no GPU), and cpusample.so, a sampling profiler to preload into any process
# (cpusample.c says how; cpusample.py folds what it writes).
set -e
D=$(cd "$(dirname "$0")/../.." && pwd)
O=${1:-$D/build-dev/probe}
L=/usr/local/cuda/targets/x86_64-linux/lib
mkdir -p "$O"
/usr/local/cuda/bin/nvcc -cubin -arch=sm_90 -o "$O/kernel.cubin" "$D/bench/probe/kernel.cu"
gcc -std=c11 -D_GNU_SOURCE -O1 -I"$D/src/collect" -I"$D/src/collect/cxxcompat" -I"$D/src" -I"$D" -I"$D/build" -I/usr/local/cuda/include \
	"$D/bench/probe/rp_probe.c" "$D/src/collect/cupti_host.c" "$D/src/util/util.c" \
	-L$L -lcupti -lnvperf_host -L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,$L -ljansson -lm -o "$O/rp_probe"
gcc -std=c11 -D_GNU_SOURCE -O1 -I"$D/src/collect" -I"$D/src/collect/cxxcompat" -I"$D/src" -I"$D" -I"$D/build" -I/usr/local/cuda/include \
	"$D/bench/probe/pcs_probe.c" "$D/src/collect/cupti_host.c" "$D/src/util/util.c" \
	-L$L -lcupti -L/usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,$L -ljansson -lm -o "$O/pcs_probe"
gcc -std=c11 -D_GNU_SOURCE -O1 -I"$D/src/collect" -I"$D/src/collect/cxxcompat" -I"$D/src" -I"$D" -I"$D/build" -I/usr/local/cuda/include \
	"$D/bench/probe/pass_map.c" "$D/src/collect/cupti_host.c" "$D/src/util/util.c" \
	-L$L -lcupti -lnvperf_host -Wl,-rpath,$L -ljansson -lm -o "$O/pass_map"
gcc -std=c11 -D_GNU_SOURCE -O1 -fPIC -shared -Wall -Wextra "$D/bench/probe/cpusample.c" -ldl -o "$O/cpusample.so"
