#!/usr/bin/env python3
# compare.py DIR [VARIANT]: TierAlloc (DIR/VARIANT/ROUND/throughput.csv, VARIANT base unless given) against Gallatin (DIR/gal/ROUND/throughput-gallatin.csv),
# the rounds of one session alternating; per shape the median over rounds of each round's median, and
# Gallatin's time / ours (1.0 or more: at least as fast). The empty-kernel rows are both harnesses' launch floor.
import csv, sys, glob, math, collections
d = sys.argv[1]
def load(pattern, name):
    res = collections.defaultdict(lambda: {'m': [], 'f': [], 'n': 0})
    for f in sorted(glob.glob(pattern)):
        for r in csv.DictReader(open(f)):
            if r['allocator'] not in (name, 'empty-kernel'):
                continue
            k = (int(r['work_items']), r['bytes'])
            res[k]['m'].append(float(r['malloc_median_s'])); res[k]['f'].append(float(r['free_median_s']))
            res[k]['n'] += int(r['nulls'])
    return res
def med(x):
    x = sorted(x); n = len(x)
    return x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2
v = sys.argv[2] if len(sys.argv) > 2 else 'base'
t = load(f'{d}/{v}/*/throughput.csv', 'TierAlloc+warp')
g = load(f'{d}/gal/*/throughput-gallatin.csv', 'Gallatin')
print(f"{'items':>8} {'bytes':>9} | TierAlloc malloc free us | Gallatin malloc free us | Gallatin/TierAlloc m f | rounds | NULLs")
behind_m = behind_f = 0; lm = []; lf = []
for k in sorted(t, key=lambda k: (k[0], len(k[1]), k[1])):
    if k not in g:
        continue
    tm, tf, gm, gf = (med(v) * 1e6 for v in (t[k]['m'], t[k]['f'], g[k]['m'], g[k]['f']))
    floor = k[1] == '0'
    if not floor:
        behind_m += gm / tm < 1.0; behind_f += gf / tf < 1.0
        lm.append(math.log(gm / tm)); lf.append(math.log(gf / tf))
    print(f"{k[0]:8d} {('floor' if floor else k[1]):>9} | {tm:9.1f} {tf:8.1f} | {gm:9.1f} {gf:8.1f} | {gm/tm:5.2f} {gf/tf:5.2f}"
          f" | {len(t[k]['m'])},{len(g[k]['m'])} | {t[k]['n']},{g[k]['n']}")
print(f"shapes behind Gallatin: malloc {behind_m}, free {behind_f} of {len(lm)}; "
      f"geomean Gallatin/TierAlloc malloc {math.exp(sum(lm)/len(lm)):.2f} free {math.exp(sum(lf)/len(lf)):.2f}")
