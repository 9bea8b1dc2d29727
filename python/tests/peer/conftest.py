"""PyOpenCL's own array tests (test/test_array.py of the pyopencl sdist that pip downloads;
never committed) with an allocator under every array that asks for none, chosen by
CLHEAP_PEER_ALLOCATOR: "cache" (clheap.Cache), "pool" (PyOpenCL's MemoryPool) or "none".
ci/python.sh copies this file beside test_array.py and compares the two runs' outcomes."""
import json
import os

import pyopencl as cl
import pyopencl.array as cl_array
import pyopencl.tools as cl_tools

MODE = os.environ.get("CLHEAP_PEER_ALLOCATOR", "none")
_allocators = {}
_served = {"allocations": 0}
_original_init = cl_array.Array.__init__


def _allocator_for(cq):
    context = cq if isinstance(cq, cl.Context) else cq.context
    key = context.int_ptr
    if key not in _allocators:
        if MODE == "cache":
            import clheap
            _allocators[key] = clheap.Cache(context)
        else:
            queue = cq if isinstance(cq, cl.CommandQueue) else cl.CommandQueue(context)
            _allocators[key] = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue))
    allocator = _allocators[key]

    def counted(nbytes):
        _served["allocations"] += 1
        return allocator(nbytes)
    return counted


def _init_with_allocator(self, cq, shape, dtype, order="C", allocator=None, *args, **kwargs):
    if allocator is None and cq is not None and MODE in ("cache", "pool"):
        allocator = _allocator_for(cq)
    _original_init(self, cq, shape, dtype, order, allocator, *args, **kwargs)


cl_array.Array.__init__ = _init_with_allocator


def pytest_sessionfinish(session, exitstatus):
    """Writes how many allocations the allocator served, and checks every clheap cache."""
    problems = []
    for allocator in _allocators.values():
        if MODE == "cache":
            try:
                allocator.check()
            except Exception as e:  # reported, and the runner fails on it
                problems.append(str(e))
    with open(os.environ.get("CLHEAP_PEER_REPORT", "peer-report.json"), "w") as f:
        json.dump({"mode": MODE, "allocations": _served["allocations"], "problems": problems}, f)
