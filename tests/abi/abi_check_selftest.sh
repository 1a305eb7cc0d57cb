#!/usr/bin/env bash
# Checks tests/abi/abi_check.sh's policy on small libraries shaped like
# libguardjit.so (an options struct with struct_size, an opaque handle whose
# definition is private, gj_* functions): a dump of version 1, then each
# change compiled as version 2 and checked against it. Appending a field,
# adding a function and changing the handle's private definition must pass;
# removing a function, changing a field's type, inserting a field before
# others, changing an enumerator or a signature must fail; any of them with a
# new SONAME must pass.
#
#   abi_check_selftest.sh [C_COMPILER]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cc=${1:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# toy.c VARIANT: the library's source; each variant is a few #ifdefs.
cat >"$work/toy.h" <<'H'
#include <stddef.h>
#include <stdint.h>
typedef enum gj_toy_mode { GJ_TOY_A = 0, GJ_TOY_B = VALUE_B } gj_toy_mode;
typedef struct gj_toy_options {
  size_t struct_size;
#ifdef INSERTED
  int32_t inserted;
#endif
  FIELD_TYPE threads;
  gj_toy_mode mode;
#ifdef APPENDED
  int64_t appended;
#endif
} gj_toy_options;
typedef struct gj_context gj_context;
int gj_toy_create(const gj_toy_options* options, gj_context** out);
RUN_RET gj_toy_run(gj_context* toy, RUN_ARG n);
#ifndef REMOVED
void gj_toy_destroy(gj_context* toy);
#endif
#ifdef ADDED
int gj_toy_added(gj_context* toy);
#endif
H
cat >"$work/toy.c" <<'C'
#include "toy.h"
#include <stdlib.h>
struct internal_state { int calls; PRIVATE_MEMBER };
struct gj_context { gj_toy_options options; struct internal_state* state; };
int gj_toy_create(const gj_toy_options* options, gj_context** out) {
  *out = calloc(1, sizeof **out);
  (*out)->options = *options;
  (*out)->state = calloc(1, sizeof *(*out)->state);
  return 0;
}
RUN_RET gj_toy_run(gj_context* toy, RUN_ARG n) { toy->state->calls++; return (RUN_RET)n; }
#ifndef REMOVED
void gj_toy_destroy(gj_context* toy) { free(toy->state); free(toy); }
#endif
#ifdef ADDED
int gj_toy_added(gj_context* toy) { return toy->state->calls; }
#endif
C

base=(-DVALUE_B=1 -DFIELD_TYPE=int32_t -DRUN_RET=int -DRUN_ARG=int -DPRIVATE_MEMBER=)
build() {  # build OUT SONAME FLAGS...
  local out=$1 soname=$2
  shift 2
  "$cc" -g -O1 -shared -fPIC -Wl,-soname,"$soname" -o "$out" "$work/toy.c" "$@"
}
build "$work/v1.so" libtoy.so.0 "${base[@]}"
bash "$here/abi_check.sh" dump "$work/v1.so" "$work/v1.abi.xz" >/dev/null

failed=0
expect() {  # expect pass|fail NAME SONAME FLAGS...
  local want=$1 name=$2 soname=$3
  shift 3
  build "$work/$name.so" "$soname" "$@"
  local got=pass
  bash "$here/abi_check.sh" check "$work/$name.so" "$work/v1.abi.xz" >"$work/$name.log" 2>&1 || got=fail
  if [ "$got" = "$want" ]; then
    echo "abi_check_selftest: $name: $got, as expected"
  else
    echo "abi_check_selftest: $name: expected to $want, did $got; abi_check said:"
    sed 's/^/  | /' "$work/$name.log"
    failed=1
  fi
}
expect pass unchanged libtoy.so.0 "${base[@]}"
expect pass appended_field libtoy.so.0 "${base[@]}" -DAPPENDED
expect pass added_function libtoy.so.0 "${base[@]}" -DADDED
expect pass private_definition libtoy.so.0 -DVALUE_B=1 -DFIELD_TYPE=int32_t -DRUN_RET=int \
  -DRUN_ARG=int "-DPRIVATE_MEMBER=double extra[4];"
expect fail removed_function libtoy.so.0 "${base[@]}" -DREMOVED
expect fail inserted_field libtoy.so.0 "${base[@]}" -DINSERTED
expect fail field_type libtoy.so.0 -DVALUE_B=1 -DFIELD_TYPE=int64_t -DRUN_RET=int -DRUN_ARG=int \
  -DPRIVATE_MEMBER=
expect fail enumerator libtoy.so.0 -DVALUE_B=2 -DFIELD_TYPE=int32_t -DRUN_RET=int -DRUN_ARG=int \
  -DPRIVATE_MEMBER=
expect fail parameter_type libtoy.so.0 -DVALUE_B=1 -DFIELD_TYPE=int32_t -DRUN_RET=int \
  -DRUN_ARG=int64_t -DPRIVATE_MEMBER=
expect fail return_type libtoy.so.0 -DVALUE_B=1 -DFIELD_TYPE=int32_t -DRUN_RET=int64_t \
  -DRUN_ARG=int -DPRIVATE_MEMBER=
expect pass removed_with_new_major libtoy.so.1 "${base[@]}" -DREMOVED
if ((failed)); then
  echo "abi_check_selftest: FAILED"
  exit 1
fi
echo "abi_check_selftest: passed"
