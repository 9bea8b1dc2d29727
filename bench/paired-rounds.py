#!/usr/bin/env python3
"""Paired rounds: how a variant's times compare with a base's, round by round.

usage: bench/paired-rounds.py ROOT BASE VARIANT...
ROOT/NAME/ROUND/throughput.csv is clheap-bench --csv output, the variants of one round run
in turn on one device (bench/results/h100/run61/command-run59.sh). For each round it takes the
geometric mean over the shapes of variant / base (median malloc time, median free time), and
prints the mean over rounds with a 95% interval (two standard errors): adjacent runs share
the device's state, so pairing them removes most of the drift between rounds that a
per-shape median over rounds keeps."""
import csv, math, os, statistics, sys


def load(root, name, rnd):
    times = {}
    for row in csv.DictReader(open(os.path.join(root, name, rnd, 'throughput.csv'))):
        if row['allocator'].startswith('TierAlloc'):
            times[(row['work_items'], row['bytes'])] = (float(row['malloc_median_s']), float(row['free_median_s']))
    return times


def main():
    root, base, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
    rounds = sorted(os.listdir(os.path.join(root, base)), key=int)
    for v in variants:
        per = ([], [])
        for r in rounds:
            try:
                a, b = load(root, v, r), load(root, base, r)
            except FileNotFoundError:
                continue
            for k in (0, 1):
                logs = [math.log(a[s][k] / b[s][k]) for s in a if s in b]
                per[k].append(sum(logs) / len(logs))
        out = []
        for k, what in enumerate(('malloc', 'free')):
            m, se = statistics.mean(per[k]), statistics.stdev(per[k]) / math.sqrt(len(per[k]))
            out.append(f'{what} {math.exp(m):.3f} (95% {math.exp(m - 2 * se):.3f}-{math.exp(m + 2 * se):.3f})')
        print(f'{v}/{base}, {len(per[0])} rounds: ' + '; '.join(out))


if __name__ == '__main__':
    main()
