#!/usr/bin/env bash
# Installs the release build (build/, or $1) into a temporary prefix and runs
# every bindings/<lang>/test.sh against it, found with pkg-config as a user's
# build would find it. Each test.sh builds and tests its binding; a failure of
# any fails this script. GUARDJIT_BINDINGS="rust go" runs only those.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
prefix=$(mktemp -d /tmp/guardjit-prefix.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$prefix/bin:$PATH"
langs=${GUARDJIT_BINDINGS:-}
if [ -z "$langs" ]; then
  for t in bindings/*/test.sh; do
    [ -e "$t" ] || continue
    langs="$langs $(basename "$(dirname "$t")")"
  done
fi
for lang in $langs; do
  step=$SECONDS
  echo "test_bindings: $lang"
  bash "bindings/$lang/test.sh"
  echo "test_bindings: $lang took $((SECONDS - step))s"
done
