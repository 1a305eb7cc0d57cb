#!/usr/bin/env bash
# Runs perf/models/models_benchmark.py against this tree's library: installs
# the library into build/models-prefix (the release build in build/ must
# exist: `cmake --build build`), makes the Python package's venv if needed
# (bindings/python/test.sh: torch, torchvision, the package), adds onnx,
# onnxruntime and matplotlib to it from PyPI (pip cache GUARDJIT_PIP_CACHE,
# default ~/.cache/guardjit-pip), and passes its arguments on (GUARDJIT_VENV:
# another venv with torch and torchvision to use instead):
#   bash perf/models/run.sh --threads 1,2 --load
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$root/build/models-prefix
cmake --install "$root/build" --prefix "$prefix" > /dev/null
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig LD_LIBRARY_PATH=$prefix/lib PATH=$prefix/bin:$PATH
venv=${GUARDJIT_VENV:-$root/bindings/python/.venv}
if ! "$venv/bin/python" -c "import torch, torchvision, guardjit" 2>/dev/null; then
  bash "$root/bindings/python/test.sh" > /dev/null  # makes the venv, tests the package
fi
cache=${GUARDJIT_PIP_CACHE:-$HOME/.cache/guardjit-pip}
pip=("$venv/bin/python" -m pip --cache-dir "$cache" --disable-pip-version-check -q)
"$venv/bin/python" -c "import onnx, onnxruntime, matplotlib" 2>/dev/null \
  || "${pip[@]}" install onnx onnxruntime onnxscript matplotlib
# The package built against this tree's library.
"${pip[@]}" install --no-build-isolation --force-reinstall --no-deps "$root/bindings/python"
exec "$venv/bin/python" "$root/perf/models/models_benchmark.py" "$@"
