/* Walks a device heap image (read back, or the host-compiled core's memory): verifies
 * its invariants and computes exact statistics. */
#ifndef CLHEAP_HOST_HEAP_WALK_H
#define CLHEAP_HOST_HEAP_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/heap.h"

/* stats may be NULL; what (what_len bytes) gets the first violation. */
clheap_status clheap_heap_walk(const uint32_t *words, uint64_t unit_count, clheap_heap_stats *stats,
                               char *what, size_t what_len);

/* Bitmap kinds: makes every upper bitmap level and every active mark agree exactly with
 * what lies below; returns how many bits it changed. */
uint64_t clheap_heap_repair_image(uint32_t *words, uint64_t unit_count);

/* The set bits of bitmap `desc`, found by descending only into containers whose bit above
 * is set (DynaSOAr's indices()). Writes at most cap of them; returns how many there are.
 * *containers_read (may be NULL) counts the level-0 containers it had to look at. */
uint64_t clheap_bitmap_indices(const uint32_t *words, uint32_t desc, uint32_t *out, uint64_t cap,
                               uint64_t *containers_read);

/* The header's error counters. */
void clheap_heap_errors_from_header(const uint32_t *words, clheap_heap_errors *errors);

#endif
