"""clheap.Cache: the host buffer cache (include/clheap/cache.h) as a PyOpenCL allocator."""
from __future__ import annotations

import ctypes
import functools
import json
import os
import sys
import threading
from itertools import islice
from typing import Any, Callable, Dict, List, Optional, Tuple

import pyopencl as cl

from ._errors import STATUS, Closable, check
from ._lib import CREATE_FN, PROBE_FN, RELEASE_FN, CacheDriver, lib

_CL_OUT_OF_HOST_MEMORY = -6


@functools.lru_cache(maxsize=256)
def _tag(tag: str) -> bytes:
    """A tag as the C cache takes it (it copies it)."""
    return tag.encode()


def _serial(method: Callable) -> Callable:
    """The Cache method under the front's lock: one call at a time."""
    @functools.wraps(method)
    def serial(self, *args: Any, **kwargs: Any) -> Any:
        self._front_lock()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._front_unlock()
    return serial


class _Owned:
    """The cache's buffers as PyOpenCL objects: one per cl_mem, made by the driver's create
    and dropped by its release, so the cache's and PyOpenCL's references are one; and the
    driver's calls, counted."""

    def __init__(self) -> None:
        self.objects: Dict[int, cl.Buffer] = {}  # cl_mem -> its Buffer, while the cache owns it
        self.allocs = 0
        self.releases = 0


# The newest handed-out buffers a busy miss looks at first (temporaries die young), and how
# many must be out for it to; then it looks at all of them.
_RECENT = 8
_BUSY = 4 * _RECENT
# Reclaimed buffers the front bins keep at most; the others go back to the C cache.
_BIN_CAP = 256
# The C cache's request granularity (clheap_cache_config.granularity 0: 256 bytes).
_GRANULARITY = 256
# References to a handed-out Buffer when only the cache holds it, as a scan that binds it
# to a name counts them: its entry in `objects`, the name, getrefcount's argument.
_CACHE_REFS = 3


class _PythonFront:
    """clheap._front.Front in Python, for where that module was not built (or with
    CLHEAP_PYTHON_FRONT=1): the same algorithm, invariants and methods (python/src/_front.c
    states them). Handed-out mems are kept oldest first in `handed` (mem -> rounded size)."""

    def __new__(cls, *args: Any, **kwargs: Any):
        """Its lock and empty bins, not yet serving (no cache until __init__)."""
        self = super().__new__(cls)
        self._lock = threading.Lock()
        self._cache: Optional[int] = None
        self._handed: Dict[int, int] = {}
        self._bins: Dict[int, List[int]] = {}  # rounded size -> free mems
        self._binned = 0
        self._front_hits = 0
        return self

    def __init__(self, objects: Dict[int, cl.Buffer], cache: int, alloc: int, free: int,
                 granularity: int) -> None:
        self._objects, self._cache, self._granularity = objects, cache, granularity

    def _front_lock(self) -> None:
        self._lock.acquire()

    def _front_unlock(self) -> None:
        self._lock.release()

    def _front_counts(self) -> Tuple[int, int, int]:
        return self._front_hits, len(self._handed), self._binned

    def _found(self, mem: int) -> None:
        size = self._handed.pop(mem)
        if self._binned < _BIN_CAP:
            self._bins.setdefault(size, []).append(mem)
            self._binned += 1
        else:
            check(lib.clheap_cache_free(self._cache, mem), "clheap_cache_free")

    def _scan(self, everything: bool) -> None:
        objects, refcount = self._objects, sys.getrefcount
        out = self._handed if everything else list(islice(reversed(self._handed), _RECENT))
        for mem in [mem for mem in out if refcount(objects[mem]) <= _CACHE_REFS - 1]:
            self._found(mem)

    def _take(self, size: int) -> Optional[cl.Buffer]:
        mems = self._bins.get(size)
        if not mems:
            return None
        mem = mems.pop()
        self._binned -= 1
        self._front_hits += 1
        self._handed[mem] = size
        return self._objects[mem]

    def _take_fit(self, size: int) -> Optional[cl.Buffer]:
        fits = [s for s, mems in self._bins.items() if mems and size <= s <= 2 * size]
        return self._take(min(fits)) if fits else None

    def _front_flush(self) -> None:
        if self._cache is None:
            return
        self._scan(True)
        for mems in self._bins.values():
            for mem in mems:
                check(lib.clheap_cache_free(self._cache, mem), "clheap_cache_free")
        self._bins.clear()
        self._binned = 0

    def _front_forget(self) -> None:
        self._cache = None
        self._handed.clear()
        self._bins.clear()
        self._binned = 0

    def _front_alloc(self, nbytes: int, tag: bytes) -> cl.Buffer:
        if nbytes < 0:
            raise ValueError("clheap.Cache: a negative size")
        size = (nbytes + self._granularity - 1) // self._granularity * self._granularity or self._granularity
        with self._lock:
            if self._cache is None:
                self._live()  # raises
            got = self._take(size)
            if got is None and len(self._handed) > _BUSY:
                self._scan(False)
                got = self._take(size)
            if got is None:
                self._scan(True)
                got = self._take_fit(size)
            if got is not None:
                return got
            self._front_flush()
            handle = ctypes.c_void_p()
            check(lib.clheap_cache_alloc(self._cache, size, tag, ctypes.byref(handle)), "clheap_cache_alloc")
            self._handed[handle.value] = size
            return self._objects[handle.value]

    def __call__(self, nbytes: int) -> cl.Buffer:
        return self._front_alloc(int(nbytes), b"pyopencl")


