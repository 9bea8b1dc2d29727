/* Invariants checked here (the device code keeps them true between kernels):
 *  header   magic, layout version and a known allocator kind; pool bounds inside the
 *           buffer; for the circular family, every roving offset in [pool start, sentinel].
 *  chunks   starting at the pool's first unit, next pointers lead forward, chunk by
 *           chunk, to the sentinel: the chunks tile [pool start, sentinel) in address
 *           order with no gap or overlap, and the sentinel's next is the first chunk,
 *           so the list is one cycle. Every header carries its own unit's tag and is
 *           FREE or USED (no claim or merge is left half done); a used chunk records a
 *           request of 1 byte up to its payload size; every chunk's prev names the chunk
 *           before it (the first chunk's is 0, the sentinel's the last chunk).
 *  bump     the counter may exceed the pool (failed requests add to it); the used
 *           part is the pool's prefix.
 *  bitmaps  (BitmapAlloc, BlockAlloc, TierAlloc) see cl/clheap_bitmap.h and check_bitmap;
 *           blocks see cl/clheap_blocks.h and walk_blocks; TierAlloc's page tier and large
 *           allocations see cl/clheap_pages.h (P1-P3) and cl/clheap_tier.h (T1-T3).
 * Roving offsets are hints: one may name a header merged away since, which malloc
 * detects by its tag, so only their range is checked. */
#include "heap_walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cl/clheap_layout.h"
#include "heap_layout.h"
#include "report.h"

void clheap_heap_errors_from_header(const uint32_t *w, clheap_heap_errors *e)
{
#define CLHEAP_ERROR_FROM_WORD(field, word, status) e->field = w[word];
    CLHEAP_DEVICE_ERROR_LIST(CLHEAP_ERROR_FROM_WORD)
#undef CLHEAP_ERROR_FROM_WORD
}

/* Reads a chunk header: returns 0 if it is not a valid header for unit u. */
static int read_header(const uint32_t *w, int fused, uint32_t u, int *used, uint32_t *next,
                       uint32_t *request)
{
    const uint32_t *c = w + (uint64_t)u * 4u;
    if (fused) {
        uint64_t word;
        memcpy(&word, c, sizeof word);
        if ((uint32_t)(word >> 32) != CLHEAP_TAG(u))
            return 0;
        *used = ((uint32_t)word & CLHEAP_FUSED_USED_BIT) != 0;
        *next = (uint32_t)word & CLHEAP_FUSED_NEXT_MASK;
    } else {
        uint32_t flag = c[CLHEAP_CHUNK_WORD_FLAG];
        if (flag != CLHEAP_FLAG_FREE(u) && flag != CLHEAP_FLAG_USED(u))
            return 0;
        *used = flag == CLHEAP_FLAG_USED(u);
        *next = c[CLHEAP_CHUNK_WORD_NEXT];
    }
    *request = c[CLHEAP_CHUNK_WORD_REQUEST];
    return 1;
}

static clheap_status walk_circular(const uint32_t *w, int fused, clheap_heap_stats *s, char *what,
                                   size_t len)
{
    uint32_t first = w[CLHEAP_HDR_POOL_START], sentinel = w[CLHEAP_HDR_POOL_END];
    for (uint32_t k = 0; k < w[CLHEAP_HDR_OFFSET_COUNT]; k++) {
        uint32_t rover = w[CLHEAP_HDR_OFFSETS + k];
        if (rover < first || rover > sentinel)
            return clheap_report_violation(what, len, "roving offset %u is unit %u, outside [%u, %u]", k, rover,
                             first, sentinel);
    }
    int used;
    uint32_t next, request;
    if (!read_header(w, fused, sentinel, &used, &next, &request) || !used || next != first)
        return clheap_report_violation(what, len, "sentinel at unit %u is not a used header pointing to %u",
                         sentinel, first);
    double internal_sum = 0;
    uint32_t before = 0;
    for (uint32_t u = first;; before = u, u = next) {
        uint32_t prev = w[(uint64_t)u * 4u + CLHEAP_CHUNK_WORD_PREV];
        if (prev != before)
            return clheap_report_violation(what, len, "chunk at unit %u names %u as the chunk before it, not %u", u,
                                           prev, before);
        if (u == sentinel)
            break;
        if (!read_header(w, fused, u, &used, &next, &request))
            return clheap_report_violation(what, len, "unit %u should hold a chunk header (tag or flag wrong)", u);
        if (next <= u || next > sentinel)
            return clheap_report_violation(what, len, "chunk at unit %u has next %u: not in (%u, %u]", u, next, u,
                             sentinel);
        uint64_t bytes = (uint64_t)(next - u) * CLHEAP_UNIT;
        if (used) {
            if (request == 0 || request > bytes - CLHEAP_UNIT)
                return clheap_report_violation(what, len, "used chunk at unit %u (%llu bytes) records request %u",
                                 u, (unsigned long long)bytes, request);
            s->used_bytes += bytes;
            s->used_chunks++;
            s->requested_bytes += request;
            internal_sum += (double)(bytes - request) / (double)bytes;
        } else {
            s->free_bytes += bytes;
            s->free_chunks++;
            if (bytes > s->largest_free_bytes)
                s->largest_free_bytes = bytes;
        }
    }
    s->internal_fragmentation = s->used_chunks ? internal_sum / (double)s->used_chunks : 0.0;
    s->external_fragmentation =
        s->free_bytes ? 1.0 - (double)s->largest_free_bytes / (double)s->free_bytes : 0.0;
    return CLHEAP_SUCCESS;
}

/* ---- FreeHeap ------------------------------------------------------------------------ */

/* F1-F7 of cl/clheap_freeheap.h: blocks tile the pool, tags agree, the free-heap holds
 * exactly the free blocks in max-heap order, and no two free blocks are adjacent. */
