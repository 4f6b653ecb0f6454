#!/usr/bin/env python3
"""scaled_dot_product_attention on its math fallback, under NVTX ranges,
for gpuadvise's framework-sdpa-math rule.

    sdpa_math.py                 FP32 query, key and value with an arbitrary
                                 additive attn_mask (what keeps PyTorch off the
                                 flash and cuDNN backends), under
                                 torch.autograd.profiler.emit_nvtx(), the math
                                 backend forced with sdpa_kernel(SDPBackend.MATH)
                                 in a range "attention_math"; then the same
                                 shapes in bf16 with is_causal=True, fused
                                 backends allowed, in a range "attention_fused"
    sdpa_math.py --check REPORT  assert that gpuadvise's JSON report fires
                                 framework-sdpa-math on kernels of the first
                                 range only, and that the action names its
                                 operations; print the NVTX paths seen

PyTorch documentation: torch.nn.functional.scaled_dot_product_attention,
torch.nn.attention.sdpa_kernel.  Exit status: 0 on success, 1 when a check
fails, 77 (skip) when torch or a CUDA device is not available.
"""
import json
import sys


def run():
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        print("sdpa_math: torch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("sdpa_math: no CUDA device", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    q, k, v = (torch.randn(8, 16, 512, 64, device="cuda") for _ in range(3))
    mask = torch.randn(512, 512, device="cuda")
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(3):
            torch.cuda.nvtx.range_push("attention_math")
            with sdpa_kernel(SDPBackend.MATH):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            torch.cuda.nvtx.range_pop()
            torch.cuda.nvtx.range_push("attention_fused")
            qb, kb, vb = (t.to(torch.bfloat16) for t in (q, k, v))
            fused = F.scaled_dot_product_attention(qb, kb, vb, is_causal=True)
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"sdpa checksum {out.abs().sum().item():.4g} {fused.float().abs().sum().item():.4g}")
    return 0


def check(path):
    r = json.load(open(path))
    paths = sorted({l.get("nvtx") for l in r["profile"]["launches"] if l.get("nvtx")})
    print("\n".join("# path " + p for p in paths))
    fired = [f for f in r["findings"] if f["rule"] == "framework-sdpa-math"]
    bad = []
    if not fired:
        bad.append("framework-sdpa-math did not fire")
    for f in fired:
        k = r["kernels"][f["kernel"]]
        ps = {r["profile"]["launches"][i].get("nvtx") or "" for i in k["launch_indices"]}
        if not any(p.startswith("attention_math/") for p in ps):
            bad.append("fired on %s in %s" % (k["name"][:60], sorted(ps)))
        if any(p.startswith("attention_fused/") for p in ps):
            bad.append("fired on a kernel of the fused range: %s" % k["name"][:60])
    acts = [a for a in r["summary"]["actions"] if a["rule"] == "framework-sdpa-math"]
    if fired and not (acts and acts[0].get("operations")):
        bad.append("the action names no operations")
    for b in bad:
        print("# " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    sys.exit(run())
