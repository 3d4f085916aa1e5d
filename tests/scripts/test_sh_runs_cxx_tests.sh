#!/usr/bin/env bash
# Issue 12, item 1: after scripts/run.sh (which caches SPMV_BUILD_TESTS=OFF in the shared build
# folder), scripts/test.sh must still configure the C++ tests and make ctest fail when none are found.
# Cheap by design: it configures a scratch build folder for real but puts stubs for ninja and ctest on
# PATH, so nothing is compiled; the ctest stub checks what the real run would depend on.
#   usage: test_sh_runs_cxx_tests.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
source_dir=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch/bin"
build="$scratch/build"

# What scripts/run.sh leaves behind: the tests switched off in the cache.
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMV_BUILD_TESTS=OFF \
  -DSPMV_ENABLE_CUDA=OFF -DSPMV_BUILD_CLI=OFF > /dev/null

cat > "$scratch/bin/ninja" <<'STUB'
#!/usr/bin/env bash
exit 0
STUB
cat > "$scratch/bin/ctest" <<'STUB'
#!/usr/bin/env bash
# Runs in the build folder, as scripts/test.sh calls it.
status=0
if ! grep -q '^SPMV_BUILD_TESTS:BOOL=ON$' CMakeCache.txt; then
  echo "FAIL: scripts/test.sh left SPMV_BUILD_TESTS off in $(pwd)/CMakeCache.txt" >&2
  status=1
fi
case " $* " in
  *" --no-tests=error "*) ;;
  *) echo "FAIL: scripts/test.sh runs ctest without --no-tests=error: ctest $*" >&2; status=1 ;;
esac
exit $status
STUB
chmod +x "$scratch/bin/ninja" "$scratch/bin/ctest"

PATH="$scratch/bin:$PATH" BUILD_DIR="$build" SPMV_SKIP_PYTHON=1 \
  CMAKE_ARGS="-DSPMV_ENABLE_CUDA=OFF -DSPMV_BUILD_CLI=OFF" "$source_dir/scripts/test.sh" > /dev/null
rm -rf "$scratch"
echo "scripts/test.sh configures the C++ tests after scripts/run.sh and runs ctest with --no-tests=error"
