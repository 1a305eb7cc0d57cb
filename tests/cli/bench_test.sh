#!/usr/bin/env bash
# `guardjit bench`: its console and Google Benchmark JSON output, the shape
# sweep's compile counts, and its usage errors. A few calls per run, so the
# timings themselves are not checked.
#   bench_test.sh path/to/guardjit
set -u
cli=$1
examples=$(cd "$(dirname "$0")/../../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $1"
  [ -n "${2:-}" ] && sed 's/^/    /' "$2"
  failures=$((failures + 1))
}

# expect STATUS PATTERN -- ARGS...: runs `guardjit bench ARGS`, checks the
# exit status and that stdout+stderr match the extended regex PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 3
  "$cli" bench "$@" >"$tmp/out" 2>&1
  local status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" "$tmp/out"; then
    fail "guardjit bench $* -> exit $status (want $want, /$pattern/)" "$tmp/out"
  fi
}

# json FILE PYTHON: runs PYTHON with `d` the parsed FILE and `b` its
# benchmarks; an assertion fails the check.
json() {
  if ! python3 - "$1" >"$tmp/py" 2>&1 <<PY; then
import json, sys
d = json.load(open(sys.argv[1]))
b = d["benchmarks"]
$2
PY
    fail "JSON check on $1" "$tmp/py"
  fi
}

mlp=$examples/mlp.pbtxt
fast=(--min-time 5x)

# Console: the first-call split, Google Benchmark's table, the summary.
expect 0 'specialize\+compile .* wall time of gj_function_precompile' -- "$mlp" --input 'x=float32[4,8]' "${fast[@]}"
expect 0 '^mlp/hit +[0-9.]+ ns +[0-9.]+ ns +5 ' -- "$mlp" --input 'x=float32[4,8]' "${fast[@]}"
expect 0 '^mlp/memcpy_median ' -- "$mlp" --input 'x=float32[4,8]' "${fast[@]}" --repetitions 2
expect 0 'hit latency per call \(medians of 2 repetitions\): p50 ' -- "$mlp" --input 'x=float32[4,8]' "${fast[@]}" --repetitions 2
expect 0 'a hit costs [0-9.]+x that memcpy' -- "$mlp" --input 'x=float32[4,8]' "${fast[@]}"
expect 0 'throughput: [0-9]+ calls/s on 2 threads' -- "$mlp" --input 'x=float32[4,8]' "${fast[@]}" --threads 2
expect 0 'cache: 1 compile, 1 miss' -- "$mlp" --input 'x=float32[4,8]' --min-time 0

# JSON as Google Benchmark writes it (tools/compare.py reads these keys).
"$cli" bench "$mlp" --input 'x=float32[4,8]' "${fast[@]}" --repetitions 3 \
  --threads 2 --benchmark_format=json >"$tmp/hits.json" 2>"$tmp/err" ||
  fail "bench --benchmark_format=json exited $?" "$tmp/err"
json "$tmp/hits.json" '
c = d["context"]
for k in ["date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
          "cpu_scaling_enabled", "caches", "load_avg", "library_build_type"]:
    assert k in c, "context lacks " + k
assert isinstance(c["num_cpus"], int) and c["library_build_type"] in ("release", "debug")
strings = {"name", "run_name", "run_type", "aggregate_name", "aggregate_unit", "time_unit"}
for r in b:
    for k in ["name", "family_index", "per_family_instance_index", "run_name",
              "run_type", "repetitions", "threads", "iterations", "real_time",
              "cpu_time", "time_unit"]:
        assert k in r, r["name"] + " lacks " + k
    assert r["run_type"] in ("iteration", "aggregate"), r["run_type"]
    if r["run_type"] == "iteration":
        assert "repetition_index" in r and "aggregate_name" not in r
    else:
        assert r["aggregate_name"] in ("mean", "median", "stddev", "cv")
        assert r["name"] == r["run_name"] + "_" + r["aggregate_name"]
        assert r["iterations"] == r["repetitions"] == 3
    assert r["time_unit"] in ("ns", "us", "ms", "s")
    for k, v in r.items():
        if k not in strings:
            assert isinstance(v, (int, float)) and not isinstance(v, bool), (k, v)
names = [r["name"] for r in b]
assert names[0] == "mlp/first_call", names
hits = [r for r in b if r["run_name"] == "mlp/hit/threads:2"]
assert [r["run_type"] for r in hits] == ["iteration"] * 3 + ["aggregate"] * 4, names
assert [r["repetition_index"] for r in hits[:3]] == [0, 1, 2]
for r in hits[:3]:
    assert r["threads"] == 2 and r["iterations"] == 10
    for k in ["p50_ns", "p90_ns", "p99_ns", "guard_ns", "bytes",
              "bytes_per_second", "items_per_second", "vs_memcpy"]:
        assert k in r, "hit lacks " + k
    assert r["p50_ns"] <= r["p90_ns"] <= r["p99_ns"] and r["vs_memcpy"] > 0
    assert r["bytes"] == (4 * 8 + 4 * 4) * 4
