#!/usr/bin/env bash
# Builds everything and runs the tests: the C++ tests through ctest (GPU tests skip without a device),
# then the Python package's tests. This is the command README.md and .ci/run use.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
ninja -C "$build" -j "${JOBS:-$(nproc)}"
(cd "$build" && ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900)
if [ "${SPMV_SKIP_PYTHON:-0}" != 1 ]; then
  python3 -m pip install -q ./python
  python3 -m pytest -q python/tests
fi
