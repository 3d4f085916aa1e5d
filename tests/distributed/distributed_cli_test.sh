#!/usr/bin/env bash
# spmv multiply --distributed under mpirun -np 2 writes the same y as one process: exactly, on a matrix
# and x whose products are exact in any summation order (integers), for A x and A^T x with alpha, beta;
# the same y whether every rank reads its byte range of the file or rank 0 reads it (--read-mode);
# and a bad input fails with exit code 1, never a hang. spmv solve
# --distributed: the same iteration count as one process and x within the solve's error bound.
# Usage: distributed_cli_test.sh SPMV MPIEXEC NUMPROC_FLAG SCRATCH
set -euo pipefail
spmv=$1 mpiexec=$2 np_flag=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$spmv" gen poisson2d n=40 -o a.mtx
"$spmv" gen random_uniform rows=700 cols=500 per_row=7 seed=3 -o r.mtx
awk 'BEGIN { for (i = 0; i < 1600; ++i) print (i * 7919) % 13 - 6 }' > x.txt
awk 'BEGIN { for (i = 0; i < 1600; ++i) print (i * 104729) % 11 - 5 }' > y0.txt
awk 'BEGIN { for (i = 0; i < 1600; ++i) print sin(0.01 * i * i) }' > b.txt
# Under --partition $1: A x and A^T x on 2 and 3 ranks, read by byte ranges and by the root, equal to one
# process's exactly (integer data).
exact_products_on_2_and_3_ranks() {
  for np in 2 3; do
    for m in ranges root; do
      for t in "" --transpose; do
        "$spmv" multiply a.mtx --x x.txt --y0 y0.txt --alpha 2 --beta -3 $t -q -o one.mtx
        "$mpiexec" "$np_flag" $np "$spmv" multiply a.mtx --x x.txt --y0 y0.txt --alpha 2 --beta -3 $t -q \
          -o two.mtx --distributed --partition "$1" --read-mode $m
        cmp one.mtx two.mtx
      done
    done
  done
}
# Under --partition $1: a solve with a non-constant right-hand side gives one process's x (both within
# tol * kappa(A) ~ 1e-12 * 660 of the solution, in the max norm: 1e-8 of max |x| has margin); a
# rectangular matrix is refused; bench names the partition, prints its report line $2 with a nonzero edge
# cut on stderr, and verifies against one process.
solve_refusal_and_bench() {
  "$spmv" solve a.mtx --backend cpu --rhs b.txt --tol 1e-12 -o x1.mtx > /dev/null
  "$mpiexec" "$np_flag" 2 "$spmv" solve a.mtx --distributed --partition "$1" --rhs b.txt --tol 1e-12 -o x2.mtx \
    > /dev/null
  paste x1.mtx x2.mtx | awk '/^%/ || NF != 2 { next } { a = $1 < 0 ? -$1 : $1; d = $1 - $2; d = d < 0 ? -d : d;
    if (a > big) big = a; if (d > worst) worst = d } END { if (worst > 1e-8 * big) { print "x differs by " worst; exit 1 } }'
  if "$mpiexec" "$np_flag" 2 "$spmv" multiply r.mtx -q -o two.mtx --distributed --partition "$1" 2> err.txt; then
    echo "expected a failure"; exit 1
  fi
  grep -q 'needs a square matrix' err.txt
  "$mpiexec" "$np_flag" 2 "$spmv" bench --distributed --gen poisson2d:n=60 --partition "$1" --reps 7 \
    > bench.txt 2> err.txt
  head -1 bench.txt | grep -q "2 ranks ($1 partition)"
  grep -q "$2: edge cut [1-9]" err.txt
  grep -q 'verified against the single-process reference: error/bound [0-9.e+-]*$' bench.txt
}
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
# --read-mode: every rank reading its byte range of the file gives the root read's matrix bit for bit, so
# the same y; a gzip file is split by the lines of its inflated text (auto and ranges), the same y too.
for p in nonzeros rows; do
  for m in root ranges; do
    "$mpiexec" "$np_flag" 2 "$spmv" multiply r.mtx --x xr.txt -q -o $m.mtx --distributed --partition $p --read-mode $m
  done
  cmp root.mtx ranges.mtx