assert any(r["run_name"] == "mlp/memcpy/threads:2" for r in b)
first = b[0]
assert first["time_unit"] == "ms" and first["specialize_compile_ms"] > 0
assert first["library_compile_ms"] > 0 and first["first_run_ms"] > 0
'

# Shape sweep over three sizes: the compile count after each set.
sweep() {  # DYNAMIC EXPECTED_COMPILES (a Python list of allowed lists)
  "$cli" bench "$mlp" --dynamic "$1" --min-time 3x --benchmark_format=json \
    --shapes 'x=float32[2,8]; x=float32[4,8]; x=float32[16,8]' \
    >"$tmp/sweep_$1.json" 2>"$tmp/err" ||
    fail "sweep --dynamic $1 exited $?" "$tmp/err"
  json "$tmp/sweep_$1.json" "
got = [int(r['compiles']) for r in b]
assert got in $2, got
assert [r['name'] for r in b] == ['mlp/shape:x=float32[2,8]',
    'mlp/shape:x=float32[4,8]', 'mlp/shape:x=float32[16,8]'], b
assert all(r['first_call_ms'] > 0 and r['p50_ns'] > 0 for r in b)
"
}
sweep static '[[1, 2, 3]]'
sweep dynamic '[[1, 1, 1]]'
sweep auto '[[1, 2, 2], [1, 1, 1]]'
expect 0 '1 compile for 3 input sets \(dynamic dynamic\)' -- "$mlp" --dynamic dynamic --min-time 2x --shapes 'x=float32[2,8]; x=float32[4,8]; x=float32[16,8]'
# A file: one set per line, inputs separated by spaces, comments and blank
# lines skipped; an input a set leaves out comes from --input.
printf '# x and b\nx=float32[4] b=float32[4]\n\nx=float32[8] b=float32[8]  # two\nx=float32[16]\n' >"$tmp/sets.txt"
expect 0 '  3  x=float32\[16\] b=float32\[16\] ' -- "$examples/seed_mul.pbtxt" --input 'b=float32[16]' --shapes-file "$tmp/sets.txt" --min-time 2x

"$cli" --help | grep -q 'guardjit bench GRAPH' || fail "--help does not show bench"

# Errors: usage (exit 2) names the flag or input; guardjit's own (exit 1).
expect 2 'bench needs a GRAPH' --
expect 2 "unknown flag '--bogus'" -- "$mlp" --bogus
expect 2 "--threads needs a count from 1 to 1024, got '0'" -- "$mlp" --input 'x=float32[4,8]' --threads 0
expect 2 "--repetitions needs a count of 1 or more, got 'two'" -- "$mlp" --input 'x=float32[4,8]' --repetitions two
expect 2 "--min-time needs seconds .* got 'soon'" -- "$mlp" --input 'x=float32[4,8]' --min-time soon
expect 2 "--dynamic must be auto, static or dynamic, got 'maybe'" -- "$mlp" --input 'x=float32[4,8]' --dynamic maybe
expect 2 "--benchmark_format must be console or json, got 'csv'" -- "$mlp" --input 'x=float32[4,8]' --benchmark_format=csv
expect 2 '--threads needs a value' -- "$mlp" --input 'x=float32[4,8]' --threads
expect 2 'no --input for graph input\(s\): x' -- "$mlp"
expect 2 "--input 'y' names no input of the graph" -- "$mlp" --input 'x=float32[4,8]' --input 'y=float32[1]'
expect 2 "unknown dtype 'float8' for input 'x'" -- "$mlp" --input 'x=float8[4,8]'
expect 2 "--shapes set 2 \('x=float32\[4,8\] y=float32\[1\]'\): --input 'y' names no input" -- "$mlp" --shapes 'x=float32[2,8]; x=float32[4,8] y=float32[1]'
expect 2 "--shapes: bad size 'a'" -- "$mlp" --shapes 'x=float32[a,8]'
expect 2 '--shapes has no input sets' -- "$mlp" --shapes ' ; '
expect 2 "--shapes-file '$tmp/none' cannot be read" -- "$mlp" --shapes-file "$tmp/none"
expect 2 'give --shapes or --shapes-file once' -- "$mlp" --shapes 'x=float32[2,8]' --shapes-file "$tmp/sets.txt"
expect 2 '--repetitions applies to the hit benchmark, not to --shapes' -- "$mlp" --shapes 'x=float32[2,8]' --repetitions 3
expect 1 "GJ_INVALID_ARGUMENT: .*node 'addmm'" -- "$mlp" --input 'x=float32[4,5]' --min-time 1x
expect 1 'GJ_NOT_FOUND' -- "$tmp/missing.pbtxt" --input 'x=float32[1]'

if [ "$failures" -ne 0 ]; then
  echo "$failures bench check(s) failed"
  exit 1
fi
echo "cli_bench: all checks passed"
