#!/usr/bin/env bash
# Exit codes and messages of the guardjit command line tool.
#   cli_test.sh path/to/guardjit
set -u
cli=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect STATUS PATTERN -- ARGS...: runs the CLI, checks the exit status and
# that stdout+stderr match the extended regex PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 3
  local out status
  out=$("$cli" "$@" 2>&1)
  status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: guardjit $* -> exit $status (want $want), output:"
    echo "$out" | sed 's/^/    /'
    echo "    (wanted /$pattern/)"
    failures=$((failures + 1))
  fi
}

cat >"$tmp/pass.pbtxt" <<'PB'
name: "pass"
placeholders { name: "x" }
placeholders { name: "mask" }
outputs { ref: "x" }
outputs { ref: "mask" }
PB
cat >"$tmp/meta.pbtxt" <<'PB'
name: "meta"
placeholders { name: "x" meta { dtype: FLOAT32 dims { symbol: "batch" } dims { size: 3 } dims {} } }
placeholders { name: "y" }
outputs { ref: "x" }
output_meta { dtype: FLOAT32 unknown_rank: true }
PB
printf 'name: "broken"\nplaceholders { name: "x" }\noutputs { ref: "nowhere" }\n' >"$tmp/undefined.pbtxt"
printf 'name: "g"\nbogus: 1\n' >"$tmp/syntax.pbtxt"
printf 'name: "g"\nplaceholders { name: "x" }\nnodes { name: "n" target: "aten.nope.default" args { ref: "x" } }\noutputs { ref: "n" }\n' >"$tmp/unknown.pbtxt"

# Success.
expect 0 'placeholder +x' -- check "$tmp/pass.pbtxt"
expect 0 'ok: 2 inputs \(x, mask\), 2 outputs' -- check "$tmp/pass.pbtxt"
expect 0 'input x: float32\[batch, 3, \?\]' -- check "$tmp/meta.pbtxt"
expect 0 'input y: \?\[\*\]' -- check "$tmp/meta.pbtxt"
expect 0 'output x: float32\[\*\]' -- check "$tmp/meta.pbtxt"
expect 0 'output 0 \(x\): int64\[2, 2\]' -- run "$tmp/pass.pbtxt" --input 'x=int64[2,2]:1,2,3,4' --input 'mask=bool[2]:1,0'
expect 0 'output 1 \(mask\): bool\[2\]' -- run "$tmp/pass.pbtxt" --input 'x=int64[2,2]:1,2,3,4' --input 'mask=bool[2]:1,0'
expect 0 'values: \[1, 2, 3, 4\]' -- run "$tmp/pass.pbtxt" --input 'x=int64[2,2]:1,2,3,4' --input 'mask=bool[2]:1,0' --print
expect 0 'values: \[True, False\]' -- run "$tmp/pass.pbtxt" --input 'x=int64[2,2]:1,2,3,4' --input 'mask=bool[2]:true,false'
expect 0 'min 7  max 7  mean 7' -- run "$tmp/pass.pbtxt" --input=x=float16[3]:7 --input mask=bool[]:zeros
expect 0 '\.\.\. \(92 more\)' -- run "$tmp/pass.pbtxt" --input 'x=float32[10,10]' --input 'mask=uint8[1]:ones'
expect 0 'next 4 calls mean' -- run "$tmp/pass.pbtxt" --input 'x=float32[3]' --input 'mask=bool[1]' --repeat 5
expect 0 'usage: guardjit run' -- --help
# GJ_LOGS names a topic it does not know: one warning, the run goes on.
out=$(GJ_LOGS=guards,recompile "$cli" run "$tmp/pass.pbtxt" --input 'x=float32[1]' --input 'mask=bool[1]' 2>&1)
if [ "$(grep -c "GJ_LOGS: unknown topic 'recompile' ignored; known topics: guards, recompiles" <<<"$out")" -ne 1 ]; then
  echo "FAIL: GJ_LOGS=guards,recompile did not warn once:"; echo "$out" | sed 's/^/    /'
  failures=$((failures + 1))
fi

# guardjit errors: exit 1 with the error code's name.
expect 1 'GJ_NOT_FOUND: .*missing\.pbtxt' -- check "$tmp/missing.pbtxt"
expect 1 'GJ_INVALID_ARGUMENT: .*line 2' -- check "$tmp/syntax.pbtxt"
expect 1 "GJ_INVALID_ARGUMENT: .*'nowhere'" -- check "$tmp/undefined.pbtxt"
expect 1 "GJ_UNIMPLEMENTED: .*node 'n'" -- check "$tmp/unknown.pbtxt"
expect 1 'GJ_NOT_FOUND' -- run "$tmp/missing.pbtxt" --input 'x=float32[1]'

