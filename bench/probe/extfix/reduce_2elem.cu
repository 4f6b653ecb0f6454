// srad's reduce (Rodinia, GPA-Benchmark: srad_v1/reduce_kernel.cu) with the
// fix gpuadvise's reduction-work-per-thread gives, in its smallest form:
// each thread adds two elements as it loads them (NUMBER_THREADS apart), so
// a block sums 2 x NUMBER_THREADS elements and each pass launches half the
// blocks (build.sh patches main.cu's loop to match).  The tree is the
// original's interleaved one; a missing element counts 0, in place of the
// original's separate path for a last, partial block.  Same signature; a
// block's result goes where its first element was, as before; only the
// order of the float additions changes.
__global__ void reduce(long d_Ne, int d_no, int d_mul, fp *d_sums, fp *d_sums2)
{
	int bx = blockIdx.x;
	int tx = threadIdx.x;
	int e0 = bx * 2 * NUMBER_THREADS + tx;
	int e1 = e0 + NUMBER_THREADS;
	__shared__ fp d_psum[NUMBER_THREADS];
	__shared__ fp d_psum2[NUMBER_THREADS];
	fp s = 0, s2 = 0;

	(void)d_Ne;
	if (e0 < d_no) {
		s = d_sums[e0 * d_mul];
		s2 = d_sums2[e0 * d_mul];
	}
	if (e1 < d_no) {
		s += d_sums[e1 * d_mul];
		s2 += d_sums2[e1 * d_mul];
	}
	d_psum[tx] = s;
	d_psum2[tx] = s2;
	__syncthreads();
	for (int i = 2; i <= NUMBER_THREADS; i = 2 * i) {
		if ((tx + 1) % i == 0) {
			d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
			d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
		}
		__syncthreads();
	}
	if (tx == NUMBER_THREADS - 1) {
		d_sums[bx * d_mul * 2 * NUMBER_THREADS] = d_psum[tx];
		d_sums2[bx * d_mul * 2 * NUMBER_THREADS] = d_psum2[tx];
	}
}
