#define _GNU_SOURCE /* ucontext */
#include "coroutine_lanes.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "../cl/clheap_port.h"

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

/* What the core keeps per thread (cl/clheap_port.h), kept per lane: the lanes share one
 * thread, and a lane switched out in the middle of a malloc must find its own work-group
 * id (the hint slot or roving offset it chose), launch size and fence bookkeeping again,
 * not those of the lane that ran last. */
typedef struct lane_state {
    clheap_u32 group_index, launch_items;
    clheap_core_order orders;
    uint64_t steps; /* the lane's own */
} lane_state;

static struct {
    ucontext_t caller;
    ucontext_t *contexts;
    lane_state *states;
    uint64_t steps;
    /* Paced: the lanes in order of the step at which each is due again (a binary heap). */
    int paced;
    uint32_t jitter; /* percent of the live lanes' steps */
    uint64_t *due;
    uint32_t *queue, queued;
    char *stacks;
    uint32_t *running, *position, live; /* running[position[lane]] == lane */
    int current;                        /* the lane running; -1: none, accesses go unscheduled */
    uint64_t random;
    coroutine_lane_work work;
    void *arg;
    const void *caller_bottom; /* the caller's stack, for the sanitizer */
    size_t caller_size;
    const coroutine_lane_turn *turns; /* scripted (coroutine_lanes_script) */
    uint32_t turn_count, turn, met;   /* the turn running, the times its lane met its word */
} lanes = {.current = -1};

static uint32_t next_random(void)
{
    lanes.random ^= lanes.random << 13;
    lanes.random ^= lanes.random >> 7;
    lanes.random ^= lanes.random << 17;
    return (uint32_t)(lanes.random >> 16);
}

static void save_state(int lane)
{
    lane_state *s = &lanes.states[lane];
    s->group_index = clheap_host_group_index;
    s->launch_items = clheap_host_launch_items;
    s->orders = clheap_core_orders;
}

static void restore_state(int lane)
{
    const lane_state *s = &lanes.states[lane];
    clheap_host_group_index = s->group_index;
    clheap_host_launch_items = s->launch_items;
    clheap_core_orders = s->orders;
}

/* Leaves the running context for lane `to` (-1: the caller of coroutine_lanes_run).
 * `ending`: the running lane has returned and is never resumed. */
static void switch_to(int to, int ending)
{
    int from = lanes.current;
    if (from >= 0 && !ending)
        save_state(from);
    if (to >= 0)
        restore_state(to);
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

static int due_before(uint32_t a, uint32_t b)
{
    return lanes.due[a] < lanes.due[b] || (lanes.due[a] == lanes.due[b] && a < b);
}

static void enqueue(uint32_t lane, uint64_t due)
{
    lanes.due[lane] = due;
    uint32_t at = lanes.queued++;
    for (; at && due_before(lane, lanes.queue[(at - 1) / 2]); at = (at - 1) / 2)
        lanes.queue[at] = lanes.queue[(at - 1) / 2];
    lanes.queue[at] = lane;
}

static uint32_t dequeue(void)
{
    uint32_t first = lanes.queue[0], last = lanes.queue[--lanes.queued], at = 0;
    for (;;) {
        uint32_t child = 2 * at + 1;
        if (child >= lanes.queued)
            break;
        if (child + 1 < lanes.queued && due_before(lanes.queue[child + 1], lanes.queue[child]))
            child++;
        if (!due_before(lanes.queue[child], last))
            break;
        lanes.queue[at] = lanes.queue[child];
        at = child;
    }
    lanes.queue[at] = last;
    return first;
}

static int lane_live(uint32_t lane)
{
    return lanes.position[lane] < lanes.live && lanes.running[lanes.position[lane]] == lane;
}

/* Scripted: the turn's lane until it is about to touch its word for the last time. */
static int pick_scripted(void)
{
    for (; lanes.turn < lanes.turn_count; lanes.turn++, lanes.met = 0) {
        const coroutine_lane_turn *t = &lanes.turns[lanes.turn];
        if (!lane_live(t->lane))
            continue;
        if (lanes.current == (int)t->lane && t->word && clheap_core_next_word == t->word && ++lanes.met >= t->times)
            continue;
        return (int)t->lane;
    }
    uint32_t lowest = UINT32_MAX;
    for (uint32_t i = 0; i < lanes.live; i++)
        lowest = lanes.running[i] < lowest ? lanes.running[i] : lowest;
    return lanes.live ? (int)lowest : -1;
}

/* The lane to run next; `again`: the running lane takes part (it has not returned). */
static int pick(int again)
{
    if (lanes.turn_count)
        return pick_scripted();
    if (!lanes.paced)
        return lanes.live ? (int)lanes.running[next_random() % lanes.live] : -1;
    /* An access takes about as long as every other lane's: due again after the live
     * lanes' steps, give or take the jitter. */
    if (again) {
        uint64_t span = (uint64_t)lanes.live * lanes.jitter / 100u;
        enqueue((uint32_t)lanes.current, lanes.steps + lanes.live - span / 2u + next_random() % (span + 1u));
    }
    return lanes.queued ? (int)dequeue() : -1;
}

void clheap_core_schedule_step(void)
{
    if (lanes.current < 0)
        return;
    lanes.steps++;
    lanes.states[lanes.current].steps++;
    int next = pick(1);
    if (next != lanes.current)
        switch_to(next, 0);
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
    switch_to(pick(0), 1);
}

void coroutine_lanes_script(const coroutine_lane_turn *turns, uint32_t count)
{
    lanes.turns = turns;
    lanes.turn_count = count;
    lanes.turn = lanes.met = 0;
}

void coroutine_lanes_pace(int paced, uint32_t jitter_percent)
{
    lanes.paced = paced;
    lanes.jitter = jitter_percent;
}

int coroutine_lanes_run(uint32_t count, coroutine_lane_work work, void *arg, uint64_t seed)
{
    if (!count)
        return 0;
    size_t stack_bytes = (size_t)count * STACK_BYTES;
    void *stacks = mmap(NULL, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    lanes.contexts = malloc(count * sizeof *lanes.contexts);
    lanes.states = calloc(count, sizeof *lanes.states);
    lanes.running = malloc(count * sizeof *lanes.running);
    lanes.position = malloc(count * sizeof *lanes.position);
    lanes.due = malloc(count * sizeof *lanes.due);
    lanes.queue = malloc(count * sizeof *lanes.queue);
    lanes.queued = 0;
    int ok = stacks != MAP_FAILED && lanes.contexts && lanes.states && lanes.running && lanes.position && lanes.due &&
             lanes.queue;
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
        lanes.turn = lanes.met = 0;
        for (uint32_t i = 0; lanes.paced && !lanes.turn_count && i < count; i++)
            enqueue(i, lanes.steps + next_random() % count);
        switch_to(pick(0), 0);
    }
    if (stacks != MAP_FAILED)
        munmap(stacks, stack_bytes);
    free(lanes.contexts);
    free(lanes.states);
    lanes.states = NULL;
    free(lanes.running);
    free(lanes.position);
    free(lanes.due);
    free(lanes.queue);
    lanes.due = NULL;
    lanes.queue = NULL;
    lanes.contexts = NULL;
    lanes.running = lanes.position = NULL;
    return ok ? 0 : -1;
}

uint64_t coroutine_lanes_steps(void)
{
    return lanes.steps;
}

uint64_t coroutine_lanes_own_steps(void)
{
    return lanes.current < 0 ? 0u : lanes.states[lanes.current].steps;
}
