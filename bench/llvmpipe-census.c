/* What llvmpipe's compiler is given: the size of each compute shader that Mesa's gallivm
 * hands to LLVM, counted in the process, in seconds instead of a build's minutes (issue 50).
 *
 * Why: rusticl inlines every call, gallivm turns each global load, store and atomic into a
 * loop over the vector's lanes (four or five basic blocks), and every compute shader is an
 * LLVM coroutine. LLVM 15's coroutine split (SuspendCrossingInfo) sweeps bit vectors of all
 * the blocks, in the blocks' address order, until nothing changes; the sweeps grow with the
 * blocks too, so its time grows faster than their square (docs/design.md, "Devices without
 * 64-bit atomics"). The census names what that time depends on.
 *
 * Build (LLVM's C API from Debian's libLLVM-15, no headers needed):
 *   cc -O2 -shared -fPIC -o llvmpipe-census.so bench/llvmpipe-census.c -l:libLLVM-15.so.1 -ldl
 * Use: preload it into any program that builds for llvmpipe, e.g.
 *   LD_PRELOAD=$PWD/llvmpipe-census.so LLVMPIPE_CENSUS_EXIT=1 MESA_SHADER_CACHE_DISABLE=true \
 *   RUSTICL_ENABLE=llvmpipe CLHEAP_PLATFORM=rusticl CLHEAP_PROGRAM_CACHE=off \
 *   build/bench/clheap-bench --quick --only TierAlloc --shapes 4096x16 throughput
 * For every function of at least LLVMPIPE_CENSUS_MIN blocks (default 200) given to LLVM's
 * pass pipeline it prints the blocks, the lane loops (gallivm's "loop_begin" blocks: one per
 * memory access, and a few of its own), the atomics, the shader's own loops ("bgnloop"), and
 * an estimate of the coroutine split's sweeps and bit-vector word operations (see
 * sweeps_estimate). LLVMPIPE_CENSUS_EXIT=1 exits (status 3) at the first such function, before
 * LLVM's passes run; without it the build goes on and each pipeline run over 0.5 s prints its
 * time. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void *ref; /* LLVMModuleRef, LLVMValueRef, LLVMBasicBlockRef */
ref LLVMGetFirstFunction(ref module);
ref LLVMGetNextFunction(ref fn);
const char *LLVMGetValueName(ref value);
unsigned LLVMCountBasicBlocks(ref fn);
ref LLVMGetFirstBasicBlock(ref fn);
ref LLVMGetNextBasicBlock(ref bb);
const char *LLVMGetBasicBlockName(ref bb);
ref LLVMGetBasicBlockTerminator(ref bb);
unsigned LLVMGetNumSuccessors(ref terminator);
ref LLVMGetSuccessor(ref terminator, unsigned i);
ref LLVMGetFirstInstruction(ref bb);
ref LLVMGetNextInstruction(ref inst);
int LLVMGetInstructionOpcode(ref inst);

enum { OPCODE_ATOMIC_CMPXCHG = 56, OPCODE_ATOMIC_RMW = 57 }; /* llvm-c/Core.h, LLVMOpcode */

