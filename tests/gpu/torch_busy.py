#!/usr/bin/env python3
"""The GPU's busy share of the transformer's training step
(transformer_train.py, LAYERS blocks, default 4), as torch.profiler
measures it: the union of the CUDA kernel, memcpy and memset intervals of
ACTIVE steps (default 5, after WARMUP steps, default 10), run back to back
as the training script runs them, over the wall time from the first of
those steps' start on the host to the end of the last one's GPU work.
Prints `busy_share <0..1>`, `step_ms <mean>`, `gpu_ms_per_step <mean>`
(that union's length per step) and `kernels_per_step <n>`.

torch.profiler's own cost counts in its step (CPU and CUDA activity),
as gpuadvise's timeline's does in the step it prints; on the H200 the two
steps took 20.6 and 18.9 ms, and their busy shares 9.9 % and 13.9 %.

    python3 tests/gpu/torch_busy.py

The GPU suite (tests/gpu/timeline.sh) compares its GPU time per step
with the busy time of the step gpuadvise's timeline prints for the same
script run under gpuadvise.  Exits 77 without torch or a GPU."""
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch not available")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transformer_train import BATCH, SEQ, VOCAB, Model  # noqa: E402


def union(intervals):
    total, end = 0.0, None
    start = None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total


def main():
    if not torch.cuda.is_available():
        print("no CUDA device")
        sys.exit(77)
    layers = int(os.environ.get("LAYERS", "4"))
    warmup = int(os.environ.get("WARMUP", "10"))
    active = int(os.environ.get("ACTIVE", "5"))
    torch.manual_seed(0)
    model = Model(layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = torch.randint(0, VOCAB, (16, BATCH, SEQ + 1), device="cuda")

    def step(i):
        b = data[i % 16]
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(b[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), b[:, 1:].reshape(-1))
        loss.backward()
        opt.step()

    for i in range(warmup):
        step(i)
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(active):
            with torch.profiler.record_function("gpuadvise_step"):
                step(warmup + i)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
    steps = [e for e in prof.events() if e.name == "gpuadvise_step"]
    span0 = min(e.time_range.start for e in steps)
    # GPU work only: kineto also puts each record_function range on the GPU
    # timeline (a user annotation spanning the step's GPU work, gaps and
    # all), which is no interval of a kernel, copy or set.
    cuda = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and
            e.time_range.end > span0 and not getattr(e, "is_user_annotation", False) and
            e.name != "gpuadvise_step"]
    span1 = max([e.time_range.end for e in steps] + [e.time_range.end for e in cuda])
    gpu = [(max(e.time_range.start, span0), e.time_range.end) for e in cuda]
    gpu = [(s, e) for s, e in gpu if e > s]
    busy = union(gpu) / (span1 - span0)
    print(f"busy_share {busy:.4f}")
    print(f"step_ms {(t1 - t0) * 1e3 / active:.3f}")
    print(f"gpu_ms_per_step {union(gpu) / active / 1e3:.3f}")
    print(f"kernels_per_step {len(gpu) / active:.0f}")


if __name__ == "__main__":
    main()
