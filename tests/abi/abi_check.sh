#!/usr/bin/env bash
# The exported ABI of libguardjit.so against the dump committed for its
# release (capi/abi/libguardjit.abi.xz), with libabigail's abidw and abidiff
# (Debian's abigail-tools). Fails on any change an existing host could see:
# a removed exported function or variable, a changed signature, a changed
# layout or enumerator of a type the public headers declare. Allowed, as
# the C ABI's rules allow them (guardjit.h, "Conventions"): added gj_*
# functions, fields appended at the end of a struct, and anything inside the
# library (types that are not gj_*/DL*, and the opaque handles' definitions):
# tests/abi/abi.supp. A new major version (the SONAME, libguardjit.so.N)
# allows any change; its dump is then written anew.
#
#   abi_check.sh dump LIBRARY OUT.abi.xz    write the dump (at a release)
#   abi_check.sh check LIBRARY DUMP.abi.xz  compare, exit 1 on a break
#
# The dump holds the whole DWARF-reachable corpus (the handles' private
# definitions reach the internals), hence xz; abidiff then leaves out what
# abi.supp names. tests/abi/abi_check_selftest.sh checks this policy on
# small libraries that append, change and remove.
set -euo pipefail
mode=$1 lib=$2 dump=$3
here=$(cd "$(dirname "$0")" && pwd)
for tool in abidw abidiff xz; do
  command -v "$tool" >/dev/null || {
    echo "abi_check: $tool not found (Debian packages abigail-tools, xz-utils; scripts/setup.sh installs them)" >&2
    exit 1
  }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# No build paths in the dump: it does not depend on where the tree is.
abidw --no-corpus-path --no-comp-dir-path --short-locs --out-file "$work/new.abi" "$lib"

soname() { grep -o -m1 "soname='[^']*'" "$1" | sed "s/soname='\(.*\)'/\1/"; }
case "$mode" in
  dump)
    xz -9 -T1 -c "$work/new.abi" >"$dump"
    echo "abi_check: wrote $dump: $(soname "$work/new.abi"), $(grep -c '<elf-symbol ' "$work/new.abi") exported symbols"
    exit 0
    ;;
  check) ;;
  *)
    echo "abi_check: mode must be dump or check, not '$mode'" >&2
    exit 2
    ;;
esac

xz -d -c "$dump" >"$work/old.abi"
old_so=$(soname "$work/old.abi")
new_so=$(soname "$work/new.abi")
rc=0
abidiff --no-added-syms --suppressions "$here/abi.supp" \
  "$work/old.abi" "$work/new.abi" >"$work/report.txt" 2>&1 || rc=$?
if ((rc & 3)); then
  echo "abi_check: abidiff failed (exit $rc):" >&2
  cat "$work/report.txt" >&2
  exit 1
fi
if ((rc == 0)); then
  echo "abi_check: ${new_so:-$lib}: no ABI break against $(basename "$dump") (${old_so:-no SONAME})"
  exit 0
fi
# Appended fields: every change in the report is a gj_* struct that grew
# with data members inserted at or past its old size, reached through
# pointers from the functions that take it. Any other line is a break.
appended_only() {
  awk '
    /^(Functions|Variables) changes summary/ || /^ *$/ { next }
    /^[0-9]+ functions? with some indirect sub-type changes?:$/ { next }
    /^ *\[C\] .function .* has some indirect sub-type changes:$/ { next }
    /^ *parameter [0-9]+ of type .* has sub-type changes:$/ { next }
    /^ *in (pointed to|unqualified underlying) type .*:$/ { next }
    /^ *underlying type .struct gj_[a-z0-9_]*. at .* changed:$/ { next }
    /^ *type size changed from [0-9]+ to [0-9]+ \(in bits\)$/ { size = $5 + 0; next }
    /^ *[0-9]+ data member insertions?:$/ { next }
    /^ *.*, at offset [0-9]+ \(in bits\) at .*$/ {
      if (match($0, /at offset [0-9]+/)) {
        off = substr($0, RSTART + 10, RLENGTH - 10) + 0
        if (off >= size) next
      }
    }
    { print "abi_check: not an appended field: " $0; bad = 1 }
    END { exit bad }' "$1"
}
if ((rc == 4)) && appended_only "$work/report.txt" >"$work/why.txt"; then
  echo "abi_check: ${new_so:-$lib}: fields appended to structs, no ABI break against $(basename "$dump"):"
  cat "$work/report.txt"
  exit 0
fi
if [ "$old_so" != "$new_so" ]; then
  echo "abi_check: ABI changes with a new major version ($old_so -> $new_so); write the new dump with 'abi_check.sh dump':"
  cat "$work/report.txt"
  exit 0
fi
echo "abi_check: ${new_so:-$lib} breaks the ABI of $(basename "$dump") (abidiff exit $rc): a removed" \
  "or changed symbol, type or layout needs a new major version. abidiff's report:" >&2
cat "$work/report.txt" >&2
[ -s "$work/why.txt" ] && cat "$work/why.txt" >&2
exit 1
