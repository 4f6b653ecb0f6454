#!/usr/bin/env python3
"""PyTorch under NVTX ranges, for gpuadvise's operation grouping (--nvtx).

    pytorch_nvtx.py                 a small model (Linear, LayerNorm, GELU, Linear)
                                    trained for a few steps under
                                    torch.autograd.profiler.emit_nvtx(), each step
                                    in a range of its own, "train_step", all of them
                                    in a start/end range, "epoch"; then one forward
                                    pass in "eval_step", outside "epoch"
    pytorch_nvtx.py --workload      tests/gpu/pytorch_workload.py under emit_nvtx(),
                                    to record tests/fixtures/recorded/pytorch.json
                                    with each launch's operation
    pytorch_nvtx.py --check REPORT  assert that gpuadvise's JSON report of the first
                                    form lists the model's operations with their
                                    kernels

emit_nvtx() opens one NVTX range per ATen operator ("aten::linear, seq = 3"),
nested as the operators call each other (aten::linear calls aten::addmm): see
the PyTorch documentation of torch.autograd.profiler.emit_nvtx.

Exit status: 0 on success, 1 when a check fails, 77 (skip) when torch or a
CUDA device is not available.  Downloads nothing.
"""

import json
import os
import sys

# Innermost operators of each layer, by PyTorch version: aten::linear runs
# aten::addmm (or aten::mm and an add); aten::layer_norm runs
# aten::native_layer_norm.
LINEAR_OPS = {"aten::linear", "aten::addmm", "aten::mm", "aten::matmul"}
NORM_OPS = {"aten::layer_norm", "aten::native_layer_norm"}


def torch_or_skip():
    try:
        import torch
    except ImportError:
        print("pytorch_nvtx: torch is not installed", file=sys.stderr)
        sys.exit(77)
    if not torch.cuda.is_available():
        print("pytorch_nvtx: no CUDA device", file=sys.stderr)
        sys.exit(77)
    return torch


def train():
    torch = torch_or_skip()
    import torch.nn as nn
    import torch.nn.functional as F

    dev = torch.device("cuda")
    torch.manual_seed(1234)
    model = nn.Sequential(nn.Linear(512, 1024), nn.LayerNorm(1024), nn.GELU(),
                          nn.Linear(1024, 512)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512).to(dev)
    y = torch.randn(256, 512).to(dev)
    first = last = None
    with torch.autograd.profiler.emit_nvtx():
        # A start/end range (nvtxRangeStartA/nvtxRangeEnd, by id) around the
        # push/pop ones.
        epoch = torch.cuda.nvtx.range_start("epoch")
        for _ in range(4):
            torch.cuda.nvtx.range_push("train_step")
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            torch.cuda.nvtx.range_pop()
            last = loss.item()
            first = last if first is None else first
        torch.cuda.nvtx.range_end(epoch)
        torch.cuda.nvtx.range_push("eval_step")
        with torch.no_grad():
            model(x)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    if not last < first:
        print(f"pytorch_nvtx: the loss did not fall ({first:.4g} -> {last:.4g})",
              file=sys.stderr)
        return 1
    print("pytorch nvtx ok")
    return 0


def workload():
    torch = torch_or_skip()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pytorch_workload

    with torch.autograd.profiler.emit_nvtx():
        return pytorch_workload.main()


def check(path):
    with open(path) as f:
        report = json.load(f)
    failures = []
    ops = {op["name"]: op for op in report.get("operations") or []}
    for want in (LINEAR_OPS, NORM_OPS):
        found = [ops[n] for n in sorted(want & ops.keys())]
        if not found:
            failures.append(f"no operation among {sorted(want)}; operations: {sorted(ops)}")
        elif not any(op["kernels"] and op["share"] > 0 for op in found):
            failures.append(f"{[op['name'] for op in found]} have no kernel with GPU time")
    paths = [l.get("nvtx") for l in report["profile"]["launches"]]
    paths += [u.get("nvtx") for u in report["profile"].get("unprofiled", [])]
    if not any(p and p.split("/")[:2] == ["epoch", "train_step"] for p in paths):
        failures.append("no launch inside epoch/train_step (a start/end range around a "
                        "push/pop one)")
    if not any(p and p.split("/")[0] == "eval_step" for p in paths):
        failures.append("no launch inside eval_step alone: the epoch range did not end")
    if not any(p and "aten::linear" in p.split("/") for p in paths):
        failures.append("no launch inside an aten::linear range")
    if any(p and ", seq = " in p for p in paths):
        failures.append("a path keeps emit_nvtx's ', seq = N' suffix")
    total = sum(op["share"] for op in ops.values())
    if not 0 < total <= 1.0 + 1e-6:
        failures.append(f"the operations' shares add up to {total:.4g}")
    for f in failures:
        print(f"pytorch_nvtx --check: {f}", file=sys.stderr)
    if not failures:
        print(f"{len(ops)} operations, linear and layer norm with their kernels")
    return 1 if failures else 0


def main(argv):
    if argv[1:2] == ["--check"] and len(argv) == 3:
        return check(argv[2])
    if argv[1:] == ["--workload"]:
        return workload()
    if len(argv) == 1:
        return train()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