static clheap_status walk_freeheap(const uint32_t *w, uint64_t unit_count, clheap_heap_stats *s, char *what,
                                   size_t len)
{
    uint32_t first = w[CLHEAP_HDR_POOL_START], end = w[CLHEAP_HDR_POOL_END];
    uint32_t entries = w[CLHEAP_HDR_FH_ENTRIES], capacity = w[CLHEAP_HDR_FH_CAPACITY], count = w[CLHEAP_HDR_FH_COUNT];
    if (w[CLHEAP_HDR_FH_LOCK] != 0)
        return clheap_report_violation(what, len, "the free-heap's lock is held (%u) between kernels",
                                       w[CLHEAP_HDR_FH_LOCK]);
    uint64_t array_end = ((uint64_t)entries * 4u + capacity + 1u + 3u) / 4u; /* units; before the pool or after it */
    if (entries < CLHEAP_HDR_FIXED_WORDS / 4u || (entries < end && array_end > first) || array_end > unit_count ||
        count > capacity || end > unit_count)
        return clheap_report_violation(what, len, "free-heap array at unit %u (%u of %u entries) overlaps the pool "
                                       "[%u, %u)", entries, count, capacity, first, end);
    const uint32_t *e = w + (size_t)entries * 4u;
    uint64_t free_blocks = 0;
    int previous_free = 0;
    double internal_sum = 0;
    for (uint32_t b = first; b != end;) {
        const uint32_t *header = w + (size_t)b * 4u;
        uint32_t size = header[CLHEAP_FH_WORD_SIZE], tag = header[CLHEAP_FH_WORD_TAG];
        if (size == 0 || size > end - b - 2u)
            return clheap_report_violation(what, len, "block at unit %u has %u payload units: past the pool's end %u",
                                           b, size, end);
        const uint32_t *footer = w + ((size_t)b + size + 1u) * 4u;
        int is_free = tag == CLHEAP_FLAG_FREE(b);
        if ((!is_free && tag != CLHEAP_FLAG_USED(b)) || footer[CLHEAP_FH_WORD_SIZE] != size ||
            footer[CLHEAP_FH_WORD_POS] != tag)
            return clheap_report_violation(what, len, "block at unit %u: header (size %u, tag %#x) and footer "
                                           "(size %u, tag %#x) disagree", b, size, tag,
                                           footer[CLHEAP_FH_WORD_SIZE], footer[CLHEAP_FH_WORD_POS]);
        uint32_t pos = header[CLHEAP_FH_WORD_POS];
        uint64_t bytes = ((uint64_t)size + 2u) * CLHEAP_UNIT;
        if (is_free) {
            if (previous_free)
                return clheap_report_violation(what, len, "free blocks adjacent at unit %u (not merged)", b);
            if (pos == 0 || pos > count || e[pos] != b)
                return clheap_report_violation(what, len, "free block at unit %u names entry %u of %u, which names %u",
                                               b, pos, count, pos && pos <= count ? e[pos] : 0u);
            free_blocks++;
            s->free_bytes += bytes;
            s->free_chunks++;
            if (bytes > s->largest_free_bytes)
                s->largest_free_bytes = bytes;
        } else {
            uint32_t request = header[CLHEAP_FH_WORD_BYTES];
            if (pos != 0 || request == 0 || request > (uint64_t)size * CLHEAP_UNIT)
                return clheap_report_violation(what, len, "allocated block at unit %u (%u units) names entry %u, "
                                               "request %u", b, size, pos, request);
            s->used_bytes += bytes;
            s->used_chunks++;
            s->requested_bytes += request;
            internal_sum += (double)(bytes - request) / (double)bytes;
        }
        previous_free = is_free;
        b += size + 2u;
    }
    if (free_blocks != count)
        return clheap_report_violation(what, len, "%llu free blocks but %u free-heap entries",
                                       (unsigned long long)free_blocks, count);
    for (uint32_t p = 2; p <= count; p++)
        if (w[(size_t)e[p] * 4u + CLHEAP_FH_WORD_SIZE] > w[(size_t)e[p / 2u] * 4u + CLHEAP_FH_WORD_SIZE])
            return clheap_report_violation(what, len, "free-heap entry %u (unit %u) is larger than its parent %u",
                                           p, e[p], p / 2u);
    s->internal_fragmentation = s->used_chunks ? internal_sum / (double)s->used_chunks : 0.0;
    s->external_fragmentation = s->free_bytes ? 1.0 - (double)s->largest_free_bytes / (double)s->free_bytes : 0.0;
    return CLHEAP_SUCCESS;
}

/* ---- bitmap kinds ------------------------------------------------------------------ */

static const uint64_t *bm_level(const uint32_t *w, uint32_t desc, uint32_t level)
{
    return (const uint64_t *)(w + (uint64_t)w[desc + CLHEAP_BM_UNIT] * 4u) + w[desc + CLHEAP_BM_LEVEL0 + level];
}

static uint64_t bm_count_at(const uint32_t *w, uint32_t desc, uint32_t level)
{
    uint64_t n = w[desc + CLHEAP_BM_BITS];
    for (uint32_t l = 0; l < level; l++)
        n = (n + 63) / 64;
    return n;
}

static int bm_bit(const uint32_t *w, uint32_t desc, uint32_t level, uint64_t pos)
{
    return (int)((bm_level(w, desc, level)[pos / 64] >> (pos % 64)) & 1u);
}

/* Strict: no bit past the end; a non-empty container has its bit above. Counts the
 * allowed converse (a bit above an empty container) in *stale. */
static clheap_status check_bitmap(const uint32_t *w, uint32_t desc, const char *name, uint64_t *stale,
                                  char *what, size_t len)
{
    uint32_t levels = w[desc + CLHEAP_BM_LEVELS];
    for (uint32_t l = 0; l < levels; l++) {
        uint64_t bits = bm_count_at(w, desc, l), containers = (bits + 63) / 64;
        const uint64_t *c = bm_level(w, desc, l);
        if (bits % 64 && c[containers - 1] >> (bits % 64))
            return clheap_report_violation(what, len, "bitmap %s level %u has bits past its end", name, l);
        if (l + 1 == levels)
            break;
        for (uint64_t i = 0; i < containers; i++) {
            int above = bm_bit(w, desc, l + 1, i);
            if (c[i] && !above)
                return clheap_report_violation(what, len,
                                 "bitmap %s: level %u container %llu is not empty, its bit above is clear",
                                 name, l, (unsigned long long)i);
            *stale += !c[i] && above;
        }
    }
    return CLHEAP_SUCCESS;
}

static const uint32_t *block_header(const uint32_t *w, uint32_t frame)
{
    return w + ((uint64_t)w[CLHEAP_HDR_BLOCK_HEADERS] + (uint64_t)frame * CLHEAP_BLOCK_HEADER_UNITS) * 4u;
}

static uint64_t block_word64(const uint32_t *header, int word)
{
    uint64_t v;
    memcpy(&v, header + word, sizeof v);
    return v;
}

