#!/usr/bin/env bash
# Fails if an include crosses the layering of ../shared/DESIGN.md:
# core <- runtime <- jit <- capi; only capi/ has extern "C"; testing/ (test
# doubles) is above them all and only tests and benchmarks include it.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
fail=0
check() {  # folder, forbidden include pattern
  local hits
  hits=$(grep -rnE "#include *[<\"]($2)" "$1" --include='*.h' --include='*.cc' 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layering: $1/ must not include $2:"; echo "$hits"; fail=1
  fi
}
check core 'jit/|runtime/|capi/|guardjit/|llvm/|llvm-c/|cuda|nvrtc|testing/'
check runtime 'jit/|capi/|guardjit/|llvm/|llvm-c/|testing/'
check jit 'capi/|guardjit/|testing/'
# Test doubles (testing/) are for the tests and benchmarks: the library
# never includes them, so they never ship inside libguardjit.
check capi 'testing/'
# Servers are hosts of the C ABI like the bindings: the header only.
check bindings/triton 'core/|runtime/|jit/|capi/|testing/'
hits=$(grep -rln 'extern "C"' core runtime jit --include='*.h' --include='*.cc' 2>/dev/null)
if [ -n "$hits" ]; then echo "layering: extern \"C\" outside capi/:"; echo "$hits"; fail=1; fi
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
