# clheap-wator's trace (--trace FILE) as the paper's Fig. 12a: time per step on the heap,
# one line per allocator, beside the static version (the first allocator's run), and
# the populations on a second axis.
#   gnuplot -e "trace='bench/results/h100/RUN/wator-trace.csv'; out='wator.png'" bench/plot-wator.gnuplot
if (!exists("trace")) trace = "wator-trace.csv"
if (!exists("out")) out = "wator.png"
set datafile separator ","
set terminal pngcairo size 1000,560 noenhanced font ",11"
set output out
set title "Wa-Tor: time per step (".trace.")"
set logscale y
set ylabel "ms per step"
set y2label "agents"
set y2tics
set ytics nomirror
set xlabel "step"
set key outside right
set grid ytics
names = system("awk -F, 'NR > 1 && !seen[$1]++ { printf \"%s \", $1 }' ".trace)
first = word(names, 1)
plot for [a in names] trace using (strcol(1) eq a ? $3 : NaN):6 with lines lw 2 title a, \
     trace using (strcol(1) eq first ? $3 : NaN):7 with lines lw 2 dt 2 lc rgb "black" title "static", \
     trace using (strcol(1) eq first ? $3 : NaN):4 axes x1y2 with lines lw 1.5 lc rgb "#88aadd" title "fish", \
     trace using (strcol(1) eq first ? $3 : NaN):5 axes x1y2 with lines lw 1.5 lc rgb "#dd8888" title "sharks"
