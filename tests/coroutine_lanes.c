#define _GNU_SOURCE /* ucontext */
#include "coroutine_lanes.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define LANES_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LANES_ASAN 1
#endif
#endif
#ifdef LANES_ASAN
/* AddressSanitizer tracks one stack per thread; it is told of every switch, or it takes
 * a lane's frames for overflows of another stack. */
#include <sanitizer/common_interface_defs.h>
#endif

enum { STACK_BYTES = 128 << 10 }; /* mapped without reserve: a lane touches a few pages */

static struct {
    ucontext_t caller;
    ucontext_t *contexts;
    char *stacks;
    uint32_t *running, *position, live; /* running[position[lane]] == lane */
    int current;                        /* the lane running; -1: none, accesses go unscheduled */
    uint64_t random;
    coroutine_lane_work work;
    void *arg;
    const void *caller_bottom; /* the caller's stack, for the sanitizer */
    size_t caller_size;
} lanes = {.current = -1};

static uint32_t next_random(void)
{
    lanes.random ^= lanes.random << 13;
    lanes.random ^= lanes.random >> 7;
    lanes.random ^= lanes.random << 17;
    return (uint32_t)(lanes.random >> 16);
}

/* Leaves the running context for lane `to` (-1: the caller of coroutine_lanes_run).
 * `ending`: the running lane has returned and is never resumed. */
static void switch_to(int to, int ending)
{
    int from = lanes.current;
    ucontext_t *target = to < 0 ? &lanes.caller : &lanes.contexts[to];
    lanes.current = to;
#ifdef LANES_ASAN
    void *fake_stack = NULL;
    __sanitizer_start_switch_fiber(ending ? NULL : &fake_stack,
                                   to < 0 ? lanes.caller_bottom : lanes.stacks + (size_t)to * STACK_BYTES,
                                   to < 0 ? lanes.caller_size : STACK_BYTES);
#endif
    if (ending)
        setcontext(target);
    else
        swapcontext(from < 0 ? &lanes.caller : &lanes.contexts[from], target);
#ifdef LANES_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, NULL, NULL);
#endif
}

void clheap_core_schedule_step(void)
{
    if (lanes.current < 0)
        return;
    uint32_t next = lanes.running[next_random() % lanes.live];
    if ((int)next != lanes.current)
        switch_to((int)next, 0);
}

static void lane_entry(int lane)
{
#ifdef LANES_ASAN
    const void *bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(NULL, &bottom, &size);
    if (!lanes.caller_size) { /* the first lane is always entered from the caller */
        lanes.caller_bottom = bottom;
        lanes.caller_size = size;
    }
#endif
    lanes.work((uint32_t)lane, lanes.arg);
    uint32_t last = lanes.running[--lanes.live], at = lanes.position[lane];
    lanes.running[at] = last;
    lanes.position[last] = at;
    switch_to(lanes.live ? (int)lanes.running[next_random() % lanes.live] : -1, 1);
}

int coroutine_lanes_run(uint32_t count, coroutine_lane_work work, void *arg, uint64_t seed)
{
    if (!count)
        return 0;
    size_t stack_bytes = (size_t)count * STACK_BYTES;
    void *stacks = mmap(NULL, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    lanes.contexts = malloc(count * sizeof *lanes.contexts);
    lanes.running = malloc(count * sizeof *lanes.running);
    lanes.position = malloc(count * sizeof *lanes.position);
    int ok = stacks != MAP_FAILED && lanes.contexts && lanes.running && lanes.position;
    lanes.stacks = stacks;
    for (uint32_t i = 0; ok && i < count; i++) {
        lanes.running[i] = lanes.position[i] = i;
        ok = getcontext(&lanes.contexts[i]) == 0;
        lanes.contexts[i].uc_stack.ss_sp = lanes.stacks + (size_t)i * STACK_BYTES;
        lanes.contexts[i].uc_stack.ss_size = STACK_BYTES;
        lanes.contexts[i].uc_link = NULL;
        makecontext(&lanes.contexts[i], (void (*)(void))lane_entry, 1, (int)i);
    }
    if (ok) {
        lanes.live = count;
        lanes.work = work;
        lanes.arg = arg;
        lanes.random = seed * 2u + 1u; /* xorshift needs a state other than 0 */
        switch_to((int)lanes.running[next_random() % count], 0);
    }
    if (stacks != MAP_FAILED)
        munmap(stacks, stack_bytes);
    free(lanes.contexts);
    free(lanes.running);
    free(lanes.position);
    lanes.contexts = NULL;
    lanes.running = lanes.position = NULL;
    return ok ? 0 : -1;
}
