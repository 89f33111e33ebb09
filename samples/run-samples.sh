#!/bin/sh
# Runs every sample through the system ICD loader (OCL_ICD_VENDORS is set by
# `make run`) and prints what each did and whether it verified.
# Usage: run-samples.sh BUILD_DIR
build=${1:-build}
status=0
run() {
  name=$1
  shift
  if out=$("$build/samples/$name" "$@" 2>&1); then
    printf '  %-12s %s\n' "$name" "$out"
  else
    printf '  %-12s FAILED (exit %s)\n%s\n' "$name" "$?" "$out"
    status=1
  fi
}
echo "Aquila samples (loader: libOpenCL.so.1, vendors: ${OCL_ICD_VENDORS:-system})"
run vectoradd --size 16777216 --iterations 5
run vectoradd --dims 2 --size 1000003
run vectoradd --dims 3 --size 999999
exit $status
