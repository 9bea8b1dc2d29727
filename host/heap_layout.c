#include "heap_layout.h"

#include <stdlib.h>
#include <string.h>

#include "../cl/clheap_layout.h"

_Static_assert(CLHEAP_ATOMIC_MALLOC == CLHEAP_KIND_ATOMIC, "host and device kinds agree");
_Static_assert(CLHEAP_ATOMIC_WRAP_MALLOC == CLHEAP_KIND_ATOMIC_WRAP, "host and device kinds agree");
_Static_assert(CLHEAP_CMALLOC == CLHEAP_KIND_CMALLOC, "host and device kinds agree");
_Static_assert(CLHEAP_CFMALLOC == CLHEAP_KIND_CFMALLOC, "host and device kinds agree");
_Static_assert(CLHEAP_CMMALLOC == CLHEAP_KIND_CMMALLOC, "host and device kinds agree");
_Static_assert(CLHEAP_CFMMALLOC == CLHEAP_KIND_CFMMALLOC, "host and device kinds agree");
_Static_assert(CLHEAP_UNIT_BYTES == CLHEAP_UNIT, "host and device units agree");
_Static_assert((int)CLHEAP_PRESPLIT_BINARY_HEAP == CLHEAP_PRESPLIT_BINARY, "presplit ids agree");
_Static_assert((int)CLHEAP_PRESPLIT_UNIFORM == CLHEAP_PRESPLIT_UNIFORM, "presplit ids agree");

enum { MAX_LEVELS = 24, MAX_OFFSETS = 4096 };

static const char *const allocator_names[] = {
    NULL, "AtomicMalloc", "AtomicWrapMalloc", "CMalloc", "CFMalloc", "CMMalloc", "CFMMalloc",
};

const char *clheap_allocator_name(clheap_allocator allocator)
{
    if ((int)allocator <= 0 || (size_t)allocator >= sizeof allocator_names / sizeof *allocator_names)
        return NULL;
    return allocator_names[allocator];
}

clheap_heap_config clheap_heap_config_default(void)
{
    clheap_heap_config config;
    memset(&config, 0, sizeof config);
    config.allocator = CLHEAP_CMALLOC;
    config.size_bytes = 64u << 20;
    config.presplit = CLHEAP_PRESPLIT_BINARY_HEAP;
    config.min_chunk_bytes = 256;
    config.uniform_chunk_bytes = 4096;
    return config;
}

int clheap_allocator_is_circular(clheap_allocator a)
{
    return a >= CLHEAP_CMALLOC && a <= CLHEAP_CFMMALLOC;
}
int clheap_allocator_is_fused(clheap_allocator a)
{
    return a == CLHEAP_CFMALLOC || a == CLHEAP_CFMMALLOC;
}
int clheap_allocator_is_multi(clheap_allocator a)
{
    return a == CLHEAP_CMMALLOC || a == CLHEAP_CFMMALLOC;
}

/* Binary pre-split of one sub-heap: the most levels whose smallest chunk still has
 * min_units, with R chosen so that the levels leave at least a minimal chunk over. */
static int plan_binary(uint32_t heap_units, uint32_t min_units, uint32_t *levels, uint32_t *root)
{
    for (uint32_t l = MAX_LEVELS; l >= 1; l--) {
        uint32_t r = (heap_units - 2u) / l;
        if ((r >> (l - 1u)) >= min_units) {
            *levels = l;
            *root = r;
            return 1;
        }
    }
    return 0;
}

