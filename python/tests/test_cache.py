"""clheap.Cache as a PyOpenCL allocator: reuse, stats, limits, close."""
import gc
import os

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

import clheap


def iterate(queue, cache, rounds, sizes=(1000, 4096, 70000)):
    """Futhark's pattern: a few sizes allocated each round, used, freed soon after.
    Every element is written and read back."""
    for r in range(rounds):
        arrays = [cla.empty(queue, n, np.float32, allocator=cache) for n in sizes]
        for k, a in enumerate(arrays):
            a.fill(np.float32(r + k))
        total = sum(float(cla.sum(a).get()) for a in arrays)
        assert total == sum(n * (r + k) for k, n in enumerate(sizes))
        del arrays


def test_steady_state_takes_nothing_from_the_driver(context, queue):
    with clheap.Cache(context) as cache:
        iterate(queue, cache, 2)
        before = cache.stats()
        iterate(queue, cache, 10)
        after = cache.stats()
        assert after["driver_allocs"] == before["driver_allocs"]
        assert after["hits"] > before["hits"]
        cache.check()


def test_with_block_leaks_nothing(context, queue):
    with clheap.Cache(context) as cache:
        iterate(queue, cache, 3)
        kept = cla.zeros(queue, 100, np.int32, allocator=cache)  # alive past close
    calls = cache.driver_calls
    assert calls["allocs"] > 0 and calls["allocs"] == calls["releases"]
    assert (kept.get() == 0).all()  # its own OpenCL reference keeps the memory
    del kept
    gc.collect()
    assert cache.driver_calls == calls  # nothing released twice


def test_alloc_tags_stats_trim(context, queue):
    with clheap.Cache(context) as cache:
        a = cache.alloc(1000, "a")
        assert isinstance(a, cl.Buffer) and a.size >= 1000
        zero = cache.alloc(0)
        assert zero.size >= 1
        stats = cache.stats()
        assert stats["kind"] == "cache" and stats["live_blocks"] == 2
        del a, zero
        gc.collect()
        b = cache.alloc(1000, "a")  # the freed buffer of the same size, from a front bin
        stats = cache.stats()
        assert stats["hits"] == stats["front_hits"] == 1 and stats["driver_allocs"] == 2
        c = cache.alloc(1500, "a")  # a size no bin holds: the C cache, n - 2n bytes ...
        assert cache.stats()["driver_allocs"] == 3  # ... or the driver (the 1 byte one is too small)
        del c
        gc.collect()
        cache.stats()  # finds c free and gives it back to the C cache (no bin holds it now)
        d = cache.alloc(1100, "a")  # 1280 bytes: no bin; the C cache gives the 1536-byte buffer
        stats = cache.stats()
        assert stats["driver_allocs"] == 3 and stats["hits_same_tag"] == 1
        held = d.int_ptr
        del d
        gc.collect()
        e = cache.alloc(1000, "a")  # 1024 bytes: d's 1536-byte buffer, binned, fits (up to 2n)
        stats = cache.stats()
        assert e.int_ptr == held and stats["driver_allocs"] == 3 and stats["front_hits"] == 2
        del e
        gc.collect()
        f = cache.alloc(500, "a")  # 512 bytes: 1536 is more than twice, so the driver's
        stats = cache.stats()
        assert f.int_ptr != held and stats["driver_allocs"] == 4 and stats["front_hits"] == 2
        del f, b
        gc.collect()
        cache.trim()
        stats = cache.stats()
        assert stats["cached_blocks"] == 0 and stats["driver_releases"] == 4


def test_limits(context):
    with clheap.Cache(context, max_total_bytes=1 << 20) as cache:
        a = cache.alloc(700 << 10)
        with pytest.raises(clheap.Error) as info:
            cache.alloc(700 << 10)
        assert info.value.name == "CLHEAP_ERROR_LIMIT_REACHED"
        del a
    with clheap.Cache(context, max_cached_bytes=4096) as cache:
        buffers = [cache.alloc(4096) for _ in range(4)]
        del buffers
        gc.collect()
        assert cache.stats()["free_bytes"] <= 4096


def test_closed_cache_refuses(context):
    cache = clheap.Cache(context)
    cache.close()
    cache.close()
    with pytest.raises(clheap.Error) as info:
        cache.alloc(16)
    assert info.value.name == "CLHEAP_ERROR_INVALID_HANDLE"
    with pytest.raises(clheap.Error):
        cache.stats()


