"""An iterative array program on clheap.Cache: each step allocates arrays of a few sizes,
uses them and drops them (Futhark's free-list pattern). After the first step the cache
serves every allocation and the driver is asked for nothing. Checks its own result."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

import clheap


def main() -> None:
    context = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(context)
    n = 100_000
    with clheap.Cache(context) as cache:
        x = cla.to_device(queue, np.linspace(0.0, 1.0, n, dtype=np.float32), allocator=cache)
        for step in range(50):
            y = x * np.float32(0.5)           # temporaries: allocated and freed every step
            z = y + np.float32(1.0 / (step + 1))
            x = z - np.float32(1.0 / (step + 1)) + y
            if step == 0:
                after_first = cache.stats()["driver_allocs"]
        expected = np.linspace(0.0, 1.0, n, dtype=np.float32)  # x * 0.5 + x * 0.5 each step
        assert np.allclose(x.get(), expected, atol=1e-5), "wrong result"
        stats = cache.stats()
        assert stats["driver_allocs"] == after_first, "the steady state asked the driver"
        print(f"50 steps: {stats['hits']} allocations from the cache, {stats['driver_allocs']} from the driver")
        del x, y, z


if __name__ == "__main__":
    main()
