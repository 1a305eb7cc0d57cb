#!/usr/bin/env bash
# Per-call overhead of a cached call through the Java binding against the same
# call from C, on examples/seed_mul.pbtxt (float32[N] inputs, one output):
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig LD_LIBRARY_PATH=PREFIX/lib \
#     bash bindings/java/bench/run.sh [N] [ITERATIONS]
# Builds into bindings/java/build/bench; run test.sh first (it builds the JNI
# library and the classes this uses).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
java_dir=$(dirname "$here")
repo=$(cd "$java_dir/../.." && pwd)
build=$java_dir/build
n=${1:-10}
iters=${2:-1000000}
mkdir -p "$build/bench"
cc -O2 -o "$build/bench/call_overhead_c" "$here/call_overhead.c" \
  $(pkg-config --cflags --libs guardjit)
javac --release 17 -d "$build/bench" -cp "$build/classes" \
  "$here/dev/guardjit/bench/CallOverhead.java"
GJ_NUM_THREADS=${GJ_NUM_THREADS:-1} "$build/bench/call_overhead_c" "$repo/examples/seed_mul.pbtxt" "$n" "$iters"
GJ_NUM_THREADS=${GJ_NUM_THREADS:-1} java "-Djava.library.path=$build/cmake" \
  -cp "$build/classes:$build/bench" dev.guardjit.bench.CallOverhead \
  "$repo/examples/seed_mul.pbtxt" "$n" "$iters"
