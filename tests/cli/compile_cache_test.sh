#!/usr/bin/env bash
# The persistent compile cache across processes, through the command line
# tool (a host like any other: GJ_CACHE_DIR, GJ_CACHE_KEY):
# - a second process sharing the directory compiles nothing
#   (GJ_ASSERT_NO_COMPILE=1 makes any compile an error) and matches;
# - processes filling one directory at once leave only whole records;
# - corrupt, truncated, version-skewed and wrongly signed records are
#   refused with a warning, recompiled and replaced, and results still match;
# - guardjit cache stats|verify|clear.
#   compile_cache_test.sh path/to/guardjit path/to/examples
set -u
cli=$1
examples=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
graph=$examples/attention.pbtxt
input='x=float32[2,4,8]'

fail() {
  echo "FAIL: $1"
  [ -n "${2:-}" ] && echo "$2" | sed 's/^/    /'
  failures=$((failures + 1))
}

# run DIR [ENV...]: prints the CLI's output for one call with --print.
run() {
  local dir=$1
  shift
  env GJ_CACHE_DIR="$dir" "$@" "$cli" run "$graph" --input "$input" --print --explain 2>&1
}
values() { grep -A1 'output 0' <<<"$1" | tail -1; }

# Reference values without a cache.
ref=$(env -u GJ_CACHE_DIR "$cli" run "$graph" --input "$input" --print 2>&1)
want=$(values "$ref")
[ -n "$want" ] || fail "no reference values" "$ref"

# 1. The first process compiles and stores; the second loads everything.
dir=$tmp/cache
out=$(run "$dir")
grep -qE 'entry 0: [0-9.]+ ms' <<<"$out" || fail "first process: no compile time" "$out"
[ "$(values "$out")" = "$want" ] || fail "first process: values differ" "$out"
records=$(find "$dir" -name '*.gjc' | wc -l)
[ "$records" -ge 2 ] || fail "first process stored $records records"
out=$(run "$dir" GJ_ASSERT_NO_COMPILE=1)
grep -q 'loaded from the disk cache in' <<<"$out" || fail "second process: not loaded" "$out"
[ "$(values "$out")" = "$want" ] || fail "second process: values differ" "$out"

# 2. guardjit cache stats and verify on a good directory.
out=$("$cli" cache stats "$dir" 2>&1) || fail "cache stats failed" "$out"
grep -qE "$records records, [0-9]+ bytes" <<<"$out" || fail "cache stats" "$out"
out=$("$cli" cache verify "$dir" 2>&1) || fail "cache verify failed" "$out"
grep -q "llvm-object: $records records" <<<"$out" || fail "cache verify kinds" "$out"
grep -q "verified $records, bad 0" <<<"$out" || fail "cache verify counts" "$out"

# 3. Damaged records: each refused, recompiled, replaced.
damage() {  # damage KIND FILE
  case $1 in
    corrupt) printf '\x55' | dd of="$2" bs=1 seek=200 conv=notrunc 2>/dev/null ;;
    truncated) truncate -s 40 "$2" ;;
    skew) printf '\x09' | dd of="$2" bs=1 seek=8 conv=notrunc 2>/dev/null ;;
    empty) : >"$2" ;;
  esac
}
for kind in corrupt truncated skew empty; do
  victim=$(find "$dir" -name '*.gjc' | sort | head -1)
  damage "$kind" "$victim"
  out=$("$cli" cache verify "$dir" 2>&1) && fail "$kind: verify passed" "$out"
  grep -qE "bad 1" <<<"$out" || fail "$kind: verify did not count it" "$out"
  out=$(run "$dir")
  grep -q 'refused record' <<<"$out" || fail "$kind: no warning" "$out"
  grep -q '1 of [0-9]* kernels loaded\|kernels loaded from the compile cache' <<<"$out" \
    || fail "$kind: the others were not loaded" "$out"
  [ "$(values "$out")" = "$want" ] || fail "$kind: values differ" "$out"
  out=$("$cli" cache verify "$dir" 2>&1) || fail "$kind: not replaced" "$out"
done

# 4. Signed records: another key refuses them, the writer's key loads them.
signed=$tmp/signed
run "$signed" GJ_CACHE_KEY=alpha >/dev/null
out=$(run "$signed" GJ_CACHE_KEY=alpha GJ_ASSERT_NO_COMPILE=1)
grep -q 'loaded from the disk cache' <<<"$out" || fail "signed: same key did not load" "$out"
out=$(run "$signed" GJ_CACHE_KEY=beta GJ_ASSERT_NO_COMPILE=1)
grep -q 'bad signature' <<<"$out" || fail "signed: another key was not refused" "$out"
out=$(run "$signed" GJ_CACHE_KEY=beta)
[ "$(values "$out")" = "$want" ] || fail "signed: values differ" "$out"
# Unsigned records in a directory read with a key.
out=$(run "$dir" GJ_CACHE_KEY=alpha GJ_ASSERT_NO_COMPILE=1)
grep -q 'unsigned' <<<"$out" || fail "unsigned records were not refused" "$out"
out=$(GJ_CACHE_KEY=gamma "$cli" cache verify "$signed" 2>&1) && fail "verify under another key passed" "$out"

# 5. Several processes filling one directory at once: all succeed and match,
# and every record is whole.
shared=$tmp/shared
pids=()
for i in 1 2 3 4; do
  (run "$shared" >"$tmp/p$i.out") &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent process failed"; done
for i in 1 2 3 4; do
  [ "$(values "$(cat "$tmp/p$i.out")")" = "$want" ] || fail "process $i: values differ" "$(cat "$tmp/p$i.out")"
done
out=$("$cli" cache verify "$shared" 2>&1) || fail "concurrent writers left bad records" "$out"
[ -z "$(find "$shared" -name '*.tmp.*')" ] || fail "temporary files left behind"

# 6. The size limit and clear.
out=$("$cli" cache clear "$dir" 2>&1) || fail "cache clear failed" "$out"
grep -qE 'removed [0-9]+ files' <<<"$out" || fail "cache clear" "$out"
[ "$(find "$dir" -name '*.gjc' | wc -l)" -eq 0 ] || fail "clear left records"
out=$("$cli" cache stats "$tmp/nowhere" 2>&1)
[ $? -eq 1 ] && grep -q 'GJ_NOT_FOUND' <<<"$out" || fail "stats of a missing directory" "$out"
out=$("$cli" cache frob "$dir" 2>&1)
[ $? -eq 2 ] || fail "unknown cache action" "$out"
# A cache directory that cannot be created fails the context, naming it.
: >"$tmp/file"
out=$(run "$tmp/file/sub")
grep -q 'GJ_UNAVAILABLE: .*GJ_CACHE_DIR.*file/sub' <<<"$out" || fail "bad GJ_CACHE_DIR" "$out"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "compile cache across processes: ok"
