"""The ctypes structures in clheap/_lib.py against the C compiler's layout of the headers."""
import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from clheap import _lib

ROOT = Path(__file__).resolve().parents[2]
STRUCTS = {"clheap_heap_config": _lib.HeapConfig, "clheap_grow_policy": _lib.GrowPolicy,
           "clheap_heap_errors": _lib.HeapErrors, "clheap_cache_config": _lib.CacheConfig,
           "clheap_cache_driver": _lib.CacheDriver}


def c_layout(tmp_path):
    """{struct: (size, {field: offset})} as the C compiler lays them out."""
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <clheap/clheap.h>", "int main(void) {"]
    for name, struct in STRUCTS.items():
        lines.append(f'    printf("{name} size %zu\\n", sizeof({name}));')
        for field, *_ in struct._fields_:
            lines.append(f'    printf("{name} {field} %zu\\n", offsetof({name}, {field}));')
    lines.append('    printf("clheap_heap_stats size %zu\\n", sizeof(clheap_heap_stats));')
    lines.append("    return 0;\n}")
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    version = tmp_path / "include" / "clheap"
    version.mkdir(parents=True)
    (version / "version.h").write_text('#define CLHEAP_VERSION_STRING "test"\n')
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", f"-I{ROOT / 'include'}", f"-I{tmp_path / 'include'}",
                    "-DCL_TARGET_OPENCL_VERSION=120", str(source), "-o", str(exe)], check=True)
    layout = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        name, key, value = line.split()
        size, fields = layout.setdefault(name, (0, {}))
        if key == "size":
            layout[name] = (int(value), fields)
        else:
            fields[key] = int(value)
    return layout


@pytest.mark.skipif(not (ROOT / "include" / "clheap" / "clheap.h").exists() or not shutil.which(
    os.environ.get("CC", "cc")), reason="needs the repository's headers and a C compiler")
def test_structures_match_the_headers(tmp_path):
    layout = c_layout(tmp_path)
    for name, struct in STRUCTS.items():
        size, fields = layout[name]
        assert ctypes.sizeof(struct) == size, name
        for field, *_ in struct._fields_:
            assert getattr(struct, field).offset == fields[field], f"{name}.{field}"
    assert layout["clheap_heap_stats"][0] <= _lib.HEAP_STATS_BYTES
