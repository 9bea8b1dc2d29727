# clheap's vocabulary: the one list of the names the C API and the OpenCL C sources share.
# cmake/generate_vocabulary.cmake writes include/clheap/vocabulary.h (C) and
# cl/clheap_vocabulary.h (OpenCL C and the C11 core, whose `#if`s need macros) from it;
# both are committed, so a checkout's cl/ builds as it is. After editing this list run
#   cmake --build <build dir> --target vocabulary
# (the test vocabulary_generated fails while they are stale).

# Allocators, in value order: value|C enum|device kind macro|name|what it is (no ';')
set(CLHEAP_ALLOCATORS
  "1|CLHEAP_ATOMIC_MALLOC|CLHEAP_KIND_ATOMIC|AtomicMalloc|bump pointer, cannot free (Vinkler & Havran Alg. 1)"
  "2|CLHEAP_ATOMIC_WRAP_MALLOC|CLHEAP_KIND_ATOMIC_WRAP|AtomicWrapMalloc|wrapping bump pointer, may overwrite live data (Alg. 2)"
  "3|CLHEAP_CMALLOC|CLHEAP_KIND_CMALLOC|CMalloc|circular list, flag and next words (Alg. 3)"
  "4|CLHEAP_CFMALLOC|CLHEAP_KIND_CFMALLOC|CFMalloc|... the flag fused into the next word"
  "5|CLHEAP_CMMALLOC|CLHEAP_KIND_CMMALLOC|CMMalloc|... one roving offset per compute unit"
  "6|CLHEAP_CFMMALLOC|CLHEAP_KIND_CFMMALLOC|CFMMalloc|... fused and multi"
  "7|CLHEAP_BITMAP_ALLOC|CLHEAP_KIND_BITMAP|BitmapAlloc|one slot size, a hierarchical bitmap of free slots"
  "8|CLHEAP_BLOCK_ALLOC|CLHEAP_KIND_BLOCKS|BlockAlloc|DynaSOAr blocks of up to 64 slots, one size class each"
  "9|CLHEAP_TIER_ALLOC|CLHEAP_KIND_TIER|TierAlloc|the default: blocks for small sizes, page runs up to the whole pool (cl/clheap_tier.h)"
  "10|CLHEAP_FREE_HEAP|CLHEAP_KIND_FREEHEAP|FreeHeap|paper 003: boundary tags, a max-heap of free blocks, strided requests, serial (cl/clheap_freeheap.h)")
# CLHEAP_AUTO_ALLOCATOR (0, what clheap_heap_config_default() chooses) resolves, at heap
# creation, to the default (on every device, with or without 64-bit atomics), or to the
# fallback on a device that ends loops early (clheap_device_loop_limit: Mesa's llvmpipe),
# or to the typed one (below) for a typed heap. llvmpipe inlines every call and takes
# minutes to compile a kernel that calls TierAlloc's malloc; BlockAlloc (its small tier,
# size classes up to 16 KiB) builds in seconds there and its calls use the fewest of the
# loop iterations a work-item has (docs/design.md).
set(CLHEAP_DEFAULT_ALLOCATOR CLHEAP_TIER_ALLOC)
set(CLHEAP_FALLBACK_ALLOCATOR CLHEAP_BLOCK_ALLOC)
# A typed heap (clheap_heap_config.typed_classes = 1: a class is a type for parallel_do)
# resolves to this one on every device: BlockAlloc is DynaSOAr's own design, and its Wa-Tor
# steps (parallel_do) took a quarter of typed TierAlloc's time (docs/performance.md);
# its classes end at 16 KiB by default, so larger requests there are refused.
set(CLHEAP_TYPED_ALLOCATOR CLHEAP_BLOCK_ALLOC)

# Error counters device code keeps in the heap header, in word order:
# header word|device macro|field of clheap_heap_errors and key of the stats JSON|status
# clheap_heap_read_errors answers|what it counts (no ';')
set(CLHEAP_DEVICE_ERRORS
  "16|CLHEAP_HDR_ERR_OUT_OF_MEMORY|out_of_memory|CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY|malloc returned NULL: nothing fitted"
  "17|CLHEAP_HDR_ERR_BAD_SIZE|bad_size|CLHEAP_ERROR_DEVICE_BAD_SIZE|malloc of 0 bytes or more than the pool, a calloc whose product overflows, an alignment aligned_alloc refuses, realloc on a bump allocator (one counter: the kernel knows which it asked)"
  "18|CLHEAP_HDR_ERR_FREE_OUTSIDE|free_outside|CLHEAP_ERROR_DEVICE_BAD_FREE|free of a pointer outside the pool"
  "19|CLHEAP_HDR_ERR_FREE_UNALIGNED|free_unaligned|CLHEAP_ERROR_DEVICE_BAD_FREE|free of a pointer off a 16-byte unit"
  "20|CLHEAP_HDR_ERR_FREE_NOT_CHUNK|free_not_chunk|CLHEAP_ERROR_DEVICE_BAD_FREE|free of a pointer that starts no allocation"
  "21|CLHEAP_HDR_ERR_DOUBLE_FREE|double_free|CLHEAP_ERROR_DEVICE_BAD_FREE|free of an allocation already free"
  "22|CLHEAP_HDR_ERR_CONTENDED|contended|CLHEAP_ERROR_DEVICE_CONTENDED|malloc gave up after its bounded retries"
  "23|CLHEAP_HDR_ERR_UNFORMATTED|unformatted|CLHEAP_ERROR_HEAP_CORRUPT|malloc or free on a buffer the host never formatted as a heap (its first word is not the magic)")
