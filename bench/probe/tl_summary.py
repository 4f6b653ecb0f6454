#!/usr/bin/env python3
"""The timelines of a gpuadvise profile (-o FILE), in a few lines each:
wall and excluded time, per device the busy and idle shares, copies by
direction and memory, iterations, and the busy share of the representative
iteration (the union of its GPU intervals over its span).

    python3 bench/probe/tl_summary.py PROFILE.json"""
import json
import sys


def union(iv):
    tot, cur = 0.0, None
    for s, e in sorted(iv):
        if cur is None or s > cur[1]:
            if cur:
                tot += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    if cur:
        tot += cur[1] - cur[0]
    return tot


p = json.load(open(sys.argv[1]))
if "profile" in p:
    p = p["profile"]
for t in p.get("timelines", []):
    wall = t["wall_ns"] - t["excluded_ns"]
    print(f"pid {t['pid']}: wall {t['wall_ns'] / 1e6:.1f} ms, excluded {t['excluded_ns'] / 1e6:.1f} ms,"
          f" late {t['late_ns'] / 1e6:.3f} ms, kernels {len(t['kernels'])},"
          f" iterations {t['iterations']} (period {t['period']}, {(t.get('iteration_ns') or 0) / 1e6:.2f} ms),"
          f" complete {t['complete']}, dropped {t.get('dropped_records', 0)}")
    print(f"  host: " + ", ".join(f"{k} {v / 1e6:.1f} ms ({t['host_calls'][k]})"
                                  for k, v in t["host_ns"].items()))
    for d in t["devices"]:
        idle = d["idle_ns"]
        print(f"  device {d['device']}: busy {d['busy_ns'] / wall:.3f} kernel {d['kernel_ns'] / wall:.3f}"
              f" copy {d['copy_ns'] / wall:.3f} exposed {d['copy_exposed_ns'] / wall:.3f};"
              f" idle blocking {idle['blocking'] / wall:.3f} launching {idle['launching'] / wall:.3f}"
              f" other {idle['other'] / wall:.3f}; kernels {d['kernels']} streams {d['streams']}"
              f" default-stream ops {d['default_stream_ops']}")
        for c in d["copies"]:
            print(f"    {c['direction']} {c['memory']}: {c['count']} copies, {c['bytes'] / 2**20:.0f} MiB,"
                  f" {c['ns'] / 1e6:.2f} ms ({c['bytes'] / max(c['ns'], 1):.1f} GB/s)")
    ev = t.get("events", [])
    span = t.get("window_ns") or 0
    if ev and span:
        g = [(e[0], e[1]) for e in ev if e[2] >= 0]
        print(f"  window: {span / 1e6:.2f} ms, iteration {t['window_is_iteration']},"
              f" {len(ev)} intervals, GPU busy {union(g) / span:.3f}")
