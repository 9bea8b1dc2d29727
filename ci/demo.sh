#!/usr/bin/env bash
# Installs what is missing, builds clheap and runs the demo on the default OpenCL device
# (CLHEAP_PLATFORM / CLHEAP_DEVICE choose another; see include/clheap/device.h).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec build/examples/clheap-demo
