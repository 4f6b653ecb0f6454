#!/usr/bin/env python3
"""A small transformer's training loop, the workload of a PyTorch user:
LAYERS (default 6) pre-norm decoder blocks of d_model 512, 8 heads,
bf16 autocast, F.scaled_dot_product_attention (causal), AdamW, on random
tokens with fixed seeds.  STEPS steps (default 100); the first WARMUP
(default 5) are not in its own loop time (cuBLAS and cuDNN autotuning,
AdamW's state created at step 1, the profiler's first replays).

Prints `loss <value>` every 10 steps and after the last (the same
numbers with and without a profiler attached: the GPU suite compares
them), `launches_per_step <n>` when the profiler of torch can count
them (--count-launches), and `loop_s <seconds>` for the steps after the
warm-up.

--graph captures one whole step (forward, backward, optimizer) in a CUDA
graph (torch.cuda.graphs, after the warm-up on a side stream, as the
PyTorch documentation's "whole network capture" example does) and replays
it with cudaGraphLaunch.

PHASES=1 prints `phase <name> <seconds since the epoch>` on standard
error at the script's start, once CUDA is up, once the model is on the
GPU, after the warm-up and at the end: where a profiler's added time goes.

Exits 77 without torch or a GPU."""
import argparse
import os
import sys
import time

PHASES = os.environ.get("PHASES") == "1"


def phase(name):
    if PHASES:
        print(f"phase {name} {time.time():.3f}", file=sys.stderr, flush=True)


phase("start")

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("torch not available")
    sys.exit(77)

D_MODEL = 512
HEADS = 8
SEQ = 256
BATCH = 8
VOCAB = 4096


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D_MODEL)
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.ln2 = nn.LayerNorm(D_MODEL)
        self.fc1 = nn.Linear(D_MODEL, 4 * D_MODEL)
        self.fc2 = nn.Linear(4 * D_MODEL, D_MODEL)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D_MODEL, dim=2)
        q, k, v = (z.view(b, t, HEADS, D_MODEL // HEADS).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, D_MODEL))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Parameter(torch.zeros(SEQ, D_MODEL))
        self.blocks = nn.ModuleList(Block() for _ in range(layers))
        self.ln = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        x = self.emb(tokens) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", action="store_true",
                    help="capture the step in a CUDA graph and replay it")
    ap.add_argument("--count-launches", action="store_true",
                    help="count one step's kernel launches with torch.profiler")
    args = ap.parse_args()
    steps = int(os.environ.get("STEPS", "100"))
    warmup = int(os.environ.get("WARMUP", "5"))
    layers = int(os.environ.get("LAYERS", "6"))
    phase("imported")
    if not torch.cuda.is_available():
        print("no CUDA device")
        sys.exit(77)
    phase("cuda")
    # Fixed seeds and deterministic algorithms: the printed loss is the
    # check that a profiler changed nothing the program computes (cuBLAS
    # needs a fixed workspace for that: PyTorch's reproducibility notes).
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    model = Model(layers).to(dev)
    # capturable: AdamW's step counter stays on the GPU, which a captured
    # step needs (PyTorch documents it for CUDA graphs).
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01,
                            capturable=args.graph)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    # A fixed set of batches, cycled: the same data plain and profiled.
    data = torch.randint(0, VOCAB, (16, BATCH, SEQ + 1), device=dev, generator=gen)
    tokens = torch.empty(BATCH, SEQ, dtype=torch.long, device=dev)
    torch.cuda.synchronize()
    phase("model")
    target = torch.empty(BATCH, SEQ, dtype=torch.long, device=dev)

    def load(i):
        tokens.copy_(data[i % data.shape[0], :, :-1])
        target.copy_(data[i % data.shape[0], :, 1:])

    def step():
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens)
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), target.view(-1))
        loss.backward()
        opt.step()
        return loss

    graph = None
    static_loss = None
    if args.graph:
        # Warm up on a side stream before capture (PyTorch's CUDA graphs
        # notes): the graph then holds the steady state's kernels.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(3):
                load(i)
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = step()

    def run(i):
        load(i)
        if graph is not None:
            graph.replay()
            return static_loss
        return step()

    if args.count_launches:
        from torch.profiler import ProfilerActivity, profile
        run(0)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run(0)
            torch.cuda.synchronize()
        n = sum(e.count for e in prof.key_averages() if e.device_type.name == "CUDA")
        print(f"launches_per_step {n}")
        return

    t0 = None
    for i in range(steps):
        if i == warmup:
            torch.cuda.synchronize()
            phase("warmup")
            t0 = time.perf_counter()
        loss = run(i)
        if (i + 1) % 10 == 0 or i + 1 == steps:
            print(f"loss {loss.item():.6f}", flush=True)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0 if t0 is not None else 0.0
    print(f"steps {steps} warmup {warmup} graph {int(args.graph)}")
    print(f"loop_s {loop_s:.4f}")
    phase("end")


if __name__ == "__main__":
    main()
