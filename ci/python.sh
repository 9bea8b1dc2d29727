#!/usr/bin/env bash
# The Python package on the default OpenCL device (PoCL on a fresh Debian 12 machine):
# `pip install ./python` into a virtual environment that sees Debian's pyopencl and numpy,
# its pytest suite (also with one PoCL thread under timeout), the examples, and PyOpenCL's
# own array tests (test/test_array.py from the pyopencl sdist pip downloads; not
# committed) with clheap.Cache under every array, against the same with MemoryPool.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(realpath -m "${1:-build-ci-python}")
rm -rf "$work" python/build
mkdir -p "$work"
${PYTHON:-/usr/bin/python3} -m venv --system-site-packages "$work/venv"  # Debian's python3, which sees python3-pyopencl
py=$work/venv/bin/python
"$py" -m pip install -q ./python
"$py" -c 'import clheap._front'  # the compiled hot path was built
"$py" -m pytest -q -p no:cacheprovider python/tests --ignore=python/tests/peer
CLHEAP_PYTHON_FRONT=1 "$py" -m pytest -q -p no:cacheprovider python/tests/test_cache.py  # the Python one
POCL_MAX_PTHREAD_COUNT=1 timeout 300 "$py" -m pytest -q -p no:cacheprovider python/tests --ignore=python/tests/peer
for example in examples/python/*.py; do
  echo "== $example =="
  timeout 300 "$py" "$example"
done

echo "== pyopencl's test_array.py: MemoryPool, then clheap.Cache =="
version=$("$py" -c 'import pyopencl; print(".".join(map(str, pyopencl.VERSION)))')
"$py" -m pip download -q --no-deps --no-binary :all: --no-build-isolation "pyopencl==$version" -d "$work/sdist"
tar xzf "$work/sdist/pyopencl-$version.tar.gz" -C "$work/sdist"
tests=$work/sdist/pyopencl-$version/test
cp python/tests/peer/conftest.py "$tests/"
for mode in pool cache; do
  mkdir -p "$work/$mode"
  (cd "$tests" && CLHEAP_PEER_ALLOCATOR=$mode CLHEAP_PEER_REPORT=$work/$mode/report.json \
     timeout 900 "$py" -m pytest -q -p no:cacheprovider test_array.py --junitxml="$work/$mode/results.xml" |
     tail -3) || true
done
"$py" python/tests/peer/compare.py "$work/pool" "$work/cache"
