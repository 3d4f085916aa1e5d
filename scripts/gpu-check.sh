#!/usr/bin/env bash
# The GPU session in one command: builds spmv for sm_90 on the GPU machine, runs the GPU tests,
# compute-sanitizer (memcheck + racecheck) on a small set, the benchmark, and prints a short table last.
#
#   scripts/gpu-check.sh [all|build|tests|sanitize|stream-cost|bench|python] ...   (default: all)
#
#   (not part of all: symmetric, issue 13's copy-free transpose of matrices equal to their transpose;
#   long-rows, issue 13's long rows in launch-bound products (csr-vector's chunks, Auto's class);
#   cpu-bench, the CPU backend against Eigen on the GPU host's cores; families,
#   Auto's cross-validation sweep, bench/auto_families.py, FAMILIES_BUDGET seconds, resumed from
#   FAMILIES_CSV when given, narrowed by FAMILIES_ALGO and FAMILIES_ONLY; auto-confirm, Auto as it runs on
#   the families; compressed, compressed-csr against the formats and cuSPARSE; profile, the Nsight
#   Compute counters of `spmv bench --profile`; huge, issue 18's largest matrices end
#   to end, peak host RSS by /usr/bin/time -v; distributed, issues 10/16: the MPI tests on the CUDA
#   backend (2 ranks and one per GPU) and the strong-scaling bench on 2 and on every GPU (DIST_PARTS,
#   DIST_GENS, DIST_PRECISION, DIST_RANKS, DIST_EXTRA bench arguments, DIST_TAG in the log names,
#   DIST_FILTER; DIST_PARTS with "solve": distributed CG per iteration on 1, 2 and every GPU,
#   DIST_SOLVE_GENS, DIST_SOLVE_MAXIT, DIST_SOLVE_VARIANTS "cg pipelined graph pipelined-graph");
#   tune-study, Algorithm::Tune
#   against an exhaustive sweep (TUNE_SETS "gen files", TUNE_HINTS "0 1000", TUNE_GENS);
#   lma, the FEM local-matrix-assembly operator against CSR; solve-study, CG time per iteration,
#   assembled vs tuned vs LMA; solver-speed, issue 15: the fused CG against the unfused one and
#   cupyx/scipy, time per iteration against the floor; spmm, issue 11: `spmv bench --k` against
#   cusparseSpMM for k = SPMM_KS (default 4 8 32), f32 and f64, SPMM_LAYOUT (row), SPMM_GENS / SPMM_FILES,
#   SPMM_EXTRA (more bench arguments, e.g. --transpose), then bench/spmm_summary.py's harmonic means;
#   semiring-speed, issue 11: the CUDA semiring kernels against plus-times plans, SEMIRING_MATRICES;
#   semiring-rule, issue 11: SemiringPlan's Auto fitted and tested (bench/semiring_rule.py);
#   l2-window, issue 13 §3: an L2 persisting window on x, bench/cuda/l2_window.cpp on L2W_MATRICES
#   with L2W_ALGOS; cpu-rule, issue 17: the CPU Auto's hint with the fitted costs against the costs
#   measured on this host (SPMV_CPU_CALIBRATION=0/1 alternating per matrix, bench/cpu_vs_vendor.cpp with
#   Eigen), on one thread and on CPU_RULE_THREADS (default all), CPU_RULE_MATRICES (default
#   bench/cpu_matrices.txt))
# Environment: OUT (where logs and CSV/JSON go, default build-gpu/out), SPMV_MATRICES (default
# .matrices, a git-ignored copy of ../shared/matrices carried to the GPU machine), GTEST_FILTER,
# BENCH_ARGS (extra arguments for bench/run_suite.sh), PYTEST_ARGS (default python/tests), JOBS, BUILD_TARGETS (ninja targets; default all), PACK=1 (tar $OUT into $OUT/out.tgz at the end:
# the device tool brings back at most 8 files).
# The GPU machine has no package registry: Debian packages the build needs (GoogleTest, CLI11, fmt,
# nlohmann-json, Eigen) travel as .deb files in .deps/ (scripts/fetch-device-deps.sh) and are
# unpacked into a private prefix, never into /.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
OUT=${OUT:-$root/build-gpu/out}
mkdir -p "$OUT"
export SPMV_MATRICES=${SPMV_MATRICES:-$root/.matrices}
JOBS=${JOBS:-$(nproc)}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(all)
# Steps that `all` leaves out: long runs, or runs for one issue.
opt_in=" symmetric long-rows cpu-rule l2-window semiring-speed semiring-rule cpu-bench families auto-confirm compressed reorder profile huge distributed tune-study lma solve-study solver-speed spmm "
want() { for s in "${steps[@]}"; do { [ "$s" = all ] && [[ "$opt_in" != *" $1 "* ]]; } || [ "$s" = "$1" ] && return 0; done; return 1; }
summary=()
note() { summary+=("$1"); echo "== $1"; }

