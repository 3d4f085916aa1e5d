#!/usr/bin/env bash
# Runs `spmv bench` over the standard suite: eight generated matrices of 10-30 M nonzeros (smaller with
# --quick) and every Matrix Market file of the shared collection, appending every row to one CSV and one
# JSON report. See bench/README.md.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/run_suite.sh [options] [-- extra spmv bench options]

  --spmv PATH        the spmv tool (default: $SPMV, else the newest build*/src/cli/spmv of this checkout)
  --out DIR          output folder (default: bench/results/<UTC date>); receives suite.csv, suite.json,
                     suite.log
  --algo LIST        --algo of spmv bench (default: auto plus the vendor baselines; 'all' for everything)
  --precision P      f32, f64 or both (default: f64)
  --transpose        time y = alpha*A^T*x + beta*y
  --backend B        cpu, cuda or auto (default: auto)
  --quick            generated matrices of ~0.5 M nonzeros instead of 10-30 M (CPU / CI smoke runs)
  --no-generated     skip the generated matrices
  --no-files         skip the Matrix Market files
  --matrices DIR     folder of *.mtx / *.mtx.gz files (default: $SPMV_MATRICES, else ../shared/matrices)
  --reps N           timed samples per algorithm (default: spmv bench's, 9)
  -h, --help         this text

The copy bandwidth is measured once, by the first run, and passed to the others with --bandwidth so that
"% bw" is comparable across the suite. The exit code is non-zero when any run failed (verification
failures included); the other matrices still run.
EOF
}

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"

spmv="${SPMV:-}"
out=""
algo=""
precision="f64"
transpose=0
backend="auto"
quick=0
generated=1
files=1
matrices="${SPMV_MATRICES:-$repo/../shared/matrices}"
reps=""
extra=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --spmv) spmv="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --algo) algo="$2"; shift 2 ;;
    --precision) precision="$2"; shift 2 ;;
    --transpose) transpose=1; shift ;;
    --backend) backend="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-generated) generated=0; shift ;;
    --no-files) files=0; shift ;;
    --matrices) matrices="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "run_suite.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
  esac
done

if [[ -z "$spmv" ]]; then
  spmv="$(ls -t "$repo"/build*/src/cli/spmv 2>/dev/null | head -n 1 || true)"
fi
if [[ -z "$spmv" || ! -x "$spmv" ]]; then
  echo "run_suite.sh: no spmv tool found; build the spmv_cli target or pass --spmv PATH (or set SPMV)" >&2
  exit 1
fi

out="${out:-$here/results/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
csv="$out/suite.csv"
json="$out/suite.json"
log="$out/suite.log"

# Generated matrices: KIND:params, with the nonzero count each size was chosen for. Full sizes sit in
# 10-30 M nonzeros, beyond every cache of the CPUs and GPUs we target (H100 L2: 50 MB); --quick
# sizes (~0.5 M) finish in seconds on a laptop.
if [[ $quick -eq 1 ]]; then
  suite=(
    "poisson2d:n=300                                                        ~0.45 M"
    "poisson3d:n=40                                                         ~0.44 M"
    "stencil27:n=27                                                         ~0.50 M"
    "random_uniform:rows=32000,cols=32000,per_row=16,seed=1                 ~0.51 M"
    "rmat:scale=15,edge_factor=16,seed=1                                    ~0.45 M"
    "long_rows:rows=40000,cols=40000,long_rows=8,long_length=20000,short_length=8,seed=1  ~0.48 M"
    "mostly_empty:rows=400000,cols=400000,nonempty_fraction=0.04,per_row=32,seed=1        ~0.51 M"
    "dense_rows:n=40000,dense_rows=4,dense_fraction=0.5,per_row=8,seed=1    ~0.44 M"
  )
else
  suite=(
    "poisson2d:n=2000                                                       ~20 M"
    "poisson3d:n=140                                                        ~19 M"
    "stencil27:n=90                                                         ~19 M"
    "random_uniform:rows=1000000,cols=1000000,per_row=16,seed=1             ~16 M"
    "rmat:scale=20,edge_factor=16,seed=1                                    ~15 M"
    "long_rows:rows=1000000,cols=1000000,long_rows=100,long_length=100000,short_length=12,seed=1  ~22 M"
    "mostly_empty:rows=4000000,cols=4000000,nonempty_fraction=0.05,per_row=64,seed=1             ~13 M"
    "dense_rows:n=1000000,dense_rows=20,dense_fraction=0.5,per_row=12,seed=1                      ~23 M"
  )
fi

common=(--precision "$precision" --backend "$backend" --csv "$csv" --json "$json")
[[ -n "$algo" ]] && common+=(--algo "$algo")
[[ $transpose -eq 1 ]] && common+=(--transpose)
[[ -n "$reps" ]] && common+=(--reps "$reps")
common+=("${extra[@]}")

runs=()
if [[ $generated -eq 1 ]]; then
  echo "generated matrices ($([[ $quick -eq 1 ]] && echo quick || echo full) sizes):"
  for entry in "${suite[@]}"; do
    read -r spec approx <<<"$entry"
    printf '  %-100s %s nonzeros\n' "$spec" "$approx"
    runs+=("--gen $spec")
  done
fi
if [[ $files -eq 1 ]]; then
  if [[ -d "$matrices" ]]; then
    shopt -s nullglob
    found=("$matrices"/*.mtx "$matrices"/*.mtx.gz)
    shopt -u nullglob
    echo "${#found[@]} Matrix Market files from $matrices"
    for f in "${found[@]}"; do runs+=("file $f"); done
  else
    echo "no matrix folder at $matrices (set SPMV_MATRICES or --matrices): files skipped"
  fi
fi
if [[ ${#runs[@]} -eq 0 ]]; then
  echo "run_suite.sh: nothing to run" >&2
  exit 1
fi

echo "spmv: $spmv"
echo "results: $csv, $json (log: $log)"
bandwidth=()
failures=0
i=0
for run in "${runs[@]}"; do
  i=$((i + 1))
  kind="${run%% *}"
  what="${run#* }"
  if [[ "$kind" == "--gen" ]]; then input=(--gen "$what"); else input=("$what"); fi
  echo "=== [$i/${#runs[@]}] $what" | tee -a "$log"
  set +e
  "$spmv" bench "${input[@]}" "${common[@]}" "${bandwidth[@]}" --quiet 2>&1 | tee -a "$log"
  status=${PIPESTATUS[0]}
  set -e
  if [[ $status -ne 0 ]]; then
    echo "!!! $what: spmv bench exited with $status" | tee -a "$log"
    failures=$((failures + 1))
  fi
  # Reuse the first measured bandwidth so that "% bw" is comparable across matrices.
  if [[ ${#bandwidth[@]} -eq 0 ]]; then
    bw="$(grep -o 'copy bandwidth [0-9.]* GB/s' "$log" | head -n 1 | awk '{print $3}')"
    [[ -n "$bw" ]] && bandwidth=(--bandwidth "$bw")
  fi
done

echo
echo "suite done: ${#runs[@]} matrices, $failures failed runs; results in $out"
echo "plot: python3 $here/plot.py $csv --out $out"
[[ $failures -eq 0 ]]
