#!/bin/sh
# The compiler's footprint analysis (compiler/analysis/footprint_analysis.c) through
# `clfatbin build` with AQUILA_DEBUG=footprint: for each kernel, which
# __global arguments are never written, written in affine byte ranges (with
# the work dimensions each range holds for, and the checks that narrow
# integer arithmetic needs), or written anywhere; atomics on global memory
# and printf. Then that the footprint survives the fat binary (`clfatbin
# info` of the written file lists it). Run from the build tree:
# $BUILD/test/compiler/test_footprint. Prints "ok NAME" / "not ok NAME".
here=$(cd "$(dirname "$0")" && pwd)
clfatbin=$here/../../clfatbin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

result() {
  if [ "$2" -eq 0 ]; then echo "ok $1"; else echo "not ok $1"; failures=$((failures + 1)); fi
}

cat >"$work/k.cl" <<'EOF'
__kernel void copy1d(__global const float *in, __global float *out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = in[i] * 2.0f;
}
__kernel void rows2d(__global float *c, uint n) {
  size_t x = get_global_id(0), y = get_global_id(1);
  c[y * n + x] = (float)x;
}
__kernel void wide_int(__global float4 *out, int shift) {
  int i = (int)get_global_id(0) - shift;
  out[i] = (float4)(1.0f);
  out[i].y = 2.0f;
}
__kernel void in_loop(__global int *out) {
  for (int k = 0; k < get_global_size(0); k++) out[get_global_id(0) * 64 + k] = k;
}
__kernel void through_memory(__global int *out, __global const int *idx) {
  out[idx[get_global_id(0)]] = 1;
}
__kernel void counted(__global int *out, __global int *count) {
  out[get_global_id(0)] = 1;
  atomic_inc(count);
}
__kernel void local_atomics(__global int *out) {
  __local int n;
  if (get_local_id(0) == 0) n = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&n);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_group_id(0)] = n;
}
__kernel void prints(__global int *out) {
  printf("%d\n", (int)get_global_id(0));
  out[get_global_id(0)] = 0;
}
__kernel void chosen(__global int *a, __global int *b, int which) {
  __global int *p = which ? a : b;
  p[get_global_id(0)] = 1;
}
__kernel void updates(__global float *a) {
  a[get_global_id(0)] += 1.0f;
}
__kernel void two_stores(__global float *a) {
  a[2 * get_global_id(0)] = 1.0f;
  a[2 * get_global_id(0) + 1] = 2.0f;
}
__kernel void reads_only(__global const int *a, __global int *b) {
  int s = a[get_global_id(0)];
  (void)s;
}
EOF
AQUILA_CACHE=0 AQUILA_DEBUG=footprint "$clfatbin" build -o "$work/k.fatbin" "$work/k.cl" \
  >"$work/out" 2>&1
rc=$?
result build $rc

# has KERNEL TEXT: the kernel's footprint line holds TEXT.
has() {
  line=$(grep "kernel '$1': footprint:" "$work/out")
  case "$line" in
  *"$2"*) return 0 ;;
  *)
    echo "  $1: '$line' lacks '$2'"
    return 1
    ;;
  esac
}

has copy1d "in: not written; out: bytes 4*get_global_offset(0) + 4*get_enqueued_local_size(0)*get_group_id(0) + 4*get_local_id(0) + [0, 4);"
result one_dimension $?
# get_global_id(1) is 0 in a 1D range: one form per work dimension.
has rows2d "4*n*get_local_id(1) + [0, 4) (work_dim 2 3)" &&
  has rows2d "4*get_local_id(0) + [0, 4) (work_dim 1)"
result rows_by_work_dimension $?
# A signed int index: a check that it fits 32 bits; the two stores are one
# after LLVM's simplification.
has wide_int "out: overwritten, bytes -16*shift + 16*get_global_offset(0)" &&
  has wide_int "+ [0, 16); 1 checks"
result narrow_index_checked $?
has in_loop "out: written anywhere;"
result loop_index_anywhere $?
has through_memory "out: written anywhere; idx: not written;"
result index_from_memory_anywhere $?
has counted "global atomics;" && has counted "count: written anywhere;"
result global_atomics $?
has local_atomics "footprint: out: overwritten, bytes 4*get_group_id(0) + [0, 4);"
result local_atomics_not_global $?
has prints "printf;"
result printf_flagged $?
has chosen "a: written anywhere; b: written anywhere;"
result pointer_choice_anywhere $?
has reads_only "a: not written; b: not written;"
result reads_only $?
# Overwritten: one store that every work-item makes, never read.
has rows2d "c: overwritten, bytes" && has copy1d "out: bytes" && has updates "a: bytes" &&
  has two_stores "a: bytes 8*get_global_offset(0)"
result overwritten_only_by_one_unconditional_store $?

# The footprint is in the fat binary: its reader checks and keeps it.
"$clfatbin" verify "$work/k.fatbin" >"$work/verify" 2>&1
result fatbin_verifies $?

[ "$failures" -eq 0 ]
