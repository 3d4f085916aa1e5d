#!/usr/bin/env bash
# Packs the CPU-against-MKL benchmark for a machine without MKL or a package registry (the GPU machines'
# host cores; issue 17): bench/spmv_bench_cpu_vs_vendor from a build configured here with
# -DSPMV_WITH_MKL=ON (BUILD, default /work/build-mkl), MKL's runtime libraries (xz, ~38 MB), libhwy, the
# SuiteSparse files of the CPU list and run.sh into build-mklrun/ (git-ignored), under the device
# tool's 64 MiB carry. On the device: `THREADS="16 1" build-mklrun/run.sh` writes $OUT/cpu_mkl.csv.
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
for f in EX5 bcsstk16 cage10 ct2010 nh2010 luxembourg_osm bayer10 cti cs4; do
  cp "${SPMV_MATRICES:-../shared/matrices}/$f.mtx.gz" build-mklrun/m/
done
cat > build-mklrun/run.sh <<'RUN'
#!/usr/bin/env bash
# The 17 matrices of docs/PERFORMANCE.md's CPU sections, every CPU candidate, MKL and Eigen, per thread count.
cd "$(dirname "$0")"
tar -xJf mkl.tar.xz -C lib
export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
M=$PWD/m out=${OUT:-.}/cpu_mkl.csv
: > "$out"
lscpu | grep -E "Model name|^CPU\(s\)|L3" > "${OUT:-.}/lscpu.txt"
for threads in ${THREADS:-16 1}; do
  for spec in poisson2d:n=1000 stencil27:n=60 rmat:scale=18,edge_factor=16 \
      random_uniform:rows=500000,cols=500000,per_row=10 long_rows:rows=200000,cols=200000 \
      mostly_empty:rows=1000000,cols=1000000,nonempty_fraction=0.05,per_row=32 fem2d:n=700 \
      banded:n=300000,half_bandwidth=8 $M/{EX5,bcsstk16,cage10,ct2010,nh2010,luxembourg_osm,bayer10,cti,cs4}.mtx.gz; do
    OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads OMP_PROC_BIND=close ./spmv_bench_cpu_vs_vendor --rounds 3 \
      --algos auto,row-loop,merge-parallel,dia,sell,mkl,eigen,auto-hint --csv one.csv "$spec" > /dev/null \
      2>> "${OUT:-.}/err.log"
    grep -v '^matrix,' one.csv | sed "s/^/$threads,/" >> "$out"
  done
done
wc -l "$out"
RUN
chmod +x build-mklrun/run.sh
du -sh build-mklrun
