#!/usr/bin/env bash
# Serves guardjit graphs from Triton Inference Server with the installed
# backend (PREFIX/backends/guardjit/libtriton_guardjit.so, PREFIX from
# `pkg-config guardjit`; scripts/test_bindings.sh sets PKG_CONFIG_PATH and
# LD_LIBRARY_PATH) and tests it over HTTP and gRPC (tests/test_triton.py).
#
# Makes (or reuses) a venv in .venv with nvidia-pytriton (the tritonserver
# binary and its libraries; no GPU needed) and tritonclient, builds a model
# repository in a temporary directory (an example graph, a model exported by
# guardjit.export with the Python binding's venv when it exists, a model
# that fails to load), starts tritonserver on free loopback ports, runs the
# tests and stops the server by its pid (also on failure).
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
repo_root=$(cd ../.. && pwd)
total_start=$SECONDS
. ./server_util.sh
cache=${GUARDJIT_PIP_CACHE:-$HOME/.cache/guardjit-pip}
python=${PYTHON:-python3}

if ! pkg-config --exists guardjit; then
  echo "bindings/triton/test.sh: pkg-config cannot find guardjit; set PKG_CONFIG_PATH to PREFIX/lib/pkgconfig" >&2
  exit 1
fi
prefix=$(pkg-config --variable=prefix guardjit)
backend="$prefix/backends/guardjit/libtriton_guardjit.so"
if [ ! -f "$backend" ]; then
  echo "bindings/triton/test.sh: no $backend (configure with -DGUARDJIT_BUILD_TRITON=ON)" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
if ! .venv/bin/python -c "import tritonclient.http, tritonclient.grpc, numpy, pytriton" 2>/dev/null; then
  .venv/bin/python -m pip --cache-dir "$cache" --disable-pip-version-check -q install \
    "nvidia-pytriton==0.7.0" "tritonclient[http,grpc]" numpy
fi
site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
tritonserver="$site/pytriton/tritonserver/bin/tritonserver"
echo "triton: venv ready in $((SECONDS - total_start))s; $("$tritonserver" --version 2>/dev/null | head -1 || true)"

work=$(mktemp -d /tmp/guardjit-triton.XXXXXX)
server_pid=
trap stop_server_and_clean_up EXIT

# The model repository.
repo="$work/models"
mkdir -p "$repo/mlp/1" "$repo/broken/1"
cp "$repo_root/examples/mlp.pbtxt" "$repo/mlp/1/model.pbtxt"
cat >"$repo/mlp/config.pbtxt" <<'PB'
backend: "guardjit"
max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ -1, -1 ] } ]
output [ { name: "addmm_1" data_type: TYPE_FP32 dims: [ -1, 4 ] } ]
parameters { key: "num_threads" value { string_value: "1" } }
PB
# The example MLP again, on a compile cache directory signed with a key read
# from a file: reloaded, its instance loads its code instead of compiling.
# A sigmoid in place of its relu, whose epilogue the library would run
# without compiling anything (jit/steps/pointwise_epilogue.h).
mkdir -p "$repo/mlp_cached/1" "$repo/mlp_badkey/1"
sed 's/aten\.relu\.default/aten.sigmoid.default/' "$repo_root/examples/mlp.pbtxt" \
  >"$repo/mlp_cached/1/model.pbtxt"
grep -q aten.sigmoid.default "$repo/mlp_cached/1/model.pbtxt"
cp "$repo_root/examples/mlp.pbtxt" "$repo/mlp_badkey/1/model.pbtxt"
printf 'not a secret, a test key\n' >"$work/cache.key"
for m in mlp_cached mlp_badkey; do
  key="$work/cache.key"
  [ $m = mlp_badkey ] && key="$work/missing.key"
  cat >"$repo/$m/config.pbtxt" <<PB
