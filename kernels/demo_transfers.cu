// gpuadvise-demo-transfers: a copy-bound pipeline. The input, CHUNKS = 16
// chunks of 32 MiB of float (8 Mi floats each, 512 MiB in all), lives in host
// memory and goes to the GPU one chunk at a time: copy the chunk host to
// device, run one elementwise kernel over it (y = 1.5 * x + 0.25, one read and
// one write per element), copy the result device to host. Every variant does
// this for all 16 chunks and leaves all of the results in its host output
// buffer.
//
//   pageable_sync  host buffers from malloc (pageable). cudaMemcpy H2D, the
//                  kernel on the legacy default stream, cudaMemcpy D2H, chunk
//                  after chunk. The driver cannot DMA from pageable memory: it
//                  stages every copy through its own pinned bounce buffer
//                  (an extra host-side memcpy), and nothing overlaps.
//   pinned_sync    the same calls, host buffers from cudaMallocHost (pinned,
//                  page-locked): the copy engines DMA straight from and to the
//                  buffers, so each copy is faster, but copies and kernels
//                  still run one after another.
//   pinned_async   pinned buffers, cudaMemcpyAsync H2D, kernel, cudaMemcpyAsync
//                  D2H for each chunk, chunk i on stream i % 4 (four streams
//                  created with cudaStreamNonBlocking, each with its own pair
//                  of device buffers): one chunk's copies overlap another
//                  chunk's kernel, and the H2D and D2H copy engines run at the
//                  same time.
//
// What a profiler should find: the copies, not the kernel, are the time. The
// kernel moves 64 MiB through HBM per chunk and is short next to the 32 MiB
// over the host link each way; in pageable_sync the memcpys are of pageable
// memory (staged through a bounce buffer), and in both *_sync variants the
// timeline is a strict sequence H2D, kernel, D2H with the GPU idle on one
// side or the other at every moment. The fixes: pinned host memory, then
// asynchronous copies on several streams so that copies in both directions
// overlap each other and the kernels.
//
// Expected shape of the result (a hypothesis, not a measurement):
// pageable_sync slowest; pinned_sync faster by the staging cost; pinned_async
// faster again, tending towards the time of one direction's copies alone
// (H2D and D2H move the same number of bytes here, so at best about half of
// pinned_sync's time) when the two copy directions overlap fully.
//
// Host memory: one pageable pair and one pinned pair of 512 MiB buffers (2 GiB,
// 1 GiB of it pinned). Device memory: 4 streams x (in, out) x 32 MiB = 256 MiB.
// The *_sync variants use the device buffers of slot 0 only.
#include "common.h"

static const unsigned CHUNKS = 16;
static const unsigned CHUNK_ELEMS = 8u << 20;                 // 8 Mi floats, 32 MiB
static const size_t NELEM = (size_t)CHUNKS * CHUNK_ELEMS;     // 128 Mi floats, 512 MiB
static const size_t CHUNK_BYTES = (size_t)CHUNK_ELEMS * sizeof(float);
static const unsigned NSTREAMS = 4;
static const unsigned TR_BLOCK = 256;                         // CHUNK_ELEMS is a multiple of it
static const unsigned TR_GRID = CHUNK_ELEMS / TR_BLOCK;
static const float SCALE = 1.5f, SHIFT = 0.25f;

// y[i] = a * x[i] + b over one chunk: cheap and memory-bound.
__global__ void transfers_scale_shift(const float *__restrict__ x, float *__restrict__ y,
                                      float a, float b, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}

// Host buffers: a pageable pair for pageable_sync, a pinned pair for the
// pinned variants. Each variant's check reads the output buffer it wrote.
static float *h_in_pageable, *h_out_pageable;
static float *h_in_pinned, *h_out_pinned;
// Device buffers, one (in, out) pair per stream slot.
static float *d_in[NSTREAMS], *d_out[NSTREAMS];
static cudaStream_t streams[NSTREAMS];
// pinned_async: start_ev orders the four streams after the timer's begin
// event; done_ev[k] marks the end of stream k's work.
static cudaEvent_t start_ev, done_ev[NSTREAMS];

static void setup()
{
    h_in_pageable = (float *)malloc(NELEM * sizeof(float));
    h_out_pageable = (float *)malloc(NELEM * sizeof(float));
    if (!h_in_pageable || !h_out_pageable) {
        fprintf(stderr, "gpuadvise-demo-transfers: out of host memory\n");
        exit(2);
    }
    GA_CHECK(cudaMallocHost((void **)&h_in_pinned, NELEM * sizeof(float)));
    GA_CHECK(cudaMallocHost((void **)&h_out_pinned, NELEM * sizeof(float)));
    // Writing every page here (and in clear()) keeps page faults on the
    // pageable buffers out of the timed region.
    for (size_t i = 0; i < NELEM; i++) h_in_pageable[i] = ga_sym((uint32_t)i, 91);
    memcpy(h_in_pinned, h_in_pageable, NELEM * sizeof(float));

    for (unsigned k = 0; k < NSTREAMS; k++) {
        d_in[k] = ga_dev_alloc<float>(CHUNK_ELEMS);
        d_out[k] = ga_dev_alloc<float>(CHUNK_ELEMS);
        GA_CHECK(cudaStreamCreateWithFlags(&streams[k], cudaStreamNonBlocking));
        GA_CHECK(cudaEventCreateWithFlags(&done_ev[k], cudaEventDisableTiming));
    }
    GA_CHECK(cudaEventCreateWithFlags(&start_ev, cudaEventDisableTiming));
}

