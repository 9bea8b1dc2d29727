#!/usr/bin/env python3
# compare-variants.py DIR V1,V2,... [THRESHOLD]: per shape, Gallatin (DIR/gal/*/throughput-gallatin.csv) and each
# variant (DIR/V/*/throughput.csv): the median over rounds of each round's median time (us) and Gallatin's time /
# the variant's (1.0 or more: at least as fast), printed for the launch floors (bytes 0) and for the shapes where
# a variant is under THRESHOLD (default 1.1) in malloc or free; then the shapes behind Gallatin per variant.
import csv, glob, collections, sys
d=sys.argv[1]; vs=sys.argv[2].split(',')
def med(x):
    x=sorted(x); n=len(x); return x[n//2] if n%2 else (x[n//2-1]+x[n//2])/2
def load(pat,name):
    res=collections.defaultdict(lambda:{'m':[],'f':[]})
    for f in glob.glob(pat):
        for r in csv.DictReader(open(f)):
            if r['allocator'] not in (name,'empty-kernel'): continue
            k=(int(r['work_items']),r['bytes']); res[k]['m'].append(float(r['malloc_median_s'])*1e6); res[k]['f'].append(float(r['free_median_s'])*1e6)
    return res
gal=load(f'{d}/gal/*/throughput-gallatin.csv','Gallatin')
V={v:load(f'{d}/{v}/*/throughput.csv','TierAlloc+warp') for v in vs}
thr=float(sys.argv[3]) if len(sys.argv)>3 else 1.1
print('items bytes | gal m f | '+' | '.join(f'{v} m f (ratio)' for v in vs))
for k in sorted(gal, key=lambda k:(k[0],len(k[1]),k[1])):
    gm,gf=med(gal[k]['m']),med(gal[k]['f'])
    row=[]; show=False
    for v in vs:
        if k not in V[v]: row.append('-'); continue
        m,f=med(V[v][k]['m']),med(V[v][k]['f'])
        rm,rf=gm/m,gf/f
        show|= (rm<thr or rf<thr) and k[1] not in ('floor', '0')
        row.append(f'{m:7.1f} {f:6.1f} ({rm:4.2f} {rf:4.2f})')
    if show or k[1] in ('floor', '0'): print(f'{k[0]:8d} {k[1]:>8s} | {gm:7.1f} {gf:6.1f} | '+' | '.join(row))
for v in vs:
    bm=sum(1 for k in gal if k[1] not in ('floor', '0') and k in V[v] and med(gal[k]['m'])<med(V[v][k]['m']))
    bf=sum(1 for k in gal if k[1] not in ('floor', '0') and k in V[v] and med(gal[k]['f'])<med(V[v][k]['f']))
    print(v,'behind: malloc',bm,'free',bf, 'rounds', len(glob.glob(f'{d}/{v}/*/throughput.csv')))
