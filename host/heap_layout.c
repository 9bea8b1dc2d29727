#include "heap_layout.h"

#include <stdlib.h>
#include <string.h>

#include "../cl/clheap_config.h"
#include "../cl/clheap_layout.h"

_Static_assert(CLHEAP_UNIT_BYTES == CLHEAP_UNIT, "host and device units agree");
_Static_assert((int)CLHEAP_PRESPLIT_BINARY_HEAP == CLHEAP_PRESPLIT_BINARY, "presplit ids agree");
_Static_assert((int)CLHEAP_PRESPLIT_UNIFORM == CLHEAP_PRESPLIT_UNIFORM, "presplit ids agree");

enum { MAX_LEVELS = 24, MAX_OFFSETS = 4096 };

#define CLHEAP_ALLOCATOR_NAME(allocator, name) [allocator] = name,
static const char *const allocator_names[] = {CLHEAP_ALLOCATOR_LIST(CLHEAP_ALLOCATOR_NAME)};
#undef CLHEAP_ALLOCATOR_NAME

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
    config.allocator = CLHEAP_AUTO_ALLOCATOR;
    config.size_bytes = 64u << 20;
    config.presplit = CLHEAP_PRESPLIT_BINARY_HEAP;
    config.min_chunk_bytes = 256;
    config.uniform_chunk_bytes = 4096;
    config.slot_bytes = 16;
    config.frame_bytes = 1024;
    return config;
}

uint64_t clheap_freeheap_array_units(uint64_t pool_units, uint32_t *capacity)
{
    uint64_t entries = pool_units / 6u + 2u;
    *capacity = (uint32_t)entries;
    return ((entries + 1u) * 4u + CLHEAP_UNIT - 1u) / CLHEAP_UNIT; /* word 0 unused */
}

int clheap_allocator_is_bump(clheap_allocator a)
{
    return a == CLHEAP_ATOMIC_MALLOC || a == CLHEAP_ATOMIC_WRAP_MALLOC;
}
int clheap_allocator_is_circular(clheap_allocator a)
{
    return a >= CLHEAP_CMALLOC && a <= CLHEAP_CFMMALLOC;
}
int clheap_allocator_is_fused(clheap_allocator a)
{
    return a == CLHEAP_CFMALLOC || a == CLHEAP_CFMMALLOC;
}
int clheap_allocator_is_bitmap(clheap_allocator a)
{
    return a == CLHEAP_BITMAP_ALLOC || a == CLHEAP_BLOCK_ALLOC || a == CLHEAP_TIER_ALLOC;
}
int clheap_allocator_has_blocks(clheap_allocator a)
{
    return a == CLHEAP_BLOCK_ALLOC || a == CLHEAP_TIER_ALLOC;
}
int clheap_allocator_is_multi(clheap_allocator a)
{
    return a == CLHEAP_CMMALLOC || a == CLHEAP_CFMMALLOC;
}
int clheap_allocator_needs_atomics64(clheap_allocator a)
{
    return clheap_allocator_is_fused(a);
}
clheap_allocator clheap_allocator_for_device(clheap_allocator a, int loops_end_early, int typed)
{
    if (a != CLHEAP_AUTO_ALLOCATOR)
        return a;
    return typed ? CLHEAP_TYPED_ALLOCATOR : loops_end_early ? CLHEAP_FALLBACK_ALLOCATOR : CLHEAP_DEFAULT_ALLOCATOR;
}

/* The value of the last -D<name>=N (or "-D <name>=N") in options, or `otherwise`. */
static unsigned defined_value(const char *options, const char *name, unsigned otherwise)
{
    size_t len = strlen(name);
    for (const char *at = options ? strstr(options, name) : NULL; at; at = strstr(at + len, name)) {
        const char *before = at;
        while (before > options && (before[-1] == ' ' || before[-1] == '\t'))
            before--;
        if (before - options >= 2 && before[-2] == '-' && before[-1] == 'D' && at[len] == '=')
            otherwise = (unsigned)strtoul(at + len + 1, NULL, 10);
    }
    return otherwise;
}

