/* A corrupted heap never crashes or hangs the host (issue 52, part 1). For every
 * allocator, a heap image in use (the allocator core run on the host, mallocs of mixed
 * sizes and some frees) is corrupted, and what clheap_heap_check, _calculate_stats,
 * _stats_json, _repair and _indices do with an image they read back runs on it in a
 * child process under a time limit:
 *  - every header word set to 0, 1, all ones, 0x80000000, its value +-1 and a random
 *    value: a fixed word must be refused by the header comparison (host/heap_image.c);
 *    the walk, the repair and every bitmap's listing then also run on it without that
 *    comparison, so their own bounds are tested too;
 *  - random words of the pool, the bitmaps and the block headers overwritten.
 * A child that dies on a signal (ASan's reports end in one) or is still running after
 * CHILD_SECONDS fails the test; the cases that did are named.
 * Usage: test_image_corruption [ALLOCATOR...] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_heap.h"
#include "heap_image.h"
#include "heap_walk.h"
#include "../cl/clheap_layout.h"

enum { CHILD_SECONDS = 20, VALUES = 7, WORD_BATCH = 8, RANDOM_CASES = 256, RANDOM_BATCH = 16, MAX_WORDS = 8 };

static uint32_t rng_state = 0x2545F491u;
static uint32_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* A heap of 1 MiB in use: allocations of 16 B - 64 KiB from three work-groups until a
 * third of the pool is taken, then every third one freed; TierAlloc's runs stay open. */
static void fill(core_heap *heap)
{
    uint32_t units[512], n = 0;
    for (uint64_t taken = 0; n < 512 && taken < (1u << 20) / 3; n++) {
        size_t bytes = (size_t)16u << (next_random() % 13);
        units[n] = core_heap_malloc(heap, bytes, n % 3);
        taken += bytes;
    }
    for (uint32_t i = 0; i < n; i += 3)
        if (units[i])
            core_heap_free_unit(heap, units[i], i % 3);
}

/* The descriptors of every bitmap of the layout (none for the other kinds). */
static uint32_t bitmap_descriptors(const clheap_layout *layout)
{
    return clheap_allocator_is_bitmap((clheap_allocator)layout->header[CLHEAP_HDR_KIND]) ? layout->bitmap_count : 0;
}

/* What the five calls do with an image read back, with the header comparison or
 * without it. Returns 0 if a fixed word was corrupted and the comparison did not say so. */
static int use_image(const clheap_layout *layout, uint32_t *image, uint64_t units, int compare, int fixed_corrupted)
{
    char what[256], json[8192];
    size_t needed;
    clheap_heap_stats stats;
    if (compare) {
        clheap_status status = clheap_image_header_matches(layout, image, what, sizeof what);
        if (fixed_corrupted)
            return status == CLHEAP_ERROR_HEAP_CORRUPT;
        if (status != CLHEAP_SUCCESS)
            return 0;
    }
    clheap_heap_walk(image, units, &stats, what, sizeof what);
    clheap_heap_stats_json(&stats, json, sizeof json, &needed);
    static uint32_t out[4096];
    uint64_t count;
    for (uint32_t b = 0; b < bitmap_descriptors(layout); b++)
        clheap_bitmap_indices(image, units, 0, CLHEAP_BM_DESC(b), out, sizeof out / sizeof *out, &count, NULL);
    uint64_t repaired;
    clheap_heap_repair_image(image, units, 0, &repaired);
    return 1;
}

typedef struct corruption {
    uint32_t word, value;
} corruption;

/* Runs the cases in a child: 0 if it exited cleanly and every comparison held, else why. */
static const char *run_child(const core_heap *heap, const corruption *cases, int n, int words_each)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(CHILD_SECONDS);
        size_t bytes = (size_t)heap->layout.total_units * CLHEAP_UNIT;
        uint32_t *image = malloc(bytes);
        for (int i = 0; i < n; i += words_each) {
            memcpy(image, heap->words, bytes);
            int fixed = 0;
            for (int k = i; k < i + words_each && k < n; k++) {
                image[cases[k].word] = cases[k].value;
                fixed |= cases[k].word < heap->layout.header_words &&
                         !clheap_header_word_is_dynamic(&heap->layout, cases[k].word) &&
                         cases[k].value != heap->words[cases[k].word];
            }
            uint32_t *copy = malloc(bytes);
            memcpy(copy, image, bytes);
            if (!use_image(&heap->layout, copy, heap->layout.total_units, 1, fixed))
                _exit(3);
            if (fixed) { /* the same calls without the comparison: their own bounds */
                memcpy(copy, image, bytes);
                use_image(&heap->layout, copy, heap->layout.total_units, 0, fixed);
            }
            free(copy);
        }
        free(image);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return "fork failed";
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM ? "hang" : "crash";
    if (WEXITSTATUS(status) == 3)
        return "a fixed header word's corruption was not refused";
    return WEXITSTATUS(status) ? "crash (sanitizer report)" : NULL;
}