backend: "guardjit"
max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ -1, -1 ] } ]
output [ { name: "addmm_1" data_type: TYPE_FP32 dims: [ -1, 4 ] } ]
parameters { key: "num_threads" value { string_value: "1" } }
parameters { key: "cache_dir" value { string_value: "$work/gjcache" } }
parameters { key: "remote_cache" value { string_value: "" } }
parameters { key: "cache_key_file" value { string_value: "$key" } }
PB
done
printf 'name: "broken"\nplaceholders { name: "x" }\nnodes { name: "n" target: "aten.nope.default" args { ref: "x" } }\noutputs { ref: "n" }\n' \
  >"$repo/broken/1/model.pbtxt"
printf 'backend: "guardjit"\nmax_batch_size: 0\ninput [ { name: "x" data_type: TYPE_FP32 dims: [ -1 ] } ]\noutput [ { name: "n" data_type: TYPE_FP32 dims: [ -1 ] } ]\n' \
  >"$repo/broken/config.pbtxt"
exported=0
py_venv="$repo_root/bindings/python/.venv/bin/python"
if [ -x "$py_venv" ] && "$py_venv" -c "import guardjit, torch" 2>/dev/null; then
  mkdir -p "$repo/mlp_dyn/1"
  TORCH_CPP_LOG_LEVEL=ERROR "$py_venv" -W ignore tests/make_models.py "$repo/mlp_dyn/1" 2>&1 \
    | grep -v "triton not found"
  # No inputs, outputs or max_batch_size: auto-completed from the graph.
  cat >"$repo/mlp_dyn/config.pbtxt" <<'PB'
backend: "guardjit"
dynamic_batching { max_queue_delay_microseconds: 100000 }
parameters { key: "warmup" value { string_value: "2,4" } }
PB
  # The same graph warmed up at batch 1: single requests run unpadded on the
  # batch-of-one entry, compiling nothing more.
  mkdir -p "$repo/mlp_one/1"
  cp "$repo/mlp_dyn/1/"* "$repo/mlp_one/1/"
  cat >"$repo/mlp_one/config.pbtxt" <<'PB'
backend: "guardjit"
max_batch_size: 8
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "warmup" value { string_value: "1" } }
PB
  # The same graph with any trailing shape accepted, so that a wrong shape
  # reaches the library (its output auto-completed).
  mkdir -p "$repo/mlp_any/1"
  cp "$repo/mlp_dyn/1/"* "$repo/mlp_any/1/"
  cat >"$repo/mlp_any/config.pbtxt" <<'PB'
backend: "guardjit"
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 20000 }
input [ { name: "x" data_type: TYPE_FP32 dims: [ -1 ] } ]
PB
  exported=1
else
  echo "triton: no Python binding venv with torch (bindings/python/test.sh makes it): the exported models are skipped"
fi

ports=$(free_loopback_ports .venv/bin/python 3)
read -r http_port grpc_port metrics_port <<<"$ports"
log="$work/tritonserver.log"
"$tritonserver" --model-repository="$repo" --backend-directory="$prefix/backends" \
  --model-control-mode=explicit --load-model=mlp \
  $([ $exported = 1 ] && echo --load-model=mlp_dyn --load-model=mlp_any --load-model=mlp_one) \
  --http-address=127.0.0.1 --http-port="$http_port" \
  --grpc-address=127.0.0.1 --grpc-port="$grpc_port" \
  --metrics-address=127.0.0.1 --metrics-port="$metrics_port" \
  --log-verbose=0 >"$log" 2>&1 &
server_pid=$!
wait_until_ready .venv/bin/python "$server_pid" "$http_port" "$log" triton
echo "triton: server ready in $((SECONDS - total_start))s (pid $server_pid, http $http_port, grpc $grpc_port)"

status=0
GJ_TRITON_HTTP="127.0.0.1:$http_port" GJ_TRITON_GRPC="127.0.0.1:$grpc_port" \
  GJ_TRITON_METRICS="127.0.0.1:$metrics_port" GJ_TRITON_LOG="$log" \
  GJ_TRITON_EXPORTED="$exported" GJ_TRITON_REPO="$repo" GJ_TRITON_CACHE="$work/gjcache" \
  .venv/bin/python -m unittest discover -s tests -t . -v || status=$?
if [ $status != 0 ]; then
  echo "triton: tests failed; the server's log:" >&2
  tail -50 "$log" >&2
fi
echo "triton: done in $((SECONDS - total_start))s"
exit $status
