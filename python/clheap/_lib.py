"""libclheap through ctypes: where the library is found, its C structures, its prototypes.

The structures mirror include/clheap/heap.h and include/clheap/cache.h field for field;
python/tests/test_layout.py compiles a C program that prints the C compiler's offsets
and sizes and compares them with these, so a change on either side fails the tests.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

from ._vocabulary import DEVICE_ERRORS

c_status = ctypes.c_int
c_handle = ctypes.c_void_p  # cl_context, cl_device_id, cl_command_queue, cl_mem, ...


def _find_library() -> str:
    """The package's own copy, else $CLHEAP_LIBRARY, else the loader's search path."""
    here = Path(__file__).resolve().parent
    own = sorted(here.glob("libclheap.so*")) + sorted(here.glob("libclheap*.dylib"))
    if own:
        return str(own[0])
    env = os.environ.get("CLHEAP_LIBRARY")
    if env:
        return env
    found = ctypes.util.find_library("clheap")
    if found:
        return found
    raise ImportError("clheap: libclheap not found beside the package, in $CLHEAP_LIBRARY "
                      "or on the loader's path; install with `pip install ./python`")


class GrowPolicy(ctypes.Structure):
    _fields_ = [("factor", ctypes.c_double), ("max_bytes", ctypes.c_uint64)]


class HeapConfig(ctypes.Structure):
    _fields_ = [
        ("allocator", ctypes.c_int),
        ("size_bytes", ctypes.c_uint64),
        ("presplit", ctypes.c_int),
        ("min_chunk_bytes", ctypes.c_uint32),
        ("uniform_chunk_bytes", ctypes.c_uint32),
        ("offset_count", ctypes.c_uint32),
        ("slot_bytes", ctypes.c_uint32),
        ("frame_bytes", ctypes.c_uint32),
        ("class_count", ctypes.c_uint32),
        ("class_bytes", ctypes.c_uint32 * 32),
        ("typed_classes", ctypes.c_uint32),
        ("no_warp_coalescing", ctypes.c_uint32),
        ("grow", GrowPolicy),
    ]


class HeapErrors(ctypes.Structure):
    _fields_ = [(field, ctypes.c_uint32) for field, _word, _status, _what in DEVICE_ERRORS]


# clheap_cache_driver: create, probe, release, user.
CREATE_FN = ctypes.CFUNCTYPE(c_handle, c_handle, c_handle, ctypes.c_uint64, ctypes.c_size_t,
                             ctypes.POINTER(ctypes.c_int32))
PROBE_FN = ctypes.CFUNCTYPE(ctypes.c_int32, c_handle, c_handle, c_handle)
RELEASE_FN = ctypes.CFUNCTYPE(ctypes.c_int32, c_handle, c_handle)


class CacheDriver(ctypes.Structure):
    _fields_ = [("create", CREATE_FN), ("probe", PROBE_FN), ("release", RELEASE_FN),
                ("user", c_handle)]


class CacheConfig(ctypes.Structure):
    _fields_ = [
        ("granularity", ctypes.c_size_t),
        ("max_cached_bytes", ctypes.c_uint64),
        ("max_total_bytes", ctypes.c_uint64),
        ("mem_flags", ctypes.c_uint64),
        ("probe_queue", c_handle),
        ("driver", ctypes.POINTER(CacheDriver)),
    ]


# clheap_heap_stats is only passed from calculate_stats to stats_json: a buffer larger
# than it (test_layout.py checks) keeps its layout out of Python.
HEAP_STATS_BYTES = 16384

lib = ctypes.CDLL(_find_library())


def _proto(name: str, restype, *argtypes) -> None:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


P = ctypes.POINTER
_proto("clheap_status_string", ctypes.c_char_p, c_status)
_proto("clheap_allocator_name", ctypes.c_char_p, ctypes.c_int)
_proto("clheap_heap_config_default", HeapConfig)
_proto("clheap_heap_create", c_status, c_handle, c_handle, c_handle, P(HeapConfig), P(c_handle))
_proto("clheap_heap_destroy", c_status, c_handle)
_proto("clheap_heap_allocator", ctypes.c_int, c_handle)
_proto("clheap_device_has_atomics64", ctypes.c_int, c_handle)
_proto("clheap_device_loop_limit", ctypes.c_uint, c_handle)
_proto("clheap_heap_buffer", c_handle, c_handle)
_proto("clheap_heap_size", ctypes.c_uint64, c_handle)
_proto("clheap_heap_pool_range", c_status, c_handle, P(ctypes.c_uint64), P(ctypes.c_uint64))
_proto("clheap_heap_build_options", c_status, c_handle, ctypes.c_char_p, ctypes.c_size_t)
_proto("clheap_heap_build_program", c_status, c_handle, ctypes.c_size_t, P(ctypes.c_char_p),
       ctypes.c_char_p, P(c_handle), ctypes.c_char_p, ctypes.c_size_t)
_proto("clheap_heap_set_kernel_arg", c_status, c_handle, c_handle, ctypes.c_uint32)
_proto("clheap_heap_read_errors", c_status, c_handle, P(HeapErrors))
_proto("clheap_heap_grow", c_status, c_handle, ctypes.c_uint64)
_proto("clheap_heap_grow_if_needed", c_status, c_handle, P(ctypes.c_int))
_proto("clheap_heap_calculate_stats", c_status, c_handle, ctypes.c_void_p)
_proto("clheap_heap_stats_json", c_status, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
       P(ctypes.c_size_t))
_proto("clheap_heap_check", c_status, c_handle, ctypes.c_char_p, ctypes.c_size_t)
_proto("clheap_heap_trim", c_status, c_handle)
_proto("clheap_heap_enqueue_malloc_ex", c_status, c_handle, c_handle, ctypes.c_size_t, ctypes.c_uint32,
       c_handle, ctypes.c_size_t, ctypes.c_uint, c_handle, ctypes.c_size_t, ctypes.c_uint32,
       c_handle, c_handle)
_proto("clheap_heap_enqueue_free", c_status, c_handle, c_handle, ctypes.c_size_t, c_handle,
       ctypes.c_size_t, ctypes.c_uint32, c_handle, c_handle)
_proto("clheap_cache_config_default", CacheConfig)
_proto("clheap_cache_opencl_driver", P(CacheDriver))
_proto("clheap_cache_create", c_status, c_handle, c_handle, P(CacheConfig), P(c_handle))
_proto("clheap_cache_destroy", c_status, c_handle)
_proto("clheap_cache_alloc", c_status, c_handle, ctypes.c_size_t, ctypes.c_char_p, P(c_handle))
_proto("clheap_cache_free", c_status, c_handle, c_handle)
_proto("clheap_cache_trim", c_status, c_handle, ctypes.c_uint64)
_proto("clheap_cache_check", c_status, c_handle, ctypes.c_char_p, ctypes.c_size_t)
_proto("clheap_cache_stats_json", c_status, c_handle, ctypes.c_char_p, ctypes.c_size_t,
       P(ctypes.c_size_t))
