#!/bin/sh
# clFFT: clFFT-client with its internal verification ("Internal Client Test
# PASS") over 1D/2D/3D, batched, out-of-place, inverse, fp64, real and planar
# layouts; gpyfft's own pytest suite (each test in its own process); and our
# gpyfft cases against numpy.fft (test/apps/gpyfft_cases.py).
APP=clfft
. "$(dirname "$0")/common.sh"
need_pkgs clfft-client libclfft-dev python3-gpyfft python3-pyopencl python3-numpy python3-pytest python3-parameterized
pass=0; fail=0; failed=""
cd "$APP_TMP"
result() { # NAME RC OUTPUT-OK
    if [ "$2" -eq 0 ] && [ "$3" = 1 ]; then pass=$((pass + 1)); echo "case $1 ok"
    else fail=$((fail + 1)); failed="$failed $1"; echo "case $1 FAIL (status $2)"; fi
}
n=0
while read -r args; do
    n=$((n + 1))
    out=$(with_count timeout 120 clFFT-client --platform 0 --device 0 -p 1 $args 2>&1); rc=$?
    echo "clFFT-client $args"; echo "$out" | grep -v libStatTimer
    ok=0; echo "$out" | grep -q 'Internal Client Test \*\*\*\*\*PASS' && ok=1
    result "client$n" $rc $ok
done <<'ARGS'
-x 1024
-x 4096 -o --inv
-x 360
-x 128 -y 64 -o
-x 32 -y 32 -z 16
-x 256 -b 8
-x 512 -b 8 --double -o
-x 64 -y 64 --double
-x 1024 --inLayout 5 --outLayout 3 -o
-x 1024 --inLayout 3 --outLayout 5 -o --inv
-x 256 -y 16 --inLayout 2 --outLayout 2 -o
ARGS
GT=/usr/lib/python3/dist-packages/gpyfft/test
export PYTHONDONTWRITEBYTECODE=1
for t in $(cd $GT && $PY -m pytest -q -p no:cacheprovider --collect-only . 2>/dev/null | grep '::'); do
    out=$(cd $GT && with_count timeout 120 $PY -m pytest -q -p no:cacheprovider "$t" 2>&1); rc=$?
    echo "$out" | tail -n 5
    result "gpyfft-test:${t##*::}" $rc 1
done
out=$(cd $GT && with_count timeout 120 $PY -m pytest -q -p no:cacheprovider . 2>&1); rc=$?
echo "$out" | tail -n 20
result "gpyfft-suite-one-process" $rc 1
for c in $($PY "$APPS_DIR/gpyfft_cases.py"); do
    out=$(with_count timeout 120 $PY "$APPS_DIR/gpyfft_cases.py" "$c" 2>&1); rc=$?
    echo "$out"
    ok=0; echo "$out" | grep -q "^case $c ok" && ok=1
    result "gpyfft:$c" $rc $ok
done
app_end $pass $fail "11 clFFT-client runs, gpyfft's tests one by one and in one process, 10 gpyfft cases vs numpy${failed:+; failed:$failed}"
