#!/usr/bin/env bash
# Packs the committed tree (HEAD) plus the device dependencies and test matrices into .snapshot/
# (git-ignored), the folder GPU runs carry: other people's uncommitted edits stay out, and
# .snapshot/COMMIT records which commit the measurements belong to. On the GPU machine,
# `python3 scripts/mirror.py "$PWD" /tmp/spmv-src && cd /tmp/spmv-src` builds incrementally across the
# calls of one lease (a snapshot's files all carry the commit's time).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .snapshot && mkdir .snapshot
git archive HEAD | tar -x -C .snapshot
git rev-parse --short HEAD > .snapshot/COMMIT
[ -d .deps ] || scripts/fetch-device-deps.sh
cp -r .deps .matrices .snapshot/
for f in "$@"; do mkdir -p ".snapshot/$(dirname "$f")" && cp "$f" ".snapshot/$f"; done  # extra files
