#!/usr/bin/env python3
"""json_lines_valid.py FILE: every line of FILE is one JSON document of clheap's stats
shape (test_heap writes one per allocator), and the heaps with size classes describe
each class and, for TierAlloc, the page tier. Exits non-zero with the reason otherwise."""
import json
import sys

docs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
if not docs:
    sys.exit("no document")
for d in docs:
    for key in ("kind", "version", "used_bytes", "free_bytes", "allocator", "live_bytes", "held_bytes", "errors"):
        if key not in d:
            sys.exit(f"{d.get('allocator')}: no {key}")
    if d["live_bytes"] + d["held_bytes"] != d["used_bytes"]:
        sys.exit(f"{d['allocator']}: live + held is not used")
    for c in d.get("classes", []):
        if set(c) != {"bytes", "capacity", "blocks", "objects"}:
            sys.exit(f"{d['allocator']}: class fields {sorted(c)}")
    if d["allocator"] in ("BlockAlloc", "TierAlloc") and not d.get("classes"):
        sys.exit(f"{d['allocator']}: no classes")
    if d["allocator"] == "TierAlloc" and "unsettled_blocks" not in d.get("pages", {}):
        sys.exit("TierAlloc: no page tier")
print(f"{len(docs)} documents: " + ", ".join(d["allocator"] for d in docs))
