"""The allocator call alone: clheap.Cache against pyopencl.tools.MemoryPool, in one process on
one device (CLHEAP_PLATFORM / CLHEAP_DEVICE choose it, as for the tests), no kernels:
  same     one size (4 KiB) asked, dropped and asked again: the iterative pattern's hot path;
  random   sizes drawn from 256 B - 8 MiB (the same draws for both), 8 kept alive.
Every request is checked as it is served: the buffer holds the size asked, and no buffer is
handed out while a live one holds it. The allocators run in turn, round by round, each first
in every other round; each row is the median over rounds of the time per request, after a
warm-up pass over the draws. Usage: bench_alloc.py [--rounds N] [--requests N]"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

import clheap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cache import device  # noqa: E402  (the same device choice)


def same(allocator, requests, draws):
    for _ in range(requests):
        buffer = allocator(4096)
        if buffer.size < 4096:
            raise AssertionError("a buffer smaller than asked")
        del buffer


def random(allocator, requests, draws):
    live = []
    for i in range(requests):
        n = draws[i % len(draws)]
        buffer = allocator(n)
        if buffer.size < n:
            raise AssertionError("a buffer smaller than asked")
        ptr = buffer.int_ptr
        if any(ptr == other.int_ptr for other in live):
            raise AssertionError("a buffer handed out twice")
        live.append(buffer)
        if len(live) > 8:
            live.pop(0)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=20000)
    args = parser.parse_args()
    dev = device()
    context = cl.Context([dev])
    queue = cl.CommandQueue(context)
    draws = [int(n) for n in np.random.default_rng(1).integers(256, 8 << 20, 1024)]
    makers = {"MemoryPool": lambda: cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue)),
              "clheap.Cache": lambda: clheap.Cache(context)}
    front = "compiled" if clheap.Cache(context).compiled else "Python"
    print(f"bench_alloc on {dev.name.strip()} ({dev.platform.name.strip()}), clheap.Cache's {front} front, "
          f"{args.rounds} rounds of {args.requests} requests")
    print("| pattern | MemoryPool us/request | clheap.Cache us/request | MemoryPool / Cache |")
    print("| --- | --- | --- | --- |")
    for name, pattern in (("same", same), ("random", random)):
        times = {k: [] for k in makers}
        for r in range(args.rounds):
            order = list(makers) if r % 2 == 0 else list(reversed(makers))
            for k in order:
                allocator = makers[k]()
                pattern(allocator, len(draws), draws)  # warm-up: every draw once
                t0 = time.perf_counter()
                pattern(allocator, args.requests, draws)
                times[k].append((time.perf_counter() - t0) / args.requests)
                if k == "clheap.Cache":
                    allocator.check()
                    allocator.close()
                else:
                    allocator.free_held()
        pool, cache = (statistics.median(times[k]) * 1e6 for k in makers)
        print(f"| {name} | {pool:.3f} | {cache:.3f} | {pool / cache:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
