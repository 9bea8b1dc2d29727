"""clheap.Heap on the default device: every call, its errors, and kernels that allocate."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

import clheap

# Each work-item mallocs 16 - 1600 B, stamps every word with its id and the word's index,
# then (in a second launch) verifies every word and frees.
STAMP = """
__kernel void stamp(__global clheap_heap *heap, __global uint *units, uint spread) {
    uint id = get_global_id(0), words = 4u * (1u + id % spread);
    __global uint *p = clheap_malloc(heap, words * 4u);
    units[id] = clheap_unit_of(heap, p);
    for (uint w = 0; p && w < words; w++) p[w] = id * 4096u + w;
}
__kernel void verify_free(__global clheap_heap *heap, __global uint *units, uint spread,
                          __global uint *wrong) {
    uint id = get_global_id(0), words = 4u * (1u + id % spread);
    __global uint *p = clheap_pointer(heap, units[id]);
    for (uint w = 0; p && w < words; w++) if (p[w] != id * 4096u + w) atomic_inc(wrong);
    clheap_free(heap, p);
}
"""


def stamp_verify(heap, queue, program, items, spread=100):
    """Runs stamp then verify_free; returns (NULLs, wrong words)."""
    units = cla.zeros(queue, items, np.uint32)
    wrong = cla.zeros(queue, 1, np.uint32)
    program.stamp(queue, (items,), None, heap.buffer, units.data, np.uint32(spread))
    nulls = int((units.get() == 0).sum())
    program.verify_free(queue, (items,), None, heap.buffer, units.data, np.uint32(spread), wrong.data)
    return nulls, int(wrong.get()[0])


# FreeHeap is serial (work-items that call it at once are a usage error, counted as
# contended), so it is not among them.
@pytest.mark.parametrize("allocator", ["TierAlloc", "BlockAlloc", "CMalloc", "CFMMalloc"])
def test_kernel_mallocs_verified(context, queue, allocator):
    with clheap.Heap(context, queue=queue, size=16 << 20, allocator=allocator) as heap:
        program = heap.build(STAMP)
        nulls, wrong = stamp_verify(heap, queue, program, 4096)
        assert (nulls, wrong) == (0, 0)
        assert heap.errors() == {field: 0 for field, *_ in clheap.DEVICE_ERRORS}
        heap.check()
        assert heap.stats()["allocator"] == allocator


def test_defaults_and_properties(context):
    with clheap.Heap(context) as heap:
        best = clheap.FALLBACK_ALLOCATOR if clheap.device_loop_limit(heap.device) else clheap.DEFAULT_ALLOCATOR
        assert heap.allocator == best and best in ("TierAlloc", "BlockAlloc")
        assert heap.device == context.devices[0]
        assert heap.size <= 64 << 20 and heap.size > 60 << 20
        assert f"-DCLHEAP_ALLOCATOR={clheap.ALLOCATORS[best]}" in heap.build_options


def test_free_heap_runs_unless_loops_end_early(context):
    limit = clheap.device_loop_limit(context.devices[0])
    if limit:  # Mesa's llvmpipe
        with pytest.raises(clheap.Error) as info:
            clheap.Heap(context, size=8 << 20, allocator="FreeHeap")
        assert info.value.status == clheap.STATUS["CLHEAP_ERROR_UNSUPPORTED"]
    else:
        with clheap.Heap(context, size=8 << 20, allocator="FreeHeap") as heap:
            assert heap.allocator == "FreeHeap"


def test_a_typed_heap_defaults_to_the_typed_allocator(context):
    with clheap.Heap(context, size=8 << 20, typed_classes=True) as heap:
        assert heap.allocator == clheap.TYPED_ALLOCATOR == "BlockAlloc"
    with clheap.Heap(context, size=8 << 20, allocator="TierAlloc", typed_classes=True) as heap:
        assert heap.allocator == "TierAlloc"


def test_unknown_allocator_lists_the_valid_ones(context):
    with pytest.raises(ValueError) as info:
        clheap.Heap(context, allocator="tieralloc")
    for name in clheap.ALLOCATORS:
        assert name in str(info.value)


def test_bad_size_is_a_clheap_error(context, queue):
    with pytest.raises(clheap.Error) as info:
        clheap.Heap(context, queue=queue, size=1 << 10)
    assert info.value.name == "CLHEAP_ERROR_HEAP_TOO_SMALL"
    assert info.value.status == clheap.STATUS["CLHEAP_ERROR_HEAP_TOO_SMALL"]


def test_build_error_at_the_users_line(context, queue):
    with clheap.Heap(context, queue=queue, size=4 << 20) as heap:
        with pytest.raises(clheap.BuildError) as info:
            heap.build("__kernel void k(__global uint *o) {\n    o[0] = 1;\n    o[1] = ;\n}\n")
        assert "source 1:3:" in info.value.log
        assert info.value.name == "CLHEAP_ERROR_BUILD_FAILED"


def test_set_arg(context, queue):
    with clheap.Heap(context, queue=queue, size=4 << 20) as heap:
        program = heap.build(STAMP)
        units = cla.zeros(queue, 64, np.uint32)
        kernel = program.stamp
        heap.set_arg(kernel, 0)
        kernel.set_arg(1, units.data)
        kernel.set_arg(2, np.uint32(10))
        cl.enqueue_nd_range_kernel(queue, kernel, (64,), None)
        assert (units.get() != 0).all()


def test_device_errors_counted(context, queue):
    with clheap.Heap(context, queue=queue, size=4 << 20) as heap:
        program = heap.build("""
