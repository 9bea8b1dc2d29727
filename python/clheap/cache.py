"""clheap.Cache: the host buffer cache (include/clheap/cache.h) as a PyOpenCL allocator."""
from __future__ import annotations

import ctypes
import functools
import json
import sys
import threading
from itertools import islice
from typing import Any, Callable, Dict, List, Optional

import pyopencl as cl

from ._errors import STATUS, Closable, check
from ._lib import CREATE_FN, PROBE_FN, RELEASE_FN, CacheDriver, lib

_CL_OUT_OF_HOST_MEMORY = -6


@functools.lru_cache(maxsize=256)
def _tag(tag: str) -> bytes:
    """A tag as the C cache takes it (it copies it)."""
    return tag.encode()


def _serial(method: Callable) -> Callable:
    """The Cache method under the cache's lock: one call at a time."""
    @functools.wraps(method)
    def serial(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)
    return serial


class _Owned:
    """The cache's buffers as PyOpenCL objects: one per cl_mem, made by the driver's create
    and dropped by its release, so the cache's and PyOpenCL's references are one.

    Invariants (between calls): every key of `handed` and every cl_mem in `bins` is a key of
    `objects`; a cl_mem is in at most one of `handed` and `bins`; both are live in the C
    cache (handed out by clheap_cache_alloc, not yet given to clheap_cache_free)."""

    def __init__(self) -> None:
        self.objects: Dict[int, cl.Buffer] = {}  # cl_mem -> its Buffer, while the cache owns it
        self.handed: Dict[int, int] = {}  # cl_mem handed out -> its rounded size, oldest first
        self.bins: Dict[int, List[int]] = {}  # rounded size -> reclaimed cl_mems (the front bins)
        self.binned = 0
        self.front_hits = 0  # requests the front bins served
        self.allocs = 0
        self.releases = 0


# References to a handed-out Buffer when only the cache holds it, counted as a scan that
# binds it to a name sees them: its entry in _Owned.objects, the name, getrefcount's
# argument (the scans pass it straight in: one less).
_CACHE_REFS = 3
# The newest handed-out buffers each call looks at (temporaries die young); a request the
# front bins cannot serve looks at all of them first.
_RECENT = 8
# Reclaimed buffers the front bins keep at most; the others go back to the C cache.
_BIN_CAP = 256
# The C cache's request granularity (clheap_cache_config.granularity 0: 256 bytes).
_GRANULARITY = 256


class Cache(Closable):
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
    """

    def __init__(self, context: cl.Context, device: Optional[cl.Device] = None,
                 max_cached_bytes: Optional[int] = None, max_total_bytes: Optional[int] = None):
        self.context = context
        self.device = device if device is not None else context.devices[0]
        self._handle: Optional[int] = None
        self._lock = threading.Lock()  # one call at a time (the C cache has its own lock too)
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
            owned.handed.pop(mem, None)
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

    def _found(self, mem: int) -> None:
        """A handed-out buffer nobody uses any more: into its front bin, or back to C."""
        owned = self._owned
        size = owned.handed.pop(mem)
        if owned.binned < _BIN_CAP:
            owned.bins.setdefault(size, []).append(mem)
            owned.binned += 1
        else:
            check(lib.clheap_cache_free(self._handle, mem), "clheap_cache_free")

    def _reclaim(self, everything: bool) -> None:
        """Finds the handed-out buffers that only the cache still refers to: the newest
        _RECENT, or all. Why not a finalizer: recent PyOpenCL's Buffer takes no weak
        reference, and one object per cl_mem keeps a stale handle of the user's from ever
        being reused under it."""
        owned = self._owned
        objects, refcount = owned.objects, sys.getrefcount
        recent = owned.handed if everything else list(islice(reversed(owned.handed), _RECENT))
        found = [mem for mem in recent if refcount(objects[mem]) <= _CACHE_REFS - 1]
        for mem in found:
            self._found(mem)

    def _flush(self, scan: bool = True) -> None:
        """Everything found (after a scan of every handed-out buffer, unless the caller
        just made one) goes back to the C cache: before it serves a request, and before
        stats, trim or close, so that it sees what the program freed."""
        if scan:
            self._reclaim(True)
        owned = self._owned
        for mems in owned.bins.values():
            for mem in mems:
                check(lib.clheap_cache_free(self._handle, mem), "clheap_cache_free")
        owned.bins.clear()
        owned.binned = 0

    def _h(self) -> int:
        """The live handle, after giving back everything found."""
        self._live()
        self._flush()
        return self._handle

    @_serial
    def alloc(self, nbytes: int, tag: str = "python") -> cl.Buffer:
        """A buffer of at least `nbytes` bytes (0 counts as 1); `tag` names the
        allocation site, whose freed buffers the C cache reuses first."""
        return self._alloc(nbytes, tag)

    def _alloc(self, nbytes: int, tag: str) -> cl.Buffer:
        """alloc, under the lock: a front bin's buffer, else the C cache's."""
        size = (max(int(nbytes), 1) + _GRANULARITY - 1) // _GRANULARITY * _GRANULARITY
        owned = self._owned
        if self._handle is not None:
            mems = owned.bins.get(size)
            if not mems and len(owned.handed) > 4 * _RECENT:  # many live: the newest first
                self._reclaim(False)  # one scan finds what a step freed; the rest wait in bins
                mems = owned.bins.get(size)
            if not mems:
                self._reclaim(True)
                mems = owned.bins.get(size)
            if mems:
                mem = mems.pop()
                owned.binned -= 1
                owned.front_hits += 1
                owned.handed[mem] = size
                return owned.objects[mem]
        self._live()
        self._flush(scan=False)  # the scan above found everything
        handle = ctypes.c_void_p()
        check(lib.clheap_cache_alloc(self._handle, size, _tag(tag), ctypes.byref(handle)), "clheap_cache_alloc")
        owned.handed[handle.value] = size
        return owned.objects[handle.value]

    def __call__(self, nbytes: int) -> cl.Buffer:
        """PyOpenCL's allocator protocol: ``allocator(nbytes) -> Buffer``. A front bin's
        buffer here, else :meth:`alloc` (tag "pyopencl")."""
        size = (nbytes + _GRANULARITY - 1) & -_GRANULARITY if nbytes > 0 else _GRANULARITY
        owned = self._owned
        with self._lock:
            mems = owned.bins.get(size)
            if mems and self._handle is not None:
                mem = mems.pop()
                owned.binned -= 1
                owned.front_hits += 1
                owned.handed[mem] = size
                return owned.objects[mem]
            return self._alloc(nbytes, "pyopencl")

    @_serial
    def stats(self) -> Dict[str, Any]:
        """The cache's counters (cheap): the JSON document of clheap_cache_stats_json, with
        the front bins' hits added to "hits" and also given as "front_hits"."""
        text, needed = ctypes.create_string_buffer(4096), ctypes.c_size_t()
        check(lib.clheap_cache_stats_json(self._h(), text, len(text), ctypes.byref(needed)),
              "clheap_cache_stats_json")
        stats = json.loads(text.value.decode())
        stats["hits"] += self._owned.front_hits
        stats["front_hits"] = self._owned.front_hits
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

    @_serial
    def close(self) -> None:
        """Releases every buffer the cache owns. Arrays still alive keep their memory
        (their Buffer objects hold it) until they die; a second close does nothing."""
        if self._handle is None:
            return
        self._h()
        handle, self._handle = self._handle, None
        status = lib.clheap_cache_destroy(handle)
        if status != STATUS["CLHEAP_ERROR_BLOCKS_STILL_LIVE"]:
            check(status, "clheap_cache_destroy")