static int report(const char *allocator, const char *why, const corruption *cases, int n)
{
    printf("%s: %s with", allocator, why);
    for (int i = 0; i < n; i++)
        printf(" word %u = %#x", cases[i].word, cases[i].value);
    printf("\n");
    return 1;
}

/* Every header word, seven values each: one child per WORD_BATCH words, then one per
 * case to name the failing ones. */
static int header_words(const core_heap *heap, const char *name, uint32_t *cases_run)
{
    int failures = 0;
    const uint32_t *w = heap->words;
    for (uint32_t first = 0; first < heap->layout.header_words; first += WORD_BATCH) {
        corruption cases[WORD_BATCH * VALUES];
        int n = 0;
        for (uint32_t word = first; word < first + WORD_BATCH && word < heap->layout.header_words; word++) {
            uint32_t v = w[word];
            uint32_t values[VALUES] = {0, 1, ~0u, 0x80000000u, v + 1u, v - 1u, next_random()};
            for (int k = 0; k < VALUES; k++)
                cases[n++] = (corruption){word, values[k]};
        }
        *cases_run += (uint32_t)n;
        if (!run_child(heap, cases, n, 1))
            continue;
        for (int k = 0; k < n; k++) {
            const char *why = run_child(heap, cases + k, 1, 1);
            if (why)
                failures += report(name, why, cases + k, 1);
        }
    }
    return failures;
}

/* Random words past the header (pool, bitmaps, block headers), 1 - MAX_WORDS at a time. */
static int body_words(const core_heap *heap, const char *name, uint32_t *cases_run)
{
    int failures = 0;
    uint64_t words = heap->layout.total_units * 4u, header = heap->layout.header_words;
    for (int batch = 0; batch < RANDOM_CASES / RANDOM_BATCH; batch++) {
        corruption cases[RANDOM_BATCH * MAX_WORDS];
        int each = 1 + (int)(next_random() % MAX_WORDS);
        for (int i = 0; i < RANDOM_BATCH * each; i++) {
            uint32_t r = next_random();
            cases[i].word = (uint32_t)(header + next_random() % (words - header));
            cases[i].value = r & 1 ? next_random() : heap->words[cases[i].word] ^ (1u << (r >> 1) % 32);
        }
        *cases_run += RANDOM_BATCH;
        if (!run_child(heap, cases, RANDOM_BATCH * each, each))
            continue;
        for (int i = 0; i < RANDOM_BATCH; i++) {
            const char *why = run_child(heap, cases + i * each, each, each);
            if (why)
                failures += report(name, why, cases + i * each, each);
        }
    }
    return failures;
}

int main(int argc, char **argv)
{
    int failures = 0;
    for (int a = 1; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        const char *name = clheap_allocator_name((clheap_allocator)a);
        int wanted = argc < 2;
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], name) == 0;
        if (!wanted)
            continue;
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.size_bytes = 1u << 20;
        config.offset_count = 3;
        core_heap heap;
        if (core_heap_create(&config, 3, &heap) != CLHEAP_SUCCESS) {
            printf("%s: create failed\n", name);
            return 1;
        }
        fill(&heap);
        char what[256];
        if (core_heap_walk(&heap, NULL, what, sizeof what) != CLHEAP_SUCCESS) {
            printf("%s: the heap is not sound before any corruption: %s\n", name, what);
            return 1;
        }
        uint32_t header_cases = 0, body_cases = 0;
        int f = header_words(&heap, name, &header_cases);
        f += body_words(&heap, name, &body_cases);
        printf("%s: %u header corruptions, %u random body corruptions, %d crashed, hung or were not refused\n", name,
               header_cases, body_cases, f);
        failures += f;
        core_heap_destroy(&heap);
    }
    return failures ? 1 : 0;
}
