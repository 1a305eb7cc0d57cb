#!/usr/bin/env bash
# Load test of guardjit's Triton backend against Triton's Python backend
# running torch eager (perf/triton/load_test.py): installs the library into
# build/models-prefix (as perf/models/run.sh does), adds nvidia-pytriton and
# tritonclient to the Python binding's venv (GUARDJIT_VENV to use another
# one with torch, torchvision and guardjit), and runs it. Arguments go to
# load_test.py (--models, --concurrency, --requests, --threads, --out).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=${GUARDJIT_VENV:-bindings/python/.venv}
prefix=$PWD/build/models-prefix
cmake --install build --prefix "$prefix" >/dev/null
"$venv/bin/python" -c "import torch, torchvision, guardjit" || {
  echo "perf/triton/run.sh: $venv lacks torch, torchvision or guardjit (bash bindings/python/test.sh makes it)" >&2
  exit 1
}
if ! "$venv/bin/python" -c "import tritonclient.grpc, pytriton" 2>/dev/null; then
  "$venv/bin/python" -m pip --cache-dir "${GUARDJIT_PIP_CACHE:-$HOME/.cache/guardjit-pip}" \
    --disable-pip-version-check -q install "nvidia-pytriton==0.7.0" "tritonclient[http,grpc]"
fi
LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$venv/bin/python" -W ignore perf/triton/load_test.py --prefix "$prefix" "$@"
