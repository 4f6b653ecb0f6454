// A read-modify-write kernel for bench/probe/rp_probe.c (loaded as a cubin).
extern "C" __global__ void axpy(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// A longer kernel for bench/probe/pcs_probe.c: enough cycles to sample.
extern "C" __global__ void spin(float *y, const float *x, int n, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = 0.0f;
    for (int k = 0; k < iters; k++)
        s += x[(i + k * 4099) % n] * 1.0001f;
    y[i] = s;
}
