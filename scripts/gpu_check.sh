#!/usr/bin/env bash
# The GPU checks of the CUDA backend and of reduce-overhead mode as one
# prepared run, for a session lent a GPU machine (the developers' machines
# and CI have none; ../shared/DESIGN.md, "GPU runs"). Two steps:
#
#   bash scripts/gpu_check.sh pack [BUILD]
#       Here. Builds the GPU test and benchmark binaries in BUILD (default
#       build, the release tree scripts/test.sh makes), stripped, with the
#       shared libraries they load that a bare CUDA machine lacks (absl,
#       protobuf, OpenBLAS, ...; not libc, libstdc++ or libcuda, and not the
#       CUDA libraries guardjit dlopens), runs them once here with no GPU,
#       where every GPU test must report a skip, and packs them into
#       .gpu/bundle.tar.xz (git-ignored). Each binary links LLVM statically
#       (about 60 MB apiece, 200 MB together); xz with a dictionary larger
#       than one binary stores the shared part once: about 34 MB, inside the
#       device tool's 64 MiB carry with the tree (about 3 minutes here).
#   bash scripts/gpu_check.sh pack-triton [BUILD]
#       Here. The Triton backend's GPU check (#30's KIND_GPU instances) in
#       .gpu/triton.tar.xz: tritonserver and the libraries it loads from
#       the nvidia-pytriton wheel (bindings/triton/.venv, made as
#       bindings/triton/test.sh makes it; GJ_TRITON_VENV names another),
#       the backend, libguardjit and its libraries, the example MLP and
#       the MLP that bindings/triton/tests/make_models.py exports (with the
#       Python binding's venv). Carry the bundles that fit together: the
#       device tool's run with carry [".gpu/triton.tar.xz"] runs only the
#       triton step.
#   bash scripts/gpu_check.sh run [OUT]
#       On the GPU machine, from the repository root, .gpu carried (the
#       device tool's run with carry [".gpu"] and a timeout_s near 540):
#       unpacks the bundle into /tmp/gjgpu, runs nvidia-smi, then each step
#       under its own time limit, its log in OUT
#       (default $OUT, else /tmp/gpu_check):
#         conformance.log  the JIT conformance suites on GPU 0 against eager
#                          (jit_cuda_device_tests with GJ_CUDA_REAL_DEVICE=1,
#                          in parallel shards)
#         replay.log       reduce-overhead replays vs plain launches and the
#                          CPU (device_replay_tests, GJ_CUDA_REAL_DEVICE=1)
#         runtime.log      driver, device, cuBLASLt and NVRTC unit tests
#         bench.json/.log  cuda_call_benchmark (issue #14's and #15's ratios)
#         nvrtc.json/.log  nvrtc_compiler_benchmark (cold compile latency)
#         torch.json/.log  perf/jit/cuda/torch_baseline.py: the benchmark's
#                          workloads in torch eager and Inductor
#         triton.log       bindings/triton/gpu_test.sh: KIND_GPU instances
#                          served by tritonserver (only where
#                          .gpu/triton.tar.xz was carried; the other steps
#                          are skipped when bundle.tar.xz was not)
#         memcheck.log, memcheck_suites.log
#                          compute-sanitizer memcheck over the replay tests
#                          and the indexing-heavy conformance suites
#       and summary.txt, one line per step with its exit status.
#       GPU_CHECK_STEPS="bench torch" runs only the steps named.
set -uo pipefail
cd "$(dirname "$0")/.."

bundle=.gpu
staging=/tmp/gjgpu
tests=(jit_cuda_device_tests device_replay_tests runtime_tests)
benchmarks=(cuda_call_benchmark nvrtc_compiler_benchmark)

