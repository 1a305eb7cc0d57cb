#!/usr/bin/env bash
# Lists the library's sources without a same-named unit test: each stem of a
# tracked .h/.cc under core/ runtime/ jit/ capi/ (not core/proto/, the
# generated schema, nor capi/include/, the C header that the capi tests
# exercise as a whole) for which tests/<stem>_test.cc does not exist.
# With --count, prints "<untested> of <sources>" instead.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
stems=$(git ls-files core runtime jit capi | grep -E '\.(h|cc)$' |
          grep -vE '^(core/proto|capi/include)/' | sed -E 's/\.(h|cc)$//' |
          sort -u)
untested=$(for stem in $stems; do
             [ -f "tests/${stem}_test.cc" ] || echo "$stem"
           done)
if [ "${1:-}" = "--count" ]; then
  echo "$(printf '%s\n' "$untested" | grep -c .) of $(printf '%s\n' "$stems" | grep -c .)"
else
  printf '%s\n' "$untested" | grep .
fi
exit 0
