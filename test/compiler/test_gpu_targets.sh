#!/bin/sh
# GPU targets in fat binaries, through `clfatbin build`: AMD HSA code objects
# and NVIDIA PTX built with clang-19 and libclc-19, stored next to the CPU
# code. Checks the code objects' form (an EM_AMDGPU ELF with .text and kernel
# descriptors; PTX with an .entry per kernel), that ptxas assembles the PTX
# where it is installed, and the errors for unknown targets, a missing libclc
# and undefined functions. Run from the build tree:
# $BUILD/test/compiler/test_gpu_targets, with clfatbin at $BUILD/clfatbin.
# Prints "ok NAME" / "not ok NAME" per case.
here=$(cd "$(dirname "$0")" && pwd)
clfatbin=$here/../../clfatbin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
libclc=${AQUILA_LIBCLC_DIR:-/usr/lib/clc}

result() {
  if [ "$2" -eq 0 ]; then echo "ok $1"; else echo "not ok $1"; failures=$((failures + 1)); fi
}

# expect_rc WANT CMD...: runs CMD, succeeds if its exit status is WANT.
expect_rc() {
  want=$1
  shift
  got=0
  "$@" >"$work/out" 2>"$work/err" || got=$?
  if [ "$got" -ne "$want" ]; then
    echo "  '$*' exited $got, expected $want"
    sed 's/^/  | /' "$work/err"
    return 1
  fi
  return 0
}

t() { # one case, in a subshell so that a failure stops only that case
  name=$1
  shift
  ( set -e; "$@" )
  result "$name" $?
}

# libclc-19 is a build dependency (the Makefile's DEB_PACKAGES); on a
# machine without it the GPU cases cannot run, which is reported, not failed.
if [ ! -f "$libclc/amdgcn--amdhsa.bc" ] || [ ! -f "$libclc/nvptx64--nvidiacl.bc" ]; then
  echo "ok gpu_targets # skip: libclc-19 is not installed in $libclc"
  exit 0
fi

# The kernel's name comes from a header found through -I and its factor
# from -D, so the GPU builds must honor the build options.
mkdir -p "$work/inc"
cat >"$work/inc/names.h" <<'EOF'
#define SCALE_KERNEL scale
EOF
cat >"$work/prog.cl" <<'EOF'
#include "names.h"
#ifndef FACTOR
#error FACTOR must be defined
#endif
__kernel void SCALE_KERNEL(__global float *x, float f) {
  size_t i = get_global_id(0);
  x[i] = sqrt(x[i]) * f * FACTOR;
}
__kernel void reduce(__global int *out, __local int *tmp) {
  tmp[get_local_id(0)] = (int)get_local_size(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) atomic_add(out, tmp[0] + (int)get_group_id(0));
}
EOF
options="-I $work/inc -DFACTOR=1234.5f"

# The host CPU's target name, from a default build (the host CPU only).
"$clfatbin" build -o "$work/host.fatbin" --options "$options" "$work/prog.cl" || exit 1
host=$("$clfatbin" list "$work/host.fatbin" | awk '$1 == "target" { print $2; exit }')
[ -n "$host" ] || exit 1

ptxas=
if command -v ptxas >/dev/null 2>&1; then
  ptxas=$(command -v ptxas)
elif [ -x /usr/local/cuda/bin/ptxas ]; then
  ptxas=/usr/local/cuda/bin/ptxas
fi

