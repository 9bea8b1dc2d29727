# clheap-kdtree's CSVs (bench/workloads.sh joins them into kdtree.csv) as paper 000's
# build-time table: ms per build against primitives, one line per allocator (verified
# builds only, heap 200x the root's array), the static build dashed; one panel a scene.
#   gnuplot -e "csv='bench/results/h100/RUN/kdtree.csv'; out='kdtree.png'" bench/plot-kdtree.gnuplot
if (!exists("csv")) csv = "kdtree.csv"
if (!exists("out")) out = "kdtree.png"
if (!exists("factor")) factor = 200
set datafile separator ","
set terminal pngcairo size 1100,480 noenhanced font ",11"
set output out
set logscale xy
set xlabel "primitives"
set ylabel "build ms"
set grid
set key top left
names = system("awk -F, 'NR > 1 && !seen[$1]++ { printf \"%s \", $1 }' ".csv)
first = word(names, 1)
keep(a, scene) = strcol(1) eq a && strcol(2) eq scene && $4 == factor && strcol(18) eq "verified"
set multiplot layout 1,2 title "k-d tree build (".csv.", heap ".factor."x the root's array)"
do for [scene in "uniform clustered"] {
  set title scene
  plot for [a in names] csv using (keep(a, scene) ? $3 : NaN):13 with linespoints lw 2 title a, \
       csv using (keep(first, scene) ? $3 : NaN):14 with linespoints lw 2 dt 2 lc rgb "black" title "static"
}
unset multiplot