__kernel void bad(__global clheap_heap *heap) {
    __global uint *p = clheap_malloc(heap, 64u);
    clheap_free(heap, p);
    clheap_free(heap, p);                       /* a double free */
    if (clheap_malloc(heap, 0u)) clheap_free(heap, 0);  /* a bad size */
}""")
        program.bad(queue, (1,), None, heap.buffer)
        errors = heap.errors()
        assert errors["double_free"] == 1 and errors["bad_size"] == 1
        assert sum(errors.values()) == 2
        heap.check()


def test_check_raises_heap_corrupt(context, queue):
    with clheap.Heap(context, queue=queue, size=4 << 20, allocator="CMalloc") as heap:
        heap.check()
        begin, _ = heap.pool_range
        # Overwrite the pool's first chunk header with junk.
        cl.enqueue_fill_buffer(queue, heap.buffer, np.uint32(0xDEADBEEF), begin, 64).wait()
        with pytest.raises(clheap.HeapCorrupt) as info:
            heap.check()
        assert info.value.name == "CLHEAP_ERROR_HEAP_CORRUPT"
        assert info.value.detail


def test_grow_keeps_allocations(context, queue):
    with clheap.Heap(context, queue=queue, size=4 << 20) as heap:
        handles = heap.enqueue_malloc(np.full(100, 256))
        before = heap.size
        heap.grow(before * 2)
        assert heap.size > before
        with pytest.raises(clheap.Error) as info:
            heap.grow(before)
        assert info.value.name == "CLHEAP_ERROR_GROW_NOT_LARGER"
        heap.enqueue_free(handles)
        assert heap.errors()["double_free"] == 0 and (handles.get() == 0).all()
        heap.check()


def test_grow_if_needed(context, queue):
    with clheap.Heap(context, queue=queue, size=4 << 20, grow=2.0) as heap:
        assert heap.grow_if_needed() is False
        handles = heap.enqueue_malloc(np.full(64, 256 << 10))  # 16 MiB asked of 4 MiB
        assert (handles.get() == 0).any()
        assert heap.grow_if_needed() is True
        assert heap.size >= 8 << 20
    with clheap.Heap(context, queue=queue, size=4 << 20) as heap:  # no policy
        heap.enqueue_malloc(np.full(64, 256 << 10))
        with pytest.raises(clheap.Error) as info:
            heap.grow_if_needed()
        assert info.value.name == "CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY"


def test_enqueue_malloc_aligned_zeroed_and_free(context, queue):
    with clheap.Heap(context, queue=queue, size=8 << 20) as heap:
        program = heap.build("""
