"""clheap.Heap: a device heap (include/clheap/heap.h) for PyOpenCL programs."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

from ._errors import STATUS, BuildError, Closable, Error, HeapCorrupt, check
from ._lib import HEAP_STATS_BYTES, HeapConfig, HeapErrors, lib
from ._vocabulary import ALLOCATORS, DEVICE_ERRORS

# The statuses clheap_heap_read_errors answers for non-zero counters: counts, not failures.
_COUNTER_STATUSES = {STATUS[status] for _field, _word, status, _what in DEVICE_ERRORS}
_HEAP_CORRUPT = STATUS["CLHEAP_ERROR_HEAP_CORRUPT"]
_BUFFER_TOO_SMALL = STATUS["CLHEAP_ERROR_BUFFER_TOO_SMALL"]
_ENQUEUE_ZERO = 1  # CLHEAP_ENQUEUE_ZERO (include/clheap/heap.h)

GrowSpec = Union[None, float, Tuple[float, int]]


class Heap(Closable):
    """One `cl_mem` that kernels allocate from with ``clheap_malloc`` / ``clheap_free``
    (and calloc, realloc, aligned_alloc; cl/clheap.cl).

    `allocator` is a name from :data:`clheap.ALLOCATORS`, or None (the default): the
    device's best, :data:`clheap.DEFAULT_ALLOCATOR`, or :data:`clheap.FALLBACK_ALLOCATOR`
    on a device that ends loops early (:func:`device_loop_limit`), or :data:`clheap.TYPED_ALLOCATOR` with
    `typed_classes`; :attr:`allocator` names the one the heap got. `grow` is None (never
    grow), a factor above 1, or ``(factor, max_bytes)``: see :meth:`grow_if_needed`. With
    `typed_classes` every size class keeps to blocks of its own (a class is a type for
    ``parallel_do``; TierAlloc named keeps it so too). Every call is enqueued on `queue` (default: a new in-order
    queue on `device`, itself defaulting to the context's first device); finish your own
    kernels that use the heap before :meth:`check`, :meth:`stats` or :meth:`grow`.
    """

    def __init__(self, context: cl.Context, device: Optional[cl.Device] = None,
                 queue: Optional[cl.CommandQueue] = None, size: int = 64 << 20,
                 allocator: Optional[str] = None, grow: GrowSpec = None,
                 typed_classes: bool = False):
        if allocator is not None and allocator not in ALLOCATORS:
            raise ValueError(f"unknown allocator {allocator!r}; valid: {', '.join(ALLOCATORS)}")
        self._handle: Optional[int] = None
        self.context = context
        self.device = device if device is not None else context.devices[0]
        self.queue = queue if queue is not None else cl.CommandQueue(context, self.device)
        config = lib.clheap_heap_config_default()
        if allocator is not None:
            config.allocator = ALLOCATORS[allocator]
        config.size_bytes = int(size)
        config.typed_classes = 1 if typed_classes else 0
        if grow is not None:
            factor, max_bytes = grow if isinstance(grow, tuple) else (grow, 0)
            config.grow.factor = float(factor)
            config.grow.max_bytes = int(max_bytes)
        handle = ctypes.c_void_p()
        check(lib.clheap_heap_create(self.context.int_ptr, self.device.int_ptr, self.queue.int_ptr,
                                     ctypes.byref(config), ctypes.byref(handle)), "clheap_heap_create")
        self._handle = handle.value
        self.allocator = lib.clheap_allocator_name(lib.clheap_heap_allocator(self._handle)).decode()

    # ---- life ----------------------------------------------------------------------
    def close(self) -> None:
        """Releases the buffer and everything the heap made; a second close does nothing."""
        handle, self._handle = self._handle, None
        if handle is not None:
            check(lib.clheap_heap_destroy(handle), "clheap_heap_destroy")

    # ---- programs ------------------------------------------------------------------
    @property
    def buffer(self) -> cl.Buffer:
        """The heap's buffer, to pass as a kernel's ``__global clheap_heap *`` argument.
        :meth:`grow` replaces it: take it again after growing."""
        return cl.Buffer.from_int_ptr(lib.clheap_heap_buffer(self._live()), retain=True)

    @property
    def size(self) -> int:
        """The buffer's size in bytes."""
        return int(lib.clheap_heap_size(self._live()))

    @property
    def pool_range(self) -> Tuple[int, int]:
        """Where allocations lie in the buffer: (first byte, bytes). Cheap."""
        begin, size = ctypes.c_uint64(), ctypes.c_uint64()
        check(lib.clheap_heap_pool_range(self._live(), ctypes.byref(begin), ctypes.byref(size)),
              "clheap_heap_pool_range")
        return begin.value, size.value

    @property
    def build_options(self) -> str:
        """The options a program using this heap is built with (:meth:`build` adds them)."""
        buf = ctypes.create_string_buffer(4096)
        check(lib.clheap_heap_build_options(self._live(), buf, len(buf)), "clheap_heap_build_options")
        return buf.value.decode()

    def build(self, source: str, options: str = "") -> cl.Program:
        """The allocator's source with `source` after it, built with the heap's options
        and `options`. Raises :class:`BuildError` with the log, whose lines name
        "source 1" at `source`'s own line numbers."""
        sources = (ctypes.c_char_p * 1)(source.encode())
        program = ctypes.c_void_p()
        log = ctypes.create_string_buffer(1 << 16)
        status = lib.clheap_heap_build_program(self._live(), 1, sources, options.encode(),
                                               ctypes.byref(program), log, len(log))
        check(status, "clheap_heap_build_program", log.value.decode(errors="replace"), BuildError)
        return cl.Program.from_int_ptr(program.value, retain=False)

    def set_arg(self, kernel: cl.Kernel, index: int) -> None:
        """Sets argument `index` of `kernel` to the heap (``kernel.set_arg(index,
        heap.buffer)`` does the same). Again after :meth:`grow`."""
        check(lib.clheap_heap_set_kernel_arg(self._live(), kernel.int_ptr, index), "clheap_heap_set_kernel_arg")

    # ---- what the heap says --------------------------------------------------------
    def errors(self) -> Dict[str, int]:
        """The device's counters by name (bad frees, NULL returns, ...; clheap.DEVICE_ERRORS
        says what each counts). Blocking."""
        errors = HeapErrors()
        status = lib.clheap_heap_read_errors(self._live(), ctypes.byref(errors))
        if status not in _COUNTER_STATUSES:
            check(status, "clheap_heap_read_errors")
        return {field: int(getattr(errors, field)) for field, *_ in DEVICE_ERRORS}

    def stats(self) -> Dict[str, Any]:
        """The heap walked (exact, and as slow as reading the buffer back): the JSON
        document of clheap_heap_stats_json, as a dict."""
        stats = ctypes.create_string_buffer(HEAP_STATS_BYTES)
        check(lib.clheap_heap_calculate_stats(self._live(), stats), "clheap_heap_calculate_stats")
        size = 8192
        while True:
            text, needed = ctypes.create_string_buffer(size), ctypes.c_size_t()
            status = lib.clheap_heap_stats_json(stats, text, size, ctypes.byref(needed))
            if status != _BUFFER_TOO_SMALL:
                check(status, "clheap_heap_stats_json")
                return json.loads(text.value.decode())
            size = needed.value

    def check(self) -> None:
        """Verifies the heap's invariants; raises :class:`HeapCorrupt` with the report."""
        what = ctypes.create_string_buffer(4096)
        status = lib.clheap_heap_check(self._live(), what, len(what))
        check(status, "clheap_heap_check", what.value.decode(errors="replace"),
              HeapCorrupt if status == _HEAP_CORRUPT else Error)

    # ---- growth --------------------------------------------------------------------
    def grow(self, size: int) -> None:
        """Makes the heap `size` bytes large; offsets stay valid, pointers and kernel
        arguments do not (set them again)."""
        check(lib.clheap_heap_grow(self._live(), int(size)), "clheap_heap_grow")

    def grow_if_needed(self) -> bool:
        """After a kernel: if a device malloc returned NULL, grows by the policy and
        returns True (retry the failed work); False if none did. Raises Error
        (CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY) if mallocs failed and the policy allows no
        growth."""
        grew = ctypes.c_int()
        check(lib.clheap_heap_grow_if_needed(self._live(), ctypes.byref(grew)), "clheap_heap_grow_if_needed")
        return bool(grew.value)

    def trim(self) -> None:
        """TierAlloc: gives memory held for fast paths back (clheap_heap_trim)."""
        check(lib.clheap_heap_trim(self._live()), "clheap_heap_trim")

    # ---- allocations the host enqueues ---------------------------------------------
    def enqueue_malloc(self, sizes: Union[Sequence[int], np.ndarray, cl_array.Array],
                       queue: Optional[cl.CommandQueue] = None, alignment: int = 0,
                       zero: bool = False) -> cl_array.Array:
        """One device malloc per entry of `sizes` (bytes), enqueued on `queue` (default:
        the heap's); returns their handles (uint32 offsets in 16-byte units; 0: no
        memory, counted in :meth:`errors`) as a device array that kernels read with
        ``clheap_pointer(heap, handle)``. `alignment` (0 - 16: none; a power of two up to
        64 KiB) and `zero` make them aligned_alloc and calloc."""
        queue = queue if queue is not None else self.queue
        if isinstance(sizes, cl_array.Array):
            if sizes.dtype != np.uint32 or sizes.offset or not sizes.flags.c_contiguous:
                raise ValueError("sizes: a contiguous uint32 device array at offset 0")
            device_sizes = sizes
        else:
            host = np.asarray(sizes)
            if host.size and (host.min() < 0 or host.max() > 0xFFFFFFFF):
                raise ValueError("sizes: each between 0 and 2**32 - 1 bytes")
            device_sizes = cl_array.to_device(queue, np.ascontiguousarray(host, dtype=np.uint32).ravel())
        count = device_sizes.size
        if not count:  # as the C call answers it (an empty array has no buffer to pass)
            raise Error(STATUS["CLHEAP_ERROR_ZERO_COUNT"], "clheap_heap_enqueue_malloc_ex")
        handles = cl_array.zeros(queue, count, np.uint32)
        status = lib.clheap_heap_enqueue_malloc_ex(
            self._live(), queue.int_ptr, count, 0, _mem(device_sizes), alignment, _ENQUEUE_ZERO if zero else 0,
            _mem(handles), 0, 0, None, None)
        check(status, "clheap_heap_enqueue_malloc_ex")
        return handles

    def enqueue_free(self, handles: cl_array.Array, queue: Optional[cl.CommandQueue] = None) -> None:
        """Frees the allocations `handles` names (a uint32 device array, as
        :meth:`enqueue_malloc` returns; entries of 0 are skipped) and zeroes the entries."""
        if handles.dtype != np.uint32 or not handles.flags.c_contiguous:
            raise ValueError("handles: a contiguous uint32 device array")
        queue = queue if queue is not None else self.queue
        status = lib.clheap_heap_enqueue_free(self._live(), queue.int_ptr, handles.size, _mem(handles),
                                              handles.offset // 4, 0, None, None)
        check(status, "clheap_heap_enqueue_free")


def device_has_atomics64(device: cl.Device) -> bool:
    """Whether `device` has 64-bit atomics, which the fused circular variants need
    (False also under ``CLHEAP_ATOMICS64=0``); without them the others build for 32-bit
    atomics."""
    return bool(lib.clheap_device_has_atomics64(device.int_ptr))


def device_loop_limit(device: cl.Device) -> int:
    """0, or the loop iterations one work-item gets in one launch, all its loops together,
    on a device that ends every loop after one iteration past them (Mesa's llvmpipe:
    65535). There a kernel-side malloc or free that finds them spent does nothing and
    counts ``contended``, FreeHeap is refused, and the default is
    :data:`clheap.FALLBACK_ALLOCATOR`."""
    return int(lib.clheap_device_loop_limit(device.int_ptr))


def _mem(array: cl_array.Array) -> Optional[int]:
    """The cl_mem under a device array (None for an empty one)."""
    return None if array.base_data is None else array.base_data.int_ptr
