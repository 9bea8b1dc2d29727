# clheap-life's CSV (--csv FILE) as bars: time per generation on the heap, per allocator,
# beside the static O(cells) kernel of the same run.
#   gnuplot -e "csv='bench/results/h100/run21-life/life-1024.csv'; out='life-1024.png'" bench/plot-life.gnuplot
if (!exists("csv")) csv = "life.csv"
if (!exists("out")) out = "life.png"
set datafile separator ","
set terminal pngcairo size 900,500 noenhanced font ",11"
set output out
set title "Game of life: time per generation (".csv.")"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.01:*]
set ylabel "ms per generation"
set xtics rotate by -30
set key top left
set grid ytics
plot csv every ::1 using 6:xtic(1) title "heap objects (clheap)", \
     '' every ::1 using 7 title "static O(cells) kernel"
