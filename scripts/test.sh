#!/usr/bin/env bash
# Builds everything and runs the tests: the C++ tests through ctest (GPU tests skip without a device),
# then the Python package's tests. This is the command README.md and .ci/run use.
# SPMV_BUILD_TESTS=ON is forced because scripts/run.sh caches it OFF in the same build folder, and
# ctest fails when it finds no test, so that a configuration without tests cannot pass silently.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMV_BUILD_TESTS=ON ${CMAKE_ARGS:-}
ninja -C "$build" -j "${JOBS:-$(nproc)}"
(cd "$build" && ctest --no-tests=error --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900)
if [ "${SPMV_SKIP_PYTHON:-0}" != 1 ]; then
  python3 -m pip install -q ./python
  python3 -m pytest -q python/tests
fi