def test_threads_share_a_cache(context):
    """Four threads allocate, stamp every word, verify and drop arrays through one cache;
    no two live arrays may share a buffer, and the cache checks sound after."""
    import threading

    errors = []
    live = {}  # cl_mem -> thread that holds it
    guard = threading.Lock()

    def work(t):
        try:
            stamp_all(t)
        except Exception as e:  # a thread's exception fails the test, not just the thread
            errors.append(f"thread {t}: {e!r}")

    def stamp_all(t):
        queue = cl.CommandQueue(context)
        rng = np.random.default_rng(t)
        for i in range(60):
            arrays = [cla.empty(queue, int(n), np.uint32, allocator=cache) for n in rng.integers(1, 20000, 4)]
            with guard:
                for a in arrays:
                    if a.base_data.int_ptr in live:
                        errors.append(f"thread {t}: buffer {a.base_data.int_ptr:#x} also held by {live[a.base_data.int_ptr]}")
                    live[a.base_data.int_ptr] = t
            for k, a in enumerate(arrays):
                a.fill(np.uint32(t * 1000000 + i * 10 + k))
            for k, a in enumerate(arrays):
                if not (a.get() == t * 1000000 + i * 10 + k).all():
                    errors.append(f"thread {t}: array {i}.{k} has a word of someone else's")
            with guard:
                for a in arrays:
                    del live[a.base_data.int_ptr]
            del arrays

    with clheap.Cache(context) as cache:
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        cache.check()
        assert cache.stats()["hits"] > 0
    assert errors == []
    assert cache.driver_calls["allocs"] == cache.driver_calls["releases"]


def test_the_compiled_front_serves(context):
    """`pip install` builds clheap._front, and the Cache runs on it unless
    CLHEAP_PYTHON_FRONT=1 asks for the Python one (ci/python.sh runs this file both ways)."""
    with clheap.Cache(context) as cache:
        python_asked = os.environ.get("CLHEAP_PYTHON_FRONT", "") not in ("", "0")
        assert cache.compiled != python_asked


def test_a_view_keeps_its_buffer(context, queue):
    """A buffer is handed out again only when no array or view refers to it: a view that
    outlives its array keeps its words, however many requests of that size follow."""
    with clheap.Cache(context) as cache:
        a = cla.empty(queue, 4096, np.uint32, allocator=cache)
        a.fill(np.uint32(7))
        view = a[1024:]
        held = a.base_data.int_ptr
        del a
        gc.collect()
        for r in range(3 * 64):  # past the bins, the busy scan and the C cache's reuse
            others = [cla.empty(queue, 4096, np.uint32, allocator=cache) for _ in range(r % 5 + 1)]
            for b in others:
                assert b.base_data.int_ptr != held
                b.fill(np.uint32(r))
            del others
        assert (view.get() == 7).all()
        del view
        gc.collect()
        again = [cla.empty(queue, 4096, np.uint32, allocator=cache) for _ in range(8)]
        assert held in [b.base_data.int_ptr for b in again]  # free once the view is gone


def test_many_out_then_freed_in_the_middle(context, queue):
    """With more buffers out than the busy scan looks at, one freed among the oldest is
    still found (the full scan) before the driver is asked."""
    with clheap.Cache(context) as cache:
        live = [cla.empty(queue, 1000 + 256 * (i % 3), np.uint8, allocator=cache) for i in range(100)]
        before = cache.stats()["driver_allocs"]
        freed = live[5].base_data.int_ptr
        del live[5]
        gc.collect()
        again = cla.empty(queue, 1000 + 256 * (5 % 3), np.uint8, allocator=cache)
        assert again.base_data.int_ptr == freed
        assert cache.stats()["driver_allocs"] == before
        cache.check()
        del live, again


def test_mixed_sizes_reach_a_steady_state(context):
    """bench_cache.py's mixed pattern without its kernels: each step asks for 16 sizes of
    256 B - 8 MiB (64 steps of draws, the same each pass) and keeps the newest 8 into the
    next. After warm-up passes the cache serves every request from what it holds."""
    rng = np.random.default_rng(1)
    draws = [(2 ** rng.uniform(8, 23, 16)).astype(int) for _ in range(64)]
    with clheap.Cache(context) as cache:
        keep = []

        def one_pass():
            for step in draws:
                for n in step:
                    buffer = cache(int(n))
                    assert buffer.size >= n
                    keep.append(buffer)
                del keep[:-8]

        for _ in range(4):
            one_pass()
        before = cache.stats()["driver_allocs"]
        for _ in range(4):
            one_pass()
        assert cache.stats()["driver_allocs"] == before
        keep.clear()
        cache.check()
