/** \file
 * clheap status codes: one vocabulary for host calls and device-heap error counters.
 *
 * CLHEAP_SUCCESS is 0. OpenCL errors (negative) are passed through unchanged, so a
 * caller can compare a clheap_status with CL_OUT_OF_RESOURCES directly. clheap's own
 * codes live in a positive range so they can never collide with OpenCL's. */
#ifndef CLHEAP_STATUS_H
#define CLHEAP_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef int clheap_status;

/** X(name, value, explanation) */
#define CLHEAP_STATUS_LIST(X)                                                                    \
    X(CLHEAP_SUCCESS, 0, "success")                                                              \
    X(CLHEAP_ERROR_INVALID_ARGUMENT, 1001, "an argument is NULL or out of its documented range") \
    X(CLHEAP_ERROR_ZERO_SIZE, 1002, "a size of 0 bytes was requested")                           \
    X(CLHEAP_ERROR_SIZE_TOO_LARGE, 1003,                                                         \
      "the requested size exceeds the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE or the heap")        \
    X(CLHEAP_ERROR_NULL_TAG, 1004, "an allocation tag is NULL")                                  \
    X(CLHEAP_ERROR_FOREIGN_BUFFER, 1005,                                                         \
      "the buffer or pointer was not handed out by this cache or heap")                          \
    X(CLHEAP_ERROR_DOUBLE_FREE, 1006, "the buffer or pointer was already freed")                 \
    X(CLHEAP_ERROR_OUT_OF_DEVICE_MEMORY, 1007,                                                   \
      "the device is out of memory even after every cached buffer was released")                 \
    X(CLHEAP_ERROR_LIMIT_REACHED, 1008,                                                          \
      "the configured limit on live plus cached bytes would be exceeded")                        \
    X(CLHEAP_ERROR_OUT_OF_HOST_MEMORY, 1009, "a host-side allocation for bookkeeping failed")    \
    X(CLHEAP_ERROR_INVALID_HANDLE, 1010,                                                         \
      "the cache or heap handle was destroyed or never created")                                 \
    X(CLHEAP_ERROR_BLOCKS_STILL_LIVE, 1011,                                                      \
      "destroy released every buffer, but some were still allocated by the user")                \
    X(CLHEAP_ERROR_NO_DEVICE, 1012,                                                              \
      "no OpenCL platform/device matches CLHEAP_PLATFORM / CLHEAP_DEVICE")                       \
    X(CLHEAP_ERROR_HEAP_TOO_SMALL, 1013, "the device heap size is below the allocator's minimum") \
    X(CLHEAP_ERROR_BUILD_FAILED, 1014, "the OpenCL program failed to build; see the build log")  \
    X(CLHEAP_ERROR_HEAP_CORRUPT, 1015, "a heap invariant does not hold (see the check report)")  \
    X(CLHEAP_ERROR_DEVICE_BAD_FREE, 1016,                                                        \
      "device code freed a pointer outside the heap, unaligned, or already free")                \
    X(CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY, 1017,                                                   \
      "device code saw malloc return NULL because the heap was full")                            \
    X(CLHEAP_ERROR_UNSUPPORTED, 1018,                                                            \
      "the device or allocator lacks what this call needs (CFMalloc and CFMMalloc need 64-bit "   \
      "atomics; FreeHeap needs loops the device does not end early; SPIR-V needs an IL; bump "    \
      "heaps cannot grow)")                                                                      \
    X(CLHEAP_ERROR_BUFFER_TOO_SMALL, 1019, "the output buffer is too small; *needed says how much") \
    X(CLHEAP_ERROR_ZERO_COUNT, 1020, "a batch of 0 requests was enqueued")                           \
    X(CLHEAP_ERROR_HANDLE_OUT_OF_RANGE, 1021, "a handle index lies past the end of the handle table") \
    X(CLHEAP_ERROR_GROW_NOT_LARGER, 1022, "a heap can only grow: the new size is not larger than the current one") \
    X(CLHEAP_ERROR_DEVICE_BAD_SIZE, 1023,                                                        \
      "device code asked malloc for 0 bytes or for more than the heap's pool")                   \
    X(CLHEAP_ERROR_DEVICE_CONTENDED, 1024,                                                       \
      "device code saw malloc return NULL after its bounded retries, memory possibly free")

#define CLHEAP_STATUS_ENUM_ENTRY(name, value, text) name = value,
enum clheap_status_code { CLHEAP_STATUS_LIST(CLHEAP_STATUS_ENUM_ENTRY) };
#undef CLHEAP_STATUS_ENUM_ENTRY

/** A static, never-NULL English explanation: clheap's own codes, the OpenCL error
 * codes by name, and "unknown status" for anything else. */
const char *clheap_status_string(clheap_status status);

#ifdef __cplusplus
}
#endif
#endif