static uint64_t class_slots(const uint32_t *w, uint32_t c)
{
    uint32_t capacity = w[CLHEAP_HDR_CLASS_CAPACITY + c];
    return capacity == 64 ? ~0ull : ((1ull << capacity) - 1);
}

/* TierAlloc's whole free segments' bitmap (cl/clheap_pages.h), its descriptor and index. */
static uint32_t segments_desc(const uint32_t *w)
{
    return CLHEAP_BM_SEGMENTS(w[CLHEAP_HDR_CLASS_COUNT]);
}

static uint32_t segments_desc_index(const uint32_t *w)
{
    return (clheap_allocator)w[CLHEAP_HDR_KIND] == CLHEAP_TIER_ALLOC ? 1 + 2 * w[CLHEAP_HDR_CLASS_COUNT] : UINT32_MAX;
}

/* TierAlloc: marks the frames of every whole free segment and every free frame of a
 * broken one in free_map (P1: disjoint, a whole segment has no frame in F), counts the
 * broken segments that are all free (P2's exception) as stale hints. */
static clheap_status walk_pages(const uint32_t *w, uint8_t *free_map, clheap_heap_stats *s, char *what, size_t len)
{
    /* check_bitmap_layout has checked the segment order (6) and both bitmaps' bit counts. */
    uint32_t top = w[CLHEAP_HDR_SEGMENT_ORDER], frames = w[CLHEAP_HDR_FRAME_COUNT];
    if ((frames >> top) == 0 || frames % (1u << top))
        return clheap_report_violation(what, len, "segment order %u does not fit %u frames", top, frames);
    if (w[CLHEAP_HDR_PAGES_SPLITTING])
        return clheap_report_violation(what, len, "%u segment breaks still counted", w[CLHEAP_HDR_PAGES_SPLITTING]);
    uint32_t segments = frames >> top;
    const uint64_t *whole = bm_level(w, segments_desc(w), 0), *broken = bm_level(w, CLHEAP_BM_FREE, 0);
    uint64_t free_frames = 0;
    for (uint32_t g = 0; g < segments; g++) {
        uint64_t v = broken[g];
        if (whole[g / 64] >> (g % 64) & 1) {
            if (v)
                return clheap_report_violation(what, len, "segment %u is whole and free but has frames in the frame bitmap", g);
            memset(free_map + (uint64_t)g * 64, 1, 64);
            free_frames += 64;
            s->free_pieces++;
            s->free_segments++;
            continue;
        }
        s->stale_hints += v == ~0ull; /* completed, but its move to the segments lost a race */
        free_frames += (uint64_t)__builtin_popcountll(v);
        for (uint32_t b = 0; b < 64; b++)
            if (v >> b & 1) {
                free_map[(uint64_t)g * 64 + b] = 1;
                s->free_pieces += b == 0 || !(v >> (b - 1) & 1);
            }
    }
    uint32_t used = 0; /* P5: the stripes' sum, mod 2^32 */
    for (uint32_t i = 0; i < CLHEAP_PAGES_USED_STRIPES; i++)
        used += w[CLHEAP_HDR_PAGES_USED + i * CLHEAP_PAGES_USED_STRIDE];
    if (used != frames - free_frames)
        return clheap_report_violation(what, len, "the page tier counts %u frames handed out, its bitmaps %llu", used,
                                       (unsigned long long)(frames - free_frames));
    s->segment_frames = 1u << top;
    return CLHEAP_SUCCESS;
}

/* A block held for its run (cl/clheap_tier.h, T5): every slot taken, and its anchor, the
 * one its class word names, names a track of a hint of its class that follows its run. */
static clheap_status check_held(const uint32_t *w, uint32_t f, uint32_t c, uint64_t alloc, char *what, size_t len)
{
    const uint32_t *hd = block_header(w, f);
    uint64_t slots = w[CLHEAP_HDR_HINT_SLOTS], tracks = (uint64_t)w[CLHEAP_HDR_CLASS_COUNT] * slots * CLHEAP_TIER_TRACK_SLOTS;
    uint32_t anchor = hd[CLHEAP_BLOCK_WORD_ANCHOR], run = hd[CLHEAP_BLOCK_WORD_RUN];
    if (alloc != ~0ull)
        return clheap_report_violation(what, len, "held block at frame %u has free slots", f);
    if (anchor == 0 || anchor > tracks || (anchor - 1) / CLHEAP_TIER_TRACK_SLOTS / slots != c ||
        CLHEAP_TIER_HELD_ANCHOR(hd[CLHEAP_BLOCK_WORD_CLASS]) != anchor)
        return clheap_report_violation(what, len, "held block at frame %u (class %u) names track %u, held for %u", f, c,
                                       anchor, CLHEAP_TIER_HELD_ANCHOR(hd[CLHEAP_BLOCK_WORD_CLASS]));
    if (w[CLHEAP_HDR_TRACK_FIRST((uint64_t)w[CLHEAP_HDR_CLASS_COUNT], slots) + 2 * ((uint64_t)anchor - 1) + 1] == run)
        return CLHEAP_SUCCESS;
    return clheap_report_violation(what, len, "held block at frame %u: its run (frame %u) is not tracked", f, run - 1);
}

/* TierAlloc's tracks (cl/clheap_tier.h, T6): a track that follows a run, of its hint's
 * class, has counted at most the run's blocks (all of them: parked), no stealer is
 * marked walking, and exactly those of them are held for it, or, stolen from, at most
 * those (a stolen run's emptiers gave theirs back; its stealer released the others,
 * unless it could not mark itself walking: then the completer does). */
