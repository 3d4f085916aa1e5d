#!/usr/bin/env bash
# Packs the CPU-against-MKL benchmark for a machine without MKL or a package registry (the GPU machines'
# host cores; issue 17): bench/spmv_bench_cpu_vs_vendor from a build configured here with
# -DSPMV_WITH_MKL=ON (BUILD, default /work/build-mkl), MKL's runtime libraries (xz, ~38 MB), libhwy,
# bench/cpu_matrices.txt with its SuiteSparse files and run.sh into build-mklrun/ (git-ignored), under
# the device tool's 64 MiB carry. On the device: `THREADS="16 1" build-mklrun/run.sh` writes
# $OUT/cpu_mkl.csv (ALGOS=a,b,... names the operators, default every CPU candidate, MKL and Eigen).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-/work/build-mkl}
mkl_lib=$(pkg-config --variable=libdir mkl-dynamic-lp64-gomp 2>/dev/null ||
  python3 -c "import sys; print(sys.prefix + '/lib')")  # pip's mkl-devel installs into the prefix's lib
rm -rf build-mklrun && mkdir -p build-mklrun/lib build-mklrun/m
cp "$build/bench/spmv_bench_cpu_vs_vendor" build-mklrun/
cp -L /lib/x86_64-linux-gnu/libhwy.so.1 build-mklrun/lib/
# The AVX-512 kernel library only (the GPU machines' hosts have AVX-512; avx2's would pass the 64 MiB).
tar -C "$mkl_lib" -cf - libmkl_intel_lp64.so.3 libmkl_gnu_thread.so.3 libmkl_core.so.3 libmkl_avx512.so.3 |
  xz -6 -T0 > build-mklrun/mkl.tar.xz
cp bench/cpu_matrices.txt build-mklrun/
for f in $(grep '\.mtx\.gz$' bench/cpu_matrices.txt); do
  cp "${SPMV_MATRICES:-../shared/matrices}/$f" build-mklrun/m/
done
cat > build-mklrun/run.sh <<'RUN'
#!/usr/bin/env bash
# The matrices of cpu_matrices.txt (bench/), every CPU candidate, MKL and Eigen, per thread count.
cd "$(dirname "$0")"
tar -xJf mkl.tar.xz -C lib
export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${OUT:-.}/cpu_mkl.csv
: > "$out"
lscpu | grep -E "Model name|^CPU\(s\)|L3" > "${OUT:-.}/lscpu.txt"
for threads in ${THREADS:-16 1}; do
  for spec in $(grep -v '^#' cpu_matrices.txt); do
    [[ $spec == *.mtx.gz ]] && spec=$PWD/m/$spec
    OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads OMP_PROC_BIND=close ./spmv_bench_cpu_vs_vendor --rounds 3 \
      --algos "${ALGOS:-auto,row-loop,merge-parallel,dia,sell,mkl,eigen,auto-hint}" --csv one.csv "$spec" > /dev/null \
      2>> "${OUT:-.}/err.log"
    grep -v '^matrix,' one.csv | sed "s/^/$threads,/" >> "$out"
  done
done
wc -l "$out"
RUN
chmod +x build-mklrun/run.sh
du -sh build-mklrun
