#!/usr/bin/env bash
# The three real programs on the device heap (paper 000's k-d tree build, paper 001's
# Wa-Tor and game of life), each with every allocator that can run it, the default
# first, verified against its static-allocation version; CSVs, logs and plots in OUT.
#
#   bench/workloads.sh BUILD_DIR OUT_DIR [PART...]
# PART: kdtree (20,000 - 2,000,000 triangles, both scenes, heap 200x and 20x the root's
# array), kdtree-10m (10,000,000), life (4096 x 4096, and the largest torus a 16 MiB heap
# holds), wator (2048 x 2048, 300 steps, per-step traces; the CircularMalloc family at
# 512 x 512; --lists for the block allocators; the largest sea a 64 MiB heap holds), or
# all (the default). Exit status 1
# if any run was wrong; runs that found their heap too small (exit 3) are reported in
# their CSV rows, not failed. On the H100 (run 25) kdtree took 4.5 minutes; wator's
# block allocators at 2048 x 2048 about 40 s each.
set -uo pipefail
build=$(cd "$1" && pwd)
out=$2
shift 2
parts=${*:-all}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
status=0

run() { # run NAME COMMAND...: its log in OUT/NAME.log; exit 0 and 3 are results
  local name=$1
  shift
  echo "=== $name ($(date -u +%FT%TZ))"
  stdbuf -oL "$@" 2>&1 | tee "$out/$name.log" | grep -v '^device:'
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc"
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || status=1
}

wants() { [[ " $parts " == *" $1 "* || " $parts " == *" all "* ]]; }

kdtree() { # kdtree PRIMS...: both scenes, both heap factors
  for prims in "$@"; do
    for scene in uniform clustered; do
      for factor in 200 20; do
        run "kdtree-$scene-$prims-$factor" "$build/examples/clheap-kdtree" --prims "$prims" --scene "$scene" \
          --heap-factor "$factor" --allocator all --csv "$out/kdtree-$scene-$prims-$factor.csv"
      done
    done
  done
}

wants kdtree && kdtree ${CLHEAP_KDTREE_PRIMS:-20000 200000 2000000} # smaller for a smoke test
wants kdtree-10m && kdtree 10000000
if wants kdtree || wants kdtree-10m; then # one table of every build
  files=$(ls "$out"/kdtree-*-*-*.csv 2>/dev/null | sort -t- -k3,3n)
  [ -n "$files" ] && awk 'FNR > 1 || NR == 1' $files >"$out/kdtree.csv"
fi
if wants life; then
  run life-4096 "$build/examples/clheap-life" --size 4096 --generations 64 --check-every 16 --allocator all \
    --csv "$out/life-4096.csv"
  run life-fit "$build/examples/clheap-life" --fit --heap-mib 16 --generations 16 --check-every 8 --allocator all
fi
if wants wator; then # the CircularMalloc family at 512 x 512: at 2048 x 2048 a step takes it 1 - 3 s
  for a in TierAlloc BlockAlloc BitmapAlloc CMalloc CFMalloc CMMalloc CFMMalloc; do
    case $a in C*) size=512 ;; *) size=2048 ;; esac
    run "wator-$size-$a" "$build/examples/clheap-wator" --size $size --steps 300 --check-every 50 --allocator $a \
      --csv "$out/wator-$size-$a.csv" --trace "$out/wator-trace-$size-$a.csv"
  done
  for size in 2048 512; do
    files=$(ls "$out"/wator-trace-$size-*.csv 2>/dev/null)
    [ -n "$files" ] && awk 'FNR > 1 || NR == 1' $files >"$out/wator-trace-$size.csv"
  done
  for a in TierAlloc BlockAlloc; do
    run "wator-2048-lists-$a" "$build/examples/clheap-wator" --size 2048 --steps 300 --check-every 150 --lists \
      --allocator "$a" --csv "$out/wator-2048-lists-$a.csv"
  done
  run wator-fit "$build/examples/clheap-wator" --fit --heap-mib 64 --steps 100 --check-every 50 --allocator all
fi
if command -v gnuplot >/dev/null; then
  for size in 2048 512; do
    [ -s "$out/wator-trace-$size.csv" ] &&
      gnuplot -e "trace='$out/wator-trace-$size.csv'; out='$out/wator-$size.png'" "$here/plot-wator.gnuplot"
  done
  [ -s "$out/life-4096.csv" ] && gnuplot -e "csv='$out/life-4096.csv'; out='$out/life-4096.png'" "$here/plot-life.gnuplot"
  [ -s "$out/kdtree.csv" ] && gnuplot -e "csv='$out/kdtree.csv'; out='$out/kdtree.png'" "$here/plot-kdtree.gnuplot"
fi
exit $status
