"""clheap.Cache against pyopencl.tools.MemoryPool as PyOpenCL's allocator, in one process on
one device (CLHEAP_PLATFORM / CLHEAP_DEVICE choose it, as for the tests):
  iterative  Futhark's free-list pattern: each iteration allocates arrays of three sizes
             (4 KiB, 400 KiB, 4 MiB), computes with them and frees them;
  mixed      each iteration allocates 16 arrays of sizes drawn from 256 B - 8 MiB (the same
             draws for both), keeps the last 8 alive into the next iteration.
Every iteration's result is checked on the host. The allocators run in turn, round by round,
each first in every other round;
each row is the median over rounds of each round's time per iteration, the median (and range)
of the rounds' own ratios, and the driver allocations counted in the timed iterations (after
a warm-up of four passes over the draws). CSV with --csv FILE.
Usage: bench_cache.py [--rounds N] [--iterations N] [--csv FILE]"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.tools as cl_tools

import clheap


def device() -> cl.Device:
    want_platform = os.environ.get("CLHEAP_PLATFORM", "")
    want = os.environ.get("CLHEAP_DEVICE", "")
    devices = [d for p in cl.get_platforms() if want_platform in p.name for d in p.get_devices()]
    devices = [d for d in devices if not want or want in d.name]
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    return (gpus or devices)[0]


def driver_allocs(name, allocator) -> int:
    """Driver allocations so far: the cache counts them; the pool releases nothing unless
    asked (free_held), so its blocks held and active count them."""
    if name == "clheap.Cache":
        return allocator.stats()["driver_allocs"]
    return allocator.held_blocks + allocator.active_blocks


def iterative(queue, allocator, iteration):
    sizes = (1 << 10, 100 << 10, 1 << 20)  # float32 elements: 4 KiB, 400 KiB, 4 MiB
    arrays = [cla.empty(queue, n, np.float32, allocator=allocator) for n in sizes]
    for k, a in enumerate(arrays):
        a.fill(np.float32(iteration % 7 + k))
    b = arrays[2] * np.float32(2.0)
    total = cla.sum(b[: sizes[0]] + arrays[0], queue=queue).get()
    assert total == sizes[0] * 3 * (iteration % 7 + 2) - sizes[0] * 2, "wrong result"


def mixed(queue, allocator, iteration, keep, draws):
    for n in draws[iteration % len(draws)]:
        a = cla.empty(queue, n, np.uint32, allocator=allocator)
        a.fill(np.uint32(n))
        keep.append(a)
    while len(keep) > 8:
        a = keep.pop(0)
        assert int(a[:1].get()[0]) == a.size, "wrong contents"


def run(queue, name, make, pattern, iterations, draws):
    """Seconds per iteration after a warm-up, and driver allocations in the timed part."""
    allocator = make()
    keep = []
    step = (lambda it: iterative(queue, allocator, it)) if pattern == "iterative" else \
        (lambda it: mixed(queue, allocator, it, keep, draws))
    for it in range(4 * len(draws)):  # a warm-up: every draw four times (the cache reaches steady state in three)
        step(it)
    queue.finish()
    before = driver_allocs(name, allocator)
    t0 = time.perf_counter()
    for it in range(iterations):
        step(it)
    queue.finish()
    seconds = (time.perf_counter() - t0) / iterations
    after = driver_allocs(name, allocator)
    keep.clear()
    if name == "clheap.Cache":
        allocator.close()
    else:
        allocator.free_held()
    return seconds, after - before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--csv")
    args = parser.parse_args()
    dev = device()
    context = cl.Context([dev])
    queue = cl.CommandQueue(context)
    rng = np.random.default_rng(1)
    draws = [(2 ** rng.uniform(6, 21, 16)).astype(int) for _ in range(64)]  # 256 B - 8 MiB of uint32

    makers = {"MemoryPool": lambda: cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue)), "clheap.Cache": lambda: clheap.Cache(context)}
    print(f"bench_cache on {dev.name} ({dev.platform.name}), {args.rounds} rounds of {args.iterations} iterations")
    rows = []
    for pattern in ("iterative", "mixed"):
        times = {name: [] for name in makers}
        driver = {name: 0 for name in makers}
        for r in range(args.rounds):
            order = list(makers.items())
            for name, make in order[r % 2:] + order[:r % 2]:  # each goes first in every other round
                seconds, allocs = run(queue, name, make, pattern, args.iterations, draws)
                times[name].append(seconds)
                driver[name] += allocs
        pool, cache = statistics.median(times["MemoryPool"]), statistics.median(times["clheap.Cache"])
        # Each round's own ratio, the two runs side by side: the machine's drift cancels.
        paired = sorted(p / c for p, c in zip(times["MemoryPool"], times["clheap.Cache"]))
        rows.append((pattern, pool, cache, pool / cache, driver["MemoryPool"], driver["clheap.Cache"],
                     statistics.median(paired), paired[0], paired[-1]))
    print("| pattern | MemoryPool us/iteration | clheap.Cache us/iteration | MemoryPool / Cache |"
          " paired by round: median (min - max) | driver allocations, steady state (pool, cache) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for pattern, pool, cache, ratio, dp, dc, mid, lo, hi in rows:
        print(f"| {pattern} | {pool * 1e6:.1f} | {cache * 1e6:.1f} | {ratio:.2f}x | {mid:.2f}x ({lo:.2f} - {hi:.2f}) "
              f"| {dp}, {dc} |")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("pattern,device,pool_seconds,cache_seconds,pool_driver_allocs,cache_driver_allocs,rounds,iterations\n")
            for pattern, pool, cache, _ratio, dp, dc, *_paired in rows:
                f.write(f"{pattern},{dev.name},{pool:.9f},{cache:.9f},{dp},{dc},{args.rounds},{args.iterations}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
