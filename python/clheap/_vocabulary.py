# Generated from cmake/vocabulary.cmake by cmake/generate_vocabulary.cmake: do not edit;
# edit the list and run `cmake --build <build dir> --target vocabulary`.
"""clheap's vocabulary, as include/clheap/vocabulary.h has it."""

#: Allocator name -> clheap_allocator value, in value order.
ALLOCATORS = {
    "AtomicMalloc": 1,
    "AtomicWrapMalloc": 2,
    "CMalloc": 3,
    "CFMalloc": 4,
    "CMMalloc": 5,
    "CFMMalloc": 6,
    "BitmapAlloc": 7,
    "BlockAlloc": 8,
    "TierAlloc": 9,
    "FreeHeap": 10,
}

#: What the default (allocator None, CLHEAP_AUTO_ALLOCATOR) becomes: DEFAULT_ALLOCATOR,
#: FALLBACK_ALLOCATOR on a device that ends loops early, TYPED_ALLOCATOR for a typed heap.
DEFAULT_ALLOCATOR = "TierAlloc"
FALLBACK_ALLOCATOR = "BlockAlloc"
TYPED_ALLOCATOR = "BlockAlloc"

#: The device's error counters (clheap_heap_errors' fields, in order): (field, header
#: word, status name clheap_heap_read_errors answers, what it counts).
DEVICE_ERRORS = (
    ("out_of_memory", 16, "CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY",
     "malloc returned NULL: nothing fitted"),
    ("bad_size", 17, "CLHEAP_ERROR_DEVICE_BAD_SIZE",
     "malloc of 0 bytes or more than the pool, a calloc whose product overflows, an alignment aligned_alloc refuses, realloc on a bump allocator (one counter: the kernel knows which it asked)"),
    ("free_outside", 18, "CLHEAP_ERROR_DEVICE_BAD_FREE",
     "free of a pointer outside the pool"),
    ("free_unaligned", 19, "CLHEAP_ERROR_DEVICE_BAD_FREE",
     "free of a pointer off a 16-byte unit"),
    ("free_not_chunk", 20, "CLHEAP_ERROR_DEVICE_BAD_FREE",
     "free of a pointer that starts no allocation"),
    ("double_free", 21, "CLHEAP_ERROR_DEVICE_BAD_FREE",
     "free of an allocation already free"),
    ("contended", 22, "CLHEAP_ERROR_DEVICE_CONTENDED",
     "malloc gave up after its bounded retries"),
    ("unformatted", 23, "CLHEAP_ERROR_HEAP_CORRUPT",
     "malloc or free on a buffer the host never formatted as a heap (its first word is not the magic)"),
)