pack() {
  local build=${1:-build}
  set -e
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
  fi
  cmake --build "$build" -j "$(nproc)" --target "${tests[@]}" "${benchmarks[@]}"
  rm -rf "$staging" "$bundle"
  mkdir -p "$staging/bin" "$staging/lib" "$bundle"
  local b
  for b in "${tests[@]}"; do cp "$build/tests/$b" "$staging/bin/"; done
  for b in "${benchmarks[@]}"; do cp "$build/perf/$b" "$staging/bin/"; done
  strip --strip-all "$staging"/bin/*
  # Shared libraries from Debian's -dev packages the binaries link; the
  # system's own (libc, libm, libstdc++, libgcc, ld.so, libz) are on any
  # x86-64 Linux, and the CUDA libraries are dlopened there from the CUDA
  # install.
  ldd "$staging"/bin/* | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|\
      libdl.so*|librt.so*|libz.so*|libcuda.so*) ;;
      *) cp -L "$lib" "$staging/lib/" ;;
    esac
  done
  strip --strip-unneeded "$staging"/lib/* 2>/dev/null || true
  # Here there is no GPU: every binary must load from the bundle alone, and
  # every GPU test skip, naming why.
  local out
  for b in jit_cuda_device_tests device_replay_tests; do
    out=$(GJ_CUDA_REAL_DEVICE=1 LD_LIBRARY_PATH="$staging/lib" \
          "$staging/bin/$b" 2>&1) || { echo "$out" >&2; exit 1; }
    grep -q "no usable GPU" <<<"$out" || { echo "$out" >&2; exit 1; }
  done
  tar -C "$staging" -cf - bin lib |
    xz -6 -T1 --lzma2=preset=6,dict=256MiB >"$bundle/bundle.tar.xz"
  local mib
  mib=$(( $(stat -c %s "$bundle/bundle.tar.xz") / 1048576 ))
  echo "gpu_check: $bundle/bundle.tar.xz is ${mib} MiB" \
    "($(du -sm "$staging" | cut -f1) MiB unpacked, $(ls "$staging/lib" | wc -l) shared libraries)"
  if [ "$mib" -gt 56 ]; then
    echo "gpu_check: over 56 MiB; the device tool carries 64 MiB with the tree" >&2
    exit 1
  fi
  echo "gpu_check: packed; on the GPU machine: bash scripts/gpu_check.sh run"
}

pack_triton() {
  local build=${1:-build}
  set -e
  local stage=/tmp/gjtriton
  cmake --build "$build" -j "$(nproc)" --target guardjit_shared triton_guardjit
  local venv=${GJ_TRITON_VENV:-bindings/triton/.venv}
  if ! "$venv/bin/python" -c "import pytriton" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip --cache-dir "${GUARDJIT_PIP_CACHE:-$HOME/.cache/guardjit-pip}" \
      --disable-pip-version-check -q install "nvidia-pytriton==0.7.0"
  fi
  local site
  site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  rm -rf "$stage"
  mkdir -p "$stage/site/pytriton/tritonserver/bin" "$stage/site/nvidia_pytriton.libs" \
    "$stage/backends/guardjit" "$stage/lib" "$stage/models/mlp_dyn" "$bundle"
  cp "$site/pytriton/tritonserver/bin/tritonserver" "$stage/site/pytriton/tritonserver/bin/"
  # The wheel's libraries that tritonserver loads (not the Python backend's).
  ldd "$site/pytriton/tritonserver/bin/tritonserver" |
    awk '/nvidia_pytriton.libs/{print $3}' | xargs -r cp -t "$stage/site/nvidia_pytriton.libs/"
  cp "$build/bindings/triton/libtriton_guardjit.so" "$stage/backends/guardjit/"
  cp -L "$build/capi/libguardjit.so.0" "$stage/lib/"
  strip --strip-unneeded "$stage/lib/libguardjit.so.0" "$stage/backends/guardjit/"*.so
  ldd "$stage/lib/libguardjit.so.0" | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|\
      libdl.so*|librt.so*|libz.so*|libcuda.so*) ;;
      *) cp -L "$lib" "$stage/lib/" ;;
    esac
  done
  cp examples/mlp.pbtxt "$stage/models/"
  LD_LIBRARY_PATH="$build/capi" TORCH_CPP_LOG_LEVEL=ERROR bindings/python/.venv/bin/python -W ignore \
    bindings/triton/tests/make_models.py "$stage/models/mlp_dyn"
  tar -C "$stage" -cf - . | xz -6 -T1 >"$bundle/triton.tar.xz"
  echo "gpu_check: $bundle/triton.tar.xz is $(( $(stat -c %s "$bundle/triton.tar.xz") / 1048576 )) MiB" \
    "($(du -sm "$stage" | cut -f1) MiB unpacked)"
}

# One step: NAME LIMIT_SECONDS COMMAND...; its output to OUT/NAME.log and a
# line in summary.txt.
# With GPU_CHECK_STEPS set (names separated by spaces), only those steps run.
step() {
  local name=$1 limit=$2
  shift 2
  if [ -n "${GPU_CHECK_STEPS:-}" ] && [[ " $GPU_CHECK_STEPS " != *" $name "* ]]; then
    return 0
  fi
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-12s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" \
    "$(tail -n 3 "$out/$name.log" | tr '\n' ' ' | cut -c1-160)" |
    tee -a "$out/summary.txt"
}

# COMMAND... (a gtest binary, or one under a tool) in 8 parallel shards
# (gtest sharding), each its own process and NVRTC compiles, on GPU 0; the
# shards' logs concatenated under TAG.
sharded() {
  local tag=$1 shards=8 i pids=()
  shift
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i GJ_CUDA_REAL_DEVICE=1 \
      "$@" >"$out/$tag.$i" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=1; done
  for ((i = 0; i < shards; i++)); do
    echo "== shard $i"; cat "$out/$tag.$i"; rm -f "$out/$tag.$i"
  done
  return $rc
}

# The conformance suites; and the indexing-heavy ones under
# compute-sanitizer memcheck.
conformance() {
  sharded conformance "$staging/bin/jit_cuda_device_tests" --gtest_brief=1
}
memcheck_shards() {
  sharded memcheck "$1" --tool memcheck --error-exitcode 1 \
    "$staging/bin/jit_cuda_device_tests" --gtest_brief=1 \
    --gtest_filter='*Gather*:*Index*:*View*:*Reduc*:*Attention*:*Softmax*'
}

# ARCHIVE.tar.xz DIR: unpacked with xz, or Python's lzma where xz is missing.
unpack() {
  if command -v xz >/dev/null; then
    tar -C "$2" -xJf "$1"
  else
    python3 -c 'import lzma, sys, tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])' \
      "$1" "$2"
  fi
}

run() {
  out=${1:-${OUT:-/tmp/gpu_check}}
  mkdir -p "$out"
  : >"$out/summary.txt"
  if [ ! -f "$bundle/bundle.tar.xz" ] && [ ! -f "$bundle/triton.tar.xz" ]; then
    echo "no $bundle/bundle.tar.xz or triton.tar.xz: pack here first, carry it" >&2
    exit 2
  fi
  # libcublasLt and libnvrtc from the CUDA install, where guardjit's dlopen
  # looks (the loader path, then /usr/local/cuda).
  [ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
  step device 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  if [ -f "$bundle/triton.tar.xz" ]; then
    rm -rf /tmp/gjtriton && mkdir -p /tmp/gjtriton
    unpack "$bundle/triton.tar.xz" /tmp/gjtriton
    step triton 240 bash bindings/triton/gpu_test.sh /tmp/gjtriton
  fi
  [ -f "$bundle/bundle.tar.xz" ] || return 0
  rm -rf "$staging" && mkdir -p "$staging"
  unpack "$bundle/bundle.tar.xz" "$staging"
  export LD_LIBRARY_PATH="$staging/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  step conformance 200 bash "$0" shards "$out"
  step replay 60 env GJ_CUDA_REAL_DEVICE=1 "$staging/bin/device_replay_tests"
  step runtime 60 "$staging/bin/runtime_tests" --gtest_filter='Cuda*:Cublas*:Nvrtc*'
  step bench 120 "$staging/bin/cuda_call_benchmark" --benchmark_repetitions=3 \
    --benchmark_min_time=0.2 \
    --benchmark_report_aggregates_only=true --benchmark_out="$out/bench.json"
  step nvrtc 60 "$staging/bin/nvrtc_compiler_benchmark" \
    --benchmark_out="$out/nvrtc.json"
  # What a PyTorch user runs instead, on the bench step's workloads and
  # shapes: torch eager and torch.compile (Inductor), timed the same way.
  if python3 -c 'import torch' 2>/dev/null; then
    step torch 180 env PYTHONUNBUFFERED=1 python3 perf/jit/cuda/torch_baseline.py \
      --json "$out/torch.json" --min-time 0.3
  else
    echo "torch        skipped: no python3 with torch" | tee -a "$out/summary.txt"
  fi
  # Out-of-bounds and misaligned device accesses, uninitialized reads: the
  # replay tests (moving pointers patched into graphs) and the suites whose
  # kernels index the most (gathers, views, reductions, attention) under
  # compute-sanitizer, where the machine's runtime supports it.
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [ -x "$sanitizer" ]; then
    step memcheck 90 env GJ_CUDA_REAL_DEVICE=1 "$sanitizer" --tool memcheck \
      --error-exitcode 1 "$staging/bin/device_replay_tests"
    step memcheck_suites 150 bash "$0" memcheck_shards "$out" "$sanitizer"
  else
    echo "memcheck     skipped: no compute-sanitizer" | tee -a "$out/summary.txt"
  fi
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  pack-triton) shift; pack_triton "$@" ;;
  run) shift; run "$@" ;;
  shards) out=$2; conformance ;;  # run's conformance step, under timeout
  memcheck_shards) out=$2; memcheck_shards "$3" ;;
  *) echo "usage: bash scripts/gpu_check.sh pack [BUILD] | pack-triton [BUILD] | run [OUT]" >&2; exit 2 ;;
esac
