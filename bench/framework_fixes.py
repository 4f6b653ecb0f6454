#!/usr/bin/env python3
"""Measured effect of the framework-level fixes (rules/framework-*.yaml) on
the operations of tests/gpu/pytorch_workload.py, and the kernel names of
PyTorch's attention backends (for rules/owners.yaml).

    python3 bench/framework_fixes.py [OUT.json]

For each fix: the median GPU time (CUDA events, 20 runs after 3 warm-ups)
of the operation as the workload runs it and with the fix, and the speedup:
  - framework-tf32: the 2048^3 FP32 matmul with TF32 off (the workload's
    setting), with torch.set_float32_matmul_precision("high"), and under
    torch.autocast(bfloat16);
  - framework-torch-compile: the elementwise chain gelu(x * 2 + 1) +
    residual on 16M floats, and the checksum chain t.double().abs().sum(),
    eager and torch.compile'd.
Then, for each scaled_dot_product_attention backend (math, flash,
efficient, cudnn) that runs here, the names of the kernels it launched
(torch.profiler).  Compare the speedups with gpuadvise's estimates:
    gpuadvise --import tests/fixtures/recorded/pytorch.json --format json
(kernels[].findings[] of rules framework-tf32 and framework-torch-compile).

Exit status: 0, or 77 when torch or a CUDA device is missing.
"""
import json
import statistics
import sys


def gpu_ms(torch, fn, runs=20, warm=3):
    """Median GPU time of fn() in ms."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def pair(name, base_ms, fixed_ms):
    return {"fix": name, "before_ms": base_ms, "after_ms": fixed_ms,
            "speedup": base_ms / fixed_ms if fixed_ms > 0 else None}


def tf32(torch):
    torch.manual_seed(1234)
    a = torch.randn(2048, 2048, device="cuda")
    b = torch.randn(2048, 2048, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    base = gpu_ms(torch, lambda: torch.matmul(a, b))
    torch.set_float32_matmul_precision("high")
    on = gpu_ms(torch, lambda: torch.matmul(a, b))
    torch.set_float32_matmul_precision("highest")

    def bf16():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return torch.matmul(a, b)
    auto = gpu_ms(torch, bf16)
    return [pair("framework-tf32 (TF32)", base, on), pair("framework-tf32 (bf16 autocast)", base, auto)]


def fusion(torch):
    import torch.nn.functional as F
    x = torch.randn(16 << 20, device="cuda")
    residual = torch.randn(16 << 20, device="cuda")
    t = torch.randn(4096, 4096, device="cuda")

    def chain(x, residual):
        return F.gelu(x * 2.0 + 1.0) + residual

    def checksum(t):
        return t.double().abs().sum()
    out = []
    for label, fn, args in (("elementwise chain", chain, (x, residual)),
                            ("checksum chain", checksum, (t,))):
        eager = gpu_ms(torch, lambda: fn(*args))
        compiled = torch.compile(fn)
        fused = gpu_ms(torch, lambda: compiled(*args))
        out.append(pair("framework-torch-compile (%s)" % label, eager, fused))
    return out


def sdpa_kernels(torch):
    """Kernel names launched by each SDPA backend that runs here."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile
    q, k, v = (torch.randn(8, 16, 1024, 64, device="cuda", dtype=torch.float16)
               for _ in range(3))
    names = {}
    for backend in ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
        if not hasattr(SDPBackend, backend):
            continue
        try:
            with sdpa_kernel(getattr(SDPBackend, backend)):
                F.scaled_dot_product_attention(q, k, v, is_causal=True)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    torch.cuda.synchronize()
        except RuntimeError as e:
            names[backend] = {"error": str(e).splitlines()[0]}
            continue
        names[backend] = sorted({e.name for e in prof.events()
                                 if e.device_type == torch.autograd.DeviceType.CUDA})
    return names


def main():
    try:
        import torch
    except ImportError:
        print("framework_fixes: torch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("framework_fixes: no CUDA device", file=sys.stderr)
        return 77
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "fixes": tf32(torch) + fusion(torch), "sdpa_kernels": sdpa_kernels(torch)}
    text = json.dumps(result, indent=2)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
