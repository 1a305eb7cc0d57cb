#!/usr/bin/env bash
# Installs every Debian package guardjit needs to build and test. Idempotent.
set -euo pipefail
packages=(
  build-essential cmake pkg-config ccache lld
  llvm-19-dev libzstd-dev zlib1g-dev
  libabsl-dev libprotobuf-dev protobuf-compiler
  libdlpack-dev libopenblas-dev
  libdnnl-dev                  # oneDNN: CPU convolutions (jit/steps/onednn_conv.h)
  libonnx-dev libonnx-testdata  # the ONNX importer (core/onnx/) and its node tests
  libhiredis-dev redis-server  # the compile cache's Redis tier and its tests
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-19 libclang-rt-19-dev  # libFuzzer and sanitizer runtimes (scripts/fuzz.sh)
  abigail-tools                # abidw/abidiff: tests/abi/abi_check.sh
  golang-go                    # bindings/go (cgo)
  openjdk-17-jdk-headless junit5  # bindings/java (JNI, JUnit 5 console launcher)
  maven libmaven-resources-plugin-java libmaven-compiler-plugin-java \
  libsurefire-java libmaven-jar-plugin-java  # bindings/java/pom.xml, offline (mvn.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: all packages present"