__kernel void dirty(__global clheap_heap *heap, __global uint *units) {
    __global uint *p = clheap_pointer(heap, units[get_global_id(0)]);
    for (uint w = 0; p && w < 64u; w++) p[w] = 0xffffffffu;
}
__kernel void look(__global clheap_heap *heap, __global uint *units, __global ulong *addr,
                   __global uint *nonzero) {
    uint id = get_global_id(0);
    __global uint *p = clheap_pointer(heap, units[id]);
    addr[id] = (ulong)p;
    for (uint w = 0; p && w < 64u; w++) if (p[w]) atomic_inc(nonzero);
}""")
        look = program.look  # once: each retrieval makes a new kernel
        sizes = np.full(256, 256, dtype=np.uint32)
        dirty = heap.enqueue_malloc(sizes)
        program.dirty(queue, (256,), None, heap.buffer, dirty.data)
        dirty_units = dirty.get()
        heap.enqueue_free(dirty)
        assert (dirty.get() == 0).all()
        heap.trim()  # the run that served them closes: the next requests take its blocks again
        for alignment in (0, 256, 4096):
            handles = heap.enqueue_malloc(cla.to_device(queue, sizes), alignment=alignment, zero=True)
            addr = cla.zeros(queue, 256, np.uint64)
            nonzero = cla.zeros(queue, 1, np.uint32)
            look(queue, (256,), None, heap.buffer, handles.data, addr.data, nonzero.data)
            units = handles.get()
            assert (units != 0).all() and len(set(units)) == 256
            if alignment == 0:
                assert len(set(units) & set(dirty_units)) > 0  # zeroed memory that was dirty
            assert (addr.get() % max(alignment, 16) == 0).all()
            assert nonzero.get()[0] == 0
            heap.enqueue_free(handles)
            assert (handles.get() == 0).all()
        heap.enqueue_free(cla.to_device(queue, dirty_units))  # freed before: refused, counted
        errors = heap.errors()
        assert errors["double_free"] + errors["free_not_chunk"] == 256
        heap.check()
        with pytest.raises(clheap.Error) as info:
            heap.enqueue_malloc([16], alignment=3)
        assert info.value.name == "CLHEAP_ERROR_INVALID_ARGUMENT"
        with pytest.raises(clheap.Error) as info:
            heap.enqueue_malloc([])
        assert info.value.name == "CLHEAP_ERROR_ZERO_COUNT"
        with pytest.raises(ValueError):
            heap.enqueue_malloc([-1])
        with pytest.raises(ValueError):
            heap.enqueue_free(cla.zeros(queue, 4, np.int64))


def test_closed_heap_refuses(context, queue):
    heap = clheap.Heap(context, queue=queue, size=4 << 20)
    heap.close()
    heap.close()  # twice: nothing
    with pytest.raises(clheap.Error) as info:
        heap.errors()
    assert info.value.name == "CLHEAP_ERROR_INVALID_HANDLE"
    with pytest.raises(clheap.Error):
        heap.build(STAMP)


def test_opencl_errors_stay_pyopencl(context, queue):
    with clheap.Heap(context, queue=queue, size=4 << 20) as heap:
        kernel = heap.build(STAMP).stamp
        with pytest.raises(cl.LogicError) as info:
            heap.set_arg(kernel, 7)  # the kernel has 3 arguments
        assert info.value.code == cl.status_code.INVALID_ARG_INDEX
        with pytest.raises(clheap.Error) as info:
            heap.grow(1 << 50)  # more than the device allocates: clheap's own check
        assert info.value.name == "CLHEAP_ERROR_SIZE_TOO_LARGE"
