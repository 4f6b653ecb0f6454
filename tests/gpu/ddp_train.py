#!/usr/bin/env python3
"""Data-parallel training, one process a GPU: the transformer of
transformer_train.py (LAYERS blocks, default 4) under
DistributedDataParallel, gradients all-reduced by NCCL, STEPS steps
(default 50) on random tokens with fixed seeds (each rank its own batches).
Run it with torchrun:

    torchrun --standalone --nproc_per_node 2 tests/gpu/ddp_train.py

Rank 0 prints `loss <value>` every 10 steps and after the last (the same
numbers with and without a profiler: the GPU suite compares them) and
`loop_s <seconds>` for the steps after the first WARMUP (default 5).  Every
rank prints `rank R of W on GPU G` once.  Exits 77 without torch or NCCL."""
import os
import sys
import time

# NVLink multicast off (NVLS): it is not needed here, and on shared hosts
# it is kept off for everyone.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

try:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError:
    print("torch not available")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transformer_train import BATCH, SEQ, VOCAB, Model  # noqa: E402


def main():
    steps = int(os.environ.get("STEPS", "50"))
    warmup = int(os.environ.get("WARMUP", "5"))
    layers = int(os.environ.get("LAYERS", "4"))
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        print("no CUDA device or no NCCL")
        sys.exit(77)
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"rank {rank} of {world} on GPU {local}", flush=True)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model = DDP(Model(layers).cuda(), device_ids=[local])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234 + rank)
    data = torch.randint(0, VOCAB, (16, BATCH, SEQ + 1), device="cuda", generator=gen)

    t0 = None
    for i in range(steps):
        if i == warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        batch = data[i % data.shape[0]]
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), batch[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        if rank == 0 and ((i + 1) % 10 == 0 or i + 1 == steps):
            print(f"loss {loss.item():.6f}", flush=True)
    torch.cuda.synchronize()
    if rank == 0 and t0 is not None:
        print(f"loop_s {time.perf_counter() - t0:.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