unsigned clheap_register_cap(clheap_allocator a, int warp_coalescing, const char *options)
{
    if (a != CLHEAP_TIER_ALLOC || !warp_coalescing || (options && strstr(options, "-cl-nv-maxrregcount")))
        return 0u;
    return defined_value(options, "CLHEAP_NV_MAX_REGISTERS", CLHEAP_NV_MAX_REGISTERS);
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

static const uint32_t default_classes[] = {16,  32,  48,  64,   96,   128,  192,  256,  384,
                                           512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384};

/* Containers of a hierarchical bitmap of `bits` bits, all levels. */
static uint64_t bitmap_containers(uint64_t bits, uint32_t *levels)
{
    uint64_t total = 0;
    uint32_t l = 0;
    do {
        bits = (bits + 63) / 64;
        total += bits;
        l++;
    } while (bits > 1);
    if (levels)
        *levels = l;
    return total;
}

/* Writes descriptor `index` for a bitmap of `bits` bits at `*unit`; advances *unit.
 * flat: level 0 only (a bitmap that is read, never searched: cl/clheap_blocks.h's
 * allocated-block bitmaps). */
static int describe_bitmap(uint32_t *h, uint32_t index, uint64_t bits, int flat, uint64_t *unit)
{
    uint32_t levels;
    uint64_t containers = bitmap_containers(bits, &levels);
    if (flat) {
        containers = (bits + 63) / 64;
        levels = 1;
    }
    if (levels > CLHEAP_BM_MAX_LEVELS || bits == 0)
        return 0;
    uint32_t *d = h + CLHEAP_BM_DESC(index);
    d[CLHEAP_BM_UNIT] = (uint32_t)*unit;
    d[CLHEAP_BM_BITS] = (uint32_t)bits;
    d[CLHEAP_BM_LEVELS] = levels;
    uint64_t start = 0, n = bits;
    for (uint32_t l = 0; l < levels; l++) {
        d[CLHEAP_BM_LEVEL0 + l] = (uint32_t)start;
        n = (n + 63) / 64;
        start += n;
    }
    *unit += (containers * 8 + CLHEAP_UNIT - 1) / CLHEAP_UNIT;
    return 1;
}

/* TierAlloc's segments are 64 frames, one container of the frame bitmap
 * (cl/clheap_pages.h): S = 6, or 0 if the pool has under one segment. */
static uint32_t tier_segment_order(uint64_t frames)
{
    return frames < 64 ? 0 : 6;
}

static void plan_runs(uint32_t *h, uint64_t frames, uint32_t atomic_bits)
{
    int large = frames >= CLHEAP_TIER_LARGE_POOL_FRAMES;
    uint64_t budget = frames / (large ? CLHEAP_TIER_LARGE_RUN_SHARE : CLHEAP_TIER_RUN_SHARE);
    uint64_t slots = h[CLHEAP_HDR_HINT_SLOTS];
    uint32_t run_frames = large ? CLHEAP_TIER_LARGE_RUN_FRAMES : CLHEAP_TIER_RUN_FRAMES;
    for (uint32_t c = 0; c < h[CLHEAP_HDR_CLASS_COUNT]; c++) {
        uint32_t per_block = h[CLHEAP_HDR_CLASS_FRAMES + c];
        uint32_t blocks = run_frames / per_block ? run_frames / per_block : 1;
        while (blocks > 1 && slots * blocks * per_block > budget)
            blocks /= 2;
        uint64_t hints = budget / ((uint64_t)blocks * per_block);
        h[CLHEAP_HDR_CLASS_RUN + c] = blocks;
        /* Split words have no 64-bit add for a hint (W3, cl/clheap_port.h): blocks only. */
        h[CLHEAP_HDR_CLASS_HINTS + c] = atomic_bits == 64 ? (uint32_t)(hints < slots ? hints : slots) : 0u;
    }
}

/* Units of the bitmaps for n items: `bitmaps` of n bits, and for TierAlloc (segment
 * order S > 0) one of n >> S bits, its whole free segments. */
static uint64_t bitmap_units(uint64_t n, uint32_t bitmaps, uint32_t segment_order)
{
    uint64_t units = bitmaps * ((bitmap_containers(n, NULL) * 8 + CLHEAP_UNIT - 1) / CLHEAP_UNIT);
    if (segment_order) /* TierAlloc's whole segments, then its unsettled blocks (one level) */
        units += (bitmap_containers(n >> segment_order, NULL) * 8 + CLHEAP_UNIT - 1) / CLHEAP_UNIT +
                 ((n + 63) / 64 * 8 + CLHEAP_UNIT - 1) / CLHEAP_UNIT;
    return units;
}

/* BitmapAlloc, BlockAlloc and TierAlloc: header | pool | bitmaps | (block headers). */
static clheap_status plan_bitmap_kinds(const clheap_heap_config *config, uint64_t units, uint32_t *h,
                                       uint32_t header_units, uint32_t atomic_bits, clheap_layout *layout)
{
    int blocks = clheap_allocator_has_blocks(config->allocator);
    int tier = config->allocator == CLHEAP_TIER_ALLOC;
    uint32_t bitmaps = 1, item_units, extra_units_per_item = 0;
    /* A block's slots lie in one atomic word: 64, or the low half of a split word (W2). */
    uint32_t max_slots = atomic_bits == 64 ? 64u : 32u;
    h[CLHEAP_HDR_ATOMIC_BITS] = atomic_bits;
    if (blocks) {
        uint32_t frame = config->frame_bytes ? config->frame_bytes : 1024;
        const uint32_t *classes = config->class_count ? config->class_bytes : default_classes;
        uint32_t count = config->class_count ? config->class_count
                                             : (uint32_t)(sizeof default_classes / sizeof *default_classes);
        if (frame % CLHEAP_UNIT || frame == 0 || count == 0 || count > CLHEAP_MAX_CLASSES)
            return CLHEAP_ERROR_INVALID_ARGUMENT;
        for (uint32_t c = 0; c < count; c++) {
            uint32_t bytes = classes[c];
            /* At most 32 frames' worth, so that a block has two slots or more: a free that
             * raced its block's reclaim relies on that (cl/clheap_blocks.h, I3). */
            if (bytes == 0 || bytes % CLHEAP_UNIT || (c && bytes <= classes[c - 1]) ||
                (uint64_t)bytes > 32ull * frame)
                return CLHEAP_ERROR_INVALID_ARGUMENT;
            uint64_t frames = ((uint64_t)max_slots * bytes + frame - 1) / frame;
            if (frames > 64)
                frames = 64;
            /* TierAlloc: a power of two frames (fewer slots where 64 would need 3 * 2^k),
             * so that blocks tile the page tier's 64-frame segments. Why: blocks of 3, 6,
             * 12 or 24 frames left 4 - 16 frames of every segment that no block fits (4 MiB
             * pool, 384 B objects one by one: NULL at 84% of the pool; now 42 slots a
             * block, 98.4% of its bytes). */
            while (tier && (frames & (frames - 1)))
                frames &= frames - 1;
            uint64_t capacity = frames * frame / bytes;
            h[CLHEAP_HDR_CLASS_BYTES + c] = bytes;
            h[CLHEAP_HDR_CLASS_FRAMES + c] = (uint32_t)frames;
            h[CLHEAP_HDR_CLASS_CAPACITY + c] = (uint32_t)(capacity > max_slots ? max_slots : capacity);
        }
        h[CLHEAP_HDR_CLASS_COUNT] = count;
        h[CLHEAP_HDR_FRAME_UNITS] = frame / CLHEAP_UNIT;
        bitmaps = 1 + 2 * count;
        item_units = frame / CLHEAP_UNIT;
        extra_units_per_item = CLHEAP_BLOCK_HEADER_UNITS;
    } else {
        uint32_t slot = config->slot_bytes ? config->slot_bytes : 16;
        if (slot % CLHEAP_UNIT)
            return CLHEAP_ERROR_INVALID_ARGUMENT;
        h[CLHEAP_HDR_SLOT_UNITS] = slot / CLHEAP_UNIT;
        item_units = slot / CLHEAP_UNIT;
    }
    /* The pool starts on 4 KiB, so that where the buffer itself lies on it, frames and
     * segments (and slots of sizes that divide them) lie on their sizes up to it:
     * clheap_aligned_alloc serves such alignments from the blocks' classes
     * (cl/clheap_resize.h). What this leaves unused is under 4 KiB. */
    header_units = (header_units + 255u) / 256u * 256u;
    /* The most items (slots or frames) whose bitmaps, headers and data fit. */
    uint64_t avail = units - header_units;
    uint64_t n = avail * 128 / ((uint64_t)(item_units + extra_units_per_item) * 128 + bitmaps + (tier ? 2 : 0));
    uint32_t segment_order = 0;
    for (;; n--) {
        if (n == 0 || n >= UINT32_MAX - 64) /* bit positions are 32-bit */
            return n == 0 ? CLHEAP_ERROR_HEAP_TOO_SMALL : CLHEAP_ERROR_SIZE_TOO_LARGE;
        segment_order = tier ? tier_segment_order(n) : 0;
        if (tier && segment_order == 0)
            return CLHEAP_ERROR_HEAP_TOO_SMALL;
        if (header_units + bitmap_units(n, bitmaps, segment_order) + n * (item_units + extra_units_per_item) <= units)
            break;
    }
    /* TierAlloc: whole segments only, so that a request for the whole pool is a run of
     * segments (what this leaves unused is under one segment, 63 frames). */
    if (tier) {
        n = (n >> segment_order) << segment_order;
        plan_runs(h, n, atomic_bits);
    }
    /* The pool first, then its bitmaps and block headers: growth extends the pool in
     * place and moves only them (clheap_layout_plan_growth). */
    uint64_t unit = header_units + n * item_units;
    h[CLHEAP_HDR_POOL_START] = header_units;
    h[CLHEAP_HDR_POOL_END] = (uint32_t)unit;
    h[CLHEAP_HDR_BITMAP_FIRST] = (uint32_t)unit;
    for (uint32_t b = 0; b < bitmaps; b++)
        if (!describe_bitmap(h, b, n, blocks && b % 2u == 1u, &unit)) /* 1 + 2c: class c's allocated blocks */
            return CLHEAP_ERROR_SIZE_TOO_LARGE;
    if (segment_order && !describe_bitmap(h, bitmaps, n >> segment_order, 0, &unit)) /* TierAlloc's segments */
        return CLHEAP_ERROR_SIZE_TOO_LARGE;
    if (segment_order && !describe_bitmap(h, bitmaps + 1, n, 1, &unit)) /* TierAlloc's unsettled blocks */
        return CLHEAP_ERROR_SIZE_TOO_LARGE;
    h[CLHEAP_HDR_SEGMENT_ORDER] = segment_order;
    h[CLHEAP_HDR_BITMAP_UNITS] = (uint32_t)(unit - h[CLHEAP_HDR_BITMAP_FIRST]);
    uint64_t containers = bitmap_containers(n, NULL);
    layout->chunk_count = (uint32_t)(containers > n ? containers : n); /* init work-items */
    layout->bitmap_count = bitmaps + (segment_order ? CLHEAP_PAGE_BITMAPS : 0);
    if (blocks) {
        h[CLHEAP_HDR_BLOCK_HEADERS] = (uint32_t)unit;
        h[CLHEAP_HDR_FRAME_COUNT] = (uint32_t)n;
    }
    if (tier) /* large requests end to end from the top (cl/clheap_pages.h); at 0 the first ones fail */
        h[CLHEAP_HDR_PAGES_HIGH_FRONTIER] = (uint32_t)n;
    return CLHEAP_SUCCESS;
}

uint64_t clheap_layout_max_bytes(clheap_allocator a)
{
    return (clheap_allocator_is_fused(a) ? 1ull << 31 : 1ull << 32) * CLHEAP_UNIT;
}

/* A heap of *units units, the most create and growth accept: 32-bit unit offsets (fused
 * headers: 31-bit), every unit, the sentinel included, addressable, so the largest size
 * is one unit short of 2^32 (2^31). 0 if *units is over that size. */
static int addressable(clheap_allocator a, uint64_t *units)
{
    uint64_t max_units = clheap_layout_max_bytes(a) / CLHEAP_UNIT;
    if (*units > max_units)
        return 0;
    if (*units == max_units)
        (*units)--;
    return 1;
}

clheap_status clheap_layout_plan(const clheap_heap_config *config, uint32_t compute_units,
                                 clheap_layout *layout)
{
    return clheap_layout_plan_atomics(config, compute_units, 64, layout);
}

clheap_status clheap_layout_plan_atomics(const clheap_heap_config *config, uint32_t compute_units,
                                         uint32_t atomic_bits, clheap_layout *layout)
{
    memset(layout, 0, sizeof *layout);
    if (atomic_bits != 32 && atomic_bits != 64)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    clheap_heap_config concrete = *config;
    /* No device here: a plan made for a device that ends loops early names its allocator
     * (clheap_heap_create makes it concrete first). */
    concrete.allocator = clheap_allocator_for_device(config->allocator, 0, config->typed_classes != 0);
    config = &concrete;
    clheap_allocator a = config->allocator;
    if (!clheap_allocator_name(a))
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    uint64_t units = config->size_bytes / CLHEAP_UNIT;
    if (config->size_bytes < (1u << 20))
        return CLHEAP_ERROR_HEAP_TOO_SMALL;
    if (!addressable(a, &units))
        return CLHEAP_ERROR_SIZE_TOO_LARGE;

    uint32_t offsets = 1;
    if (clheap_allocator_is_multi(a))
        offsets = config->offset_count ? config->offset_count : compute_units;
    if (offsets == 0 || offsets > MAX_OFFSETS)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    int bitmap_kind = clheap_allocator_is_bitmap(a);
    uint32_t hint_words = 0;
    if (a == CLHEAP_TIER_ALLOC) { /* block hints and their spares: per class, per work-group slot */
        if (config->class_count > CLHEAP_MAX_CLASSES)
            return CLHEAP_ERROR_INVALID_ARGUMENT;
        offsets = config->offset_count ? config->offset_count
                  : compute_units < CLHEAP_TIER_MAX_HINT_SLOTS ? compute_units : CLHEAP_TIER_MAX_HINT_SLOTS;
        if (offsets == 0 || offsets > MAX_OFFSETS)
            return CLHEAP_ERROR_INVALID_ARGUMENT;
        hint_words = CLHEAP_TIER_HINT_WORDS(config->class_count ? config->class_count
                                                                : (uint32_t)(sizeof default_classes / sizeof *default_classes),
                                            offsets);
    }
    uint32_t header_words = a == CLHEAP_TIER_ALLOC ? (CLHEAP_HDR_HINT_FIRST + hint_words + 3u) & ~3u
                            : bitmap_kind          ? (CLHEAP_HDR_BITMAP_WORDS + 3u) & ~3u
                                                   : (CLHEAP_HDR_FIXED_WORDS + offsets + 3u) & ~3u;
    uint32_t *h = calloc(header_words, sizeof *h);
    if (!h)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    uint32_t pool_start = header_words / 4u;
    h[CLHEAP_HDR_MAGIC] = CLHEAP_MAGIC;
    h[CLHEAP_HDR_VERSION] = CLHEAP_LAYOUT_VERSION;
    h[CLHEAP_HDR_KIND] = (uint32_t)a;
    h[CLHEAP_HDR_POOL_START] = pool_start;
    h[CLHEAP_HDR_OFFSET_COUNT] = a == CLHEAP_TIER_ALLOC ? 1 : offsets;
    if (a == CLHEAP_TIER_ALLOC) {
        h[CLHEAP_HDR_HINT_SLOTS] = offsets;
        h[CLHEAP_HDR_TIER_TYPED] = config->typed_classes != 0;
    }

    if (bitmap_kind) {
        clheap_status status = plan_bitmap_kinds(config, units, h, pool_start, atomic_bits, layout);
        if (status != CLHEAP_SUCCESS) {
            free(h);
            return status;
        }
    } else if (a == CLHEAP_FREE_HEAP) {
        /* The free-heap's entries, then the pool. */
        uint32_t capacity;
        uint64_t entry_units = clheap_freeheap_array_units(units - pool_start, &capacity);
        if (units < pool_start + entry_units + CLHEAP_FH_MIN_BLOCK) {
            free(h);
            return CLHEAP_ERROR_HEAP_TOO_SMALL;
        }
        h[CLHEAP_HDR_FH_ENTRIES] = pool_start;
        h[CLHEAP_HDR_FH_CAPACITY] = capacity;
        h[CLHEAP_HDR_POOL_START] = (uint32_t)(pool_start + entry_units);
        h[CLHEAP_HDR_POOL_END] = (uint32_t)units;
    } else if (!clheap_allocator_is_circular(a)) {
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

const uint32_t clheap_growth_ranges[CLHEAP_GROWTH_RANGES][2] = {
    {CLHEAP_HDR_POOL_START, CLHEAP_HDR_ERR_FIRST}, /* pool, frames, bitmap region, block headers */
    {CLHEAP_HDR_CLASS_BYTES, CLHEAP_HDR_BITMAP_WORDS}, /* classes, runs, hint counts, bitmap descriptors */
};

static clheap_status copy_layout(const clheap_layout *from, clheap_layout *to)
{
    *to = *from;
    to->header = malloc(from->header_words * sizeof *to->header);
    if (!to->header)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    memcpy(to->header, from->header, from->header_words * sizeof *to->header);
    return CLHEAP_SUCCESS;
}

/* The serial kinds: FreeHeap's pool ends where its free-heap's larger array starts, at
 * the buffer's end (cl/clheap_freeheap.h, clheap_freeheap_grow); the CircularMalloc
 * family's sentinel moves to the last unit and the new space is cut into chunks of the
 * largest pre-split size, its uniform chunk or the binary pre-split's root
 * (cl/clheap_circular.h, clheap_circular_grow). */
static clheap_status plan_serial_growth(clheap_allocator a, uint64_t units, clheap_growth *g)
{
    uint32_t *h = g->layout.header, end = h[CLHEAP_HDR_POOL_END];
    g->copy_units = g->layout.total_units;
    g->items = 1;
    g->arg_count = 3;
    if (clheap_allocator_is_circular(a)) {
        if (units - 1u < (uint64_t)end + 2u)
            return CLHEAP_ERROR_GROW_NOT_LARGER; /* no room for a chunk */
        uint32_t step = h[CLHEAP_HDR_PRESPLIT_ARG];
        g->args[0] = (uint32_t)(units - 1u);
        g->args[1] = step > 2u ? step : 2u;
        g->args[2] = 0;
        h[CLHEAP_HDR_POOL_END] = g->args[0];
        return CLHEAP_SUCCESS;
    }
    uint32_t capacity;
    uint64_t entry_units = clheap_freeheap_array_units(units - h[CLHEAP_HDR_POOL_START], &capacity);
    if (units - entry_units < (uint64_t)end + CLHEAP_FH_MIN_BLOCK)
        return CLHEAP_ERROR_GROW_NOT_LARGER; /* not even one more block */
    g->args[0] = g->args[1] = (uint32_t)(units - entry_units);
    g->args[2] = capacity;
    h[CLHEAP_HDR_POOL_END] = h[CLHEAP_HDR_FH_ENTRIES] = g->args[0];
    h[CLHEAP_HDR_FH_CAPACITY] = capacity;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_layout_plan_growth(const clheap_heap_config *config, const clheap_layout *old, uint64_t units,
                                        clheap_growth *g)
{
    memset(g, 0, sizeof *g);
    clheap_allocator a = config->allocator;
    const uint32_t *h = old->header;
    if (!addressable(a, &units))
        return CLHEAP_ERROR_SIZE_TOO_LARGE; /* the same limit as at create */
    if (units <= old->total_units)
        return CLHEAP_ERROR_GROW_NOT_LARGER;
    if (clheap_allocator_is_bump(a))
        return CLHEAP_ERROR_UNSUPPORTED;
    if (!clheap_allocator_is_bitmap(a)) {
        clheap_status status = copy_layout(old, &g->layout);
        if (status == CLHEAP_SUCCESS)
            status = plan_serial_growth(a, units, g);
        if (status == CLHEAP_SUCCESS)
            g->layout.total_units = units;
        else
            clheap_layout_free(&g->layout);
        return status;
    }
    /* Bitmap kinds: planned afresh for the new size with the same hint slots, so the
     * header and the pool start where they did; the pool extends in place over the old
     * bitmaps and block headers, which move after it (read from the old buffer). */
    clheap_heap_config planned = *config;
    planned.size_bytes = units * CLHEAP_UNIT;
    if (a == CLHEAP_TIER_ALLOC)
        planned.offset_count = h[CLHEAP_HDR_HINT_SLOTS];
    clheap_status status = clheap_layout_plan_atomics(&planned, 1, h[CLHEAP_HDR_ATOMIC_BITS], &g->layout);
    if (status != CLHEAP_SUCCESS)
        return status;
    const uint32_t *n = g->layout.header;
    if (n[CLHEAP_HDR_POOL_START] != h[CLHEAP_HDR_POOL_START] || g->layout.header_words != old->header_words) {
        clheap_layout_free(&g->layout);
        return CLHEAP_ERROR_INVALID_ARGUMENT; /* not the configuration the heap was made with */
    }
    if (n[CLHEAP_HDR_POOL_END] <= h[CLHEAP_HDR_POOL_END]) {
        clheap_layout_free(&g->layout);
        return CLHEAP_ERROR_GROW_NOT_LARGER; /* the bitmaps take what the pool would gain */
    }
    g->copy_units = h[CLHEAP_HDR_POOL_END];
    uint32_t hints = a == CLHEAP_TIER_ALLOC ? n[CLHEAP_HDR_CLASS_COUNT] * n[CLHEAP_HDR_HINT_SLOTS] : 0u;
    g->items = g->layout.chunk_count > hints ? g->layout.chunk_count : hints;
    g->arg_count = 1;
    g->args[0] = g->items;
    return CLHEAP_SUCCESS;
}
