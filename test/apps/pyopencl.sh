#!/bin/sh
# pyopencl: arrays and elementwise kernels, reductions, scans, clrandom
# (Philox, RanluxCL), RadixSort, clmath, images, fp64, complex, local memory;
# each case in its own process (a crash fails one case), compared with numpy.
APP=pyopencl
. "$(dirname "$0")/common.sh"
need_pkgs python3-pyopencl python3-numpy
export PYOPENCL_NO_CACHE=1   # compile through the platform on every run
pass=0; fail=0; failed=""
for c in $($PY "$APPS_DIR/pyopencl_cases.py"); do
    out=$(cd "$APP_TMP" && with_count timeout 300 $PY "$APPS_DIR/pyopencl_cases.py" "$c" 2>&1)
    rc=$?
    echo "$out"
    if [ $rc -eq 0 ] && echo "$out" | grep -q "^case $c ok"; then pass=$((pass + 1))
    else fail=$((fail + 1)); failed="$failed $c"; [ $rc -gt 128 ] && echo "case $c crashed (status $rc)"; fi
done
app_end $pass $fail "$(echo $($PY "$APPS_DIR/pyopencl_cases.py") | tr ' ' ,)${failed:+; failed:$failed}"
