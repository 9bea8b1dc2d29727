# bench/churn-merge.py's CSV as bars: the median launch of each churn-mixed shape
# (depth:max:rounds:work-items), clheap beside Gallatin, log scale; a shape where Gallatin
# returned NULLs is labelled with their count (its time is no comparison).
#   gnuplot -e "csv='bench/results/h200/run96/churn.csv'; out='churn.png'" bench/plot-churn.gnuplot
# (width='1500' for many shapes)
if (!exists("csv")) csv = "churn.csv"
if (!exists("out")) out = "churn.png"
if (!exists("width")) width = 1000
set datafile separator ","
set terminal pngcairo size width,520 noenhanced font ",11"
set output out
set title "In-kernel churn: median launch, ms (".csv.")"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.1:*]
set ylabel "ms per launch"
set xtics rotate by -30
set key top left autotitle columnheader
set grid ytics
plot csv using 2:xtic(1), '' using 3, \
     '' using ($0 + 0.17):($3 * 1.3):(stringcolumn(5) eq "0" ? "" : stringcolumn(5)." NULLs") with labels notitle
