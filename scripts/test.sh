#!/usr/bin/env bash
# Builds everything and runs the tests: the C++ tests through ctest (GPU tests skip without a device),
# then the Python package's tests. This is the command README.md and .ci/run use.
# SPMV_BUILD_TESTS=ON is forced because scripts/run.sh caches it OFF in the same build folder, and
# ctest fails when it finds no test, so that a configuration without tests cannot pass silently.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
# ctest runs as many test processes as cores, and many tests start OpenMP teams of that size (or a
# thread count of their own): with libgomp's default spin-waiting the waiting threads take the cores the
# working ones need, and the run slows by an order of magnitude (2-core VM, 2026-11-27: the scalar
# fallback entry 34 s with passive waiting beside another test, over 14 min spinning). Tests time
# nothing, so they wait passively unless the caller says otherwise.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMV_BUILD_TESTS=ON ${CMAKE_ARGS:-}
ninja -C "$build" -j "${JOBS:-$(nproc)}"
(cd "$build" && ctest --no-tests=error --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 900)
if [ "${SPMV_SKIP_PYTHON:-0}" != 1 ]; then
  python3 -m pip install -q ./python
  python3 -m pytest -q python/tests
fi
