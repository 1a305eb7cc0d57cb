#!/usr/bin/env bash
# The README's demo: builds guardjit (in ./build), then for every example
# graph prints it with `guardjit check` and calls it on random inputs with
# `guardjit run` (the inputs each file's "# run:" line names), then runs the
# C hello world.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target guardjit_cli hello_world >/dev/null
cli=build/bindings/cli/guardjit

for graph in examples/*.pbtxt; do
  echo "=================================================================="
  echo "== $graph"
  echo "=================================================================="
  "$cli" check "$graph"
  echo
  read -r -a inputs <<<"$(sed -n 's/^# run: //p' "$graph")"
  echo "\$ guardjit run $graph ${inputs[*]} --repeat 10"
  "$cli" run "$graph" "${inputs[@]}" --repeat 10
  echo
done

echo "=================================================================="
echo "== examples/hello_world.c"
echo "=================================================================="
build/examples/hello_world
