#!/bin/sh
# SPIR-V made at test time from the samples: each sample writes its kernel
# source (--print-source), clang-15 compiles it for spir64 and the
# SPIR-V/LLVM translator (llvm-spirv-15) makes the module, and the sample
# runs it through clCreateProgramWithILKHR (--il) and verifies its results
# against its host reference. Unoptimized modules (-O0, as clang's own
# path hands the work-group compiler its code) for every sample; optimized
# ones (-O2, as most SPIR-V producers ship it) for a few. Run from the build
# tree: $BUILD/test/compiler/test_spirv_samples. Prints "ok NAME" /
# "not ok NAME".
here=$(cd "$(dirname "$0")" && pwd)
samples=$here/../../samples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

for tool in clang-15 llvm-spirv-15; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "not ok setup: $tool is missing (make installs it)"
    exit 1
  fi
done

# spirv NAME LEVEL: the sample's module at optimization LEVEL, in $work.
spirv() {
  src=$work/$1.cl
  [ -f "$src" ] || "$samples/$1" --print-source "$src" || return 1
  options=$(head -n 1 "$src" | sed 's|^// options: ||')
  extra=
  [ "$2" = O0 ] && extra="-Xclang -disable-O0-optnone"
  # shellcheck disable=SC2086
  clang-15 -x cl -cl-std=CL1.2 -target spir64-unknown-unknown -emit-llvm -c -"$2" $extra \
    -Xclang -finclude-default-header $options "$src" -o "$work/$1.$2.bc" &&
    llvm-spirv-15 "$work/$1.$2.bc" -o "$work/$1.$2.spv"
}

check() {
  name=$1_$2_from_spirv
  if ! spirv "$1" "$2" >"$work/log" 2>&1; then
    echo "not ok $name (making the module failed)"
    sed 's/^/  /' "$work/log"
    failures=$((failures + 1))
  elif "$samples/$1" --il "$work/$1.$2.spv" --verify >"$work/log" 2>&1 &&
    grep -q verified "$work/log"; then
    echo "ok $name"
  else
    echo "not ok $name"
    sed 's/^/  /' "$work/log"
    failures=$((failures + 1))
  fi
}

for s in vectoradd matrixmul nbody reduction prefixsum histogram convolution sobelfilter \
  transpose bitonicsort binomialoption blackscholes recursivegaussian; do
  check $s O0
done
for s in matrixmul nbody sobelfilter blackscholes; do
  check $s O2
done
[ "$failures" -eq 0 ]
