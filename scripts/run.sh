#!/usr/bin/env bash
# The main job: builds spmv and runs `spmv bench` on the built-in default matrix (a generated 2D
# Poisson problem) on the best backend available: the GPU when there is one, else the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMV_BUILD_TESTS=OFF ${CMAKE_ARGS:-} > /dev/null
ninja -C "$build" -j "${JOBS:-$(nproc)}" spmv_cli > /dev/null
exec "$build/src/cli/spmv" bench "$@"