# Usage errors: exit 2.
expect 2 'usage: guardjit run' --
expect 2 "unknown command 'frob'" -- frob
expect 2 'check takes exactly one GRAPH' -- check
expect 2 'run needs a GRAPH' -- run
expect 2 "unknown flag '--bogus'" -- run "$tmp/pass.pbtxt" --bogus
expect 2 'no --input for graph input\(s\): mask' -- run "$tmp/pass.pbtxt" --input 'x=float32[1]'
expect 2 "names no input of the graph" -- run "$tmp/pass.pbtxt" --input 'x=float32[1]' --input 'mask=bool[1]' --input 'z=float32[1]'
expect 2 "unknown dtype 'float8'" -- run "$tmp/pass.pbtxt" --input 'x=float8[1]'
expect 2 "bad size '-1'" -- run "$tmp/pass.pbtxt" --input 'x=float32[-1]'
expect 2 "bad value '300' for int8" -- run "$tmp/pass.pbtxt" --input 'x=int8[1]:300'
expect 2 "has 2 elements but 3 values" -- run "$tmp/pass.pbtxt" --input 'x=float32[2]:1,2,3'
expect 2 "expected NAME=DTYPE" -- run "$tmp/pass.pbtxt" --input 'x'
expect 2 "given twice" -- run "$tmp/pass.pbtxt" --input 'x=float32[1]' --input 'x=float32[2]'
expect 2 'repeat needs a count of 1' -- run "$tmp/pass.pbtxt" --repeat 0

# compile: the code a target gets, and --emulate against eager.
examples=$(cd "$(dirname "$0")/../../examples" && pwd)
printf 'name: "emb"\nplaceholders { name: "w" }\nplaceholders { name: "i" }\nnodes { name: "e" target: "aten.embedding.default" args { ref: "w" } args { ref: "i" } }\noutputs { ref: "e" }\n' >"$tmp/embedding.pbtxt"
expect 0 'LLVM IR before O3' -- compile "$examples/attention.pbtxt" --target cpu --input 'x=float32[2,4,8]'
expect 0 'compiled vs eager: max abs error' -- compile "$examples/attention.pbtxt" --input 'x=float32[2,4,8]' --emulate
expect 1 'compiled vs eager: run failed' -- compile "$tmp/embedding.pbtxt" --input 'w=float32[3,4]' --input 'i=int64[32]' --emulate
expect 1 "GJ_INVALID_ARGUMENT: .*unknown target 'tpu:v5'" -- compile "$examples/attention.pbtxt" --target tpu:v5 --input 'x=float32[2,4,8]'
expect 2 'compile needs a GRAPH' -- compile
expect 2 "unknown flag '--repeat'" -- compile "$examples/attention.pbtxt" --repeat 2
expect 2 'no --input for graph input\(s\): x' -- compile "$examples/attention.pbtxt" --target cuda:sm_90
# CUDA targets need NVRTC (no GPU): skipped where it cannot be loaded.
if "$cli" compile "$examples/mlp.pbtxt" --target cuda:sm_90 --input 'x=float32[4,8]' 2>&1 | grep -q GJ_UNAVAILABLE; then
  echo "cli: NVRTC unavailable, compile --target cuda skipped"
else
  expect 0 'extern "C" __global__' -- compile "$examples/attention.pbtxt" --target cuda:sm_90 --input 'x=float32[2,4,8]'
  expect 0 'registers' -- compile "$examples/attention.pbtxt" --target cuda:sm_90 --input 'x=float32[2,4,8]'
  expect 0 'emulated vs eager: max abs error' -- compile "$examples/attention.pbtxt" --target cuda:sm_90 --input 'x=float32[2,4,8]' --emulate
  expect 0 'emulated vs eager: max abs error' -- compile "$examples/mlp.pbtxt" --target cuda:sm_80 --input 'x=float32[4,8]' --emulate --seed 3
  expect 1 'emulated vs eager: run failed' -- compile "$tmp/embedding.pbtxt" --target cuda:sm_90 --input 'w=float32[3,4]' --input 'i=int64[32]' --emulate
fi

# GJ_PROFILE=1: explain lists each entry's step times over its calls.
cat >"$tmp/mm_relu.pbtxt" <<'PB'
name: "mm_relu"
placeholders { name: "x" }
placeholders { name: "w" }
nodes { name: "mm" target: "aten.mm.default" args { ref: "x" } args { ref: "w" } }
nodes { name: "r" target: "aten.relu.default" args { ref: "mm" } }
nodes { name: "e" target: "aten.exp.default" args { ref: "mm" } }
outputs { ref: "r" }
outputs { ref: "e" }
PB
profile() {
  GJ_PROFILE=1 "$cli" run "$tmp/mm_relu.pbtxt" --input 'x=float32[64,32]' \
    --input 'w=float32[32,48]' --repeat 5 --explain 2>&1
}
out=$(profile)
for pattern in '^Step Times \(GJ_PROFILE\):' \
    'entry 0: 5 calls, [0-9.]+ (ms|us) per call: steps [0-9.]+ (ms|us) \([0-9.]+%\), between steps' \
    '1 gemm steps: [0-9.]+ (ms|us)' 'step [0-9]+ \(gemm\): [0-9.]+ (ms|us) \([0-9.]+%\) kernel computing r, e'; do
  if ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: GJ_PROFILE=1 guardjit run --explain: no /$pattern/ in:"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  fi
