#!/bin/sh
# Runs every sample through the system ICD loader (OCL_ICD_VENDORS is set by
# `make run`), verified against its host reference, and prints one table row each.
# Usage: run-samples.sh BUILD_DIR
build=${1:-build}
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Pulls one field out of the sample's --json line (flat object, no nesting).
field() {
  sed -n "s/.*\"$1\": \"\{0,1\}\([^\",}]*\).*/\1/p"
}

run() {
  name=$1
  shift
  if out=$("$build/samples/$name" --json "$@" 2>"$tmp/err"); then
    label=$(printf '%s' "$out" | field sample)
    size=$(printf '%s' "$out" | field size)
    time=$(printf '%s' "$out" | field time_ms)
    verdict=$(printf '%s' "$out" | field status)
    printf '  %-20s %-24s %10.2f   %s\n' "$label" "$size" "$time" "$verdict"
  else
    code=$?
    printf '  %-20s %-24s %10s   FAILED (exit %s)\n' "$name" "$*" - "$code"
    sed 's/^/      /' "$tmp/err"
    status=1
  fi
}

echo "Aquila samples (loader: libOpenCL.so.1, vendors: ${OCL_ICD_VENDORS:-system})"
printf '  %-20s %-24s %10s   %s\n' sample size "time (ms)" result
run vectoradd --size 16777216 --iterations 5
run vectoradd --dims 2 --size 1000003
run vectoradd --dims 3 --size 999999 --save-binary "$tmp/vectoradd.bin"
run vectoradd --binary "$tmp/vectoradd.bin" --size 1000
run nbody --size 4096 --iterations 3
run nbody --size 4096 --iterations 3 --no-tiling
run sobelfilter --size 2048 --iterations 3
run sobelfilter --size 333
run sobelfilter --image --size 2048 --iterations 3
run blackscholes --iterations 3
run histogram --size 16777216 --iterations 3
run histogram --size 1000
run matrixmul --size 512 --iterations 2
run reduction --iterations 3
run reduction --size 1000001
run prefixsum --size 1048576 --iterations 3
run prefixsum --size 262145
run recursivegaussian --size 1024 --iterations 3
run recursivegaussian --size 333
run transpose --size 2048 --iterations 3
run transpose --size 1000 --height 333
run bitonicsort --size 262144 --iterations 3
run bitonicsort --size 100003
run bitonicsort --size 65536 --poll
run binomialoption --size 4096 --iterations 3
run binomialoption --size 333 --steps 100
run convolution --size 2048 --iterations 3
run convolution --size 1000 --height 333 --radius 2

echo "HSA program on the standalone runtime (libaquila-hsa.so), kernel from a fat binary:"
if out=$("$build/samples/hsa-vectoradd" "$build/samples/hsa-vectoradd.fatbin" 1000000 2>&1); then
  echo "  $out"
else
  echo "  hsa-vectoradd FAILED: $out"
  status=1
fi
exit $status
