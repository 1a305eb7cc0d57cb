#!/usr/bin/env bash
# Installs a built guardjit into a fresh prefix and builds consumer.c against
# the installed tree only: with CMake (find_package, static library) and with
# pkg-config (shared library). Also checks that the shared library exports
# nothing but gj_* symbols.
#
#   run_install_test.sh BUILD_DIR [EXTRA_FLAGS [C_COMPILER]]
#
# EXTRA_FLAGS go to the consumers' compile and link lines (the sanitizer
# flags when the library was built with them); C_COMPILER (default cc)
# builds the consumers: a sanitized library needs the sanitizer runtime of
# the compiler that built it (clang's ASan tree, scripts/test.sh).
set -euo pipefail
build=$(cd "$1" && pwd)
extra=${2:-}
cc=${3:-cc}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name guardjit.pc)
libdir=$(dirname "$(dirname "$pc")")
echo "installed into $prefix (libdir ${libdir#"$prefix"/})"

echo "== CMake consumer, static library"
cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/cmake" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
# (Captured first: grep -q would close the pipe early, failing it under pipefail.)
ldd "$work/cmake/consumer" >"$work/ldd_static.txt"
if grep -q libguardjit "$work/ldd_static.txt"; then
  echo "the CMake consumer links libguardjit.so, expected the static library"
  exit 1
fi
"$work/cmake/consumer"

echo "== pkg-config consumer, shared library"
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046,SC2086
"$cc" -std=c99 $extra -o "$work/consumer_shared" "$here/consumer.c" \
  $(pkg-config --cflags --libs guardjit)
LD_LIBRARY_PATH=$libdir "$work/consumer_shared"
LD_LIBRARY_PATH=$libdir ldd "$work/consumer_shared" >"$work/ldd_shared.txt"
grep -q "$libdir/libguardjit.so" "$work/ldd_shared.txt" ||
  { echo "the pkg-config consumer does not use the installed libguardjit.so"; exit 1; }

echo "== exported symbols"
leaked=$(nm -D --defined-only "$libdir/libguardjit.so" | awk '{print $3}' | grep -v '^gj_' || true)
if [ -n "$leaked" ]; then
  echo "libguardjit.so exports symbols other than gj_*:"
  echo "$leaked" | head -20
  exit 1
fi
echo "install test passed"
