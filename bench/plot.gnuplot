# Plots clheap-bench's CSVs like Figure 3(a)-(d) of Vinkler & Havran, plus throughput.
#   gnuplot -e "dir='bench/results/h100'" bench/plot.gnuplot
if (!exists("dir")) dir = "."
set datafile separator ","
set terminal pngcairo size 900,600 noenhanced font ",11"
set key outside right
set grid
allocators = "AtomicMalloc AtomicWrapMalloc CMalloc CFMalloc CMMalloc CFMMalloc BitmapAlloc BlockAlloc TierAlloc"
papers = dir."/papers.csv"

if (system("test -f ".papers." && echo yes") eq "yes") {
# One line per allocator: rows of test `t` with stride 32 (one allocating work-item per warp).
set logscale y
set output dir."/fig3a-alloc-dealloc.png"
set title "Alloc-Dealloc: time vs payload (stride 32)"
set xlabel "payload [B]"; set ylabel "time [ms]"; set logscale x 2
plot for [a in allocators] papers every ::1 using (strcol(1) eq "ad" && strcol(2) eq a && $3 == 32 ? $4 : 1/0):5 with linespoints title a

set output dir."/fig3b-acd-heap.png"
set title "Alloc-Cycle-Dealloc (10 iterations, 4 B): time vs heap size (stride 32)"
set xlabel "heap [B]"
plot for [a in allocators] papers every ::1 using (strcol(1) eq "acd-heap" && strcol(2) eq a && $3 == 32 ? $4 : 1/0):5 with linespoints title a

unset logscale x
set output dir."/fig3c-acd-iterations.png"
set title "Alloc-Cycle-Dealloc (4 B): time vs iterations (stride 32)"
set xlabel "allocations per work-item"
plot for [a in allocators] papers every ::1 using (strcol(1) eq "acd-iterations" && strcol(2) eq a && $3 == 32 ? $4 : 1/0):5 with linespoints title a

set output dir."/fig3d-probability.png"
set title "Probability (10 launches, 4 B): time vs work-groups of 256 (stride 32)"
set xlabel "work-groups"
plot for [a in allocators] papers every ::1 using (strcol(1) eq "probability" && strcol(2) eq a && $3 == 32 ? $4 : 1/0):5 with linespoints title a
}
unset logscale x

throughput = dir."/throughput.csv"
set logscale y
set logscale x 2
set xtics ("16" 16, "256" 256, "4K" 4096, "64K" 65536, "1M" 1048576)
rows = allocators." CMalloc+warp CFMalloc+warp CMMalloc+warp CFMMalloc+warp BlockAlloc+warp TierAlloc+warp BlockAlloc+group"
set output dir."/throughput-2e20.png"
set title "malloc throughput, 2^20 work-items all allocating"
set xrange [8:2e6]; set yrange [1e4:1e11]
set xlabel "request [B]"; set ylabel "allocations / s"; set logscale x 2
plot for [a in rows] throughput every ::1 using (strcol(1) eq a && $2 == 1048576 && $3 > 0 ? $3 : 1/0):8 with linespoints title a

# The default allocator beside Gallatin (bench/peers/gallatin-bench, same shapes, same
# columns) and the bump ceiling where the run has AtomicMalloc's rows, at every work-item
# count: one panel per count; malloc (column 8) and free (column 9) rates, one image each.
# The two allocators' series, a macro so that the ceiling is one series more (macros in a
# block expand when the block is read: it is defined before).
pair = 'throughput every ::1 using (strcol(1) eq "TierAlloc+warp" && $2 == n+0 && $3 > 0 ? $3 : 1/0):col with linespoints title "TierAlloc+warp", gallatin every ::1 using (strcol(1) eq "Gallatin" && $2 == n+0 && $3 > 0 ? $3 : 1/0):col with linespoints title "Gallatin"'
gallatin = dir."/throughput-gallatin.csv"
if (system("test -f ".gallatin." && echo yes") eq "yes") {
    ceiling = system("grep -q '^AtomicMalloc,' ".throughput." && echo yes") eq "yes"
    set terminal pngcairo size 1500,900 noenhanced font ",10"
    do for [what in "malloc free"] {
        col = what eq "malloc" ? 8 : 9
        set output dir.(what eq "malloc" ? "/throughput-vs-gallatin.png" : "/free-vs-gallatin.png")
        set multiplot layout 2,3 title what." throughput: TierAlloc (default) vs Gallatin, H100"
        set ylabel what eq "malloc" ? "allocations / s" : "frees / s"
        do for [n in "4096 16384 65536 262144 1048576"] {
            set title "work-items ".n
            if (ceiling && what eq "malloc") {
                plot @pair, \
                     throughput every ::1 using (strcol(1) eq "AtomicMalloc" && $2 == n+0 && $3 > 0 ? $3 : 1/0):col with lines dashtype 2 title "bump ceiling"
            } else {
                plot @pair
            }
        }
        unset multiplot
    }
}
