#!/usr/bin/env bash
# spmv multiply --distributed under mpirun -np 2 writes the same y as one process: exactly, on a matrix
# and x whose products are exact in any summation order (integers), for A x and A^T x with alpha, beta;
# and without MPI's launcher, a bad input fails on every rank with exit code 1 (no hang).
# Usage: distributed_cli_test.sh SPMV MPIEXEC NUMPROC_FLAG SCRATCH
set -euo pipefail
spmv=$1 mpiexec=$2 np_flag=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$spmv" gen poisson2d n=40 -o a.mtx
"$spmv" gen random_uniform rows=700 cols=500 per_row=7 seed=3 -o r.mtx
awk 'BEGIN { for (i = 0; i < 1600; ++i) print (i * 7919) % 13 - 6 }' > x.txt
awk 'BEGIN { for (i = 0; i < 1600; ++i) print (i * 104729) % 11 - 5 }' > y0.txt
for t in "" --transpose; do
  "$spmv" multiply a.mtx --x x.txt --y0 y0.txt --alpha 2 --beta -3 $t -q -o one.mtx
  "$mpiexec" "$np_flag" 2 "$spmv" multiply a.mtx --x x.txt --y0 y0.txt --alpha 2 --beta -3 $t -q -o two.mtx --distributed
  cmp one.mtx two.mtx
done
# Random values: equal within rounding (relative 1e-12 per entry), rectangular, both partitions.
awk 'BEGIN { for (i = 0; i < 500; ++i) print sin(i) }' > xr.txt
"$spmv" multiply r.mtx --x xr.txt -q -o one.mtx
for p in nonzeros rows; do
  "$mpiexec" "$np_flag" 2 "$spmv" multiply r.mtx --x xr.txt -q -o two.mtx --distributed --partition $p
  paste one.mtx two.mtx | awk '/^%/ || NF != 2 { next } { d = $1 - $2; s = ($1 < 0 ? -$1 : $1) + 1e-300;
    if ((d < 0 ? -d : d) > 1e-12 * s) { print "entry " NR ": " $1 " vs " $2; bad = 1 } } END { exit bad }'
done
# A missing x file on rank 0 is an error on both ranks, not a hang.
if "$mpiexec" "$np_flag" 2 "$spmv" multiply a.mtx --x missing.txt -q -o two.mtx --distributed 2> err.txt; then
  echo "expected a failure"; exit 1
fi
test "$(grep -c 'spmv: error: rank 0: --x' err.txt)" = 2
echo "distributed CLI: OK"
