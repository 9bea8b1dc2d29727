"""clheap for PyOpenCL: a device heap that kernels allocate from (:class:`Heap`) and a
host buffer cache that is a PyOpenCL allocator (:class:`Cache`). docs/python.md."""
from ._errors import STATUS, BuildError, Error, HeapCorrupt
from ._vocabulary import ALLOCATORS, DEFAULT_ALLOCATOR, DEVICE_ERRORS
from .cache import Cache
from .heap import Heap

__all__ = ["Heap", "Cache", "Error", "HeapCorrupt", "BuildError", "STATUS", "ALLOCATORS",
           "DEFAULT_ALLOCATOR", "DEVICE_ERRORS"]
__version__ = "0.1.0"
