#!/usr/bin/env bash
# Builds and runs the whole test suite: the release configuration (unit,
# conformance, C API, CLI, install-and-consume tests), the language bindings
# over the installed library, then the same C++ tests under ASan + UBSan, then
# the tests that start threads under TSan, then every libFuzzer target for a
# short while. GUARDJIT_SKIP_SANITIZERS=1 stops after
# the release tests; GUARDJIT_FUZZ_SECONDS sets the time per fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
jobs=$(nproc)
# The build trees, the Python venv (torch) and its pip cache took 11 GiB
# with full debug info everywhere. The release tree is built with -g1
# (function names and line tables, what backtraces need; full debug info is
# most of each binary); the ASan tree keeps full -g. Say what the disk has,
# so a run that dies of ENOSPC is recognisable as such.
echo "test.sh: $(df -h --output=avail . | tail -1 | tr -d ' ') free on the disk of $PWD"

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build -j "$jobs" --output-on-failure

# The language bindings (Rust, Go, Java, ...), each over the installed
# library: scripts/test_bindings.sh installs build/ into a temporary prefix.
bash scripts/test_bindings.sh build

if [ "${GUARDJIT_SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGUARDJIT_SANITIZE=ON \
    -DGUARDJIT_BUILD_PERF=OFF >/dev/null
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -j "$jobs" --output-on-failure

  # ThreadSanitizer: the library and tsan_tests instrumented (the test files
  # that hold a test starting threads, picked by name: see tests/CMakeLists.txt
  # and cmake/GuardjitSanitizers.cmake), then those tests, named tsan.*. A
  # report fails the test (halt_on_error); tests/tsan.supp says why each
  # suppression is there.
  step=$SECONDS
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DGUARDJIT_TSAN=ON -DGUARDJIT_BUILD_PERF=OFF >/dev/null
  cmake --build build-tsan -j "$jobs" --target tsan_tests
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir build-tsan -j "$jobs" --output-on-failure --no-tests=error -R '^tsan\.'
  echo "test.sh: TSan step took $((SECONDS - step))s"

  # libFuzzer (clang-19, ASan + UBSan): every target of tests/fuzz on its
  # seed corpus; a crash, sanitizer report, leak or timeout fails the step.
  # scripts/fuzz.sh SECONDS runs them for longer.
  step=$SECONDS
  bash scripts/fuzz.sh "${GUARDJIT_FUZZ_SECONDS:-25}"
  echo "test.sh: fuzz step took $((SECONDS - step))s"
fi
