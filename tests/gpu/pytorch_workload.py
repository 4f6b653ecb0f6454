#!/usr/bin/env python3
"""A small, deterministic PyTorch workload for gpuadvise's GPU tests.

Runs a handful of common operations on the GPU (FP32 matmul, softmax, layer
norm and an elementwise chain), prints one line per operation with a checksum
rounded to 4 significant digits, then "pytorch workload ok".

Exit status: 0 on success, 1 if a sanity check fails, 77 (skip) when torch or
a CUDA device is not available. Downloads nothing.
"""

import sys


def checksum(t):
    """Sum of absolute values in float64, rounded to 4 significant digits."""
    return float(f"{t.double().abs().sum().item():.4g}")


def main():
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("pytorch_workload: torch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("pytorch_workload: no CUDA device", file=sys.stderr)
        return 77

    dev = torch.device("cuda")
    torch.manual_seed(1234)
    # Plain FP32 arithmetic for the matmul (no TF32 shortcuts).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    # Inputs are drawn on the CPU so they do not depend on the GPU model.
    n = 2048
    a = torch.randn(n, n).to(dev)
    b = torch.randn(n, n).to(dev)
    logits = torch.randn(4096, 4096).to(dev)
    ln_in = torch.randn(4096, 4096).to(dev)
    ln_weight = torch.rand(4096).to(dev) + 0.5
    ln_bias = torch.randn(4096).to(dev) * 0.1
    x = torch.randn(16 << 20).to(dev)
    residual = torch.randn(16 << 20).to(dev)
    torch.cuda.synchronize()

    failures = []

    # 1. Matrix multiplication, FP32, 2048^3.
    c = torch.matmul(a, b)
    rows = torch.tensor([0, 777, n - 1], device=dev)
    ref = a[rows].double() @ b.double()
    err = (c[rows].double() - ref).abs().max().item()
    if not err < 1e-2:
        failures.append(f"matmul: max error {err:.3g} on sampled rows")
    print(f"matmul checksum {checksum(c):.4g}")

    # 2. Softmax over the last dimension.
    s = torch.softmax(logits, dim=-1)
    row_err = (s.double().sum(dim=-1) - 1.0).abs().max().item()
    if not row_err < 1e-4:
        failures.append(f"softmax: rows sum to 1 +- {row_err:.3g}")
    print(f"softmax checksum {checksum(s):.4g}")

    # 3. Layer norm over the last dimension (with affine parameters).
    y = F.layer_norm(ln_in, (4096,), ln_weight, ln_bias, eps=1e-5)
    plain = (y - ln_bias) / ln_weight
    mean_err = plain.double().mean(dim=-1).abs().max().item()
    std_err = (plain.double().var(dim=-1, unbiased=False) - 1.0).abs().max().item()
    if not (mean_err < 1e-3 and std_err < 1e-2):
        failures.append(f"layer_norm: mean off by {mean_err:.3g}, variance off by {std_err:.3g}")
    print(f"layer_norm checksum {checksum(y):.4g}")

    # 4. Elementwise chain: x * 2 + 1, GELU, + residual.
    z = F.gelu(x * 2.0 + 1.0) + residual
    idx = torch.arange(0, x.numel(), 4099, device=dev)
    t = x[idx].double() * 2.0 + 1.0
    zref = 0.5 * t * (1.0 + torch.erf(t / 2.0 ** 0.5)) + residual[idx].double()
    z_err = (z[idx].double() - zref).abs().max().item()
    if not z_err < 1e-4:
        failures.append(f"elementwise: max error {z_err:.3g} on sampled elements")
    print(f"elementwise checksum {checksum(z):.4g}")

    torch.cuda.synchronize()
    if failures:
        for f in failures:
            print(f"pytorch_workload: check failed: {f}", file=sys.stderr)
        return 1
    print("pytorch workload ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
