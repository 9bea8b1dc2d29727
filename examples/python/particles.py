"""Particles born and dying inside a kernel, on a clheap.Heap: each work-item owns a slot
that holds a particle (a device allocation) or none. Every step a particle ages and dies at
its lifetime; an empty slot gives birth with some probability. The particle's state lives
in memory the kernel allocated, and its handle (an offset, valid across launches) in the
slot. The host replays the same rules and checks every step's population and the sum of
ages, and the heap's counters and invariants at the end."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import clheap

SOURCE = """
typedef struct { uint id, age, lifetime, pad; float x, y, vx, vy; } particle;

uint hash(uint x) { x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; return x ^ (x >> 16); }

__kernel void advance(__global clheap_heap *heap, __global uint *slots, uint t, __global uint *ages) {
    uint i = get_global_id(0);
    __global particle *p = clheap_pointer(heap, slots[i]);
    if (p) {
        p->age++;
        p->x += p->vx;
        p->y += p->vy;
        if (p->age >= p->lifetime) {          /* dies */
            clheap_free(heap, p);
            slots[i] = 0u;
            p = 0;
        }
    } else if (hash(i * 7919u + t) % 4u == 0u) {  /* born */
        p = clheap_malloc(heap, sizeof(particle));
        if (p) {
            p->id = i; p->age = 0u; p->lifetime = 1u + hash(i + t * 104729u) % 16u;
            p->x = p->y = 0.0f; p->vx = 1.0f; p->vy = -1.0f;
        }
        slots[i] = clheap_unit_of(heap, p);
    }
    ages[i] = p ? p->age + 1u : 0u;
}
"""


def mix(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64) & 0xFFFFFFFF
    x ^= x >> 16; x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15; x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def main() -> None:
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    n, steps = 1 << 14, 40
    with clheap.Heap(context, queue=queue, size=16 << 20) as heap:
        advance = heap.build(SOURCE).advance
        slots = cla.zeros(queue, n, np.uint32)
        ages = cla.zeros(queue, n, np.uint32)
        alive = np.zeros(n, bool)
        age = np.zeros(n, np.int64)
        lifetime = np.zeros(n, np.int64)
        i = np.arange(n, dtype=np.uint64)
        for t in range(steps):
            advance(queue, (n,), None, heap.buffer, slots.data, np.uint32(t), ages.data)
            # The host's replay of the same rules.
            age[alive] += 1
            dies = alive & (age >= lifetime)
            alive &= ~dies
            born = ~alive & ~dies & (mix(i * 7919 + t) % 4 == 0)
            alive |= born
            age[born] = 0
            lifetime[born] = (1 + mix(i + t * 104729) % 16)[born]
            got = ages.get()
            assert ((got > 0) == alive).all(), f"step {t}: wrong population"
            assert int(got.sum()) == int((age[alive] + 1).sum()), f"step {t}: wrong ages"
        errors = heap.errors()
        assert sum(errors.values()) == 0, errors
        heap.check()
        print(f"{steps} steps of {n} slots: {int(alive.sum())} particles alive, heap sound")


if __name__ == "__main__":
    main()
