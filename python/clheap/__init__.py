"""clheap for PyOpenCL: a device heap that kernels allocate from (:class:`Heap`) and a
host buffer cache that is a PyOpenCL allocator (:class:`Cache`). docs/python.md."""
from ._errors import STATUS, BuildError, Error, HeapCorrupt
from ._vocabulary import ALLOCATORS, DEFAULT_ALLOCATOR, DEVICE_ERRORS, FALLBACK_ALLOCATOR, TYPED_ALLOCATOR
from .cache import Cache
from .heap import Heap, device_has_atomics64, device_loop_limit

__all__ = ["Heap", "Cache", "Error", "HeapCorrupt", "BuildError", "STATUS", "ALLOCATORS",
           "DEFAULT_ALLOCATOR", "FALLBACK_ALLOCATOR", "TYPED_ALLOCATOR", "DEVICE_ERRORS",
           "device_has_atomics64", "device_loop_limit"]
__version__ = "0.1.0"
