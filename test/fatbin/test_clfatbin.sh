#!/bin/sh
# Tests the clfatbin tool on fat binaries made by make_sample (no compiler
# needed). Run from the build tree: $BUILD/test/fatbin/test_clfatbin, with
# clfatbin at $BUILD/clfatbin. Prints "ok NAME" / "not ok NAME" per case.
here=$(cd "$(dirname "$0")" && pwd)
clfatbin=$here/../../clfatbin
make_sample=$here/make_sample
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# result NAME STATUS: STATUS 0 is a pass.
result() {
  if [ "$2" -eq 0 ]; then echo "ok $1"; else echo "not ok $1"; failures=$((failures + 1)); fi
}

# expect_rc WANT CMD...: runs CMD, succeeds if its exit status is WANT.
expect_rc() {
  want=$1
  shift
  # Written so that set -e in the cases does not stop at the command itself.
  got=0
  "$@" >"$work/out" 2>"$work/err" || got=$?
  if [ "$got" -ne "$want" ]; then
    echo "  '$*' exited $got, expected $want"
    sed 's/^/  | /' "$work/err"
    return 1
  fi
  return 0
}

"$make_sample" program "$work/a.fatbin" || exit 1
"$make_sample" program "$work/v4.fatbin" x86-64-v4 "x86_64-native:znver3" || exit 1
"$make_sample" program "$work/v2.fatbin" x86-64-v2 || exit 1
"$make_sample" other "$work/other.fatbin" || exit 1
"$make_sample" corpus "$work/corpus" || exit 1

t() { # the body of one case, in a subshell so a failure stops only that case
  name=$1
  shift
  ( set -e; "$@" )
  result "$name" $?
}