done
# GJ_PROFILE=N (N >= 2): the N slowest steps; otherwise up to 12.
cat >"$tmp/mm3.pbtxt" <<'PB'
name: "mm3"
placeholders { name: "x" }
placeholders { name: "w" }
nodes { name: "m1" target: "aten.mm.default" args { ref: "x" } args { ref: "w" } }
nodes { name: "m2" target: "aten.mm.default" args { ref: "m1" } args { ref: "w" } }
nodes { name: "m3" target: "aten.mm.default" args { ref: "m2" } args { ref: "w" } }
outputs { ref: "m3" }
PB
for n in 1 2; do
  steps=$(GJ_PROFILE=$n "$cli" run "$tmp/mm3.pbtxt" --input 'x=float32[64,32]' \
    --input 'w=float32[32,32]' --repeat 3 --explain 2>&1 | grep -cE '^ +step [0-9]+ \(gemm\)')
  want=3; [ $n = 2 ] && want=2
  if [ "$steps" != "$want" ]; then
    echo "FAIL: GJ_PROFILE=$n listed $steps steps of 3, want $want"
    failures=$((failures + 1))
  fi
done
if "$cli" run "$tmp/mm_relu.pbtxt" --input 'x=float32[64,32]' --input 'w=float32[32,48]' \
    --explain 2>&1 | grep -q 'Step Times'; then
  echo "FAIL: explain lists step times without GJ_PROFILE"
  failures=$((failures + 1))
fi

# ops: every registered op and what runs it.
expect 0 'aten\.max_pool2d_with_indices\.default +yes +yes +- +yes' -- ops
expect 0 'aten\.avg_pool2d\.default +yes +yes +- +yes' -- ops
expect 0 'aten\._adaptive_avg_pool2d\.default +yes +- +- +-' -- ops
expect 0 'aten\.mm\.default +yes +- +yes +-' -- ops
expect 0 'aten\.hardtanh\.default +yes +yes +- +yes' -- ops
expect 0 'aten\._unique2\.default +yes +- +- +-' -- ops
expect 0 '[0-9]+ ops: [0-9]+ with a reference kernel' -- ops
expect 0 '"target": "aten\.add\.Tensor", "schema": "add\.Tensor\(Tensor self, Tensor other.*"reference_kernel": true, "cpu_lowering": true' -- ops --json
expect 2 "unknown flag '--csv'" -- ops --csv

# ONNX models (core/onnx/): recognized by content whatever the file is
# called; protoc encodes them from text with the onnx.proto of Debian's
# libonnx-dev.
onnx_proto=/usr/include/onnx/onnx.proto
if command -v protoc >/dev/null && [ -f "$onnx_proto" ]; then
  cat >"$tmp/relu_add.txt" <<'PB'
ir_version: 8
opset_import { version: 13 }
graph {
  name: "relu_add"
  node { op_type: "Add" input: "x" input: "b" output: "s" name: "add" }
  node { op_type: "Relu" input: "s" output: "y" name: "relu" }
  initializer { name: "b" data_type: 1 dims: 3 float_data: 1 float_data: -5 float_data: 0.5 }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } dim { dim_value: 3 } } } } }
  output { name: "y" }
}
PB
  sed 's/"Relu"/"Frobnicate"/' "$tmp/relu_add.txt" >"$tmp/unknown_op.txt"
  for name in relu_add unknown_op; do
    protoc --encode=onnx.ModelProto -I/usr/include onnx/onnx.proto \
      <"$tmp/$name.txt" >"$tmp/$name.onnx"
  done
  cp "$tmp/relu_add.onnx" "$tmp/relu_add.bin"
  expect 0 'ok: 1 inputs \(x\), 1 outputs' -- check "$tmp/relu_add.onnx"
  expect 0 'values: \[2, 0, 3.5, 5, 0, 6.5\]' -- run "$tmp/relu_add.onnx" --input 'x=float32[2,3]:1,2,3,4,5,6' --print
  expect 0 'values: \[2, 0, 3.5, 5, 0, 6.5\]' -- run "$tmp/relu_add.bin" --input 'x=float32[2,3]:1,2,3,4,5,6' --print
  expect 0 'step 0: kernel computing y' -- compile "$tmp/relu_add.onnx" --input 'x=float32[2,3]'
  expect 1 "GJ_UNIMPLEMENTED: .*ONNX node 1 'relu' \(Frobnicate, domain 'ai.onnx', opset 13\): operator Frobnicate is not supported" -- run "$tmp/unknown_op.onnx" --input 'x=float32[2,3]'
else
  echo "cli: protoc or $onnx_proto missing, ONNX checks skipped"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI check(s) failed"
  exit 1
fi
echo "cli: all checks passed"
