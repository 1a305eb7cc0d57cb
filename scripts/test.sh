#!/usr/bin/env bash
# Builds and runs the whole test suite: the release configuration (unit,
# conformance, C API, ABI, CLI, install-and-consume tests), the language
# bindings over the installed library, then the same C++ tests under ASan +
# UBSan (clang-19, in the tree the fuzz targets are built in too), then the
# tests that start threads under TSan, then every libFuzzer target for a
# short while, and prints each step's time. GUARDJIT_SKIP_SANITIZERS=1 stops
# after the bindings; GUARDJIT_FUZZ_SECONDS sets the time per fuzz target.
# Compiles go through ccache and the emulated CUDA suites through a SIMT
# module cache, both kept outside the tree, so a second run on a machine
# rebuilds and recompiles only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
jobs=$(nproc)

# Each step's wall time, printed as a table when the script ends (also when
# a step fails: that step is marked FAILED). CI's limit is the whole run.
steps=()
step_name=
step_start=$SECONDS
begin() {
  step_name=$1
  step_start=$SECONDS
  echo "test.sh: == $1"
}
end() {
  steps+=("$(printf '%-34s %6ds' "$step_name" $((SECONDS - step_start)))")
  step_name=
}
summary() {
  local rc=$?
  [ -n "$step_name" ] && steps+=("$(printf '%-34s %6ds  FAILED' "$step_name" $((SECONDS - step_start)))")
  echo "test.sh: step times"
  local s
  for s in "${steps[@]}"; do echo "  $s"; done
  printf '  %-34s %6ds\n' "total" "$SECONDS"
  if command -v ccache >/dev/null; then
    echo "test.sh: ccache: $(ccache --print-stats 2>/dev/null | awk -F'\t' '
      $1 ~ /^(direct_cache_hit|preprocessed_cache_hit)$/ {h += $2}
      $1 ~ /^cache_miss$/ {m = $2} END {printf "%d hits, %d misses", h, m}')"
  fi
  return $rc
}
trap summary EXIT
# The build trees, the Python venv (torch) and its pip cache took 11 GiB
# with full debug info everywhere. The release tree is built with -g1
# (function names and line tables, what backtraces need; full debug info is
# most of each binary); the ASan tree keeps full -g. Say what the disk has,
# so a run that dies of ENOSPC is recognisable as such.
echo "test.sh: $(df -h --output=avail . | tail -1 | tr -d ' ') free on the disk of $PWD"

# ccache (scripts/setup.sh installs it; CMakeLists.txt compiles through it):
# the four build trees and every clone share one cache, so a second run
# recompiles only what changed. Its counters are zeroed for this run's line
# in the summary.
if command -v ccache >/dev/null; then
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-25G}
  ccache -z >/dev/null
fi

# The SIMT module cache (runtime/simt/simt_module_cache.h) outside the build
# trees, so a later run on this machine loads what this one host-compiled for
# the emulated CUDA suites; entries unused for a week are removed.
if [ -z "${GJ_SIMT_CACHE_DIR:-}" ] && [ -n "${HOME:-}" ] && [ -w "${HOME}" ]; then
  export GJ_SIMT_CACHE_DIR=$HOME/.cache/guardjit-simt
fi
if [ -n "${GJ_SIMT_CACHE_DIR:-}" ] && [ -d "$GJ_SIMT_CACHE_DIR" ]; then
  find "$GJ_SIMT_CACHE_DIR" -maxdepth 1 \( -name '*.simt' -mtime +7 -o -name '*.tmp' -mmin +60 \) \
    -delete 2>/dev/null || true
fi

begin "release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build build -j "$jobs"
end
begin "release ctest"
ctest --test-dir build -j "$jobs" --output-on-failure
end

# The language bindings (Rust, Go, Java, ...), each over the installed
# library: scripts/test_bindings.sh installs build/ into a temporary prefix.
begin "bindings (go, java, python, rust, triton)"
bash scripts/test_bindings.sh build
end

if [ "${GUARDJIT_SKIP_SANITIZERS:-0}" != 1 ]; then
  # ASan + UBSan with libFuzzer's coverage instrumentation (clang-19,
  # GUARDJIT_FUZZ: cmake/GuardjitSanitizers.cmake): the tests run on the same
  # instrumented library the fuzz targets link at the end, compiled once.
  # -O1 and line tables, as libFuzzer builds usually are; no NDEBUG, so
  # assertions stay on.
  begin "ASan+UBSan build (clang-19)"
  cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DGUARDJIT_FUZZ=ON -DGUARDJIT_BUILD_PERF=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  end
  begin "ASan+UBSan ctest"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -j "$jobs" --output-on-failure
  end

  # ThreadSanitizer: the library and tsan_tests instrumented (the test files
  # that hold a test starting threads, picked by name: see tests/CMakeLists.txt
  # and cmake/GuardjitSanitizers.cmake), then those tests, named tsan.*. A
  # report fails the test (halt_on_error); tests/tsan.supp says why each
  # suppression is there.
  begin "TSan build"
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DGUARDJIT_TSAN=ON -DGUARDJIT_BUILD_PERF=OFF >/dev/null
  cmake --build build-tsan -j "$jobs" --target tsan_tests
  end
  begin "TSan ctest"
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir build-tsan -j "$jobs" --output-on-failure --no-tests=error -R '^tsan\.'
  end

  # libFuzzer (clang-19, ASan + UBSan): every target of tests/fuzz on its
  # seed corpus; a crash, sanitizer report, leak or timeout fails the step.
  # scripts/fuzz.sh SECONDS runs them for longer.
  begin "fuzz (${GUARDJIT_FUZZ_SECONDS:-25}s per target)"
  GJ_FUZZ_BUILD_DIR=build-asan bash scripts/fuzz.sh "${GUARDJIT_FUZZ_SECONDS:-25}"
  end
fi
