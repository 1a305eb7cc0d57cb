#!/usr/bin/env bash
# The compile cache's Redis tier across processes, through the command line
# tool (GJ_REMOTE_CACHE), against a real redis-server (Debian's package)
# started here on a free loopback port and stopped by its pid:
# - processes with separate disk caches share kernels through Redis: a
#   second one compiles nothing (GJ_ASSERT_NO_COMPILE=1) and matches;
# - four processes missing together compile each kernel once (the compile
#   lock): the stores GJ_LOGS=cache logs add up to one per kernel;
# - Redis stopped, or a port where nothing answers: runs still succeed, in
#   about the time a compile takes.
#   remote_cache_test.sh path/to/guardjit path/to/examples
set -u
cli=$1
examples=$2
tmp=$(mktemp -d)
redis_pid=
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
graph=$examples/attention.pbtxt
input='x=float32[2,4,8]'
fail() {
  echo "FAIL: $1"
  [ -n "${2:-}" ] && echo "$2" | sed 's/^/    /'
  failures=$((failures + 1))
}
for tool in redis-server redis-cli; do
  command -v "$tool" >/dev/null || {
    echo "FAIL: $tool is not installed (scripts/setup.sh installs Debian's redis-server)"
    exit 1
  }
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=
for attempt in 1 2 3 4 5; do
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning &
  redis_pid=$!
  for i in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -0 "$redis_pid" 2>/dev/null && break
  redis_pid=
done
[ -n "$redis_pid" ] || { echo "FAIL: redis-server did not start"; exit 1; }
url="redis://127.0.0.1:$port/0"

run() {  # run DISK_DIR REMOTE [ENV...]
  local dir=$1 remote=$2
  shift 2
  env GJ_CACHE_DIR="$dir" GJ_REMOTE_CACHE="$remote" "$@" \
    "$cli" run "$graph" --input "$input" --print --explain 2>&1
}
values() { grep -A1 'output 0' <<<"$1" | tail -1; }
want=$(values "$(env -u GJ_CACHE_DIR "$cli" run "$graph" --input "$input" --print 2>&1)")

# 1. Shared through Redis, separate disks.
out=$(run "$tmp/a" "$url")
[ "$(values "$out")" = "$want" ] || fail "first replica: values differ" "$out"
out=$(run "$tmp/b" "$url" GJ_ASSERT_NO_COMPILE=1)
grep -q 'loaded from the remote cache in' <<<"$out" || fail "second replica: not loaded from Redis" "$out"
[ "$(values "$out")" = "$want" ] || fail "second replica: values differ" "$out"
# ... and written to its disk: a third run there needs no Redis.
out=$(run "$tmp/b" "" GJ_ASSERT_NO_COMPILE=1)
grep -q 'loaded from the disk cache in' <<<"$out" || fail "remote hit not written to disk" "$out"
kernels=$(find "$tmp/a" -name '*.gjc' | wc -l)

# 2. A fleet missing together compiles each kernel once.
redis-cli -p "$port" flushall >/dev/null || fail "redis-cli flushall"
pids=()
for i in 1 2 3 4; do
  (run "$tmp/f$i" "$url" GJ_LOGS=cache >"$tmp/f$i.out") &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a replica failed"; done
stores=0
for i in 1 2 3 4; do
  [ "$(values "$(cat "$tmp/f$i.out")")" = "$want" ] || fail "replica $i: values differ" "$(cat "$tmp/f$i.out")"
  stores=$((stores + $(grep -c '\[guardjit:cache\] store ' "$tmp/f$i.out")))
done
[ "$stores" -eq "$kernels" ] || fail "4 replicas stored $stores kernels; $kernels distinct (each should compile once)"

# 3. Redis stopped: still correct, no waiting.
kill "$redis_pid"; wait "$redis_pid" 2>/dev/null; redis_pid=
start=$(date +%s%N)
out=$(run "$tmp/c" "$url")
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$(values "$out")" = "$want" ] || fail "Redis down: values differ" "$out"
grep -q 'compile cache: Redis' <<<"$out" || fail "Redis down: no warning" "$out"
[ "$ms" -lt 20000 ] || fail "Redis down: the run took $ms ms"

# 4. A port that accepts and never answers: bounded by timeout_ms.
python3 - "$tmp/silent.port" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
s.settimeout(0.1)
end = time.time() + 60
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
PY
silent_pid=$!
for i in $(seq 100); do [ -s "$tmp/silent.port" ] && break; sleep 0.05; done
out=$(run "$tmp/d" "redis://127.0.0.1:$(cat "$tmp/silent.port")/0?timeout_ms=100")
kill "$silent_pid" 2>/dev/null
[ "$(values "$out")" = "$want" ] || fail "silent Redis: values differ" "$out"
grep -q 'compile cache: Redis' <<<"$out" || fail "silent Redis: no warning" "$out"

# A malformed URL fails the context, naming it.
out=$(run "$tmp/e" "http://nope")
grep -q 'GJ_INVALID_ARGUMENT: .*remote_cache (GJ_REMOTE_CACHE).*http://nope' <<<"$out" \
  || fail "bad GJ_REMOTE_CACHE" "$out"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "remote compile cache across processes: ok"
