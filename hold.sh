#!/usr/bin/env bash
# Auto with the hint on the held-out empty-row matrices, both precisions (session check)
S=build-gpu/src/cli/spmv
for g in mostly_empty:rows=3000000,cols=3000000,nonempty_fraction=0.3,per_row=12,seed=5 \
  mostly_empty:rows=2000000,cols=2000000,nonempty_fraction=0.15,per_row=40,seed=5 \
  mostly_empty:rows=1200000,cols=1200000,nonempty_fraction=0.45,per_row=24,seed=5 \
  mostly_empty:rows=6000000,cols=6000000,nonempty_fraction=0.12,per_row=10,seed=5; do
  $S bench --backend cuda --precision both --expected-applies 1000 --gen $g \
    --algo auto,sell,merge-path,csr-vector,cusparse-csr-alg1,cusparse-csr-alg2,cusparse-coo-alg1 --csv $OUT/held.csv > /dev/null 2>&1
done
python3 - <<'PY'
import csv, collections, os
d = collections.defaultdict(dict)
for r in csv.DictReader(open(os.environ["OUT"] + "/held.csv")):
    k = (r["source"][:70], r["precision"])
    d[k][r["algorithm"]] = (float(r["median_ms"]) if r["median_ms"] else None, r["resolved"], r["setup_ms"])
for k, t in d.items():
    vb = min(t[a][0] for a in ["cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-coo-alg1"])
    print(k[0], k[1], "auto", t["auto"][1], "setup", t["auto"][2],
          " ".join(f"{a}={vb / t[a][0]:.2f}" for a in ["auto", "sell", "merge-path", "csr-vector"] if t[a][0]))
PY
