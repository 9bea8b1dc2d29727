"""Every clheap status as a Python exception; OpenCL's own errors as pyopencl's."""
from __future__ import annotations

import pyopencl as cl

from ._lib import lib


def _status_codes() -> dict:
    """Status name -> number, read from the library's one list (include/clheap/status.h):
    clheap's own codes lie from 1000 on."""
    codes = {}
    for code in range(0, 1200):
        name, sep, _text = lib.clheap_status_string(code).decode().partition(": ")
        if sep:
            codes[name] = code
    return codes


#: Every clheap status by name, e.g. STATUS["CLHEAP_ERROR_DOUBLE_FREE"].
STATUS = _status_codes()


class Error(Exception):
    """A clheap status other than success: `status` (its number), `name`
    (``CLHEAP_ERROR_...``) and `text` (its explanation), from include/clheap/status.h."""

    def __init__(self, status: int, routine: str, detail: str = ""):
        full = lib.clheap_status_string(status).decode()
        self.status = status
        self.name, _, self.text = full.partition(": ")
        self.routine = routine
        self.detail = detail
        message = f"{routine}: {self.name}: {self.text}"
        super().__init__(message + (f"\n{detail}" if detail else ""))


class HeapCorrupt(Error):
    """clheap_heap_check found a broken invariant; `detail` is its report."""


class BuildError(Error):
    """A program did not build; `log` is the build log, at the user's own line numbers
    ("source 1:7:5: error: ...")."""

    @property
    def log(self) -> str:
        return self.detail


def _opencl_error(status: int, routine: str) -> Exception:
    """pyopencl's exception for an OpenCL error code, as pyopencl raises it."""
    record = cl._cl._ErrorRecord(routine, status, lib.clheap_status_string(status).decode())
    if status in (-4, -5, -6):  # allocation failure, out of resources, out of host memory
        return cl.MemoryError(record)
    if status <= -30:  # CL_INVALID_*
        return cl.LogicError(record)
    return cl.RuntimeError(record)


def check(status: int, routine: str, detail: str = "", kind: type = Error) -> None:
    """Raises for any status but success: clheap's codes as `kind`, OpenCL's as pyopencl's."""
    if status == 0:
        return
    if status < 0:
        raise _opencl_error(status, routine)
    raise kind(status, routine, detail)


class Closable:
    """What Heap and Cache share: a handle (None once closed), `close()` (the subclass's),
    `with` blocks, and a close when the object dies."""

    _handle = None

    def _live(self) -> int:
        """The handle, or Error (CLHEAP_ERROR_INVALID_HANDLE) once closed."""
        if self._handle is None:
            name = type(self).__name__
            raise Error(STATUS["CLHEAP_ERROR_INVALID_HANDLE"], f"clheap.{name}", f"the {name.lower()} was closed")
        return self._handle

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # a destructor must not raise; close() says what went wrong
            pass
