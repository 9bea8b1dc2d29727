#!/usr/bin/env python3
"""Compares the throughput rounds of two clheap builds and a peer, run in turn on one device.

usage: bench/compare-throughput.py NEW PREV PEER [--bands]
Each of NEW, PREV, PEER is a CSV file or a folder searched for CSV files (clheap-bench and
gallatin-bench --csv output; one file may hold several rounds). For each shape (work-items,
bytes) it prints the median over rounds of each one's median malloc and free time, the
ratios new/prev and peer/new, and the geometric means; --bands adds the README's summary
(rate ratio new / peer by size band: geometric mean and minimum). NULLs are summed per
shape and printed, never dropped."""
import csv, glob, math, os, statistics, sys
from collections import defaultdict

OURS = {'TierAlloc', 'TierAlloc+warp'}


def rows(path):
    files = [path] if os.path.isfile(path) else glob.glob(os.path.join(path, '**', '*.csv'), recursive=True)
    for f in files:
        yield from csv.DictReader(open(f))


def load(path, names):
    times, nulls = defaultdict(lambda: ([], [])), defaultdict(int)
    for row in rows(path):
        if row['allocator'] in names:
            key = (int(row['work_items']), row['bytes'])
            times[key][0].append(float(row['malloc_median_s']))
            times[key][1].append(float(row['free_median_s']))
            nulls[key] += int(row['nulls'])
    return times, nulls


def band(size):
    if size.startswith('mixed'):
        return 'mixed sizes'
    b = int(size)
    return '16 B - 1 KiB' if b <= 1024 else '4 - 16 KiB' if b <= 16384 else '64 KiB - 1 MiB'


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    if len(args) != 3:
        sys.exit(__doc__)
    (new, new_nulls), (prev, prev_nulls) = load(args[0], OURS), load(args[1], OURS)
    peer, peer_nulls = load(args[2], {'Gallatin'})
    med = lambda xs: statistics.median(xs) * 1e6
    print('   items    bytes | new m/f us     | prev m/f us    | peer m/f us     | new/prev m f | peer/new m f | rounds  | nulls')
    logs, wins, bands = defaultdict(list), [0, 0, 0], defaultdict(lambda: ([], []))
    for key in sorted(new):
        if key not in prev or key not in peer:
            continue
        n, p, g = [(med(t[key][0]), med(t[key][1])) for t in (new, prev, peer)]
        r = (n[0] / p[0], n[1] / p[1], g[0] / n[0], g[1] / n[1])
        for i, v in enumerate(r):
            logs[i].append(math.log(v))
        wins[0] += 1
        wins[1] += r[2] >= 1.0
        wins[2] += r[3] >= 1.0
        bands[band(key[1])][0].append(r[2])
        bands[band(key[1])][1].append(r[3])
        counts = ','.join(str(len(t[key][0])) for t in (new, prev, peer))
        print(f'{key[0]:8d} {key[1]:>8s} | {n[0]:7.1f} {n[1]:6.1f} | {p[0]:7.1f} {p[1]:6.1f} | {g[0]:8.1f} {g[1]:6.1f} |'
              f' {r[0]:5.2f} {r[1]:5.2f} | {r[2]:5.2f} {r[3]:5.2f} | {counts} | {new_nulls[key]},{prev_nulls[key]},{peer_nulls[key]}')
    gm = [math.exp(sum(logs[i]) / len(logs[i])) for i in range(4)]
    print(f'geometric mean: new/prev malloc {gm[0]:.3f} free {gm[1]:.3f}; peer/new malloc {gm[2]:.3f} free {gm[3]:.3f}')
    print(f'shapes where new is at least as fast as the peer: malloc {wins[1]}/{wins[0]}, free {wins[2]}/{wins[0]}')
    if '--bands' in sys.argv:
        print('| sizes | shapes | malloc, mean | malloc, min | free, mean | free, min |')
        print('| --- | --- | --- | --- | --- | --- |')
        for name in ('16 B - 1 KiB', '4 - 16 KiB', '64 KiB - 1 MiB', 'mixed sizes'):
            m, f = bands[name]
            g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
            print(f'| {name} | {len(m)} | {g(m):.2f}x | {min(m):.2f}x | {g(f):.2f}x | {min(f):.2f}x |')


if __name__ == '__main__':
    main()
