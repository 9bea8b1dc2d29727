"""Fixtures: one PyOpenCL context and queue on the default device (as the C tests choose
it: CLHEAP_PLATFORM, CLHEAP_DEVICE; PoCL in CI)."""
import os

import pyopencl as cl
import pytest


def _device() -> cl.Device:
    want_platform = os.environ.get("CLHEAP_PLATFORM", "")
    want_device = os.environ.get("CLHEAP_DEVICE", "")
    platforms = [p for p in cl.get_platforms() if want_platform in p.name]
    devices = [d for p in platforms for d in p.get_devices()]
    if want_device.isdigit():
        return devices[int(want_device)]
    devices = [d for d in devices if want_device in d.name]
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    return (gpus or devices)[0]


@pytest.fixture(scope="session")
def context() -> cl.Context:
    return cl.Context([_device()])


@pytest.fixture(scope="session")
def queue(context: cl.Context) -> cl.CommandQueue:
    return cl.CommandQueue(context)
