#!/usr/bin/env python3
"""The tables of clheap-bench realloc beside gallatin-bench --realloc (issue 48): for each
shape, the median over rounds of each round's median time, and the ratios the issue's targets
name; then the median over rounds of each round's fastest run (a shape whose runs fall into a
fast and a slow state, by the heap state each meets, shows it as fast times that match while
the medians do not). Rounds whose Gallatin run crashed or failed count as such, never as times.

usage: bench/realloc-table.py ROOT ALLOCATOR
ROOT holds rounds ROOT/new/R/realloc.csv and ROOT/gal/R/realloc-gallatin.csv (R = 1, 2, ...);
a Gallatin round without its row (the harness stopped) is counted in the `Gallatin ran` column."""
import csv, glob, os, statistics, sys

def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))

def main():
    root, allocator = sys.argv[1], sys.argv[2]
    ours, fastest, gal, rounds = {}, {}, {}, sorted(glob.glob(os.path.join(root, 'new', '*', 'realloc.csv')))
    for path in rounds:
        for r in rows(path):
            if r['allocator'] == allocator:
                key = (r['test'], r['bytes'], int(r['work_items']), r['variant'])
                ours.setdefault(key, []).append(float(r['seconds']))
                fastest.setdefault(key, []).append(float(r['min_seconds']))
    gal_rounds = sorted(glob.glob(os.path.join(root, 'gal', '*', 'realloc-gallatin.csv')))
    for path in gal_rounds:
        for r in rows(path):
            key = (r['test'], r['bytes'], int(r['work_items']))
            gal.setdefault(key, []).append((float(r['seconds']), int(r['wrong'])))
    med = lambda v: statistics.median(v) * 1e3 if v else float('nan')
    print(f'{allocator}: {len(rounds)} rounds; Gallatin: {len(gal_rounds)} rounds')
    print('| test | bytes | work-items | API ms | by hand ms | by hand / API | Gallatin ms | Gallatin / API | Gallatin ran '
          '| API fastest ms | by hand fastest ms |')
    print('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    shapes = sorted({k[:3] for k in ours}, key=lambda k: (k[0], int(k[1]), k[2]))
    for test, size, items in shapes:
        api_name = {'calloc': 'calloc', 'aligned': 'aligned'}.get(test, 'realloc')
        hand_name = 'malloc' if test == 'aligned' else 'by-hand'
        api, hand = ours.get((test, size, items, api_name), []), ours.get((test, size, items, hand_name), [])
        g = gal.get((test, size, items), [])
        gm = med([t for t, _ in g])
        a, h = med(api), med(hand)
        fa = med(fastest.get((test, size, items, api_name), []))
        fh = med(fastest.get((test, size, items, hand_name), []))
        print(f'| {test} | {size} | {items} | {a:.3f} | {h:.3f} | {h / a:.2f}x | {gm:.3f} | {gm / a:.2f}x | '
              f'{len(g)} of {len(gal_rounds)} | {fa:.3f} | {fh:.3f} |')

if __name__ == '__main__':
    main()
