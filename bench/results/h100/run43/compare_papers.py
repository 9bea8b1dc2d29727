#!/usr/bin/env python3
"""Geometric mean of new / base median times per (test, allocator, stride) of two papers.csv files.
Usage: compare_papers.py BASE.csv NEW.csv [NEW2.csv ...] (every NEW against BASE)."""
import collections, csv, math, sys


def load(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        if r['median_ms']:
            rows[(r['test'], r['allocator'], r['stride'], r['x'])] = (float(r['median_ms']), int(r['nulls'] or 0))
    return rows


base = load(sys.argv[1])
for path in sys.argv[2:]:
    new = load(path)
    ratios = collections.defaultdict(list)
    nulls = collections.Counter()
    for key, (t, n) in new.items():
        if key in base:
            ratios[key[:3]].append(math.log(t / base[key][0]))
            nulls[key[1], 'base'] += base[key][1]
            nulls[key[1], 'new'] += n
    print(f'{path} / {sys.argv[1]}')
    for key in sorted(ratios):
        print('  %-16s %-10s stride %-3s %.2f (%d sizes)' % (*key, math.exp(sum(ratios[key]) / len(ratios[key])), len(ratios[key])))
    print('  NULLs:', ', '.join(f'{a} {w} {c}' for (a, w), c in sorted(nulls.items())))