# ptxas_accepts PTX: assembles PTX for the architecture of its .target, or,
# where this ptxas no longer knows that architecture (CUDA 13 starts at
# sm_75), for the oldest newer one it knows: PTX for sm_XY is valid for every
# sm_MN with MN >= XY. Any other ptxas error fails.
ptxas_accepts() {
  sm=$(awk '$1 == ".target" { sub(/,.*/, "", $2); print $2; exit }' "$1")
  n=${sm#sm_}
  for arch in "$sm" sm_52 sm_60 sm_70 sm_75 sm_80 sm_90; do
    [ "${arch#sm_}" -ge "$n" ] || continue
    if "$ptxas" -arch="$arch" -o "$work/ptx.cubin" "$1" >"$work/ptxas.out" 2>&1; then
      echo "  ptxas -arch=$arch assembled $(basename "$1") (.target $sm)"
      return 0
    fi
    grep -q "is not defined for option 'gpu-name'" "$work/ptxas.out" || break
  done
  sed 's/^/  | /' "$work/ptxas.out"
  return 1
}

case_build_and_list() {
  expect_rc 0 "$clfatbin" build -o "$work/all.fatbin" --options "$options" \
    --target amdgcn-amd-amdhsa--gfx90a --target amdgcn-amd-amdhsa--gfx1030 \
    --target nvptx64-nvidia-cuda --target nvptx64-nvidia-cuda--sm_80 --target "$host" \
    "$work/prog.cl"
  # A clean build log: no warnings for a correct program.
  [ ! -s "$work/err" ] || { sed 's/^/  | /' "$work/err"; false; }
  expect_rc 0 "$clfatbin" list "$work/all.fatbin"
  for target in amdgcn-amd-amdhsa--gfx90a amdgcn-amd-amdhsa--gfx1030 nvptx64-nvidia-cuda \
    nvptx64-nvidia-cuda--sm_80 "$host" bitcode; do
    grep -q "^target $target [1-9]" "$work/out"
  done
  grep -qx 'kernel scale 2' "$work/out"
  grep -qx 'kernel reduce 2' "$work/out"
  expect_rc 0 "$clfatbin" verify "$work/all.fatbin"
  grep -q ': ok, version 2, executable, 2 kernels, 6 targets' "$work/out"
}

# check_amd_object FILE GFX: an ELF64 for EM_AMDGPU (224) with a .text
# section and a kernel descriptor per kernel.
check_amd_object() {
  [ "$(od -An -tx1 -N4 "$1" | tr -d ' \n')" = 7f454c46 ]  # ELF magic
  [ "$(od -An -tu1 -j4 -N1 "$1" | tr -d ' ')" -eq 2 ]      # ELFCLASS64
  [ "$(od -An -tu2 -j18 -N2 "$1" | tr -d ' ')" -eq 224 ]   # e_machine
  readelf -SW "$1" | grep -q ' \.text '
  readelf -hW "$1" | grep -q "Flags:.*$2"
  readelf -sW "$1" | grep -q ' scale\.kd$'
  readelf -sW "$1" | grep -q ' reduce\.kd$'
}

case_amd_code_objects() {
  expect_rc 0 "$clfatbin" extract --target amdgcn-amd-amdhsa--gfx90a -o "$work/gfx90a.hsaco" \
    "$work/all.fatbin"
  check_amd_object "$work/gfx90a.hsaco" gfx90a
  expect_rc 0 "$clfatbin" extract --target amdgcn-amd-amdhsa--gfx1030 -o "$work/gfx1030.hsaco" \
    "$work/all.fatbin"
  check_amd_object "$work/gfx1030.hsaco" gfx1030
}

case_ptx() {
  expect_rc 0 "$clfatbin" extract --target nvptx64-nvidia-cuda -o "$work/default.ptx" \
    "$work/all.fatbin"
  expect_rc 0 "$clfatbin" extract --target nvptx64-nvidia-cuda--sm_80 -o "$work/sm80.ptx" \
    "$work/all.fatbin"
  for f in "$work/default.ptx" "$work/sm80.ptx"; do
    grep -q '^\.entry scale(\|^\.visible \.entry scale(' "$f"
    grep -q '^\.visible \.entry reduce(' "$f"
    grep -q '^\.address_size 64' "$f"
    # Every builtin resolved in libclc: nothing left to link.
    ! grep -q '\.extern \.func' "$f"
  done
  grep -qx '\.target sm_50' "$work/default.ptx"
  grep -qx '\.target sm_80' "$work/sm80.ptx"
  # -DFACTOR=1234.5f reached the GPU build: 1234.5 is 0x449A5000.
  grep -q '0f449A5000' "$work/sm80.ptx"
}

case_ptxas() {
  if [ -z "$ptxas" ]; then
    echo "  (no ptxas on PATH or in /usr/local/cuda/bin: assembling skipped)"
    return 0
  fi
  # The explicit architecture must assemble for exactly that architecture.
  "$ptxas" -arch=sm_80 -o "$work/sm80.cubin" "$work/sm80.ptx" 2>"$work/ptxas.out" ||
    { sed 's/^/  | /' "$work/ptxas.out"; false; }
  [ -s "$work/sm80.cubin" ]
  ptxas_accepts "$work/default.ptx"
  ptxas_accepts "$work/sm80.ptx"
}

case_gpu_only_keeps_metadata() {
  # No CPU code object: the kernel metadata still comes from the CPU layout.
  expect_rc 0 "$clfatbin" build -o "$work/gpu.fatbin" --options "$options" \
    --target nvptx64-nvidia-cuda --target amdgcn-amd-amdhsa--gfx90a "$work/prog.cl"
  expect_rc 0 "$clfatbin" info "$work/gpu.fatbin"
  grep -q 'x: float\*, global_ptr, address global, access none, type qualifiers none, size 8, alignment 8, offset 0' "$work/out"
  grep -q 'tmp: int\*, local_ptr, address local' "$work/out"
  expect_rc 0 "$clfatbin" list "$work/gpu.fatbin"
  [ "$(grep -c '^target ' "$work/out")" -eq 3 ] # two GPUs and the bitcode
}

case_opt_disable() {
  expect_rc 0 "$clfatbin" build -o "$work/o0.fatbin" --options "$options -cl-opt-disable" \
    --target nvptx64-nvidia-cuda--sm_80 --target amdgcn-amd-amdhsa--gfx90a "$work/prog.cl"
  expect_rc 0 "$clfatbin" extract --target amdgcn-amd-amdhsa--gfx90a -o "$work/o0.hsaco" \
    "$work/o0.fatbin"
  check_amd_object "$work/o0.hsaco" gfx90a
  expect_rc 0 "$clfatbin" extract --target nvptx64-nvidia-cuda--sm_80 -o "$work/o0.ptx" \
    "$work/o0.fatbin"
  grep -q '^\.visible \.entry reduce(' "$work/o0.ptx"
  if [ -n "$ptxas" ]; then "$ptxas" -arch=sm_80 -o "$work/o0.cubin" "$work/o0.ptx"; fi
}

case_unknown_target() {
  for target in armv7-linux amdgcn-amd-amdhsa-- amdgcn-amd-amdhsa--sm_80 amdgcn \
    nvptx64-nvidia-cuda--gfx90a nvptx64-nvidia-cuda--compute_80 nvptx-nvidia-cuda; do
    expect_rc 1 "$clfatbin" build -o "$work/bad.fatbin" --options "$options" --target "$target" \
      "$work/prog.cl"
    grep -q "error: unknown target '$target'" "$work/err"
    [ ! -e "$work/bad.fatbin" ]
  done
  # Well-formed, but a processor clang does not know: clang's reason.
  expect_rc 1 "$clfatbin" build -o "$work/bad.fatbin" --options "$options" \
    --target amdgcn-amd-amdhsa--gfx999 "$work/prog.cl"
  grep -q "code generation for amdgcn-amd-amdhsa--gfx999 failed" "$work/err"
  grep -q "gfx999" "$work/err"
  expect_rc 1 "$clfatbin" build -o "$work/bad.fatbin" --options "$options" \
    --target nvptx64-nvidia-cuda--sm_999 "$work/prog.cl"
  grep -q "unknown target CPU 'sm_999'" "$work/err"
  [ ! -e "$work/bad.fatbin" ]
}

case_missing_libclc() {
  mkdir -p "$work/no-libclc"
  export AQUILA_LIBCLC_DIR="$work/no-libclc"
  expect_rc 1 "$clfatbin" build -o "$work/bad.fatbin" \
    --options "$options" --target amdgcn-amd-amdhsa--gfx90a "$work/prog.cl"
  grep -q "cannot build for amdgcn-amd-amdhsa--gfx90a: libclc-19's amdgcn--amdhsa.bc is not installed" "$work/err"
  expect_rc 1 "$clfatbin" build -o "$work/bad.fatbin" \
    --options "$options" --target nvptx64-nvidia-cuda "$work/prog.cl"
  grep -q "cannot build for nvptx64-nvidia-cuda: libclc-19's nvptx64--nvidiacl.bc is not installed" "$work/err"
  [ ! -e "$work/bad.fatbin" ]
}

case_undefined_function() {
  printf 'float helper(float);\n__kernel void k(__global float *x) { x[0] = helper(x[1]); }\n' \
    >"$work/undef.cl"
  expect_rc 1 "$clfatbin" build -o "$work/bad.fatbin" --target nvptx64-nvidia-cuda "$work/undef.cl"
  grep -q "undefined function 'helper'" "$work/err"
  expect_rc 1 "$clfatbin" build -o "$work/bad.fatbin" --target amdgcn-amd-amdhsa--gfx90a \
    "$work/undef.cl"
  grep -q "undefined hidden symbol: helper" "$work/err"
  [ ! -e "$work/bad.fatbin" ]
}

t gpu_build_and_list case_build_and_list
t gpu_amd_code_objects case_amd_code_objects
t gpu_ptx case_ptx
t gpu_ptxas case_ptxas
t gpu_only_keeps_metadata case_gpu_only_keeps_metadata
t gpu_opt_disable case_opt_disable
t gpu_unknown_target case_unknown_target
t gpu_missing_libclc case_missing_libclc
t gpu_undefined_function case_undefined_function
[ "$failures" -eq 0 ]
