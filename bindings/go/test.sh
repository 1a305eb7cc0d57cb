#!/usr/bin/env bash
# Builds and tests the Go binding against an installed guardjit found with
# `pkg-config guardjit` (the caller sets PKG_CONFIG_PATH and LD_LIBRARY_PATH;
# scripts/test_bindings.sh does). Standard library only: no module proxy.
set -euo pipefail
cd "$(dirname "$0")"
step() { echo "go: $*"; }

export GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local
if [ -z "${HOME:-}" ] || [ ! -w "${HOME:-/nonexistent}" ]; then
  export GOCACHE=${GOCACHE:-/tmp/guardjit-go-cache} GOPATH=${GOPATH:-/tmp/guardjit-go-path}
fi
# Go's build cache keys a cgo package on the CGO_* flags, not on what
# pkg-config answers, which it bakes into the package: without this, a run
# against a new install prefix (scripts/test_bindings.sh makes one per run)
# links a cached package against the last run's deleted one.
export CGO_LDFLAGS="${CGO_LDFLAGS:--g -O2} -L$(pkg-config --variable=libdir guardjit)"
tmp=$(mktemp -d /tmp/guardjit-go.XXXXXX)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

step "guardjit $(pkg-config --modversion guardjit) from $(pkg-config --variable=libdir guardjit); $(go version)"

step "gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

step "go test -race"
go test -race -count=1 ./...

step "build the examples"
go build -o "$tmp/hello" ./examples/hello
go build -o "$tmp/server" ./examples/server
go build -o "$tmp/loadtest" ./examples/server/loadtest
"$tmp/hello" -graph ../../examples/mlp.pbtxt

step "load test against the server on a loopback port"
"$tmp/server" -model mlp=../../examples/mlp.pbtxt -model absdiv=../../examples/seed_abs_div.pbtxt \
  -addr 127.0.0.1:0 -cache-dir "$tmp/compile-cache" >"$tmp/server.log" 2>&1 &
server_pid=$!
addr=
for _ in $(seq 100); do
  addr=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' "$tmp/server.log")
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log"; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { echo "server did not start"; cat "$tmp/server.log"; exit 1; }
"$tmp/loadtest" -addr "$addr" -model mlp -input 'x=float32[B,8]' -requests "${GUARDJIT_GO_LOAD_REQUESTS:-2000}" -concurrency 16
"$tmp/loadtest" -addr "$addr" -model absdiv -input 'a=float32[B];b=float32[B]' -batches 3,5,7 -requests 300 -concurrency 8 -format json
step "ok"