def _front_base() -> type:
    """The compiled front, unless it is missing or CLHEAP_PYTHON_FRONT=1 asks for Python's."""
    if os.environ.get("CLHEAP_PYTHON_FRONT", "") not in ("", "0"):
        return _PythonFront
    try:
        from ._front import Front
    except ImportError:
        return _PythonFront
    return Front


_Front = _front_base()


class Cache(Closable, _Front):
    """`cl_mem` buffers kept for reuse, so that repeated alloc/free cycles stop calling
    the OpenCL driver. Callable as a PyOpenCL allocator::

        cache = clheap.Cache(context)
        a = pyopencl.array.empty(queue, (1000,), numpy.float32, allocator=cache)

    A buffer is free again once nothing but the cache refers to its Buffer object (the
    array and its views are gone); the cache's next call finds it and hands it out again.
    Found buffers wait in front bins of their exact size, served without a call into the
    C cache (the iterative pattern asks for the same sizes again); a request they cannot
    serve gives them all back to the C cache first, which then serves it as
    include/clheap/cache.h says (a buffer of n - 2n bytes, else the driver).
    `max_cached_bytes` caps what is kept (oldest released first), `max_total_bytes` live
    plus cached. On the device's out-of-memory the cache releases what it keeps and asks
    again before it raises.

    As with PyOpenCL's MemoryPool, a dropped buffer is handed out again whatever commands
    still use it: safe on in-order queues; on an out-of-order queue keep arrays alive until
    the commands that read them are done (docs/python.md, "Queues").
    """

    def __init__(self, context: cl.Context, device: Optional[cl.Device] = None,
                 max_cached_bytes: Optional[int] = None, max_total_bytes: Optional[int] = None):
        self.context = context
        self.device = device if device is not None else context.devices[0]
        self._handle: Optional[int] = None
        owned = self._owned = _Owned()
        real = lib.clheap_cache_opencl_driver().contents

        def create(user, ctx, flags, size, error):  # a PyOpenCL Buffer, counted
            try:
                buffer = cl.Buffer(context, flags, size)
            except cl.Error as e:
                error[0] = e.code
                return None
            except Exception:  # noqa: BLE001 - reported to the cache as the host's failure
                error[0] = _CL_OUT_OF_HOST_MEMORY
                return None
            owned.objects[buffer.int_ptr] = buffer
            owned.allocs += 1
            error[0] = 0
            return buffer.int_ptr

        def release(user, mem):
            owned.releases += 1
            owned.objects.pop(mem, None)  # the cl_mem goes when its last holder lets go
            return 0

        self._driver = CacheDriver(CREATE_FN(create), PROBE_FN(lambda user, queue, mem: real.probe(user, queue, mem)),
                                   RELEASE_FN(release), None)
        config = lib.clheap_cache_config_default()
        config.max_cached_bytes = int(max_cached_bytes or 0)
        config.max_total_bytes = int(max_total_bytes or 0)
        config.driver = ctypes.pointer(self._driver)
        handle = ctypes.c_void_p()
        check(lib.clheap_cache_create(context.int_ptr, self.device.int_ptr, ctypes.byref(config),
                                      ctypes.byref(handle)), "clheap_cache_create")
        self._handle = handle.value
        address = ctypes.cast
        _Front.__init__(self, owned.objects, self._handle, address(lib.clheap_cache_alloc, ctypes.c_void_p).value,
                        address(lib.clheap_cache_free, ctypes.c_void_p).value, _GRANULARITY)

    def _h(self) -> int:
        """The live handle, after giving back every buffer found free (under the lock)."""
        self._live()
        self._front_flush()
        return self._handle

    def alloc(self, nbytes: int, tag: str = "python") -> cl.Buffer:
        """A buffer of at least `nbytes` bytes (0 counts as 1); `tag` names the
        allocation site, whose freed buffers the C cache reuses first. Calling the cache
        (PyOpenCL's allocator protocol, ``allocator(nbytes) -> Buffer``) is alloc with
        the tag "pyopencl"."""
        return self._front_alloc(int(nbytes), _tag(tag))

    @_serial
    def stats(self) -> Dict[str, Any]:
        """The cache's counters (cheap): the JSON document of clheap_cache_stats_json, with
        the front bins' hits added to "hits" and also given as "front_hits"."""
        text, needed = ctypes.create_string_buffer(4096), ctypes.c_size_t()
        check(lib.clheap_cache_stats_json(self._h(), text, len(text), ctypes.byref(needed)),
              "clheap_cache_stats_json")
        stats = json.loads(text.value.decode())
        front_hits = self._front_counts()[0]
        stats["hits"] += front_hits
        stats["front_hits"] = front_hits
        return stats

    @_serial
    def check(self) -> None:
        """Verifies the cache's invariants; raises Error (CLHEAP_ERROR_HEAP_CORRUPT)."""
        what = ctypes.create_string_buffer(1024)
        check(lib.clheap_cache_check(self._h(), what, len(what)), "clheap_cache_check",
              what.value.decode(errors="replace"))

    @_serial
    def trim(self, keep_bytes: int = 0) -> None:
        """Releases cached buffers, oldest first, until at most `keep_bytes` stay cached."""
        check(lib.clheap_cache_trim(self._h(), int(keep_bytes)), "clheap_cache_trim")

    @property
    def driver_calls(self) -> Dict[str, int]:
        """Buffers the cache got from the driver and gave back to it, counted at the
        driver (also by close): equal after close."""
        return {"allocs": self._owned.allocs, "releases": self._owned.releases}

    @property
    def compiled(self) -> bool:
        """Whether the hot path is the compiled one (clheap._front), not Python's."""
        return _Front is not _PythonFront

    @_serial
    def close(self) -> None:
        """Releases every buffer the cache owns. Arrays still alive keep their memory
        (their Buffer objects hold it) until they die; a second close does nothing."""
        if self._handle is None:
            return
        self._h()
        handle, self._handle = self._handle, None
        self._front_forget()
        status = lib.clheap_cache_destroy(handle)
        if status != STATUS["CLHEAP_ERROR_BLOCKS_STILL_LIVE"]:
            check(status, "clheap_cache_destroy")
