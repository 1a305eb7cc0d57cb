#!/usr/bin/env bash
# KIND_GPU instances on a real GPU: scripts/gpu_check.sh's triton step runs
# this on the GPU machine over the unpacked Triton bundle ROOT
# (`bash scripts/gpu_check.sh pack-triton` here makes it):
#   ROOT/site/pytriton/tritonserver/bin/tritonserver   with the wheel's libraries
#   ROOT/backends/guardjit/libtriton_guardjit.so       the backend
#   ROOT/lib                                            libguardjit and its libraries
#   ROOT/models                                         example and exported graphs
# Makes a model repository of KIND_GPU models (and the example MLP on the
# CPU to compare with), starts tritonserver on free loopback ports, runs
# tests/test_triton_gpu.py with the machine's python3 and stops the server
# by its pid.
#
#   bash bindings/triton/gpu_test.sh ROOT
set -euo pipefail
cd "$(dirname "$0")"
root=$1
python=${PYTHON:-python3}
. ./server_util.sh
work=$(mktemp -d /tmp/guardjit-triton-gpu.XXXXXX)
server_pid=
trap stop_server_and_clean_up EXIT

repo="$work/models"
mkdir -p "$repo"/{mlp_gpu,mlp_cpu,mlp_dyn_gpu,mlp_graphs_gpu}/1
cp "$root/models/mlp.pbtxt" "$repo/mlp_gpu/1/model.pbtxt"
cp "$root/models/mlp.pbtxt" "$repo/mlp_cpu/1/model.pbtxt"
for kind in gpu cpu; do
  gpus=$([ $kind = gpu ] && echo "gpus: [ 0 ]" || true)
  cat >"$repo/mlp_$kind/config.pbtxt" <<PB
backend: "guardjit"
max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ -1, -1 ] } ]
output [ { name: "addmm_1" data_type: TYPE_FP32 dims: [ -1, 4 ] } ]
instance_group [ { count: 1 kind: KIND_${kind^^} $gpus } ]
PB
done
cp "$root/models/mlp_dyn/"* "$repo/mlp_dyn_gpu/1/"
cp "$root/models/mlp_dyn/"* "$repo/mlp_graphs_gpu/1/"
# Inputs and outputs auto-completed from the graph's metadata.
cat >"$repo/mlp_dyn_gpu/config.pbtxt" <<'PB'
backend: "guardjit"
max_batch_size: 8
dynamic_batching { max_queue_delay_microseconds: 20000 }
instance_group [ { count: 2 kind: KIND_GPU gpus: [ 0 ] } ]
parameters { key: "warmup" value { string_value: "2,4" } }
PB
cat >"$repo/mlp_graphs_gpu/config.pbtxt" <<'PB'
backend: "guardjit"
max_batch_size: 8
instance_group [ { count: 1 kind: KIND_GPU gpus: [ 0 ] } ]
parameters { key: "mode" value { string_value: "reduce-overhead" } }
PB

ports=$(free_loopback_ports "$python" 3)
read -r http_port grpc_port metrics_port <<<"$ports"
log="$work/tritonserver.log"
LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$root/site/pytriton/tritonserver/bin/tritonserver" \
  --model-repository="$repo" --backend-directory="$root/backends" \
  --http-address=127.0.0.1 --http-port="$http_port" \
  --grpc-address=127.0.0.1 --grpc-port="$grpc_port" \
  --metrics-address=127.0.0.1 --metrics-port="$metrics_port" \
  --log-verbose=0 >"$log" 2>&1 &
server_pid=$!
wait_until_ready "$python" "$server_pid" "$http_port" "$log" "triton gpu"
echo "triton gpu: server ready (pid $server_pid, http $http_port)"
status=0
GJ_TRITON_GPU_HTTP="127.0.0.1:$http_port" GJ_TRITON_GPU_METRICS="127.0.0.1:$metrics_port" \
  GJ_TRITON_GPU_REPO="$repo" "$python" -m unittest -v tests.test_triton_gpu || status=$?
echo "triton gpu: the server's log:"
grep -v "^I" "$log" | tail -40 || true
grep -i "guardjit\|KIND_GPU" "$log" | tail -20 || true
exit $status