done
gzip -c r.mtx > r.mtx.gz
for m in auto ranges; do
  "$mpiexec" "$np_flag" 2 "$spmv" multiply r.mtx.gz --x xr.txt -q -o gz.mtx --distributed --partition rows \
    --read-mode $m
  cmp root.mtx gz.mtx
done
# --partition graph (METIS): rank 0 renumbers the rows, the vectors go through the permutation both ways,
# so the output equals one process's exactly (integer data, as above), for A x and A^T x; a solve with a
# non-constant right-hand side gives one process's x; a rectangular matrix is refused. Without METIS the
# flag must be refused with the package to install.
if "$mpiexec" "$np_flag" 2 "$spmv" multiply a.mtx -q -o two.mtx --distributed --partition graph 2> err.txt; then
  for t in "" --transpose; do
    "$spmv" multiply a.mtx --x x.txt --y0 y0.txt --alpha 2 --beta -3 $t -q -o one.mtx
    "$mpiexec" "$np_flag" 2 "$spmv" multiply a.mtx --x x.txt --y0 y0.txt --alpha 2 --beta -3 $t -q -o two.mtx \
      --distributed --partition graph
    cmp one.mtx two.mtx
  done
  solve_refusal_and_bench graph 'graph partition (METIS, 2 parts)'
else
  grep -q 'built without METIS (apt-get install libmetis-dev' err.txt
  echo "--partition graph: refused, this build has no METIS"
fi
# --partition parallel-graph (PT-Scotch): the ranks partition their rows together, the permutation is
# gathered on rank 0 for the vectors, so the output equals one process's exactly as with graph, for
# A x and A^T x, on 2 and 3 ranks, read by byte ranges and by the root; the solve gives one process's x;
# a rectangular matrix is refused; bench reports the edge cut. Without PT-Scotch: refused with the
# package and the build option.
if "$mpiexec" "$np_flag" 2 "$spmv" multiply a.mtx -q -o two.mtx --distributed --partition parallel-graph 2> err.txt; then
  exact_products_on_2_and_3_ranks parallel-graph
  solve_refusal_and_bench parallel-graph 'parallel graph partition (PT-Scotch, 2 parts)'
else
  grep -q 'built without PT-Scotch (apt-get install libptscotch-dev, then configure with -DSPMV_WITH_PTSCOTCH=ON)' err.txt
  echo "--partition parallel-graph: refused, this build has no PT-Scotch"
fi
# --partition streaming (LDG, no library): as parallel-graph, the output equals one process's exactly for
# A x and A^T x on 2 and 3 ranks, both read modes; the solve gives one process's x; a rectangular
# matrix is refused; bench reports the edge cut and verifies.
exact_products_on_2_and_3_ranks streaming
solve_refusal_and_bench streaming 'streaming partition (LDG, 2 parts)'
# A missing x file on rank 0 is an error, not a hang. Both ranks raise it (the C++ test
# BadInputOnOneRankIsAnErrorOnEveryRank checks that), but mpiexec kills the other process as soon as one
# exits with an error, so the second message may never be printed: at least rank 0's must be.
if "$mpiexec" "$np_flag" 2 "$spmv" multiply a.mtx --x missing.txt -q -o two.mtx --distributed 2> err.txt; then
  echo "expected a failure"; exit 1