static clheap_status walk_tracks(const uint32_t *w, char *what, size_t len)
{
    uint64_t classes = w[CLHEAP_HDR_CLASS_COUNT], slots = w[CLHEAP_HDR_HINT_SLOTS];
    const uint32_t *tracks = w + CLHEAP_HDR_TRACK_FIRST(classes, slots);
    for (uint64_t i = 0; i < classes * slots * CLHEAP_TIER_TRACK_SLOTS; i++) {
        uint32_t tag = tracks[2 * i + 1], low = tracks[2 * i], c = (uint32_t)(i / CLHEAP_TIER_TRACK_SLOTS / slots);
        uint32_t blocks = w[CLHEAP_HDR_CLASS_RUN + c], per_block = w[CLHEAP_HDR_CLASS_FRAMES + c], held = 0;
        if (tag == 0)
            continue;
        if ((uint64_t)tag - 1 + (uint64_t)blocks * per_block > w[CLHEAP_HDR_FRAME_COUNT] ||
            (low & CLHEAP_TIER_EMPTIED_MASK) > blocks || (low & CLHEAP_TIER_WALKING))
            return clheap_report_violation(what, len, "track %llu: run at frame %u, %u of %u blocks counted%s",
                                           (unsigned long long)i, tag - 1, low & CLHEAP_TIER_EMPTIED_MASK, blocks,
                                           (low & CLHEAP_TIER_WALKING) ? ", a stealer still walking" : "");
        for (uint32_t b = 0; b < blocks; b++) {
            const uint32_t *hd = block_header(w, tag - 1 + b * per_block);
            held += hd[CLHEAP_BLOCK_WORD_CLASS] == CLHEAP_TIER_HELD_WORD((uint32_t)i + 1, c) &&
                    hd[CLHEAP_BLOCK_WORD_ANCHOR] == i + 1 &&
                    hd[CLHEAP_BLOCK_WORD_RUN] == tag;
        }
        if ((low & CLHEAP_TIER_STOLEN) ? held > (low & CLHEAP_TIER_EMPTIED_MASK) : held != low)
            return clheap_report_violation(what, len, "track %llu (run at frame %u) counts %u blocks, %u held for it",
                                           (unsigned long long)i, tag - 1, low, held);
    }
    return CLHEAP_SUCCESS;
}

