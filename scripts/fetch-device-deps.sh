#!/usr/bin/env bash
# Downloads the Debian packages the GPU machine lacks (it reaches no registry) into .deps/, and copies
# the shared test matrices into .matrices/; both folders are git-ignored and travel with `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps .matrices
(cd .deps && apt-get download libgtest-dev libgmock-dev googletest libcli11-dev libfmt-dev libfmt9 \
  nlohmann-json3-dev libeigen3-dev zlib1g-dev libhwy-dev libhwy1 libmetis-dev libmetis5 \
  libptscotch-dev libptscotch-7.0 libscotch-dev libscotch-7.0)
cp ../shared/matrices/*.mtx.gz .matrices/
