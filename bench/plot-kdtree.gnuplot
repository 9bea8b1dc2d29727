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
# One allocator's verified rows of a scene, by size: the rows of one allocator need not
# be consecutive in the file (several runs joined), and a line breaks at every row skipped.
rows(a, scene) = sprintf("< awk -F, '$1 == \"%s\" && $2 == \"%s\" && $4 == %d && $18 == \"verified\"' %s | sort -t, -k3,3n", a, scene, factor, csv)
set multiplot layout 1,2 title "k-d tree build (".csv.", heap ".factor."x the root's array)"
do for [scene in "uniform clustered"] {
  set title scene
  plot for [a in names] rows(a, scene) using 3:13 with linespoints lw 2 title a, \
       rows(first, scene) using 3:14 with linespoints lw 2 dt 2 lc rgb "black" title "static"
}
unset multiplot
