#!/usr/bin/env python3
"""make_ranks.py: SYNTHETIC per-rank profiles of a data-parallel training job,
as `srun gpuadvise -o prof-%q{SLURM_PROCID}.json ./app` would leave them,
for tests/cli/ranks.sh and bench/ranks-merge.sh.

Each rank's file holds the H200 recording of the test program's fma_loop
(tests/fixtures/recorded/testapp-fma_loop.json: device, metrics, one
measured launch), a timeline of ITERS training steps of one GPU
(cuBLAS GEMMs, ATen elementwise kernels and NCCL all-reduces, the last one
after the backward pass, alone), and its record: rank, world size, local
rank from SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the host (8 ranks a
host), and a GPU.  Ranks on different hosts have the same pids, as real
ones do.

  --straggler R   rank R computes 30 % longer; the others wait for it in
                  their last all-reduce of each step
  --planted K     ranks 1..K also ran copy_strided (recorded likewise),
                  whose uncoalesced access is a finding on K ranks
  --bad R         rank R's file is not a profile
  --heavy         every rank also holds the nine measured kernels of the
                  test program (tests/fixtures/recorded/testapp-all.json,
                  76 metrics each): a rank file of about 200 KB, not 12

Usage: make_ranks.py OUTDIR N [--straggler R] [--planted K] [--bad R] [--heavy]
Prints the step's figures (ms) as JSON, for the tests to check against."""
import argparse
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REC = os.path.join(HERE, "..", "fixtures", "recorded")

MS = 1e6
ITERS = 10
SETUP_MS = 200.0
GEMM = ("nvjet_tst_192x176_64x4_1x2_h_bz_coopB_T", "nvjet_tst_192x176_64x4_1x2_h_bz_coopB_T",
        [132, 1, 1], [384, 1, 1])
ELEM = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
        "std::array<char*, 3ul>)",
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_",
        [2048, 1, 1], [128, 1, 1])
NCCL = ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
        [24, 1, 1], [512, 1, 1])


def step(slow):
    """One step's GPU kernels (start, end, kernel) in ms: forward and
    backward as 3 GEMMs and 10 elementwise kernels, two gradient buckets:
    the first all-reduced beside the backward pass, the last after it,
    until the slowest rank arrives."""
    f = 1.3 if slow else 1.0
    ev, t = [], 0.0
    for i in range(3):
        ev.append((t, t + 20 * f, 0))
        t += 20 * f
        for _ in range(3 if i < 2 else 4):
            ev.append((t, t + 1 * f, 1))
            t += 1 * f
    compute_end = t                         # 70 ms, 91 for the straggler
    ev.append((40 * f, 52 * f, 2))          # bucket 1, beside the backward pass
    arrive = 70 * 1.3 if slow is not None else 70
    ev.append((compute_end, arrive + 8, 2))  # bucket 2: waits for the slowest rank
    return ev


def timeline(pid, slow, straggling_job):
    ev = step(slow if straggling_job else None)
    span = 100.0 if straggling_job else 90.0
    kernels = []
    for name, mangled, grid, block in (GEMM, ELEM, NCCL):
        kernels.append({"mangled": mangled, "name": name, "grid": grid, "block": block,
                        "launches": 0, "total_ns": 0.0})
    for s, e, k in ev:
        kernels[k]["launches"] += ITERS
        kernels[k]["total_ns"] += (e - s) * MS * ITERS
    busy = sum(b - a for a, b in union([(s, e) for s, e, _ in ev]))
    wall = SETUP_MS + ITERS * span
    kern_sum = sum(k["total_ns"] for k in kernels)
    dev = {"device": 0, "busy_ns": busy * ITERS * MS, "kernel_ns": busy * ITERS * MS,
           "copy_ns": 0.0, "copy_exposed_ns": 0.0,
           "idle_ns": {"blocking": 0.0, "launching": 0.0,
                       "other": (wall - busy * ITERS) * MS},
           "kernels": sum(k["launches"] for k in kernels), "kernel_sum_ns": kern_sum,
           "default_stream_ops": 0, "streams": 2}
    return {"pid": pid, "wall_ns": wall * MS, "excluded_ns": 0.0, "late_ns": 0.0,
            "host_ns": {"launch": 0.0, "sync": 0.0, "copy": 0.0, "alloc": 0.0, "excluded": 0.0},
            "host_calls": {"launch": 14 * ITERS, "sync": 0, "copy": 0, "alloc": 0,
                           "excluded": 0},
            "devices": [dev], "kernels": kernels, "iterations": ITERS, "period": 14,
            "iteration_ns": span * MS, "window_ns": span * MS, "window_is_iteration": True,
            "events": [[s * MS, e * MS, 0, 13 if k == 2 else 7, 0, -1, k] for s, e, k in ev],
            "complete": True}


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


_cache = {}


def recorded(name):
    if name not in _cache:
        _cache[name] = json.load(open(os.path.join(REC, name)))
    return _cache[name]


def rank_profile(rank, n, straggler=None, planted=0, heavy=False):
    """Rank `rank`'s profile of a job of n ranks, as a dict."""
    fma = recorded("testapp-fma_loop.json")
    strided = recorded("testapp-copy_strided.json")
    local = rank % 8
    pid = 4000 + local
    host = "node%03d" % (rank // 8)
    p = copy.deepcopy(fma)
    p["collection"]["command"] = "python3 train.py"
    p["collection"]["host"] = host
    launches = [copy.deepcopy(fma["launches"][0])]
    if 1 <= rank <= planted:
        launches.append(copy.deepcopy(strided["launches"][0]))
        launches[-1]["index"] = 1
    if heavy:
        for l in recorded("testapp-all.json")["launches"]:
            launches.append(copy.deepcopy(l))
            launches[-1]["index"] = len(launches) - 1
    for l in launches:
        l["pid"] = pid
    p["launches"] = launches
    p["timelines"] = [timeline(pid, rank == straggler, straggler is not None)]
    p["processes"] = [{"pid": pid, "host": host, "rank": rank, "local_rank": local,
                       "world_size": n, "rank_from": "SLURM_PROCID",
                       "gpus": [{"index": local,
                                 "uuid": "GPU-%08x-0000-4000-8000-%012x" % (rank // 8, local)}]}]
    return p


def pooled(n, straggler=None, planted=0):
    """The first n (at most 8: one host, pids apart) ranks in one profile,
    as --import of their files and -o would write it."""
    assert n <= 8
    p = rank_profile(0, n, straggler, planted)
    for r in range(1, n):
        q = rank_profile(r, n, straggler, planted)
        for k in ("launches", "timelines", "processes"):
            p[k] += q[k]
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("n", type=int)
    ap.add_argument("--straggler", type=int, default=None)
    ap.add_argument("--planted", type=int, default=0)
    ap.add_argument("--bad", type=int, default=None)
    ap.add_argument("--heavy", action="store_true")
    o = ap.parse_args()
    os.makedirs(o.outdir, exist_ok=True)
    for rank in range(o.n):
        path = os.path.join(o.outdir, "prof-%d.json" % rank)
        with open(path, "w") as f:
            if rank == o.bad:
                f.write('{"format": "something-else", "rank": %d}\n' % rank)
            else:
                json.dump(rank_profile(rank, o.n, o.straggler, o.planted, o.heavy), f)
    json.dump({"iterations": ITERS, "setup_ms": SETUP_MS,
               "steady": [list(e) for e in step(False if o.straggler is not None else None)],
               "straggler": [list(e) for e in step(True)]}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
