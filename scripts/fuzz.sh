#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang-19, ASan + UBSan, in
# build-fuzz) and runs each on a copy of its seed corpus for a bounded time,
# as many at once as there are cores. Fails on any crash, sanitizer report,
# leak, timeout or out-of-memory, printing the reproducer and how to rerun it.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Defaults: 60 seconds, every target (graph_binary_fuzzer graph_text_fuzzer
# builder_fuzzer call_fuzzer compile_report_fuzzer). CI (scripts/test.sh) runs a short version; for
# a long run give hours: bash scripts/fuzz.sh 14400. The checked-in corpora
# are never modified: new inputs go to a temporary directory, kept and
# printed when GJ_FUZZ_KEEP=1 (merge the useful ones with libFuzzer's
# -merge=1 into tests/fuzz/corpus/<target>).
#
# Environment: GJ_FUZZ_BUILD_DIR (build-fuzz; a tree configured with
# GUARDJIT_FUZZ=ON is reused as it is), GJ_FUZZ_JOBS (nproc): targets
# run at once, GJ_FUZZ_KEEP=1: keep the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(graph_binary_fuzzer graph_text_fuzzer builder_fuzzer call_fuzzer
    compile_report_fuzzer)
fi
build=${GJ_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${GJ_FUZZ_JOBS:-$(nproc)}

for tool in clang-19 clang++-19; do
  command -v "$tool" >/dev/null || {
    echo "fuzz: $tool not found (bash scripts/setup.sh installs clang-19 and libclang-rt-19-dev)" >&2
    exit 1
  }
done

# -O1: libFuzzer's usual level (fast enough to run, quick to compile); line
# tables only (reports keep file:line, the build is about a tenth faster than
# with -g); no NDEBUG, so assertions stay on.
# A tree already configured with GUARDJIT_FUZZ=ON (scripts/test.sh's
# build-asan, which also builds the tests in it) is used as it is.
if ! grep -q '^GUARDJIT_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DGUARDJIT_FUZZ=ON -DGUARDJIT_BUILD_TESTS=OFF -DGUARDJIT_BUILD_PERF=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/guardjit-fuzz.XXXXXX")

# One target: its corpus copied into the work directory; libFuzzer adds what
# it finds there. Limits: 60 s per input (a JIT compile under ASan takes
# well under a second), 4 GiB of RSS; the targets themselves refuse single
# allocations over 256 MiB (see tests/fuzz/fuzz_common.h).
run_target() {
  local target=$1 dir=$work/$1
  mkdir -p "$dir/corpus" "$dir/artifacts"
  if [ -d "tests/fuzz/corpus/$target" ]; then
    cp -R "tests/fuzz/corpus/$target/." "$dir/corpus/"
  fi
  local dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=("-dict=tests/fuzz/$target.dict")
  local status=0
  "$build/tests/fuzz/$target" "$dir/corpus" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -malloc_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
    </dev/null >"$dir/log" 2>&1 || status=$?
  echo "$status" >"$dir/status"
}

echo "fuzz: ${#targets[@]} targets, ${seconds}s each, $jobs at a time; work dir $work"
running=0
for target in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
wait

failed=0
for target in "${targets[@]}"; do
  dir=$work/$target
  status=$(cat "$dir/status" 2>/dev/null || echo 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$dir/log" | tail -n 1 || true)
  if [ "$status" = 0 ]; then
    echo "fuzz: $target ok: ${runs:-?} inputs (${rate:-?}/s), $cov"
    continue
  fi
  failed=1
  echo "fuzz: $target FAILED (exit $status); log $dir/log; its end:"
  grep -v -E '^(#[0-9]+|INFO:|\s*NEW_FUNC|==[0-9]+==WARNING: AddressSanitizer failed to allocate)' \
    "$dir/log" | tail -n 80 | sed 's/^/  | /'
  for artifact in "$dir"/artifacts/*; do
    [ -e "$artifact" ] || continue
    echo "fuzz: reproducer $artifact ($(stat -c %s "$artifact") bytes)"
    echo "fuzz:   rerun: $build/tests/fuzz/$target $artifact"
    if [ "$(stat -c %s "$artifact")" -le 4096 ]; then
      echo "fuzz:   base64: $(base64 -w 0 "$artifact")"
    fi
  done
done

if ((failed)); then
  echo "fuzz: FAILED; work dir kept: $work" >&2
  exit 1
fi
if [ "${GJ_FUZZ_KEEP:-0}" = 1 ]; then
  echo "fuzz: work dir kept: $work"
else
  rm -rf "$work"
fi
echo "fuzz: all targets ok"