fi
test "$(grep -c 'spmv: error: rank 0: --x' err.txt)" -ge 1
# spmv solve --distributed: CG with Jacobi on a.mtx (b = A*1, so x = 1), against one process: the same
# iteration count within the solver tests' slack (3 + 5%; the sums run in another order) and both x
# within 1e-6 of 1 (tol 1e-10 times kappa(A) ~ 660 for a 40 x 40 grid, with margin).
"$spmv" solve a.mtx --backend cpu --precond jacobi --tol 1e-10 -o x1.mtx > one.txt
"$mpiexec" "$np_flag" 2 "$spmv" solve a.mtx --distributed --precond jacobi --tol 1e-10 -o x2.mtx > two.txt
its() { grep -oE 'converged after [0-9]+' "$1" | grep -oE '[0-9]+$'; }
test -n "$(its one.txt)" && test -n "$(its two.txt)"
d=$(( $(its one.txt) - $(its two.txt) )); test ${d#-} -le $(( 3 + $(its one.txt) / 20 ))
for f in x1.mtx x2.mtx; do
  awk '/^%/ || NF != 1 { next } { d = $1 - 1; if ((d < 0 ? -d : d) > 1e-6) { print FILENAME ": " $1; bad = 1 } }
       END { exit bad }' $f
done
test "$(grep -c . x1.mtx)" = "$(grep -c . x2.mtx)"
# BiCGStab and GMRES from a generated matrix, f32, exit code 0 (converged) and rank 0's summary once.
for m in bicgstab gmres; do
  "$mpiexec" "$np_flag" 2 "$spmv" solve --gen poisson2d:n=30 --distributed --method $m --precision f32 --tol 1e-5 > s.txt
  test "$(grep -c 'converged after' s.txt)" = 1
done
# Options without a distributed meaning are refused on every rank.
if "$mpiexec" "$np_flag" 2 "$spmv" solve a.mtx --distributed --lma 2> err.txt; then echo "expected a failure"; exit 1; fi
grep -q -- '--lma is not available with --distributed' err.txt
# --graph is a CUDA option (tests/distributed/distributed_solver_test.cpp runs it on GPUs): refused on the CPU.
if "$mpiexec" "$np_flag" 2 "$spmv" solve a.mtx --distributed --backend cpu --graph 2> err.txt; then
  echo "expected a failure"; exit 1
fi
grep -q 'graph capture is a CUDA option' err.txt
# bench --distributed --json: one verified record per matrix and precision, a line per rank whose rows
# add up to the matrix's; --csv the same as a line per matrix, precision and rank, appended (one header).
"$mpiexec" "$np_flag" 2 "$spmv" bench --distributed --gen poisson2d:n=60 --precision both --reps 7 --json b.json \
  --csv b.csv > /dev/null
"$mpiexec" "$np_flag" 2 "$spmv" bench --distributed --gen random_uniform:rows=500,cols=500,per_row=5 --reps 7 \
  --csv b.csv > /dev/null
python3 - b.json b.csv <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and len(d["records"]) == 2, d
for r in d["records"]:
    assert r["verified"] and r["error_over_bound"] <= 1 and r["ms_per_product"] > 0, r
    assert len(r["per_rank"]) == 2 and sum(p["rows"] for p in r["per_rank"]) == r["rows"] == 3600, r
    assert sum(p["nonzeros"] for p in r["per_rank"]) == r["nnz"], r
assert sorted(r["precision"] for r in d["records"]) == ["f32", "f64"]
lines = list(csv.DictReader(open(sys.argv[2])))
assert len(lines) == 6, lines  # poisson2d f32 and f64, random_uniform f64; two ranks each
assert [l["rank_index"] for l in lines] == ["0", "1"] * 3, lines
for l in lines:
    assert l["verified"] == "true" and float(l["ms_per_product"]) > 0, l
for m, rows in (("poisson2d:n=60", 3600), ("random_uniform:cols=500,per_row=5,rows=500", 500)):
    mine = [l for l in lines if l["matrix"] == m]
    assert mine and all(int(l["rows"]) == rows for l in mine), (m, lines)
    for p in {l["precision"] for l in mine}:
        assert sum(int(l["rank_rows"]) for l in mine if l["precision"] == p) == rows, (m, p, mine)
PY
# A CSV of another header (the single-process bench's) is refused before any matrix runs, on every rank.
"$spmv" bench --gen poisson2d:n=20 --algo row-loop --reps 7 --csv one.csv > /dev/null
if "$mpiexec" "$np_flag" 2 "$spmv" bench --distributed --gen poisson2d:n=60 --csv one.csv > out.txt 2> err.txt; then
  echo "expected a failure"; exit 1
fi
grep -q "exists with a different header" err.txt
if grep -q "^distributed:" out.txt; then echo "a matrix ran before the refusal"; exit 1; fi
if "$mpiexec" "$np_flag" 2 "$spmv" bench --distributed --gen poisson2d:n=60 --tune 2> err.txt; then
  echo "expected a failure"; exit 1
fi
grep -q -- '--tune is not available with --distributed' err.txt
echo "distributed CLI: OK"
