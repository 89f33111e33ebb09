#!/bin/sh
# OpenCV's T-API (cv2.UMat) against its CPU path: filters, colour conversion,
# resize/warps, morphology, Canny/thresholds, histograms and reductions,
# arithmetic. Run with the device chosen three ways: OPENCV_OPENCL_DEVICE=":CPU:",
# ":ALL:0", and "" (empty: OpenCV's default order, GPUs then CPUs). With the
# variable unset OpenCV 4.6 asks for GPUs only (clGetDeviceIDs with
# CL_DEVICE_TYPE_GPU, nothing else), so there one check: OpenCL is in use
# exactly when the platform has a GPU device. OpenCL errors raise instead of
# falling back to the CPU (OPENCV_OPENCL_RAISE_ERROR=1); the kernel cache is off.
APP=opencv
. "$(dirname "$0")/common.sh"
need_pkgs python3-opencv python3-numpy
export OPENCV_OPENCL_RAISE_ERROR=1 OPENCV_OPENCL_CACHE_ENABLE=0
# The device name the platform reports, to check that OpenCV picked it.
want=$(LD_PRELOAD= $PY -c "import pyopencl as cl; print(cl.get_platforms()[0].get_devices()[0].name.strip())" 2>/dev/null)
[ -n "$want" ] || want=CPU
pass=0; fail=0; failed=""
for sel in ":CPU:" ":ALL:0" ""; do
    selfail=0; selcases=""
    for c in $($PY "$APPS_DIR/opencv_cases.py"); do
        out=$(cd "$APP_TMP" && OPENCV_OPENCL_DEVICE="$sel" LD_PRELOAD="$LAUNCHCOUNT" HOME="$APP_TMP" timeout 300 $PY "$APPS_DIR/opencv_cases.py" "$want" "$c" 2>&1)
        rc=$?
        echo "[$sel] $out"
        if [ $rc -eq 0 ] && echo "$out" | grep -q "^case $c ok"; then pass=$((pass + 1))
        else fail=$((fail + 1)); selfail=$((selfail + 1)); selcases="$selcases,$c"; [ $rc -gt 128 ] && echo "case $c crashed (status $rc)"; fi
    done
    ncases=$(echo $($PY "$APPS_DIR/opencv_cases.py") | wc -w)
    if [ $selfail -eq $ncases ]; then failed="$failed '$sel'(all $ncases)"
    elif [ $selfail -gt 0 ]; then failed="$failed '$sel'(${selcases#,})"; fi
done
gpus=$(LD_PRELOAD= $PY -c "import pyopencl as cl; print(len(cl.get_platforms()[0].get_devices(cl.device_type.GPU)))" 2>/dev/null || echo 0)
use=$(cd "$APP_TMP" && env -u OPENCV_OPENCL_DEVICE HOME="$APP_TMP" $PY -c "import cv2; print(int(cv2.ocl.useOpenCL()))" 2>&1 | tail -n 1)
echo "unset OPENCV_OPENCL_DEVICE: useOpenCL $use, platform GPUs $gpus"
if { [ "$gpus" -gt 0 ] && [ "$use" = 1 ]; } || { [ "$gpus" -eq 0 ] && [ "$use" = 0 ]; }; then pass=$((pass + 1))
else fail=$((fail + 1)); failed="$failed unset(useOpenCL $use with $gpus GPUs)"; fi
app_end $pass $fail "7 cases x device chosen by :CPU:, :ALL:0, '' + unset check${failed:+; failed:$failed}"
