#!/bin/sh
# Part of `make bench`: each sample's kernel built from OpenCL C source and
# from SPIR-V made of the same source (clang-15 for spir64, llvm-spirv-15),
# unoptimized (-O0, how clang's own path hands the work-group compiler a
# program) and optimized (-O2, how SYCL compilers and chipStar ship theirs),
# run alternately on Aquila; median kernel times and SPIR-V / source ratios
# (1.00: as fast; below: faster).
# Usage: spirv.sh BUILD_DIR AQUILA_ICD [ROUNDS]
build=${1:-build}
export OCL_ICD_VENDORS=$2
rounds=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() {
  sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
time_ms() {
  sed -n 's/.*"time_ms": \([0-9.]*\).*"status": "verified".*/\1/p'
}

printf '%-18s %12s %12s %12s %8s %8s\n' sample "source ms" "SPIR-V -O0" "SPIR-V -O2" "-O0/src" "-O2/src"
status=0
for s in vectoradd matrixmul nbody reduction prefixsum histogram convolution sobelfilter \
  transpose bitonicsort binomialoption blackscholes recursivegaussian; do
  "$build/samples/$s" --print-source "$tmp/$s.cl" || { status=1; continue; }
  options=$(head -n 1 "$tmp/$s.cl" | sed 's|^// options: ||')
  for level in O0 O2; do
    extra=
    [ $level = O0 ] && extra="-Xclang -disable-O0-optnone"
    # shellcheck disable=SC2086
    clang-15 -x cl -cl-std=CL1.2 -target spir64-unknown-unknown -emit-llvm -c -$level $extra \
      -Xclang -finclude-default-header $options "$tmp/$s.cl" -o "$tmp/$s.$level.bc" 2>/dev/null &&
      llvm-spirv-15 "$tmp/$s.$level.bc" -o "$tmp/$s.$level.spv" 2>/dev/null ||
      rm -f "$tmp/$s.$level.spv"
  done
  : >"$tmp/src" && : >"$tmp/O0" && : >"$tmp/O2"
  r=0
  while [ $r -lt "$rounds" ]; do
    "$build/samples/$s" --json --iterations 3 | time_ms >>"$tmp/src"
    for level in O0 O2; do
      [ -f "$tmp/$s.$level.spv" ] &&
        "$build/samples/$s" --json --iterations 3 --il "$tmp/$s.$level.spv" | time_ms >>"$tmp/$level"
    done
    r=$((r + 1))
  done
  src=$(median <"$tmp/src")
  o0=$(median <"$tmp/O0")
  o2=$(median <"$tmp/O2")
  printf '%-18s %12s %12s %12s %8s %8s\n' "$s" "$src" "$o0" "$o2" \
    "$(awk -v a="$o0" -v b="$src" 'BEGIN {print (a == "nan" || b == 0) ? "-" : sprintf("%.2f", a / b)}')" \
    "$(awk -v a="$o2" -v b="$src" 'BEGIN {print (a == "nan" || b == 0) ? "-" : sprintf("%.2f", a / b)}')"
  [ "$o0" = nan ] && status=1
done
echo "(-O2 '-': the translator could not write that module, e.g. LLVM 15's freeze instruction)"
exit $status