clheap_status clheap_layout_plan(const clheap_heap_config *config, uint32_t compute_units,
                                 clheap_layout *layout)
{
    memset(layout, 0, sizeof *layout);
    clheap_allocator a = config->allocator;
    if (!clheap_allocator_name(a))
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    uint64_t units = config->size_bytes / CLHEAP_UNIT;
    uint64_t max_units = clheap_allocator_is_fused(a) ? (1ull << 31) : (1ull << 32);
    if (config->size_bytes < (1u << 20))
        return CLHEAP_ERROR_HEAP_TOO_SMALL;
    if (units > max_units)
        return CLHEAP_ERROR_SIZE_TOO_LARGE;
    if (units == max_units)
        units--; /* every unit, the sentinel included, must be addressable */

    uint32_t offsets = 1;
    if (clheap_allocator_is_multi(a))
        offsets = config->offset_count ? config->offset_count : compute_units;
    if (offsets == 0 || offsets > MAX_OFFSETS)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    uint32_t header_words = (CLHEAP_HDR_FIXED_WORDS + offsets + 3u) & ~3u;
    uint32_t *h = calloc(header_words, sizeof *h);
    if (!h)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    uint32_t pool_start = header_words / 4u;
    h[CLHEAP_HDR_MAGIC] = CLHEAP_MAGIC;
    h[CLHEAP_HDR_VERSION] = CLHEAP_LAYOUT_VERSION;
    h[CLHEAP_HDR_KIND] = (uint32_t)a;
    h[CLHEAP_HDR_POOL_START] = pool_start;
    h[CLHEAP_HDR_OFFSET_COUNT] = offsets;

    if (!clheap_allocator_is_circular(a)) {
        h[CLHEAP_HDR_POOL_END] = (uint32_t)units;
    } else {
        /* The last unit is reserved for the sentinel; sub-heaps share the rest. */
        uint32_t heap_units = (uint32_t)((units - 1u - pool_start) / offsets);
        uint32_t per_heap;
        h[CLHEAP_HDR_PRESPLIT] = (uint32_t)config->presplit;
        if (config->presplit == CLHEAP_PRESPLIT_UNIFORM) {
            uint32_t chunk = config->uniform_chunk_bytes / CLHEAP_UNIT;
            if (chunk < 2u || chunk > heap_units) {
                free(h);
                return chunk < 2u ? CLHEAP_ERROR_INVALID_ARGUMENT : CLHEAP_ERROR_HEAP_TOO_SMALL;
            }
            per_heap = heap_units / chunk;
            h[CLHEAP_HDR_PRESPLIT_ARG] = chunk;
        } else if (config->presplit == CLHEAP_PRESPLIT_BINARY_HEAP) {
            uint32_t min_units = config->min_chunk_bytes / CLHEAP_UNIT, levels, root;
            if (min_units < 2u)
                min_units = 2u;
            if (heap_units < min_units + 2u || !plan_binary(heap_units, min_units, &levels, &root)) {
                free(h);
                return CLHEAP_ERROR_HEAP_TOO_SMALL;
            }
            per_heap = 1u << levels; /* 2^L - 1 tree chunks and the remainder */
            h[CLHEAP_HDR_PRESPLIT_ARG] = root;
            h[CLHEAP_HDR_PRESPLIT_LEVELS] = levels;
        } else {
            free(h);
            return CLHEAP_ERROR_INVALID_ARGUMENT;
        }
        uint64_t chunks = (uint64_t)per_heap * offsets;
        if (chunks >= UINT32_MAX) {
            free(h);
            return CLHEAP_ERROR_INVALID_ARGUMENT;
        }
        h[CLHEAP_HDR_HEAP_UNITS] = heap_units;
        h[CLHEAP_HDR_CHUNKS_PER_HEAP] = per_heap;
        h[CLHEAP_HDR_POOL_END] = pool_start + offsets * heap_units;
        for (uint32_t k = 0; k < offsets; k++)
            h[CLHEAP_HDR_OFFSETS + k] = pool_start + k * heap_units;
        layout->chunk_count = (uint32_t)chunks;
    }
    layout->header = h;
    layout->header_words = header_words;
    layout->total_units = units;
    return CLHEAP_SUCCESS;
}

void clheap_layout_free(clheap_layout *layout)
{
    free(layout->header);
    layout->header = NULL;
}
