# summary.py FILE...: per core_churn output, the launches' shared accesses over launch 0's (median, p90, slowest, last) and their sum
import re,sys
for f in sys.argv[1:]:
    rows=[l.split() for l in open(f) if re.match(r'\s+\d',l)]
    acc=[int(r[1]) for r in rows]
    s=sorted(acc)
    print('%-22s n %3d first %5.2fM median %.2fx p90 %.2fx max %.2fx last %.2fx sum %.1fM' % (f.split('/')[-1], len(acc), acc[0]/1e6, s[len(s)//2]/acc[0], s[int(len(s)*.9)]/acc[0], max(acc)/acc[0], acc[-1]/acc[0], sum(acc)/1e6))
