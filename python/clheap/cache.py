"""clheap.Cache: the host buffer cache (include/clheap/cache.h) as a PyOpenCL allocator."""
from __future__ import annotations

import ctypes
import json
import weakref
from collections import deque
from typing import Any, Deque, Dict, Optional

import pyopencl as cl

from ._errors import STATUS, Error, check
from ._lib import CREATE_FN, PROBE_FN, RELEASE_FN, CacheDriver, lib


class _State:
    """What outlives the Cache object for the buffers' finalizers: the handle (None once
    closed), the frees waiting to be handed back, and the driver calls counted."""

    def __init__(self) -> None:
        self.handle: Optional[int] = None
        self.pending: Deque[int] = deque()
        self.allocs = 0
        self.releases = 0


class Cache:
    """`cl_mem` buffers kept for reuse, so that repeated alloc/free cycles stop calling
    the OpenCL driver. Callable as a PyOpenCL allocator::

        cache = clheap.Cache(context)
        a = pyopencl.array.empty(queue, (1000,), numpy.float32, allocator=cache)

    A buffer goes back to the cache when its last Python reference dies (the array is
    freed); the cache hands it out again at its next call. `max_cached_bytes` caps what
    is kept (oldest released first), `max_total_bytes` live plus cached. On the device's
    out-of-memory the cache releases what it keeps and asks again before it raises.
    """

    def __init__(self, context: cl.Context, device: Optional[cl.Device] = None,
                 max_cached_bytes: Optional[int] = None, max_total_bytes: Optional[int] = None):
        self.context = context
        self.device = device if device is not None else context.devices[0]
        state = self._state = _State()
        real = lib.clheap_cache_opencl_driver().contents

        def create(user, ctx, flags, size, error):  # the real call, counted
            mem = real.create(user, ctx, flags, size, error)
            if mem:
                state.allocs += 1
            return mem

        def release(user, mem):
            state.releases += 1
            return real.release(user, mem)

        self._driver = CacheDriver(CREATE_FN(create), PROBE_FN(lambda user, queue, mem: real.probe(user, queue, mem)),
                                   RELEASE_FN(release), None)
        config = lib.clheap_cache_config_default()
        config.max_cached_bytes = int(max_cached_bytes or 0)
        config.max_total_bytes = int(max_total_bytes or 0)
        config.driver = ctypes.pointer(self._driver)
        handle = ctypes.c_void_p()
        check(lib.clheap_cache_create(context.int_ptr, self.device.int_ptr, ctypes.byref(config),
                                      ctypes.byref(handle)), "clheap_cache_create")
        state.handle = handle.value

    def _h(self) -> int:
        """The live handle, after handing back the buffers whose arrays died."""
        state = self._state
        if state.handle is None:
            raise Error(STATUS["CLHEAP_ERROR_INVALID_HANDLE"], "clheap.Cache", "the cache was closed")
        while state.pending:
            check(lib.clheap_cache_free(state.handle, state.pending.popleft()), "clheap_cache_free")
        return state.handle

    def alloc(self, nbytes: int, tag: str = "python") -> cl.Buffer:
        """A buffer of at least `nbytes` bytes (0 counts as 1); `tag` names the
        allocation site, whose freed buffers are reused first."""
        mem = ctypes.c_void_p()
        check(lib.clheap_cache_alloc(self._h(), max(int(nbytes), 1), tag.encode(), ctypes.byref(mem)),
              "clheap_cache_alloc")
        buffer = cl.Buffer.from_int_ptr(mem.value, retain=True)
        # Not clheap_cache_free here: a finalizer may run inside a driver call of this
        # cache (the garbage collector), whose lock is held; the next call hands it back.
        weakref.finalize(buffer, self._state.pending.append, mem.value)
        return buffer

    def __call__(self, nbytes: int) -> cl.Buffer:
        """PyOpenCL's allocator protocol: ``allocator(nbytes) -> Buffer``."""
        return self.alloc(nbytes, "pyopencl")

    def stats(self) -> Dict[str, Any]:
        """The cache's counters (cheap): the JSON document of clheap_cache_stats_json."""
        text, needed = ctypes.create_string_buffer(4096), ctypes.c_size_t()
        check(lib.clheap_cache_stats_json(self._h(), text, len(text), ctypes.byref(needed)),
              "clheap_cache_stats_json")
        return json.loads(text.value.decode())

    def check(self) -> None:
        """Verifies the cache's invariants; raises Error (CLHEAP_ERROR_HEAP_CORRUPT)."""
        what = ctypes.create_string_buffer(1024)
        check(lib.clheap_cache_check(self._h(), what, len(what)), "clheap_cache_check",
              what.value.decode(errors="replace"))

    def trim(self, keep_bytes: int = 0) -> None:
        """Releases cached buffers, oldest first, until at most `keep_bytes` stay cached."""
        check(lib.clheap_cache_trim(self._h(), int(keep_bytes)), "clheap_cache_trim")

    @property
    def driver_calls(self) -> Dict[str, int]:
        """Buffers the cache got from the driver and gave back to it, counted at the
        driver (also by close): equal after close."""
        return {"allocs": self._state.allocs, "releases": self._state.releases}

    def close(self) -> None:
        """Releases every buffer the cache owns. Arrays still alive keep their memory
        (each holds its own OpenCL reference) until they die; a second close does nothing."""
        state = self._state
        if state.handle is None:
            return
        self._h()
        handle, state.handle = state.handle, None
        status = lib.clheap_cache_destroy(handle)
        if status != STATUS["CLHEAP_ERROR_BLOCKS_STILL_LIVE"]:
            check(status, "clheap_cache_destroy")

    def __enter__(self) -> "Cache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # a destructor must not raise
            pass
