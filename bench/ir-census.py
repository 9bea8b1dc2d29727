#!/usr/bin/env python3
"""Where a device program's size comes from: which source functions were inlined how many
times, and how many instructions each copy brings (issue 46).

usage: bench/ir-census.py PROGRAM.ll [--top N]
PROGRAM.ll is LLVM IR with debug info, e.g. from clang's OpenCL front end, with NVIDIA's
inlining approximated by a high threshold (docs/performance.md, "Where the size comes from"):
  clang -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \\
    -Icl -DCLHEAP_ALLOCATOR=9 -DCLHEAP_HAVE_PTX=1 -O2 -mllvm -inline-threshold=100000 -g \\
    -emit-llvm -S program.cl -o program.ll
For each source function it prints: the instructions of the program whose source line lies
in it, inlined callees included ("inclusive"), those in its own lines ("self"), and its
copies (distinct inlining chains, plus its out-of-line body if it kept one)."""
import re, sys
from collections import defaultdict

def main():
    path = sys.argv[1]
    top = int(sys.argv[sys.argv.index('--top') + 1]) if '--top' in sys.argv else 40
    text = open(path).read().split('\n')
    meta, where = {}, {}
    for line in text:
        m = re.match(r'^!(\d+) = (?:distinct )?!(\w+)\((.*)\)$', line)
        if m:
            meta[m.group(1)] = (m.group(2), m.group(3))
    def field(body, name):
        m = re.search(r'\b' + name + r': (?:!(\d+)|"([^"]*)")', body)
        return (m.group(1) or m.group(2)) if m else None
    def subprogram(scope):
        while scope in meta:
            kind, body = meta[scope]
            if kind == 'DISubprogram':
                return field(body, 'name')
            scope = field(body, 'scope')
        return '?'
    def chain(loc):  # innermost first: (function, inlinedAt id)
        out = []
        while loc in meta and meta[loc][0] == 'DILocation':
            body = meta[loc][1]
            at = field(body, 'inlinedAt')
            out.append((subprogram(field(body, 'scope')), at))
            loc = at
        return out
    cache = {}
    self_count, incl, copies = defaultdict(int), defaultdict(int), defaultdict(set)
    total = 0
    for line in text:
        if not line.startswith('  ') or '!dbg !' not in line or line.lstrip().startswith('call void @llvm.dbg'):
            continue
        loc = re.search(r'!dbg !(\d+)', line).group(1)
        if loc not in cache:
            cache[loc] = chain(loc)
        c = cache[loc]
        if not c:
            continue
        total += 1
        self_count[c[0][0]] += 1
        seen = set()
        for i, (fn, at) in enumerate(c):
            copies[fn].add(tuple(x[1] for x in c[i:]))
            if fn not in seen:
                incl[fn] += 1
                seen.add(fn)
    print(f"{total} instructions with a source line")
    print(f"{'function':40}{'inclusive':>10}{'self':>8}{'copies':>8}")
    for fn in sorted(incl, key=lambda f: -incl[f])[:top]:
        print(f"{fn:40}{incl[fn]:>10}{self_count[fn]:>8}{len(copies[fn]):>8}")

main()