// Before each variant: NaN in both host outputs (0xFF bytes) and in the device
// buffers, so a variant that skips a copy or the kernel, or writes the wrong
// buffer, cannot pass on another variant's results.
static void clear()
{
    memset(h_out_pageable, 0xFF, NELEM * sizeof(float));
    memset(h_out_pinned, 0xFF, NELEM * sizeof(float));
    for (unsigned k = 0; k < NSTREAMS; k++) {
        ga_poison(d_in[k], CHUNK_ELEMS);
        ga_poison(d_out[k], CHUNK_ELEMS);
    }
}

static void teardown()
{
    GA_CHECK(cudaDeviceSynchronize());
    for (unsigned k = 0; k < NSTREAMS; k++) {
        ga_dev_free(d_in[k]);
        ga_dev_free(d_out[k]);
        GA_CHECK(cudaStreamDestroy(streams[k]));
        GA_CHECK(cudaEventDestroy(done_ev[k]));
    }
    GA_CHECK(cudaEventDestroy(start_ev));
    GA_CHECK(cudaFreeHost(h_in_pinned));
    GA_CHECK(cudaFreeHost(h_out_pinned));
    free(h_in_pageable);
    free(h_out_pageable);
}

// Synchronous copies and the kernel on the legacy default stream, chunk after
// chunk; the buffers of slot 0. The timer's events are on the same stream and
// the D2H cudaMemcpy returns only when the copy is done, so the timed region
// covers everything.
static void run_sync(const float *h_in, float *h_out)
{
    for (unsigned c = 0; c < CHUNKS; c++) {
        size_t off = (size_t)c * CHUNK_ELEMS;
        GA_CHECK(cudaMemcpy(d_in[0], h_in + off, CHUNK_BYTES, cudaMemcpyHostToDevice));
        transfers_scale_shift<<<TR_GRID, TR_BLOCK>>>(d_in[0], d_out[0], SCALE, SHIFT, CHUNK_ELEMS);
        GA_CHECK_LAUNCH();
        GA_CHECK(cudaMemcpy(h_out + off, d_out[0], CHUNK_BYTES, cudaMemcpyDeviceToHost));
    }
}

static void launch_pageable_sync() { run_sync(h_in_pageable, h_out_pageable); }
static void launch_pinned_sync() { run_sync(h_in_pinned, h_out_pinned); }

// Chunk c on stream c % 4 with that stream's device buffers. A stream runs its
// chunks in order, so chunk c + 4 overwrites d_in/d_out only after chunk c's
// D2H copy has finished.
//
// Timing: GaTimer records its begin and end events on stream 0, the legacy
// default stream, and the four streams are non-blocking: they do not
// synchronize with stream 0 implicitly, and cudaMemcpyAsync from pinned memory
// returns at once. Without more, the end event could complete while the
// streams are still copying. So the streams first wait on an event recorded on
// stream 0 (their work starts after the timer's begin event), and at the end
// each stream records done_ev[k] and stream 0 waits on all four: the end event
// the timer records next on stream 0 completes only after every chunk's D2H
// copy, and the host does not block inside launch (the timer does the waiting).
static void launch_pinned_async()
{
    GA_CHECK(cudaEventRecord(start_ev, 0));
    for (unsigned k = 0; k < NSTREAMS; k++) GA_CHECK(cudaStreamWaitEvent(streams[k], start_ev, 0));

    for (unsigned c = 0; c < CHUNKS; c++) {
        unsigned k = c % NSTREAMS;
        size_t off = (size_t)c * CHUNK_ELEMS;
        GA_CHECK(cudaMemcpyAsync(d_in[k], h_in_pinned + off, CHUNK_BYTES, cudaMemcpyHostToDevice, streams[k]));
        transfers_scale_shift<<<TR_GRID, TR_BLOCK, 0, streams[k]>>>(d_in[k], d_out[k], SCALE, SHIFT, CHUNK_ELEMS);
        GA_CHECK_LAUNCH();
        GA_CHECK(cudaMemcpyAsync(h_out_pinned + off, d_out[k], CHUNK_BYTES, cudaMemcpyDeviceToHost, streams[k]));
    }

    for (unsigned k = 0; k < NSTREAMS; k++) {
        GA_CHECK(cudaEventRecord(done_ev[k], streams[k]));
        GA_CHECK(cudaStreamWaitEvent(0, done_ev[k], 0));
    }
}

// Every element against a double reference. The kernel may contract a * x + b
// into one FMA, so the result is within one rounding step of the reference.
// NaN (the poison) fails the comparison.
static bool check_buffers(const float *h_in, const float *h_out, char *detail, size_t len)
{
    GaChecker ck(1e-6, 1e-6);
    for (size_t i = 0; i < NELEM; i++) ck.add(i, h_out[i], (double)SCALE * h_in[i] + (double)SHIFT);
    return ck.result(detail, len, "out");
}

static bool check_pageable(char *detail, size_t len) { return check_buffers(h_in_pageable, h_out_pageable, detail, len); }
static bool check_pinned(char *detail, size_t len) { return check_buffers(h_in_pinned, h_out_pinned, detail, len); }

static const GaVariant variants[] = {
    {"pageable_sync", "malloc'd host buffers, cudaMemcpy H2D, kernel, cudaMemcpy D2H per chunk on the default stream: staged copies, no overlap",
     launch_pageable_sync, check_pageable, nullptr},
    {"pinned_sync", "cudaMallocHost buffers, the same synchronous calls: direct DMA copies, still no overlap",
     launch_pinned_sync, check_pinned, nullptr},
    {"pinned_async", "pinned buffers, cudaMemcpyAsync H2D, kernel, D2H per chunk on 4 non-blocking streams: copies overlap kernels and each other",
     launch_pinned_async, check_pinned, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"transfers", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