prefix=/tmp/spmv-deps
if [ -d .deps ] && [ ! -d $prefix/usr ]; then
  for f in .deps/*.deb; do dpkg -x "$f" $prefix; done
fi
cmake_extra=()
if [ -d $prefix/usr ]; then
  cmake_extra+=("-DCMAKE_PREFIX_PATH=$prefix/usr")
  # The Python build (scikit-build-core) finds Highway through hwy_ROOT (not the whole prefix: its
  # static, non-PIC libz.a must not reach the extension); libhwy.so.1 is loaded from there too.
  export hwy_ROOT=$prefix/usr
  # scotch-int64 first: CMake links PT-Scotch's 64-bit variant, whose libraries share their sonames
  # with the 32-bit ones one folder up (spmv refuses a library of the wrong width at run time).
  export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu/scotch-int64:$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# NCCL (the distributed CUDA backend): the toolkit's, else pip's nvidia-nccl-cu13 (the GPU image has it).
if [ ! -f /usr/local/cuda/include/nccl.h ] && [ ! -f /usr/include/nccl.h ]; then
  nccl_root=$(python3 -c "import nvidia.nccl as m; print(m.__path__[0])" 2>/dev/null)
  [ -n "$nccl_root" ] && cmake_extra+=("-DNCCL_ROOT=$nccl_root") &&
    export LD_LIBRARY_PATH=$nccl_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# A snapshot (scripts/snapshot.sh) has no .git: its COMMIT file names the commit for the reports.
[ -f COMMIT ] && cmake_extra+=("-DSPMV_GIT_COMMIT=$(cat COMMIT)")

build=build-gpu
if want build || want tests || want sanitize || want bench || want cpu-bench || want cpu-rule || want families || want auto-confirm || want compressed || want symmetric || want long-rows || want reorder || want profile || want huge || want distributed || want tune-study || want lma || want solve-study || want solver-speed || want spmm || want l2-window || want semiring-speed || want semiring-rule; then
  t0=$(date +%s)
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${cmake_extra[@]}" \
    > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; note "configure FAILED"; exit 1; }
  if ! ninja -C $build -j "$JOBS" ${BUILD_TARGETS:-} > "$OUT/build.log" 2>&1; then
    grep -E "error|Error" "$OUT/build.log" | head -40
    note "build FAILED (see build.log)"
    exit 1
  fi
  note "build ok in $(( $(date +%s) - t0 )) s"
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader > "$OUT/gpu.txt" 2>&1
note "device: $(head -1 "$OUT/gpu.txt")"

if want tests; then
  filter=${GTEST_FILTER:-*}
  $build/tests/spmv_cuda_tests --gtest_filter="$filter" --gtest_brief=1 --gtest_color=no > "$OUT/cuda_tests.log" 2>&1
  rc=$?
  grep -E "^\[  FAILED  \]|Failure|error" "$OUT/cuda_tests.log" | head -60
  note "cuda tests (rc=$rc): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \].*tests?, listed' "$OUT/cuda_tests.log" | tr '\n' ' ')"
  # --gtest_brief prints one summary line "[  SKIPPED ] N tests, listed below:" (refusals of the zoo).
  note "cuda tests skipped: $(grep -oE '^\[  SKIPPED \] [0-9]+' "$OUT/cuda_tests.log" | grep -oE '[0-9]+$' || echo 0)"
fi

if want sanitize; then
  # A small set: one tiny and one adversarial matrix per algorithm, double precision.
  sfilter=${SANITIZE_FILTER:-*Sanitize*}
  for tool in memcheck racecheck; do
    # racecheck skips the cuSPARSE baselines: it reports hazards inside cuSPARSE's own csrmv kernel
    # (seen on CUDA 13.0, 2026-11-21), which is not our code to fix.
    filter=$sfilter
    [ $tool = racecheck ] && filter="$sfilter:-*cusparse*"
    timeout ${SANITIZE_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 99 $build/tests/spmv_cuda_tests --gtest_filter="$filter" \
      --gtest_brief=1 > "$OUT/sanitize_$tool.log" 2>&1
    rc=$?
    note "compute-sanitizer $tool (rc=$rc): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize_$tool.log" | tail -1)"
  done
fi

if want stream-cost; then
  # What ordering products across streams costs a single stream (issue 19; docs/PERFORMANCE.md).
  $build/bench/spmv_bench_stream_order_cost > "$OUT/stream_order_cost.txt" 2>&1
  note "stream-order cost rc=$?"
  cat "$OUT/stream_order_cost.txt"
fi

if want semiring-rule; then
  # Issue 11: SemiringPlan's Auto (rows kernel or merge-path) fitted on half of the matrices of
  # bench/auto_families.py and the files, tested on the other half (bench/semiring_rule.py).
  mapfile -t sr_list < <(python3 bench/semiring_rule.py list --matrices "$SPMV_MATRICES")
  timeout ${SEMIRING_RULE_TIMEOUT:-400} $build/bench/spmv_bench_semiring_speed --semirings min-plus "${sr_list[@]}" \
    > "$OUT/semiring_rule.txt" 2>&1
  note "semiring-rule rc=$? ($(grep -c '^stats' "$OUT/semiring_rule.txt") of ${#sr_list[@]} matrices)"
  python3 bench/semiring_rule.py fit "$OUT/semiring_rule.txt" --matrices "$SPMV_MATRICES" --markdown \
    > "$OUT/semiring_rule_fit.txt" 2>&1
  cat "$OUT/semiring_rule_fit.txt"
fi

if want l2-window; then
  # Issue 13 §3: the gather-bound classes with and without an L2 persisting window on x.
  default_l2w="random_uniform:rows=1000000,cols=1000000,per_row=16 random_uniform:rows=4000000,cols=4000000,per_row=8
    random_uniform:rows=16000000,cols=16000000,per_row=4 rmat:scale=20,edge_factor=16 rmat:scale=22,edge_factor=16
    mostly_empty:rows=4000000,cols=4000000,nonempty_fraction=0.05,per_row=64 poisson3d:n=140"
  # shellcheck disable=SC2086
  timeout ${L2W_TIMEOUT:-300} $build/bench/spmv_bench_l2_window ${L2W_ALGOS:+--algos "$L2W_ALGOS"} ${L2W_MATRICES:-$default_l2w} \
    > "$OUT/l2_window.txt" 2>&1
  note "l2-window rc=$?"
  cat "$OUT/l2_window.txt"
fi

if want semiring-speed; then
  # Issue 11: each semiring on the device against the plus-times plans (Auto, cuSPARSE) of the same matrix.
  default_sr="rmat:scale=20,edge_factor=16 random_uniform:rows=1000000,cols=1000000,per_row=16 poisson3d:n=140
    $SPMV_MATRICES/luxembourg_osm.mtx.gz $SPMV_MATRICES/nh2010.mtx.gz $SPMV_MATRICES/cage10.mtx.gz"
  # shellcheck disable=SC2086
  timeout ${SEMIRING_TIMEOUT:-300} $build/bench/spmv_bench_semiring_speed ${SEMIRING_MATRICES:-$default_sr} \
    > "$OUT/semiring_speed.txt" 2>&1
  note "semiring-speed rc=$?"
  cat "$OUT/semiring_speed.txt"
fi

if want bench; then
  # Every algorithm plus Auto, both precisions: A*x, then A^T*x, into one CSV; plots; summary table.
  spmv_tool=$build/src/cli/spmv
  bash bench/run_suite.sh --spmv $spmv_tool --out "$OUT" --algo auto,all --precision both ${BENCH_ARGS:-} \
    > "$OUT/bench.log" 2>&1
  note "bench A*x rc=$?"
  bash bench/run_suite.sh --spmv $spmv_tool --out "$OUT" --algo auto,all --precision both --transpose \
    ${BENCH_ARGS:-} >> "$OUT/bench.log" 2>&1
  note "bench A^T*x rc=$?"
  python3 bench/plot.py "$OUT/suite.csv" --out "$OUT" >> "$OUT/bench.log" 2>&1
  python3 bench/summarize.py "$OUT/suite.csv" > "$OUT/summary_table.txt" 2>&1
fi

if want cpu-bench; then
  # The CPU backend against Eigen on this host's cores (the default matrix and two irregular ones).
  $build/src/cli/spmv bench --backend cpu --algo auto,all --precision both --csv "$OUT/cpu.csv" -q \
    --gen poisson2d:n=1000 --gen rmat:scale=18,edge_factor=16 --gen stencil27:n=60 > "$OUT/cpu_bench.log" 2>&1
  note "cpu bench rc=$?"
  python3 bench/summarize.py "$OUT/cpu.csv" >> "$OUT/summary_table.txt" 2>&1
fi

if want cpu-rule; then
  list=${CPU_RULE_MATRICES:-$(grep -v '^#' bench/cpu_matrices.txt)}
  : > "$OUT/cpu_rule.csv"
  for threads in 1 ${CPU_RULE_THREADS:-$(nproc)}; do
    for spec in $list; do
      [[ $spec == *.mtx.gz ]] && spec=$SPMV_MATRICES/$spec
      for c in 0 1; do
        SPMV_CPU_CALIBRATION=$c OMP_NUM_THREADS=$threads OMP_PROC_BIND=close $build/bench/spmv_bench_cpu_vs_vendor \
          --rounds 3 --algos auto,auto-hint,eigen --csv "$OUT/cpu_rule_one.csv" "$spec" >> "$OUT/cpu_rule.log" 2>&1
        grep -v '^matrix,' "$OUT/cpu_rule_one.csv" | sed "s/,auto-hint,/,hint$c,/; s/^/$threads,/" \
          >> "$OUT/cpu_rule.csv"
      done
    done
  done
  note "cpu-rule: $(wc -l < "$OUT/cpu_rule.csv") rows"
fi

if want families; then
  [ -n "${FAMILIES_CSV:-}" ] && cp "$FAMILIES_CSV" "$OUT/families.csv"
  # FAMILIES_ALGO / FAMILIES_ONLY narrow the sweep (spmv bench --algo; comma-separated family names).
  python3 bench/auto_families.py run --spmv $build/src/cli/spmv --out "$OUT" --budget "${FAMILIES_BUDGET:-420}" \
    ${FAMILIES_ALGO:+--algo "$FAMILIES_ALGO"} ${FAMILIES_ONLY:+--families "$FAMILIES_ONLY"} > "$OUT/families.log" 2>&1
  note "families sweep rc=$? ($(grep -c ' ok$' "$OUT/families.log") matrices ok this call)"
  grep -v ' ok$' "$OUT/families.log" | tail -5
  python3 bench/auto_families.py fit "$OUT/families.csv" > "$OUT/families_fit.txt" 2>&1
  tail -40 "$OUT/families_fit.txt"
fi

if want compressed; then
  # Issue 13 section 1: compressed-csr (device conversion) against DIA, SELL, the CSR kernels and cuSPARSE
  # on stencils, FEM, a band, random columns and SuiteSparse files; setup time and payoff in the CSV.
  $build/src/cli/spmv bench --backend cuda --precision both --expected-applies 1000 --quiet --csv "$OUT/compressed.csv" \
    --algo auto,compressed-csr,dia,sell,csr-scalar,csr-vector,cusparse-csr-alg1,cusparse-coo-alg1 \
    --gen poisson2d:n=2000 --gen poisson3d:n=140 --gen stencil27:n=90 --gen fem3d:n=120 --gen fem2d:n=1500 \
    --gen banded:n=2000000,half_bandwidth=5,seed=1 --gen random_uniform:rows=1000000,cols=1000000,per_row=16,seed=1 \
    "$SPMV_MATRICES"/{bcsstk16,cage10,EX5,nh2010,luxembourg_osm,cti}.mtx.gz > "$OUT/compressed.log" 2>&1
  note "compressed-csr bench rc=$?"
fi

if want symmetric; then
  # Issue 13's copy-free transpose: A^T x of matrices equal to their transpose through A x's own plan
  # (symmetric) against the copy-free kernels, the explicit transpose and cuSPARSE, without and with the
  # hint; A x's Auto beside it (its setup, against symmetric's, is the device check's cost).
  sym_inputs=(--gen poisson2d:n=2000 --gen poisson3d:n=140 --gen stencil27:n=90
    "$SPMV_MATRICES"/{EX5,bcsstk13,bcsstk16,cs4,ct2010,cti,luxembourg_osm,nh2010,whitaker3,zenios,PGPgiantcompo}.mtx.gz)
  for applies in 0 1000; do
    $build/src/cli/spmv bench --backend cuda --precision both --transpose --expected-applies $applies --quiet \
      --csv "$OUT/symmetric_t_$applies.csv" "${sym_inputs[@]}" \
      --algo auto,symmetric,explicit-transpose,transpose-atomic,hola,csr-vector,cusparse-csr-alg1,cusparse-coo-alg1 \
      > "$OUT/symmetric_t_$applies.log" 2>&1
    note "symmetric A^T x bench (expected applies $applies) rc=$?"
  done
  $build/src/cli/spmv bench --backend cuda --precision both --quiet --csv "$OUT/symmetric_n.csv" "${sym_inputs[@]}" \
    --algo auto > "$OUT/symmetric_n.log" 2>&1
  note "A x bench rc=$?"
fi

if want long-rows; then
  # Issue 13: long rows where one warp's chain of passes is the critical path (csr-vector's one-pass chunks
  # below 2^20 nonzeros or for few long rows; the launch-bound long-row class), Auto against merge-path and
  # cuSPARSE on small and mid-size long-row matrices and the SuiteSparse files (a regression check).
  lr_inputs=(--gen rmat:scale=13,edge_factor=16,seed=7 --gen rmat:scale=15,edge_factor=16,seed=7,a=0.5,b=0.1667,c=0.1667
    --gen rmat:scale=16,edge_factor=8,seed=7
    --gen long_rows:rows=50000,cols=50000,long_rows=30,long_length=2000,short_length=10,seed=7
    --gen long_rows:rows=100000,cols=100000,long_rows=2,long_length=50000,short_length=4,seed=7
    --gen dense_rows:n=100000,dense_rows=5,dense_fraction=0.2,per_row=6,seed=7
    --gen rmat:scale=17,edge_factor=16,seed=7 --gen rmat:scale=18,edge_factor=8,seed=7
    --gen long_rows:rows=200000,cols=200000,long_rows=20,long_length=20000,short_length=6,seed=7
    --gen dense_rows:n=300000,dense_rows=4,dense_fraction=0.3,per_row=6,seed=7 "$SPMV_MATRICES"/*.mtx.gz)
  $build/src/cli/spmv bench --backend cuda --precision both --quiet --csv "$OUT/long_rows.csv" "${lr_inputs[@]}" \
    --algo auto,csr-vector,merge-path,cusparse-csr-alg1,cusparse-coo-alg1 > "$OUT/long_rows.log" 2>&1
  note "long-rows bench rc=$?"
fi

if want reorder; then
  # Issue 13 section 3: Options::reorder (RCM, degree) against the same kernels on the matrix as given,
  # cuSPARSE always on the matrix as given; --shuffle relabels at random (a numbering without locality).
  # REORDER_GENS narrows the matrices, REORDER_RUNS the (shuffle seed : order) runs.
  gens=${REORDER_GENS:-"poisson3d:n=128 rmat:scale=20,edge_factor=16,seed=1 random_uniform:rows=1000000,cols=1000000,per_row=12,seed=1"}
  args=(); for g in $gens; do args+=(--gen "$g"); done
  for run in ${REORDER_RUNS:-0:none 0:rcm 1:none 1:rcm 1:degree}; do
    shuffle=${run%%:*} how=${run#*:}
    $build/src/cli/spmv bench --backend cuda --precision both --quiet --shuffle $shuffle --reorder $how \
      --algo ${REORDER_ALGOS:-auto,csr-vector,cusparse-csr-alg1,cusparse-coo-alg1} \
      --csv "$OUT/reorder_s${shuffle}_$how.csv" "${args[@]}" "$SPMV_MATRICES"/{nh2010,luxembourg_osm}.mtx.gz \
      > "$OUT/reorder_s${shuffle}_$how.log" 2>&1
    note "reorder shuffle=$shuffle $how rc=$?"
  done
  python3 bench/reorder_summary.py "$OUT"/reorder_s*_*.csv | tee "$OUT/reorder_summary.txt"
  # Solvers permute b and x once per solve (not per product): CG on a stencil as given and shuffled.
  for g in ${REORDER_SOLVE_GENS:-poisson3d:n=128 stencil27:n=100}; do
    for run in 0:none 0:rcm 1:none 1:rcm; do
      shuffle=${run%%:*} how=${run#*:}
      for p in f64 f32; do
        $build/src/cli/spmv solve --gen "$g" --backend cuda --precision $p --method cg --tol 1e-6 --maxit 2000 \
          --shuffle $shuffle --reorder $how > "$OUT/reorder_solve.tmp" 2>&1
        echo "solve $g $p shuffle=$shuffle reorder=$how: $(grep -E 'after|ms/iteration|max error' "$OUT/reorder_solve.tmp" | tr '\n' ' ')" \
          | tee -a "$OUT/reorder_solve.txt"
      done
    done
  done
fi

if want profile; then
  # Nsight Compute counters per algorithm (issue 13 section 5) on one matrix of each gather class.
  $build/src/cli/spmv bench --backend cuda --precision f64 --profile --quiet --csv "$OUT/profile.csv" \
    --algo auto,csr-scalar,csr-vector,merge-path,hola,sell,cusparse-csr-alg1,cusparse-coo-alg1 \
    --gen poisson3d:n=100 --gen random_uniform:rows=500000,cols=500000,per_row=16,seed=1 \
    --gen rmat:scale=19,edge_factor=16,seed=1 \
    --gen mostly_empty:rows=2000000,cols=2000000,nonempty_fraction=0.05,per_row=64,seed=1 > "$OUT/profile.log" 2>&1
  note "profile rc=$?"
  grep -E "^  profile|^\[" "$OUT/profile.log" | head -60
  python3 bench/plot.py "$OUT/profile.csv" --out "$OUT" > /dev/null 2>&1
fi

if want auto-confirm; then
  # Auto as it runs (not looked up from kernel times) on the families, without and with the hint.
  for applies in 0 1000; do
    mkdir -p "$OUT/confirm_$applies"
    python3 bench/auto_families.py run --spmv $build/src/cli/spmv --out "$OUT/confirm_$applies" \
      --algo auto,cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo-alg1 --expected-applies $applies \
      --budget "${FAMILIES_BUDGET:-200}" > "$OUT/confirm_$applies.log" 2>&1
    note "auto-confirm applies=$applies rc=$? ($(grep -c ' ok$' "$OUT/confirm_$applies.log") matrices ok)"
    python3 bench/auto_families.py fit "$OUT/confirm_$applies/families.csv" --measured --markdown \
      > "$OUT/confirm_$applies.md" 2>&1
    grep "| all" "$OUT/confirm_$applies.md"
  done
fi

if want tune-study; then
  # Issue 9: Algorithm::Tune against an exhaustive sweep of its space, without and with the hint, on
  # the benchmark suite (the eight generated matrices of bench/run_suite.sh, a FEM matrix, every file).
  # TUNE_GENS (space-separated generator specs) replaces the generated set, to split it over calls.
  gens=(poisson2d:n=2000 poisson3d:n=140 stencil27:n=90 random_uniform:rows=1000000,cols=1000000,per_row=16,seed=1
        rmat:scale=20,edge_factor=16,seed=1
        long_rows:rows=1000000,cols=1000000,long_rows=100,long_length=100000,short_length=12,seed=1
        mostly_empty:rows=4000000,cols=4000000,nonempty_fraction=0.05,per_row=64,seed=1
        dense_rows:n=1000000,dense_rows=20,dense_fraction=0.5,per_row=12,seed=1 fem3d:n=100)
  [ -n "${TUNE_GENS:-}" ] && read -r -a gens <<< "$TUNE_GENS"
  gen_args=(); for g in "${gens[@]}"; do gen_args+=(--gen "$g"); done
  for hint in ${TUNE_HINTS:-0 1000}; do
    for set in ${TUNE_SETS:-gen files}; do
      if [ $set = gen ]; then inputs=("${gen_args[@]}"); else inputs=("$SPMV_MATRICES"/*.mtx.gz); fi
      $build/src/cli/spmv bench --backend cuda --tune --algo auto,tune --precision both --expected-applies $hint \
        --reps 7 --min-sample-ms 0.5 "${inputs[@]}" -q > "$OUT/tune_${hint}_$set.log" 2>&1
      note "tune study (expected applies $hint, $set) rc=$?"
    done
  done
  python3 bench/tune_table.py "$OUT"/tune_*.log | tee "$OUT/tune_table.md" | tail -n 8
fi

if want lma; then
  # Issue 9: the local-matrix-assembly operator against the CSR algorithms on the same FEM problems.
  $build/src/cli/spmv bench --gen fem3d:n=160 --gen fem2d:n=2001 --lma --backend cuda \
    --algo auto,csr-scalar,csr-vector,merge-path,sell,dia,cusparse-csr-alg1,cusparse-coo-alg1 --precision both \
    --csv "$OUT/lma.csv" > "$OUT/lma.log" 2>&1
  note "lma bench rc=$?"
  grep -E "^\[|^(auto|csr|merge|sell|dia|cusparse|lma)" "$OUT/lma.log" | cut -c1-150 | head -50
fi

if want solve-study; then
  # Issue 9: time per CG iteration on ~4 M-unknown FEM problems, assembled (Auto, tuned) vs matrix-free LMA.
  for mesh in fem3d:n=160 fem2d:n=2001; do
    for prec in f64 f32; do
      for variant in "--algo auto" "--algo tune" "--lma"; do
        $build/src/cli/spmv solve --gen $mesh --backend cuda --precision $prec --tol 1e-6 --maxit 3000 $variant \
          > "$OUT/solve.log" 2>&1
        echo "$mesh $prec $variant: $(grep -E 'converged|BREAKDOWN' "$OUT/solve.log" | head -1) |" \
          "$(grep -E 'ms/iteration' "$OUT/solve.log") | $(grep -E '^  algorithm' "$OUT/solve.log" | cut -c1-70)" \
          | tee -a "$OUT/solve_study.txt"
      done
    done
  done
  note "solve study done"
fi

if want solver-speed; then
  # Issue 15: `spmv solve` CG per iteration against its floor, fused vs unfused (and the CUDA graph), f32
  # and f64, then bench/solver_compare.py (spmv vs cupyx vs scipy) with the Python package built here.
  # SOLVER_METHODS narrows the comparison (e.g. gmres); SOLVER_COMPARE_ONLY=1 skips the `spmv solve` runs.
  meshes="fem3d:n=160 poisson2d:n=2000 poisson3d:n=160"
  [ "${SOLVER_COMPARE_ONLY:-0}" = 1 ] && meshes=""
  for mesh in $meshes; do
    for prec in f64 f32; do
      for variant in "" "--unfused" "--graph" "--expected-applies 5000" "--precond jacobi" "--precond jacobi --unfused"; do
        name=speed_$(echo "$mesh $prec $variant" | tr ' :=,' '____' | tr -s '_' | tr -d '-')
        $build/src/cli/spmv solve --gen $mesh --backend cuda --precision $prec --tol 1e-6 --maxit 5000 $variant           --json "$OUT/$name.json" > "$OUT/$name.log" 2>&1
        echo "$mesh $prec ${variant:-fused}: $(grep -E 'converged|BREAKDOWN' "$OUT/$name.log" | head -1) |" \
          "$(grep -E 'ms/iteration' "$OUT/$name.log" | cut -c1-60) | $(grep -E '^  floor' "$OUT/$name.log" | grep -oE 'time/floor.*')" \
          "| $(grep -E '^  algorithm' "$OUT/$name.log" | awk '{print $2}')" \
          | tee -a "$OUT/solver_speed.txt"
      done
    done
  done
  python3 -m pip install --no-build-isolation --no-deps -q ./python > "$OUT/python_build.log" 2>&1 ||
    tail -5 "$OUT/python_build.log"
  python3 bench/solver_compare.py --scale full --backend cuda --matrices "$SPMV_MATRICES" --json "$OUT/solver_compare.json" \
    --methods "${SOLVER_METHODS:-cg,bicgstab,gmres}" \
    > "$OUT/solver_compare.md" 2> "$OUT/solver_compare.log"
  note "solver-speed compare rc=$?"
  cat "$OUT/solver_compare.md"
fi

if want spmm; then
  # Issue 11: spmv's SpMM against cusparseSpMM (ALG_DEFAULT, CSR_ALG1/2/3; the fastest is the baseline),
  # Y = A X with k columns, generated matrices of each shape class and SuiteSparse files.
  gens=${SPMM_GENS:-"poisson2d:n=2000 rmat:scale=20,edge_factor=16,seed=1 random_uniform:rows=1000000,cols=1000000,per_row=16,seed=1 stencil27:n=90 long_rows:rows=1000000,cols=1000000,long_rows=100,long_length=100000,short_length=12,seed=1"}
  files=${SPMM_FILES:-"bcsstk16 cage10 EX5 nh2010 luxembourg_osm cti"}
  args=()
  for g in $gens; do args+=(--gen "$g"); done
  for f in $files; do [ -f "$SPMV_MATRICES/$f.mtx.gz" ] && args+=("$SPMV_MATRICES/$f.mtx.gz"); done
  for k in ${SPMM_KS:-4 8 32}; do
    # shellcheck disable=SC2086
    timeout ${SPMM_TIMEOUT:-600} $build/src/cli/spmv bench --backend cuda --k $k --layout ${SPMM_LAYOUT:-row} \
      ${SPMM_EXTRA:-} --precision both --reps 7 -q --csv "$OUT/spmm.csv" "${args[@]}" > "$OUT/spmm_k$k.log" 2>&1
    rc=$?
    note "spmm bench k=$k rc=$rc ($(grep -E 'verified and timed' "$OUT/spmm_k$k.log" | tail -1))"
    grep -E "FAILED|error" "$OUT/spmm_k$k.log" | head -5
  done
  python3 bench/spmm_summary.py "$OUT/spmm.csv" > "$OUT/spmm_summary.txt" 2>&1
  cat "$OUT/spmm_summary.txt"
fi

if want huge; then
  # Issue 18: billions of nonzeros through `spmv bench` on one GPU, generated in the type they run in.
  # Targets: poisson3d n=700 (343 M rows, 2.40 G nonzeros, 64-bit indices) f32 <= 48 GB host peak and
  # <= 60 s wall, f64 <= 58 GB; R-MAT scale 27 x 16 (2^31 edges) verified. Auto, the cuSPARSE
  # baselines and merge-path; SPMV_DEBUG_LOG shows the plans (and any format Auto skipped).
  free -g > "$OUT/huge_free.txt"
  # HUGE_RUNS narrows the list (e.g. "poisson3d:n=700/f32").
  runs=${HUGE_RUNS:-"poisson3d:n=700/f32 poisson3d:n=700/f64 rmat:scale=27,edge_factor=16/f32"}
  for run in $runs; do
    run=${run/\// }
    set -- $run
    name=huge_$(echo "$1_$2" | tr ':=,' '___')
    SPMV_DEBUG_LOG=1 /usr/bin/time -v $build/src/cli/spmv bench --gen "$1" --backend cuda --precision "$2" \
      --algo auto,merge-path,cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo-alg1 --reps 7 --json "$OUT/$name.json" \
      > "$OUT/$name.log" 2>&1
    rc=$?
    note "$1 $2 rc=$rc: peak host RSS $(awk '/Maximum resident set size/ {printf "%.1f GB", $6 / 1e6}' "$OUT/$name.log"), wall $(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$OUT/$name.log")"
    grep -E "^matrix|verified and timed|skipped|error" "$OUT/$name.log" | head -12
  done
fi

if want distributed; then
  export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  gpus=$(nvidia-smi -L | wc -l)
  note "distributed: $gpus GPUs, $(mpirun --version 2>&1 | head -1), NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
  grep -E "SPMV_WITH_NCCL|NCCL_LIBRARY:" $build/CMakeCache.txt
  mpi=(mpirun --bind-to none -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS -x LD_LIBRARY_PATH)
  nvidia-smi topo -m > "$OUT/topology.txt" 2>&1
  parts=${DIST_PARTS:-"tests bench"}
  for np in $([[ $parts == *tests* ]] && printf "%s\n" 2 "$gpus" | sort -un); do
    # The CUDA cases (CI runs the CPU ones), every one at two ranks and at one rank per GPU: ~20 s a
    # sweep since matrices borrow pooled NCCL communicators (docs/DISTRIBUTED.md).
    filter=${DIST_FILTER:-*_cuda:*Cuda*:GraphPartition.*:ParallelGraphPartition.*:StreamingPartition.*}
    OMP_NUM_THREADS=2 timeout ${DIST_TEST_TIMEOUT:-300} "${mpi[@]}" -np "$np" $build/tests/spmv_distributed_tests \
      --gtest_filter="$filter" --gtest_brief=1 --gtest_color=no > "$OUT/dist_tests_np$np.log" 2>&1
    rc=$?
    grep -E "FAILED|Failure|rank [0-9]+\]" "$OUT/dist_tests_np$np.log" | head -20
    note "distributed tests np $np (rc=$rc): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \].*listed|SKIPPED \]' "$OUT/dist_tests_np$np.log" | head -3 | tr '\n' ' ')"
  done
  # Distributed CG on the CUDA backend (DIST_PARTS with "solve"): time per iteration on 1, 2 and every
  # GPU (one rank per GPU, reductions over NCCL), and the one-GPU solver (unfused, as distributed runs),
  # each in the variants of DIST_SOLVE_VARIANTS ("cg pipelined": plain CG and --pipelined, taking turns).
  for g in $([[ $parts == *solve* ]] && echo "${DIST_SOLVE_GENS:-poisson3d:n=300}"); do
    solve_args=(solve --gen "$g" --precision "${DIST_PRECISION:-f64}" --tol 0 --maxit "${DIST_SOLVE_MAXIT:-300}")
    for variant in ${DIST_SOLVE_VARIANTS:-cg}; do
      flags=(); [[ $variant == pipelined* ]] && flags=(--pipelined) || flags=(--unfused)
      [[ $variant == *graph ]] && flags+=(--graph)
      timeout 200 $build/src/cli/spmv "${solve_args[@]}" --backend cuda "${flags[@]}" \
        > "$OUT/dist_solve_one_$variant.log" 2>&1
      note "solve $g one GPU, ${flags[*]}: $(grep -E 'ms/iteration|time' "$OUT/dist_solve_one_$variant.log" | head -1)"
    done
    for np in $(printf "%s\n" 1 2 "$gpus" | sort -un); do
      for variant in ${DIST_SOLVE_VARIANTS:-cg}; do
        flags=(); [[ $variant == pipelined* ]] && flags=(--pipelined)
        [[ $variant == *graph ]] && flags+=(--graph)
        OMP_NUM_THREADS=2 timeout 300 "${mpi[@]}" -np "$np" $build/src/cli/spmv "${solve_args[@]}" --distributed \
          --backend cuda "${flags[@]}" > "$OUT/dist_solve_np${np}_$variant.log" 2>&1
        note "solve $g np $np $variant (rc=$?): $(grep -E 'ms/iteration' "$OUT/dist_solve_np${np}_$variant.log" | head -1)"
      done
    done
  done
  # Strong scaling: the same matrices on 2 and on every GPU; each run also times one GPU on rank 0.
  gens=${DIST_GENS:-"poisson3d:n=560 stencil27:n=350"}
  args=()
  for g in $gens; do args+=(--gen "$g"); done
  for np in $([[ $parts == *bench* ]] && echo "${DIST_RANKS:-$(printf "%s\n" 2 "$gpus" | sort -un)}"); do
    OMP_NUM_THREADS=$(( $(nproc) / np )) timeout ${DIST_BENCH_TIMEOUT:-400} "${mpi[@]}" -np "$np" \
      $build/src/cli/spmv bench --distributed --backend cuda "${args[@]}" --precision "${DIST_PRECISION:-f64}" \
      ${DIST_EXTRA:-} --json "$OUT/dist_bench${DIST_TAG:-}_np$np.json" > "$OUT/dist_bench${DIST_TAG:-}_np$np.log" 2>&1
    rc=$?
    note "distributed bench np $np (rc=$rc)"
    grep -E "^distributed:|^one rank:|^speed-up|ranks \(|graph partition|error|Error" "$OUT/dist_bench${DIST_TAG:-}_np$np.log" | head -24
  done
fi

if want python; then
  python3 -m pip install --no-build-isolation --no-deps -q ./python > "$OUT/python_build.log" 2>&1 &&
    python3 -m pytest -q ${PYTEST_ARGS:-python/tests} > "$OUT/python_tests.log" 2>&1
  note "python: $(tail -1 "$OUT/python_tests.log" 2>/dev/null || tail -3 "$OUT/python_build.log")"
fi

echo
echo "==================== summary ===================="
for line in "${summary[@]}"; do echo "$line"; done
[ -f "$OUT/summary_table.txt" ] && cat "$OUT/summary_table.txt"
# PACK=1: everything under $OUT into one $OUT/out.tgz (the device tool brings back at most 8 files).
if [ "${PACK:-0}" = 1 ]; then
  (cd "$OUT" && tar czf out.tgz --remove-files $(ls | grep -vx out.tgz)) && echo "packed into $OUT/out.tgz"
fi
exit 0
