#!/usr/bin/env bash
# Builds and tests the Python binding against an installed guardjit found with
# `pkg-config guardjit` (the caller sets PKG_CONFIG_PATH, LD_LIBRARY_PATH and
# PATH; scripts/test_bindings.sh does). Makes (or reuses) a venv in .venv,
# installs numpy, torch, torchvision and onnx from PyPI with a pip cache
# (GUARDJIT_PIP_CACHE, default ~/.cache/guardjit-pip), pip-installs this
# package, runs the tests and prints each phase's time.
#
# torch comes without its declared CUDA wheels (several GB): `--no-deps`, its
# pure-Python dependencies, and only the four CUDA libraries its libtorch
# links that the CUDA toolkit on these machines lacks (or has too old):
# cuFile, cuSPARSELt, NVSHMEM, NCCL. `import torch` is checked.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
total_start=$SECONDS
phase_start=$SECONDS
phase() {
  echo "python: $1 took $((SECONDS - phase_start))s"
  phase_start=$SECONDS
}

TORCH_VERSION=${GUARDJIT_TORCH_VERSION:-2.15.0}
TORCHVISION_VERSION=${GUARDJIT_TORCHVISION_VERSION:-0.29.2}
ONNX_VERSION=${GUARDJIT_ONNX_VERSION:-1.23.2}
cache=${GUARDJIT_PIP_CACHE:-$HOME/.cache/guardjit-pip}
python=${PYTHON:-python3}

if ! pkg-config --exists guardjit; then
  echo "bindings/python/test.sh: pkg-config cannot find guardjit; set PKG_CONFIG_PATH to PREFIX/lib/pkgconfig" >&2
  exit 1
fi
echo "python: guardjit $(pkg-config --modversion guardjit) from $(pkg-config --variable=libdir guardjit); $($python --version)"

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
pip=(.venv/bin/python -m pip --cache-dir "$cache" --disable-pip-version-check -q)
phase "venv"

if ! .venv/bin/python -c "import torch, numpy, torchvision" 2>/dev/null; then
  "${pip[@]}" install numpy pillow setuptools wheel \
    filelock "typing-extensions>=4.13.0" "sympy>=1.13.3" mpmath "networkx>=2.5.1" jinja2 \
    MarkupSafe "fsspec>=0.8.5"
  "${pip[@]}" install --no-deps "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION" \
    "nvidia-cufile==1.17.1.22.*" "nvidia-cusparselt-cu13==0.8.1" \
    "nvidia-nvshmem-cu13==3.7.2" "nvidia-nccl-cu13==2.30.7"
fi
# torch.onnx.export (tests/test_onnx_models.py) writes its model with onnx.
.venv/bin/python -c "import onnx" 2>/dev/null || "${pip[@]}" install "onnx==$ONNX_VERSION"
# torch's OpInfo database (tests/test_opinfo.py) imports these two.
.venv/bin/python -c "import expecttest, hypothesis" 2>/dev/null \
  || "${pip[@]}" install "expecttest==0.3.0" "hypothesis==6.170.17"
.venv/bin/python -c "import torch, numpy; print('python: torch', torch.__version__, 'numpy', numpy.__version__)" \
  2>&1 | grep -v "triton not found"
phase "numpy + torch install"

# The package as a user installs it (no build isolation: setuptools is in
# the venv already and the cache stays offline-friendly).
"${pip[@]}" install --no-build-isolation --force-reinstall --no-deps "$here"
phase "pip install ./bindings/python"

# Run from outside the source tree so `import guardjit` is the installed one.
export GUARDJIT_REPO="$here/../.."
tmp=$(mktemp -d /tmp/guardjit-python.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r tests "$tmp/tests"
(cd "$tmp" && "$here/.venv/bin/python" -c "import guardjit, sys; assert 'site-packages' in guardjit.__file__, guardjit.__file__" \
  && TORCH_CPP_LOG_LEVEL=ERROR "$here/.venv/bin/python" -W ignore -m unittest discover -s tests -t . -v 2>&1 \
  | grep -v "triton not found")
phase "tests"
echo "python: ok in $((SECONDS - total_start))s"
