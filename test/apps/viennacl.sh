#!/bin/sh
# ViennaCL (header-only, libviennacl-dev): test/apps/viennacl/viennacl_check.cpp
# built against its headers, float and double in separate processes: vector
# operations, inner product/norm, dense GEMM and GEMV, CSR sparse
# matrix-vector product, CG solver, each against a host computation.
APP=viennacl
. "$(dirname "$0")/common.sh"
need_pkgs libviennacl-dev g++ ocl-icd-opencl-dev opencl-headers
bin="$BUILD/apps/viennacl_check"
src="$APPS_DIR/viennacl/viennacl_check.cpp"
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    mkdir -p "$BUILD/apps"
    g++ -O1 -std=c++17 -w -DCL_TARGET_OPENCL_VERSION=120 "$src" -o "$bin" -lOpenCL ||
        { echo "APP $APP FAIL could not build viennacl_check"; exit 1; }
fi
pass=0; fail=0; failed=""
cd "$APP_TMP"
for prec in float double; do
    out=$(HOME="$APP_TMP" with_count timeout 300 "$bin" $prec 2>&1); rc=$?
    echo "$out"
    p=$(echo "$out" | grep -c "^case .* ok")
    f=$((6 - p))
    pass=$((pass + p)); fail=$((fail + f))
    if [ $f -gt 0 ]; then
        why=$(echo "$out" | grep -m1 -E "FATAL|FAIL|rror" | cut -c1-70)
        case "$why" in *"did not reach a fixpoint"*) why="instcombine fixpoint abort";; esac
        failed="$failed $prec($f of 6, status $rc${why:+: $why})"
    fi
done
app_end $pass $fail "vector ops, dot/norm, GEMM, GEMV, CSR SpMV, CG; float and double${failed:+; failed:$failed}"
