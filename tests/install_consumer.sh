#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds examples/ against it with
# find_package(clheap CONFIG) and a one-file program with pkg-config, and runs both.
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/examples" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/examples/clheap-demo"

libdir=$(ls -d "$work"/prefix/lib*/pkgconfig | head -n1)
cat >"$work/pc.c" <<'C'
#include <clheap/clheap.h>
#include <stdio.h>
int main(void) { puts(clheap_status_string(CLHEAP_ERROR_DOUBLE_FREE)); return 0; }
C
# shellcheck disable=SC2046
cc -std=c11 "$work/pc.c" -o "$work/pc" $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs clheap)
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/pc" | grep -q CLHEAP_ERROR_DOUBLE_FREE
# The README's example, compiled with the README's command.
# shellcheck disable=SC2046
(cd "$work" && cc "$source_dir/examples/minimal.c" -o minimal $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs clheap))
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/minimal" | grep -q "0 of 4096 sums wrong; heap check: sound"
# Users' kernels can #include the installed device sources with -I.
cc -std=c11 "$source_dir/tests/include_consumer.c" -o "$work/include_consumer" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs clheap)
cldir=$(PKG_CONFIG_PATH="$libdir" pkg-config --variable=cldir clheap)
test -f "$cldir/clheap.cl"
LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}" "$work/include_consumer" "$cldir"
# The installed package's clheap_add_spirv, where the SPIR-V tools are (ci/install-deps.sh).
if command -v llvm-spirv-14 >/dev/null && command -v spirv-val >/dev/null; then
  mkdir -p "$work/spirv"
  cat >"$work/spirv/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(spirv_consumer C)
find_package(clheap 0.1 CONFIG REQUIRED)
clheap_add_spirv(minimal_spirv ALLOCATOR TierAlloc SOURCES $source_dir/tests/spirv/user.cl)
CMAKE
  cmake -S "$work/spirv" -B "$work/spirv/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
  cmake --build "$work/spirv/build" >/dev/null
  spirv-val "$work/spirv/build/minimal_spirv.spv"
fi
echo "install consumer OK: find_package, pkg-config, the README's example, #include \"clheap.cl\" with -I, SPIR-V"
