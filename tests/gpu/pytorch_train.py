#!/usr/bin/env python3
"""A small training loop for the overhead benchmark: an MLP on random data,
STEPS steps (default 100) of forward, backward and Adam.  Prints the final
loss; deterministic for a given seed.  Exits 77 without torch or a GPU."""
import sys

try:
    import torch
except ImportError:
    print("torch not available"); sys.exit(77)
if not torch.cuda.is_available():
    print("no CUDA device"); sys.exit(77)

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(),
                            torch.nn.LayerNorm(2048), torch.nn.Linear(2048, 1024)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(512, 1024, device=dev)
y = torch.randn(512, 1024, device=dev)
for _ in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f"steps {steps} final loss {loss.item():.4f}")
print("pytorch training ok")
