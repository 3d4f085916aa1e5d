#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test spmv (run as root).
# The CUDA toolkit is not installed here: with nvcc on PATH the CUDA backend is built too.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  cmake ninja-build g++ make pkg-config git python3-dev python3-pip \
  libgtest-dev libgmock-dev libcli11-dev libfmt-dev nlohmann-json3-dev libeigen3-dev libhwy-dev zlib1g-dev libomp-dev \
  clang libclang-rt-14-dev libopenmpi-dev openmpi-bin libmetis-dev libptscotch-dev > /dev/null  # OpenMPI: spmv_distributed and its mpirun tests; METIS: its graph partition; PT-Scotch: its parallel graph partition
python3 -m pip install -q --upgrade nanobind scikit-build-core numpy scipy pytest
# Optional: Intel MKL for the CPU vendor baseline Algorithm::Mkl (configure with -DSPMV_WITH_MKL=ON, e.g.
# CMAKE_ARGS=-DSPMV_WITH_MKL=ON scripts/test.sh). CI does not need it.
if [ "${SPMV_INSTALL_MKL:-0}" = 1 ]; then
  python3 -m pip install -q mkl-devel
fi
