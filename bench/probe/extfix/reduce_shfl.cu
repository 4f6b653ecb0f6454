// srad's reduce (Rodinia, GPA-Benchmark: srad_v1/reduce_kernel.cu) with the
// fix gpuadvise's warp-shuffle-reduction gives: the same block sums, each
// warp's by __shfl_down_sync, the warps' through shared memory and one
// barrier, then the first warp's.  Same signature, same elements (those
// with ei < d_no), same place for a block's result; only the order of the
// float additions changes.  bench/probe/extfix/build.sh puts it in place of
// the original in a copy of srad_v1.
__global__ void reduce(long d_Ne, int d_no, int d_mul, fp *d_sums, fp *d_sums2)
{
	int bx = blockIdx.x;
	int tx = threadIdx.x;
	int ei = bx * NUMBER_THREADS + tx;
	__shared__ fp w1[NUMBER_THREADS / 32];
	__shared__ fp w2[NUMBER_THREADS / 32];
	fp s = 0, s2 = 0;

	(void)d_Ne;
	if (ei < d_no) {
		s = d_sums[ei * d_mul];
		s2 = d_sums2[ei * d_mul];
	}
	for (int o = 16; o > 0; o >>= 1) {
		s += __shfl_down_sync(0xffffffffu, s, o);
		s2 += __shfl_down_sync(0xffffffffu, s2, o);
	}
	if ((tx & 31) == 0) {
		w1[tx >> 5] = s;
		w2[tx >> 5] = s2;
	}
	__syncthreads();
	if (tx < 32) {
		s = tx < NUMBER_THREADS / 32 ? w1[tx] : 0;
		s2 = tx < NUMBER_THREADS / 32 ? w2[tx] : 0;
		for (int o = 16; o > 0; o >>= 1) {
			s += __shfl_down_sync(0xffffffffu, s, o);
			s2 += __shfl_down_sync(0xffffffffu, s2, o);
		}
		if (tx == 0) {
			d_sums[bx * d_mul * NUMBER_THREADS] = s;
			d_sums2[bx * d_mul * NUMBER_THREADS] = s2;
		}
	}
}
