#!/usr/bin/env python3
"""Peak host memory of one `spmv bench` run against the bytes of the matrix it runs (issue 18).

Runs the spmv tool as a child and reads its peak resident set from getrusage(RUSAGE_CHILDREN).ru_maxrss
(nothing else runs as a child of this script, so the figure is the tool's own). The matrix bytes come
from the bench JSON the run writes: rows + 1 row pointers and nnz column indices of the index type it
ran with, nnz values of the precision. Prints one line per run, e.g.

  peak_memory.py --spmv build-cpu/src/cli/spmv -- --gen poisson3d:n=150 --backend cpu --precision f32
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spmv", required=True, help="the spmv tool")
    p.add_argument("bench_args", nargs=argparse.REMAINDER, help="arguments after `spmv bench` (after --)")
    args = p.parse_args()
    bench_args = [a for a in args.bench_args if a != "--"]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "run.json")
        start = time.monotonic()
        run = subprocess.run([args.spmv, "bench", *bench_args, "--json", report], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
        if run.returncode != 0 or not os.path.exists(report):
            sys.stderr.write(run.stdout[-4000:] + run.stderr[-4000:])
            sys.exit(f"spmv bench failed with exit code {run.returncode}")
        with open(report) as f:
            doc = json.load(f)
    for matrix in doc["runs"][-1]["matrices"]:
        stats = matrix["stats"]
        for precision in sorted({r["precision"] for r in matrix["results"]}):
            index = next(r["index_type"] for r in matrix["results"] if r["precision"] == precision)
            value_bytes = 4 if precision == "f32" else 8
            index_bytes = 4 if index == "int32" else 8
            matrix_bytes = (stats["rows"] + 1) * index_bytes + stats["nnz"] * (index_bytes + value_bytes)
            print(f"{matrix['name']} {precision}/{index}: {stats['rows']} rows, {stats['nnz']} nonzeros, "
                  f"matrix {matrix_bytes / 1e9:.3f} GB; peak RSS of the run {peak / 1e9:.3f} GB "
                  f"({peak / matrix_bytes:.2f}x the matrix); wall {wall:.1f} s")


if __name__ == "__main__":
    main()