case_list() {
  expect_rc 0 "$clfatbin" list "$work/a.fatbin"
  grep -qx 'target x86-64-v3 146' "$work/out"
  grep -qx 'kernel scale 6' "$work/out"
  grep -qx 'kind executable' "$work/out"
}
case_info() {
  expect_rc 0 "$clfatbin" info "$work/a.fatbin"
  grep -q 'dst_arg: float\*, global_ptr, address global, access none, type qualifiers restrict, size 8, alignment 8, offset 0' "$work/out"
  grep -q 'reqd_work_group_size: 16 1 1' "$work/out"
  grep -q 'vec_type_hint: float4' "$work/out"
  grep -q 'img: image2d_t, image, address global, access read_only' "$work/out"
  grep -q 'footprint: printf, dst_arg written in 1 range; 1 check$' "$work/out"
  grep -q 'footprint: none' "$work/out"
}
case_json() {
  expect_rc 0 "$clfatbin" info --json "$work/a.fatbin"
  if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kernels"][0]["args"][1]["type_qualifiers"]==["const"]; assert d["targets"][2]["target"]=="bitcode"' "$work/out"
  fi
  expect_rc 0 "$clfatbin" list --json "$work/a.fatbin"
  grep -q '"name": "noargs"' "$work/out"
}
case_extract() {
  expect_rc 0 "$clfatbin" extract --source -o "$work/src.cl" "$work/a.fatbin"
  grep -q '__kernel void noargs' "$work/src.cl"
  expect_rc 0 "$clfatbin" extract --target x86-64-v3 -o "$work/v3.o" "$work/a.fatbin"
  [ "$(wc -c <"$work/v3.o")" -eq 146 ]
  expect_rc 0 "$clfatbin" extract --bitcode -o - "$work/a.fatbin"
  [ "$(wc -c <"$work/out")" -eq 181 ]
  expect_rc 0 "$clfatbin" extract --options "$work/a.fatbin"
  [ "$(cat "$work/out")" = "-cl-fast-relaxed-math -DN=4" ]
  expect_rc 1 "$clfatbin" extract --target x86-64-v4 -o "$work/none" "$work/a.fatbin"
  [ ! -e "$work/none" ]
  expect_rc 2 "$clfatbin" extract --source --bitcode "$work/a.fatbin"
}
case_combine() {
  expect_rc 0 "$clfatbin" combine -o "$work/all.fatbin" "$work/a.fatbin" "$work/v4.fatbin" "$work/v2.fatbin"
  expect_rc 0 "$clfatbin" list "$work/all.fatbin"
  [ "$(grep -c '^target ' "$work/out")" -eq 5 ]
  grep -q '^target x86_64-native:znver3 ' "$work/out"
  expect_rc 1 "$clfatbin" combine -o "$work/bad.fatbin" "$work/a.fatbin" "$work/other.fatbin"
  grep -q 'not the same program' "$work/err"
  [ ! -e "$work/bad.fatbin" ]
  expect_rc 2 "$clfatbin" combine "$work/a.fatbin"
}
case_strip() {
  cp "$work/a.fatbin" "$work/s.fatbin"
  expect_rc 0 "$clfatbin" strip --target x86-64-v2 --bitcode --source "$work/s.fatbin"
  expect_rc 0 "$clfatbin" list "$work/s.fatbin"
  [ "$(grep -c '^target ' "$work/out")" -eq 1 ]
  ! grep -q '^source' "$work/out"
  grep -q '^options' "$work/out"
  expect_rc 1 "$clfatbin" extract --source "$work/s.fatbin"
  expect_rc 1 "$clfatbin" strip --target nosuch -o "$work/x.fatbin" "$work/a.fatbin"
  expect_rc 2 "$clfatbin" strip "$work/a.fatbin"
  expect_rc 0 "$clfatbin" strip --options -o "$work/o.fatbin" "$work/a.fatbin"
  expect_rc 0 "$clfatbin" list "$work/o.fatbin"
  ! grep -q '^options' "$work/out"
}
case_verify() {
  expect_rc 0 "$clfatbin" verify "$work/a.fatbin" "$work/all.fatbin"
  grep -q ': ok, version 2, executable, 2 kernels, 3 targets' "$work/out"
  expect_rc 1 "$clfatbin" verify "$work/corpus/bad-newer_version.fatbin"
  grep -q 'fat binary version 3 is newer than this reader (2)' "$work/out"
  expect_rc 1 "$clfatbin" verify "$work/nonexistent"
}
case_corpus() {
  # Every bad file is refused with status 1 (never a crash), the good one read.
  expect_rc 0 "$clfatbin" verify "$work/corpus/good.fatbin"
  n=0
  for f in "$work"/corpus/bad-*.fatbin; do
    expect_rc 1 "$clfatbin" verify "$f"
    n=$((n + 1))
  done
  [ "$n" -ge 20 ]
}
case_usage() {
  expect_rc 2 "$clfatbin"
  expect_rc 2 "$clfatbin" frobnicate
  expect_rc 0 "$clfatbin" --help
  for c in list info extract combine strip verify build; do
    expect_rc 0 "$clfatbin" "$c" --help
    grep -q "usage: clfatbin $c" "$work/out" || grep -q 'no compiler' "$work/err"
  done
  expect_rc 2 "$clfatbin" list --bogus "$work/a.fatbin"
  expect_rc 2 "$clfatbin" list
}
case_readelf() {
  command -v readelf >/dev/null || return 0
  readelf -SW "$work/a.fatbin" >"$work/out"
  grep -q '\.aquila\.meta' "$work/out"
  grep -q '\.aquila\.code\.x86-64-v3' "$work/out"
  grep -q '\.aquila\.source' "$work/out"
  grep -q '\.aquila\.options' "$work/out"
}

t clfatbin_list case_list
t clfatbin_info case_info
t clfatbin_json case_json
t clfatbin_extract case_extract
t clfatbin_combine case_combine
t clfatbin_strip case_strip
t clfatbin_verify case_verify
t clfatbin_corpus case_corpus
t clfatbin_usage case_usage
t clfatbin_readelf case_readelf
[ "$failures" -eq 0 ]
