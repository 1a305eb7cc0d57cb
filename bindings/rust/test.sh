#!/usr/bin/env bash
# Builds and tests the Rust bindings against an installed guardjit found with
# `pkg-config guardjit` (the caller sets PKG_CONFIG_PATH, and LD_LIBRARY_PATH
# for running; scripts/test_bindings.sh does both for a temporary install
# prefix): rustfmt check, clippy with warnings as errors, the tests, and the
# example. No network and no crates.io: the workspace has no dependencies.
set -euo pipefail
cd "$(dirname "$0")"

# rustup installs into ~/.cargo/bin, which a non-login shell may not have.
if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "bindings/rust/test.sh: cargo not found (Rust 1.79 or newer, with clippy, is needed)" >&2
  exit 1
fi
if ! pkg-config --exists guardjit; then
  echo "bindings/rust/test.sh: pkg-config cannot find guardjit; set PKG_CONFIG_PATH to PREFIX/lib/pkgconfig" >&2
  exit 1
fi
# Run against the library pkg-config found, whatever LD_LIBRARY_PATH holds.
libdir=$(pkg-config --variable=libdir guardjit)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CARGO_TARGET_DIR="$PWD/target"
# Two cores shared with others: two jobs, and no incremental-compilation
# bookkeeping for a one-off build.
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
export CARGO_INCREMENTAL=0
echo "rust: guardjit $(pkg-config --modversion guardjit) from $libdir; $(cargo --version)"

step() {
  local start=$SECONDS
  echo "rust: $*"
  "$@"
  echo "rust: ... $((SECONDS - start))s"
}

if cargo fmt --version >/dev/null 2>&1; then
  step cargo fmt --all --check
else
  echo "rust: rustfmt not installed; skipping the format check"
fi
step cargo clippy --offline --workspace --all-targets -- -D warnings
step cargo test --offline --workspace
step cargo run --offline --example run_graph