static int by_address(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* The sweeps until the split's fixed point settles: information moves along an edge to a
 * block of higher address within a sweep, to a lower one only in the next sweep, so the
 * sweeps are about the most such backward steps that any block's information needs to reach
 * another (a 0-1 breadth-first search from every `step`-th block), plus the one that finds
 * nothing changed. */
static unsigned sweeps_estimate(const unsigned *first, const unsigned *succ, unsigned n, unsigned step)
{
    unsigned edges = first[n], middle = edges + 1u; /* each edge pushes at most once per search */
    unsigned *dist = malloc(n * sizeof *dist), *deque = malloc((2u * middle + 1u) * sizeof *deque), most = 0;
    for (unsigned src = 0; dist && deque && src < n; src += step) {
        for (unsigned i = 0; i < n; i++)
            dist[i] = ~0u;
        unsigned head = middle, tail = middle;
        dist[src] = 0;
        deque[tail++] = src;
        while (head != tail) {
            unsigned u = deque[head++];
            for (unsigned e = first[u]; e < first[u + 1]; e++) {
                unsigned v = succ[e], back = v <= u, d = dist[u] + back;
                if (d < dist[v]) {
                    dist[v] = d;
                    if (back)
                        deque[tail++] = v;
                    else
                        deque[--head] = v;
                }
            }
        }
        for (unsigned i = 0; i < n; i++)
            if (dist[i] != ~0u && dist[i] > most)
                most = dist[i];
    }
    free(dist);
    free(deque);
    return most + 2u;
}

static void census(ref fn, unsigned n)
{
    uintptr_t *blocks = malloc(n * sizeof *blocks);
    unsigned *first = calloc(n + 1u, sizeof *first), cap = 2u * n + 8u, edges = 0;
    unsigned *succ = malloc(cap * sizeof *succ);
    unsigned long insts = 0, atomics = 0, lane_loops = 0, shader_loops = 0, i = 0;
    if (!blocks || !first || !succ)
        goto out;
    for (ref bb = LLVMGetFirstBasicBlock(fn); bb && i < n; bb = LLVMGetNextBasicBlock(bb)) {
        blocks[i++] = (uintptr_t)bb;
        const char *name = LLVMGetBasicBlockName(bb);
        lane_loops += name && !strncmp(name, "loop_begin", 10);
        shader_loops += name && !strncmp(name, "bgnloop", 7);
        for (ref in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
            int op = LLVMGetInstructionOpcode(in);
            insts++;
            atomics += op == OPCODE_ATOMIC_RMW || op == OPCODE_ATOMIC_CMPXCHG;
        }
    }
    qsort(blocks, n, sizeof *blocks, by_address); /* the split numbers blocks in this order */
    for (i = 0; i < n; i++) {
        first[i] = edges;
        ref term = LLVMGetBasicBlockTerminator((ref)blocks[i]);
        for (unsigned k = 0, count = term ? LLVMGetNumSuccessors(term) : 0u; k < count; k++) {
            uintptr_t s = (uintptr_t)LLVMGetSuccessor(term, k);
            uintptr_t *at = bsearch(&s, blocks, n, sizeof *blocks, by_address);
            if (!at)
                continue;
            if (edges == cap) {
                unsigned *grown = realloc(succ, 2u * cap * sizeof *succ);
                if (!grown)
                    goto out;
                succ = grown;
                cap *= 2u;
            }
            succ[edges++] = (unsigned)(at - blocks);
        }
    }
    first[n] = edges;
    const char *s = getenv("LLVMPIPE_CENSUS_STEP");
    unsigned step = s && atoi(s) > 0 ? (unsigned)atoi(s) : 1u + n / 2000u;
    unsigned sweeps = sweeps_estimate(first, succ, n, step);
    fprintf(stderr,
            "llvmpipe-census: %s: %u blocks, %lu instructions, %lu lane loops, %lu atomics, %lu shader loops; "
            "coroutine split: ~%u sweeps x %u edges x %u words = %.3g word operations\n",
            LLVMGetValueName(fn), n, insts, lane_loops, atomics, shader_loops, sweeps, edges, (n + 63u) / 64u,
            (double)sweeps * edges * ((n + 63u) / 64u));
out:
    free(blocks);
    free(first);
    free(succ);
}

/* LLVM's C entry point for a pass pipeline, which gallivm calls for every shader. */
void *LLVMRunPasses(ref module, const char *passes, void *machine, void *options)
{
    static void *(*next)(ref, const char *, void *, void *);
    if (!next)
        next = (void *(*)(ref, const char *, void *, void *))dlsym(RTLD_NEXT, "LLVMRunPasses");
    const char *m = getenv("LLVMPIPE_CENSUS_MIN");
    unsigned min = m ? (unsigned)atoi(m) : 200u, counted = 0;
    for (ref fn = LLVMGetFirstFunction(module); fn; fn = LLVMGetNextFunction(fn)) {
        unsigned n = LLVMCountBasicBlocks(fn);
        if (n >= min && n > 0) {
            census(fn, n);
            counted = 1;
        }
    }
    if (counted && getenv("LLVMPIPE_CENSUS_EXIT") && atoi(getenv("LLVMPIPE_CENSUS_EXIT")))
        _exit(3);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    void *result = next(module, passes, machine, options);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double seconds = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    if (seconds > 0.5)
        fprintf(stderr, "llvmpipe-census: passes %.1f s (%s)\n", seconds, passes);
    return result;
}
