#!/usr/bin/env python3
# medians.py DIR VARIANT OUTDIR: per shape, the median over DIR's rounds of each round's median (time, then rate
# from it), for TierAlloc (DIR/VARIANT/*/throughput.csv) and Gallatin (DIR/gal/*/throughput-gallatin.csv), written
# to OUTDIR/throughput.csv and OUTDIR/throughput-gallatin.csv in clheap-bench's columns, for bench/plot.gnuplot.
import csv, sys, glob, collections, os
d, v, out = sys.argv[1:4]
def med(x):
    x = sorted(x); n = len(x)
    return x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2
def write(pattern, name, path):
    rows = collections.defaultdict(list)
    for f in sorted(glob.glob(pattern)):
        for r in csv.DictReader(open(f)):
            if r['allocator'] == name:
                rows[(int(r['work_items']), r['bytes'])].append(r)
    with open(path, 'w', newline='') as fo:
        w = csv.writer(fo)
        w.writerow(['allocator', 'work_items', 'bytes', 'malloc_median_s', 'malloc_min_s', 'malloc_max_s',
                    'free_median_s', 'mallocs_per_s', 'frees_per_s', 'nulls', 'runs', 'start'])
        for (n, b), rs in sorted(rows.items(), key=lambda kv: (kv[0][0], len(kv[0][1]), kv[0][1])):
            m = med([float(r['malloc_median_s']) for r in rs]); f = med([float(r['free_median_s']) for r in rs])
            w.writerow([name, n, b, f'{m:.9f}', min(r['malloc_min_s'] for r in rs), max(r['malloc_max_s'] for r in rs),
                        f'{f:.9f}', f'{n / m:.6e}', f'{n / f:.6e}', sum(int(r['nulls']) for r in rs),
                        sum(int(r['runs']) for r in rs), rs[0]['start']])
os.makedirs(out, exist_ok=True)
write(f'{d}/{v}/*/throughput.csv', 'TierAlloc+warp', f'{out}/throughput.csv')
write(f'{d}/gal/*/throughput-gallatin.csv', 'Gallatin', f'{out}/throughput-gallatin.csv')