/* free_map: TierAlloc's free frames; NULL: BlockAlloc's bitmap 0. */
static clheap_status walk_blocks(const uint32_t *w, const uint8_t *free_map, clheap_heap_stats *s, char *what,
                                 size_t len)
{
    uint32_t frames = w[CLHEAP_HDR_FRAME_COUNT], classes = w[CLHEAP_HDR_CLASS_COUNT];
    uint64_t frame_bytes = (uint64_t)w[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    s->class_count = classes;
    uint64_t blocks_seen[CLHEAP_MAX_CLASSES] = {0}, slots_total = 0, slots_used = 0;
    for (uint32_t f = 0; f < frames;) {
        const uint32_t *hd = block_header(w, f);
        uint64_t alloc = block_word64(hd, CLHEAP_BLOCK_WORD_ALLOC);
        if (free_map ? free_map[f] : bm_bit(w, CLHEAP_BM_FREE, 0, f)) {
            if (alloc != ~0ull)
                return clheap_report_violation(what, len, "free frame %u has reservable slots", f);
            for (uint32_t c = 0; c < classes; c++)
                if (bm_bit(w, CLHEAP_BM_ALLOCATED(c), 0, f))
                    return clheap_report_violation(what, len, "free frame %u is listed as a block of class %u", f, c);
            s->free_bytes += frame_bytes;
            s->free_chunks++;
            f++;
            continue;
        }
        uint32_t cls = hd[CLHEAP_BLOCK_WORD_CLASS];
        if (free_map && cls == CLHEAP_TIER_LARGE) { /* T1: a large allocation */
            uint32_t m = hd[CLHEAP_BLOCK_WORD_ITER];
            if (m == 0 || (uint64_t)f + m > frames || hd[CLHEAP_BLOCK_WORD_OWNER] != f || alloc != ~0ull ||
                hd[CLHEAP_BLOCK_WORD_OFFSET] >= w[CLHEAP_HDR_FRAME_UNITS]) /* R1, cl/clheap_resize.h */
                return clheap_report_violation(what, len, "large allocation at frame %u (%u frames) is malformed", f, m);
            for (uint32_t g = f; g < f + m; g++) {
                const uint32_t *hg = block_header(w, g);
                if (free_map[g] || hg[CLHEAP_BLOCK_WORD_OWNER] != f || (g > f && hg[CLHEAP_BLOCK_WORD_CLASS] != 0) ||
                    block_word64(hg, CLHEAP_BLOCK_WORD_ALLOC) != ~0ull)
                    return clheap_report_violation(what, len, "frame %u of the large allocation at frame %u is free or not owned by it",
                                                   g, f);
            }
            s->large_count++;
            s->large_bytes += (uint64_t)m * frame_bytes;
            s->used_bytes += (uint64_t)m * frame_bytes;
            s->used_chunks++;
            f += m;
            continue;
        }
        int held = free_map && CLHEAP_TIER_IS_HELD(cls) && CLHEAP_TIER_HELD_CLASS(cls) < classes;
        if (!held && (cls == 0 || cls > classes))
            return clheap_report_violation(what, len, "frame %u is neither free nor the start of a block (class %u)", f, cls);
        uint32_t c = held ? CLHEAP_TIER_HELD_CLASS(cls) : cls - 1, m = w[CLHEAP_HDR_CLASS_FRAMES + c];
        if (f + m > frames || hd[CLHEAP_BLOCK_WORD_OWNER] != f)
            return clheap_report_violation(what, len, "block at frame %u (class %u) runs past the pool or names owner %u", f, c,
                             hd[CLHEAP_BLOCK_WORD_OWNER]);
        for (uint32_t g = f + 1; g < f + m; g++) {
            const uint32_t *hg = block_header(w, g);
            if ((free_map ? free_map[g] : bm_bit(w, CLHEAP_BM_FREE, 0, g)) || hg[CLHEAP_BLOCK_WORD_OWNER] != f ||
                hg[CLHEAP_BLOCK_WORD_CLASS] != 0 || block_word64(hg, CLHEAP_BLOCK_WORD_ALLOC) != ~0ull)
                return clheap_report_violation(what, len, "frame %u of the block at frame %u is free or not owned by it", g, f);
        }
        uint64_t slots = class_slots(w, c);
        if ((alloc | slots) != ~0ull)
            return clheap_report_violation(what, len, "block at frame %u has slots past its capacity free", f);
        if (!bm_bit(w, CLHEAP_BM_ALLOCATED(c), 0, f))
            return clheap_report_violation(what, len, "block at frame %u (class %u) is missing from its allocated bitmap", f, c);
        uint32_t capacity = w[CLHEAP_HDR_CLASS_CAPACITY + c];
        if (held) { /* T5 of cl/clheap_tier.h: every slot taken, its run tracked or a spare */
            clheap_status st = check_held(w, f, c, alloc, what, len);
            if (st != CLHEAP_SUCCESS)
                return st;
            s->run_slots += capacity; /* no object in it */
        } else {
            uint32_t live = (uint32_t)__builtin_popcountll(alloc & slots);
            int active = bm_bit(w, CLHEAP_BM_ACTIVE(c), 0, f);
            int unsettled = free_map && bm_bit(w, CLHEAP_BM_UNSETTLED(classes), 0, f); /* TierAlloc: settled later */
            if (live < capacity && !active && !unsettled)
                return clheap_report_violation(
                    what, len, "block at frame %u (class %u) has %u of %u slots used but is neither active nor unsettled",
                    f, c, live, capacity);
            s->stale_hints += live == capacity && active;
            s->unsettled_blocks += unsettled;
            s->class_objects[c] += live;
            slots_total += capacity;
            slots_used += live;
            s->requested_bytes += (uint64_t)live * w[CLHEAP_HDR_CLASS_BYTES + c];
        }
        blocks_seen[c]++;
        s->class_blocks[c]++;
        s->used_bytes += m * frame_bytes;
        s->block_bytes += m * frame_bytes;
        s->used_chunks++;
        f += m;
    }
    for (uint32_t c = 0; c < classes; c++) {
        uint64_t listed = 0, active_listed = 0;
        for (uint32_t f = 0; f < frames; f++) {
            listed += bm_bit(w, CLHEAP_BM_ALLOCATED(c), 0, f);
            int active = bm_bit(w, CLHEAP_BM_ACTIVE(c), 0, f);
            if (active && !bm_bit(w, CLHEAP_BM_ALLOCATED(c), 0, f))
                active_listed++; /* marks a reclaimed block: a stale hint */
        }
        if (listed != blocks_seen[c])
            return clheap_report_violation(what, len, "class %u: %llu blocks listed as allocated, %llu found", c,
                             (unsigned long long)listed, (unsigned long long)blocks_seen[c]);
        s->stale_hints += active_listed;
        s->class_bytes[c] = w[CLHEAP_HDR_CLASS_BYTES + c];
        s->class_capacity[c] = w[CLHEAP_HDR_CLASS_CAPACITY + c];
    }
    s->frame_bytes = frame_bytes;
    s->slot_fragmentation = slots_total ? 1.0 - (double)slots_used / (double)slots_total : 0.0;
    return CLHEAP_SUCCESS;
}

/* The slots [t, blocks * capacity) of the run of class c at frame `first`, held for a
 * hint or a spare (T3): set in blocks of the class, in no other hint's or spare's block
 * (free_map 2 marks them), not counted as objects. */
static clheap_status walk_held(const uint32_t *w, uint32_t c, uint32_t first, uint32_t t, uint8_t *free_map,
                               clheap_heap_stats *s, char *what, size_t len)
{
    uint32_t capacity = w[CLHEAP_HDR_CLASS_CAPACITY + c], per_block = w[CLHEAP_HDR_CLASS_FRAMES + c];
    uint32_t blocks = w[CLHEAP_HDR_CLASS_RUN + c];
    if ((uint64_t)first + (uint64_t)blocks * per_block > w[CLHEAP_HDR_FRAME_COUNT])
        return clheap_report_violation(what, len, "class %u: a run at frame %u of %u", c, first,
                                       w[CLHEAP_HDR_FRAME_COUNT]);
    for (uint32_t i = t; i < blocks * capacity; i += capacity - i % capacity) {
        uint32_t b = first + i / capacity * per_block;
        const uint32_t *hd = block_header(w, b);
        uint64_t held = class_slots(w, c) & ~(i % capacity ? (1ull << (i % capacity)) - 1 : 0);
        if (hd[CLHEAP_BLOCK_WORD_CLASS] != c + 1 || hd[CLHEAP_BLOCK_WORD_OWNER] != b ||
            (block_word64(hd, CLHEAP_BLOCK_WORD_ALLOC) & held) != held)
            return clheap_report_violation(what, len, "class %u: slot %u of the run at frame %u (block at frame %u) is not held",
                                           c, i, first, b);
        if (free_map[b] == 2)
            return clheap_report_violation(what, len, "block at frame %u holds unhanded slots of two runs", b);
        free_map[b] = 2;
        uint32_t count = (uint32_t)__builtin_popcountll(held);
        s->run_slots += count;
        s->class_objects[c] -= count;
        s->requested_bytes -= (uint64_t)count * w[CLHEAP_HDR_CLASS_BYTES + c];
    }
    return CLHEAP_SUCCESS;
}

/* TierAlloc's run hints and their spares (T3), after walk_blocks has checked every
 * block: a live hint's unhanded slots and a spare's every slot are set in blocks of its
 * class, and no two of them hold one slot. free_map (free frames, 1) is then reused to
 * mark (2) the blocks holding unhanded slots. */
static clheap_status walk_runs(const uint32_t *w, uint8_t *free_map, clheap_heap_stats *s, char *what, size_t len)
{
    uint32_t frames = w[CLHEAP_HDR_FRAME_COUNT], slots = w[CLHEAP_HDR_HINT_SLOTS], classes = w[CLHEAP_HDR_CLASS_COUNT];
    const uint32_t *spares = w + CLHEAP_HDR_SPARE_FIRST((uint64_t)classes, slots);
    for (uint32_t c = 0; c < classes; c++) {
        uint32_t per_block = w[CLHEAP_HDR_CLASS_FRAMES + c];
        uint32_t blocks = w[CLHEAP_HDR_CLASS_RUN + c], hints = w[CLHEAP_HDR_CLASS_HINTS + c];
        if (blocks == 0 || (uint64_t)blocks * per_block > frames || hints > slots)
            return clheap_report_violation(what, len, "class %u: %u hints of runs of %u blocks do not fit", c, hints,
                                           blocks);
        for (uint32_t k = 0; k < slots; k++) {
            uint64_t hint;
            memcpy(&hint, w + CLHEAP_HDR_HINT_FIRST + 2 * ((uint64_t)c * slots + k), sizeof hint);
            uint32_t f = (uint32_t)(hint >> 32), t = (uint32_t)hint, spare = spares[(uint64_t)c * slots + k];
            if (k >= hints && (f || spare))
                return clheap_report_violation(what, len, "class %u: unused hint %u names a run", c, k);
            clheap_status st = f ? walk_held(w, c, f - 1, t, free_map, s, what, len) : CLHEAP_SUCCESS;
            if (st == CLHEAP_SUCCESS && spare)
                st = walk_held(w, c, spare - 1, 0, free_map, s, what, len);
            if (st != CLHEAP_SUCCESS)
                return st;
        }
    }
    return CLHEAP_SUCCESS;
}

/* Bitmaps of a bitmap kind: 1 (BitmapAlloc), 1 + 2 * classes (BlockAlloc), and
 * TierAlloc's segments after those. */
static uint32_t bitmap_count(const uint32_t *w)
{
    clheap_allocator a = (clheap_allocator)w[CLHEAP_HDR_KIND];
    if (!clheap_allocator_has_blocks(a))
        return 1;
    return 1 + 2 * w[CLHEAP_HDR_CLASS_COUNT] + (a == CLHEAP_TIER_ALLOC ? CLHEAP_PAGE_BITMAPS : 0);
}

/* Free frames as runs of the largest free piece: the largest free region in bytes. */
static uint64_t largest_free_run(const uint8_t *free_map, uint32_t frames, uint64_t frame_bytes)
{
    uint64_t best = 0, run = 0;
    for (uint32_t f = 0; f < frames; f++) {
        run = free_map[f] ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best * frame_bytes;
}

/* Bits bitmap b must have: a frame (slot) each, TierAlloc's segments one per segment. */
static uint64_t bitmap_bits_wanted(const uint32_t *w, uint32_t b)
{
    clheap_allocator a = (clheap_allocator)w[CLHEAP_HDR_KIND];
    if (!clheap_allocator_has_blocks(a))
        return (uint64_t)(w[CLHEAP_HDR_POOL_END] - w[CLHEAP_HDR_POOL_START]) / w[CLHEAP_HDR_SLOT_UNITS];
    uint32_t frames = w[CLHEAP_HDR_FRAME_COUNT];
    return b == segments_desc_index(w) ? frames >> w[CLHEAP_HDR_SEGMENT_ORDER] : frames;
}

/* The class tables: at most CLHEAP_MAX_CLASSES classes of 1 - 64 slots in 1 - 64 frames
 * (the host's loops and shifts take them as bounds). Planned for 32-bit atomics, at most
 * 32 slots (W2) and no hint slot in use (W3: cl/clheap_port.h's split word). */
static clheap_status check_classes(const uint32_t *w, char *what, size_t len)
{
    uint32_t classes = w[CLHEAP_HDR_CLASS_COUNT], bits = w[CLHEAP_HDR_ATOMIC_BITS];
    if (classes == 0 || classes > CLHEAP_MAX_CLASSES)
        return clheap_report_violation(what, len, "%u size classes", classes);
    if (bits != 32 && bits != 64)
        return clheap_report_violation(what, len, "planned for %u-bit atomics", bits);
    int tier = w[CLHEAP_HDR_KIND] == CLHEAP_TIER_ALLOC;
    for (uint32_t c = 0; c < classes; c++) {
        uint32_t capacity = w[CLHEAP_HDR_CLASS_CAPACITY + c], frames = w[CLHEAP_HDR_CLASS_FRAMES + c];
        if (capacity == 0 || capacity > bits || frames == 0 || frames > 64)
            return clheap_report_violation(what, len, "class %u has %u slots in %u frames (%u-bit atomics)", c,
                                           capacity, frames, bits);
        if (tier && bits == 32 && w[CLHEAP_HDR_CLASS_HINTS + c])
            return clheap_report_violation(what, len, "class %u has %u run hints without 64-bit atomics", c,
                                           w[CLHEAP_HDR_CLASS_HINTS + c]);
    }
    return CLHEAP_SUCCESS;
}

/* The pool holds exactly its items; bitmaps (every level of each, each of the bits its
 * items need) and block headers lie after it, inside the heap, without overlapping
 * (host/heap_layout.c). What every walk, repair and listing takes as bounds. moved: the
 * image leaves the pool out and holds the rest that many units lower (clheap_heap_repair). */
static clheap_status check_bitmap_layout(const uint32_t *w, uint64_t unit_count, uint64_t moved, char *what,
                                         size_t len)
{
    clheap_allocator a = (clheap_allocator)w[CLHEAP_HDR_KIND];
    int blocks = clheap_allocator_has_blocks(a);
    if (blocks) {
        clheap_status status = check_classes(w, what, len);
        if (status != CLHEAP_SUCCESS)
            return status;
        if (a == CLHEAP_TIER_ALLOC && w[CLHEAP_HDR_SEGMENT_ORDER] != 6)
            return clheap_report_violation(what, len, "segment order %u", w[CLHEAP_HDR_SEGMENT_ORDER]);
    } else if (w[CLHEAP_HDR_SLOT_UNITS] == 0) {
        return clheap_report_violation(what, len, "slots of 0 units");
    }
    uint64_t first = w[CLHEAP_HDR_POOL_START], end = w[CLHEAP_HDR_POOL_END];
    uint64_t items = blocks ? w[CLHEAP_HDR_FRAME_COUNT] : w[CLHEAP_BM_FREE + CLHEAP_BM_BITS];
    uint64_t item_units = blocks ? w[CLHEAP_HDR_FRAME_UNITS] : w[CLHEAP_HDR_SLOT_UNITS];
    if (first >= end || items * item_units != end - first)
        return clheap_report_violation(what, len, "pool [%llu, %llu) does not hold its %llu items of %llu units",
                                       (unsigned long long)first, (unsigned long long)end, (unsigned long long)items,
                                       (unsigned long long)item_units);
    uint64_t hint_words =
        a == CLHEAP_TIER_ALLOC ? CLHEAP_TIER_HINT_WORDS((uint64_t)w[CLHEAP_HDR_CLASS_COUNT], w[CLHEAP_HDR_HINT_SLOTS]) : 0;
    if (hint_words && CLHEAP_HDR_HINT_FIRST + hint_words > first * (CLHEAP_UNIT / 4u)) /* the header's */
        return clheap_report_violation(what, len, "%u hint slots a class do not fit before the pool at unit %llu",
                                       w[CLHEAP_HDR_HINT_SLOTS], (unsigned long long)first);
    uint64_t bm_first = w[CLHEAP_HDR_BITMAP_FIRST], bm_end = bm_first + w[CLHEAP_HDR_BITMAP_UNITS];
    uint64_t hd_first = blocks ? w[CLHEAP_HDR_BLOCK_HEADERS] : bm_end;
    uint64_t hd_end = hd_first + (blocks ? items * CLHEAP_BLOCK_HEADER_UNITS : 0);
    if (bm_first + moved < end || hd_first < bm_end || hd_end > unit_count)
        return clheap_report_violation(what, len, "bitmaps [%llu, %llu) and block headers [%llu, %llu) are not between "
                                       "the pool's end %llu and the heap's %llu",
                                       (unsigned long long)bm_first, (unsigned long long)bm_end,
                                       (unsigned long long)hd_first, (unsigned long long)hd_end, (unsigned long long)end,
                                       (unsigned long long)unit_count);
    for (uint32_t b = 0; b < bitmap_count(w); b++) { /* each level starts where the one below ends */
        uint32_t desc = CLHEAP_BM_DESC(b), levels = w[desc + CLHEAP_BM_LEVELS];
        uint64_t containers = 0, unit = w[desc + CLHEAP_BM_UNIT];
        int bad = levels == 0 || levels > CLHEAP_BM_MAX_LEVELS || w[desc + CLHEAP_BM_BITS] != bitmap_bits_wanted(w, b);
        for (uint32_t l = 0; !bad && l < levels; l++) {
            bad = w[desc + CLHEAP_BM_LEVEL0 + l] != containers;
            containers += (bm_count_at(w, desc, l) + 63) / 64;
        }
        if (bad || unit < bm_first || unit * 2 + containers > bm_end * 2) /* 2 containers per unit */
            return clheap_report_violation(what, len, "bitmap %u (unit %llu, %u levels, %u bits) is not inside the "
                                           "bitmaps or not of its items", b, (unsigned long long)unit, levels,
                                           w[desc + CLHEAP_BM_BITS]);
    }
    return CLHEAP_SUCCESS;
}

static clheap_status walk_bitmap_kind(const uint32_t *w, uint64_t unit_count, clheap_heap_stats *s, char *what,
                                      size_t len)
{
    clheap_allocator a = (clheap_allocator)w[CLHEAP_HDR_KIND];
    uint32_t count = bitmap_count(w);
    clheap_status layout_status = check_bitmap_layout(w, unit_count, 0, what, len);
    if (layout_status != CLHEAP_SUCCESS)
        return layout_status;
    for (uint32_t b = 0; b < count; b++) {
        char name[32];
        snprintf(name, sizeof name, "%u", b);
        clheap_status st = check_bitmap(w, CLHEAP_BM_DESC(b), name, &s->stale_hints, what, len);
        if (st != CLHEAP_SUCCESS)
            return st;
    }
    if (a == CLHEAP_TIER_ALLOC) {
        uint32_t frames = w[CLHEAP_HDR_FRAME_COUNT];
        uint8_t *free_map = calloc(frames ? frames : 1, 1);
        if (!free_map)
            return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
        clheap_status st = walk_pages(w, free_map, s, what, len);
        if (st == CLHEAP_SUCCESS)
            st = walk_blocks(w, free_map, s, what, len);
        if (st == CLHEAP_SUCCESS) {
            s->largest_free_bytes = largest_free_run(free_map, frames, s->frame_bytes);
            s->external_fragmentation =
                s->free_bytes ? 1.0 - (double)s->largest_free_bytes / (double)s->free_bytes : 0.0;
            st = walk_runs(w, free_map, s, what, len);
        }
        if (st == CLHEAP_SUCCESS)
            st = walk_tracks(w, what, len);
        free(free_map);
        return st;
    }
    if (a == CLHEAP_BLOCK_ALLOC)
        return walk_blocks(w, NULL, s, what, len);
    uint64_t slots = w[CLHEAP_BM_FREE + CLHEAP_BM_BITS], free_slots = 0;
    const uint64_t *c = bm_level(w, CLHEAP_BM_FREE, 0);
    for (uint64_t i = 0; i < (slots + 63) / 64; i++)
        free_slots += (uint64_t)__builtin_popcountll(c[i]);
    uint64_t slot_bytes = (uint64_t)w[CLHEAP_HDR_SLOT_UNITS] * CLHEAP_UNIT;
    s->used_chunks = slots - free_slots;
    s->used_bytes = s->used_chunks * slot_bytes;
    s->free_chunks = free_slots;
    s->free_bytes = free_slots * slot_bytes;
    s->largest_free_bytes = free_slots ? slot_bytes : 0;
    s->external_fragmentation = free_slots ? 1.0 - 1.0 / (double)free_slots : 0.0;
    return CLHEAP_SUCCESS;
}

static uint64_t bm_rebuild_upper(uint32_t *w, uint32_t desc)
{
    uint64_t changed = 0;
    uint32_t levels = w[desc + CLHEAP_BM_LEVELS];
    for (uint32_t l = 0; l + 1 < levels; l++) {
        uint64_t containers = (bm_count_at(w, desc, l) + 63) / 64;
        const uint64_t *c = bm_level(w, desc, l);
        uint64_t *up = (uint64_t *)bm_level(w, desc, l + 1);
        for (uint64_t i = 0; i < containers; i++) {
            uint64_t bit = 1ull << (i % 64), want = c[i] ? bit : 0;
            if ((up[i / 64] & bit) != want) {
                up[i / 64] ^= bit;
                changed++;
            }
        }
    }
    return changed;
}

/* Bits past a level's end (a corrupted upper level) are skipped, not followed. */
static uint64_t indices_below(const uint32_t *w, uint32_t desc, uint32_t level, uint64_t index,
                              uint32_t *out, uint64_t cap, uint64_t found, uint64_t *read)
{
    uint64_t v = bm_level(w, desc, level)[index];
    uint64_t below = level ? (bm_count_at(w, desc, level - 1) + 63) / 64 : bm_count_at(w, desc, 0);
    if (level == 0)
        *read += 1;
    for (; v; v &= v - 1) {
        uint64_t pos = index * 64 + (uint64_t)__builtin_ctzll(v);
        if (pos >= below)
            break;
        if (level == 0) {
            if (found < cap)
                out[found] = (uint32_t)pos;
            found++;
        } else {
            found = indices_below(w, desc, level - 1, pos, out, cap, found, read);
        }
    }
    return found;
}

clheap_status clheap_bitmap_indices(const uint32_t *w, uint64_t unit_count, uint64_t moved, uint32_t desc,
                                    uint32_t *out, uint64_t cap, uint64_t *count, uint64_t *containers_read)
{
    clheap_status status = check_bitmap_layout(w, unit_count, moved, NULL, 0);
    if (status != CLHEAP_SUCCESS)
        return status;
    uint64_t read = 0, found = 0;
    uint32_t top = w[desc + CLHEAP_BM_LEVELS] - 1;
    uint64_t containers = (bm_count_at(w, desc, top) + 63) / 64; /* 1, or level 0's of a flat bitmap */
    for (uint64_t i = 0; i < containers; i++)
        found = indices_below(w, desc, top, i, out, cap, found, &read);
    *count = found;
    if (containers_read)
        *containers_read = read;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_heap_repair_image(uint32_t *w, uint64_t unit_count, uint64_t moved, uint64_t *repaired)
{
    *repaired = 0;
    clheap_allocator a = (clheap_allocator)w[CLHEAP_HDR_KIND];
    if (!clheap_allocator_is_bitmap(a))
        return CLHEAP_SUCCESS;
    clheap_status status = check_bitmap_layout(w, unit_count, moved, NULL, 0);
    if (status != CLHEAP_SUCCESS)
        return status;
    uint64_t changed = 0;
    if (a == CLHEAP_TIER_ALLOC) { /* move completed segments whose move lost a race (P2) */
        uint64_t *broken = (uint64_t *)bm_level(w, CLHEAP_BM_FREE, 0);
        uint64_t *whole = (uint64_t *)bm_level(w, segments_desc(w), 0);
        for (uint32_t g = 0; g < w[segments_desc(w) + CLHEAP_BM_BITS]; g++)
            if (broken[g] == ~0ull) {
                broken[g] = 0;
                whole[g / 64] |= 1ull << (g % 64);
                changed++;
            }
    }
    if (clheap_allocator_has_blocks(a)) {
        uint32_t frames = w[CLHEAP_HDR_FRAME_COUNT], classes = w[CLHEAP_HDR_CLASS_COUNT];
        for (uint32_t c = 0; c < classes; c++) {
            uint64_t *active = (uint64_t *)bm_level(w, CLHEAP_BM_ACTIVE(c), 0);
            for (uint32_t f = 0; f < frames; f++) {
                const uint32_t *hd = block_header(w, f);
                int want = 0;
                if (bm_bit(w, CLHEAP_BM_ALLOCATED(c), 0, f) && hd[CLHEAP_BLOCK_WORD_CLASS] == c + 1)
                    want = (block_word64(hd, CLHEAP_BLOCK_WORD_ALLOC) | ~class_slots(w, c)) != ~0ull;
                uint64_t bit = 1ull << (f % 64);
                if (((active[f / 64] & bit) != 0) != want) {
                    active[f / 64] ^= bit;
                    changed++;
                }
            }
        }
    }
    uint32_t count = bitmap_count(w);
    for (uint32_t b = 0; b < count; b++)
        changed += bm_rebuild_upper(w, CLHEAP_BM_DESC(b));
    *repaired = changed;
    return CLHEAP_SUCCESS;
}

/* The bump allocators: the counter's prefix of the pool is used. */
static void walk_bump(const uint32_t *w, clheap_heap_stats *s)
{
    uint64_t bump;
    memcpy(&bump, w + CLHEAP_HDR_BUMP, sizeof bump);
    uint64_t capacity = (uint64_t)w[CLHEAP_HDR_POOL_END] - w[CLHEAP_HDR_POOL_START];
    uint64_t used = bump < capacity ? bump : capacity;
    s->used_bytes = used * CLHEAP_UNIT;
    s->free_bytes = (capacity - used) * CLHEAP_UNIT;
    s->largest_free_bytes = s->free_bytes;
    s->free_chunks = s->free_bytes != 0;
}

/* used_bytes = live_bytes + held_bytes: the block kinds' live objects are their slots
 * and their large allocations' frames; every other kind's used regions are all live. */
static void split_used(clheap_heap_stats *s)
{
    s->live_bytes = s->used_bytes;
    if (s->class_count) {
        s->live_bytes = s->large_bytes;
        for (uint32_t c = 0; c < s->class_count && c < 32; c++)
            s->live_bytes += s->class_objects[c] * s->class_bytes[c];
    }
    s->live_bytes = s->live_bytes < s->used_bytes ? s->live_bytes : s->used_bytes;
    s->held_bytes = s->used_bytes - s->live_bytes;
}

clheap_status clheap_heap_walk(const uint32_t *w, uint64_t unit_count, clheap_heap_stats *stats,
                               char *what, size_t len)
{
    clheap_heap_stats local;
    clheap_heap_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    if (what && len)
        what[0] = '\0';
    if (unit_count < CLHEAP_HDR_FIXED_WORDS / 4u || w[CLHEAP_HDR_MAGIC] != CLHEAP_MAGIC ||
        w[CLHEAP_HDR_VERSION] != CLHEAP_LAYOUT_VERSION)
        return clheap_report_violation(what, len, "no clheap heap header (magic %#x, version %u)",
                         w[CLHEAP_HDR_MAGIC], w[CLHEAP_HDR_VERSION]);
    clheap_allocator a = (clheap_allocator)w[CLHEAP_HDR_KIND];
    if (!clheap_allocator_name(a))
        return clheap_report_violation(what, len, "unknown allocator kind %u", (unsigned)a);
    uint32_t first = w[CLHEAP_HDR_POOL_START], end = w[CLHEAP_HDR_POOL_END];
    uint32_t offsets = w[CLHEAP_HDR_OFFSET_COUNT];
    if (offsets == 0 || (!clheap_allocator_is_bitmap(a) && first * 4u < CLHEAP_HDR_OFFSETS + offsets) || first >= end ||
        end >= unit_count + (clheap_allocator_is_circular(a) ? 0u : 1u))
        return clheap_report_violation(what, len, "pool bounds [%u, %u) and %u offsets do not fit %llu units",
                         first, end, offsets, (unsigned long long)unit_count);
    s->allocator = a;
    s->heap_bytes = unit_count * CLHEAP_UNIT;
    s->pool_begin_bytes = (uint64_t)first * CLHEAP_UNIT;
    s->pool_bytes = (uint64_t)(end - first) * CLHEAP_UNIT;
    clheap_heap_errors_from_header(w, &s->errors);
    clheap_status status = CLHEAP_SUCCESS;
    if (clheap_allocator_is_bitmap(a))
        status = walk_bitmap_kind(w, unit_count, s, what, len);
    else if (clheap_allocator_is_circular(a))
        status = walk_circular(w, clheap_allocator_is_fused(a), s, what, len);
    else if (a == CLHEAP_FREE_HEAP)
        status = walk_freeheap(w, unit_count, s, what, len);
    else
        walk_bump(w, s);
    split_used(s);
    return status;
}

