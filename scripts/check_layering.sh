#!/usr/bin/env bash
# Fails if an include crosses the layering of ../shared/DESIGN.md:
# core <- runtime <- jit <- capi; only capi/ has extern "C".
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
check core 'jit/|runtime/|capi/|guardjit/|llvm/|llvm-c/|cuda|nvrtc'
check runtime 'jit/|capi/|guardjit/|llvm/|llvm-c/'
check jit 'capi/|guardjit/'
hits=$(grep -rln 'extern "C"' core runtime jit --include='*.h' --include='*.cc' 2>/dev/null)
if [ -n "$hits" ]; then echo "layering: extern \"C\" outside capi/:"; echo "$hits"; fail=1; fi
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
