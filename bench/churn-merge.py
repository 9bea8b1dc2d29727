#!/usr/bin/env python3
"""clheap-bench churn-mixed beside gallatin-bench --churn-mixed, one row per shape, for
bench/plot-churn.gnuplot: the shape, each side's median launch in ms and NULLs, and the
ratio Gallatin's time over clheap's (above 1: clheap faster; empty where Gallatin returned
NULLs or did not finish, so no speed is compared with a wrong answer).

usage: bench/churn-merge.py CLHEAP.csv GALLATIN.csv ALLOCATOR > merged.csv
Both files are the harnesses' --csv output (churn_mixed.csv, churn_mixed-gallatin.csv)."""
import csv, sys

def shape(r):
    return f"{r['depth']}:{r['max_bytes']}:{r['rounds']}:{r['work_items']}"

def main():
    ours_path, peer_path, allocator = sys.argv[1:4]
    ours = [r for r in csv.DictReader(open(ours_path)) if r['allocator'] == allocator]
    peer = {shape(r): r for r in csv.DictReader(open(peer_path))}
    out = csv.writer(sys.stdout)
    out.writerow(['shape', allocator + ' ms', 'Gallatin ms', allocator + ' NULLs', 'Gallatin NULLs',
                  'Gallatin status', 'ratio'])
    for r in ours:
        g = peer.get(shape(r))
        ms = float(r['median_s']) * 1e3
        if g is None:
            out.writerow([shape(r), f'{ms:.3f}', '', r['nulls'], '', 'not run', ''])
            continue
        gms = float(g['median_s']) * 1e3 if g['median_s'] not in ('', '-') else float('nan')
        fair = g['status'] == 'ok' and g['nulls'] == '0' and g['wrong'] == '0' and r['status'] == 'ok'
        out.writerow([shape(r), f'{ms:.3f}', f'{gms:.3f}', r['nulls'], g['nulls'], g['status'],
                      f'{gms / ms:.2f}' if fair else ''])

if __name__ == '__main__':
    main()
