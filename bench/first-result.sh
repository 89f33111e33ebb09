#!/bin/sh
# Time from process start to the first result of real applications, with every
# cache cold (Aquila's and pocl's kernel caches, hashcat's and pyopencl's own):
# what a user waits for the first time a program runs. Each application does one
# small piece of work, so the time is mostly building and loading its kernels.
#   hashcat   `hashcat -b -m 0 --runtime=1` (MD5: builds its kernels, self-test,
#             one second of benchmark)
#   clFFT     clFFT-client, one 1D transform of 2^16 points
#   CLBlast   one SGEMM of 256 (bench/clblast_sgemm --size 256 --iterations 1)
#   pyopencl  an elementwise kernel, a ReductionKernel, a GenericScanKernel
#             (cumsum) and a RadixSort, each checked
# Usage: first-result.sh BUILD_DIR ROUNDS NAME=ICD_FILE...   (rounds alternate the
# platforms; medians). Prints a table, seconds.
build=$1
rounds=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python=/usr/bin/python3

cat >"$tmp/pyopencl_first.py" <<'PY'
import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel
from pyopencl.scan import GenericScanKernel
from pyopencl.algorithm import RadixSort
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
x = cla.to_device(q, np.arange(1 << 16, dtype=np.float32))
y = cla.empty_like(x)
ElementwiseKernel(ctx, "float *y, const float *x", "y[i] = 2 * x[i] + 1")(y, x)
assert np.allclose(y.get(), 2 * x.get() + 1)
s = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                    map_expr="x[i]", arguments="const float *x")(x).get()
assert abs(s - x.get().sum()) <= 1e-3 * x.get().sum()
scan = GenericScanKernel(ctx, np.float32, arguments="float *y, const float *x",
                         input_expr="x[i]", scan_expr="a+b", neutral="0",
                         output_statement="y[i] = item;")
scan(y, x)
assert np.allclose(y.get(), np.cumsum(x.get()), rtol=1e-4)
keys = cla.to_device(q, np.random.default_rng(1).integers(0, 1 << 30, 1 << 14, dtype=np.uint32))
(out,), _ = RadixSort(ctx, "unsigned *keys", key_expr="keys[i]", sort_arg_names=["keys"],
                      key_dtype=np.uint32)(keys, key_bits=30)
assert (np.diff(out.get().astype(np.int64)) >= 0).all()
PY

# run NAME ICD APP: seconds for one cold run, or "fail"
run() {
  cold=$(mktemp -d "$tmp/cold.XXXXXX")
  mkdir -p "$cold/home"
  t0=$(date +%s.%N)
  case $3 in
  hashcat) (cd "$cold" && HOME=$cold/home timeout 600 hashcat -b -m 0 --runtime=1 -w 1 -D 1,2,3 \
    >"$cold/out" 2>&1 && grep -q '^Speed' "$cold/out") ;;
  clfft) timeout 600 clFFT-client -p 1 -x 65536 >"$cold/out" 2>&1 ;;
  clblast) timeout 600 "$build/bench/clblast_sgemm" --size 256 --iterations 1 >"$cold/out" 2>&1 ;;
  pyopencl) PYOPENCL_CTX=0 timeout 600 $python "$tmp/pyopencl_first.py" >"$cold/out" 2>&1 ;;
  esac
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ]; then awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}'; else echo fail; fi
  rm -rf "$cold"
}

apps="hashcat clfft clblast pyopencl"
for round in $(seq "$rounds"); do
  for pair in "$@"; do
    name=${pair%%=*}
    icd=${pair#*=}
    for app in $apps; do
      cold=$tmp/cache.$name.$app.$round
      mkdir -p "$cold"
      t=$(OCL_ICD_VENDORS=$icd AQUILA_CACHE_DIR=$cold/aquila POCL_CACHE_DIR=$cold/pocl \
          XDG_CACHE_HOME=$cold/xdg run "$name" "$icd" $app)
      echo "$t" >>"$tmp/$name.$app"
      [ "$t" = fail ] && echo "first-result: $app failed on $name" >&2 && touch "$tmp/failed"
    done
  done
done

median() {
  grep -v fail | sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "fail"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
printf '%-10s' app
for pair in "$@"; do printf ' %12s' "${pair%%=*}"; done
echo
for app in $apps; do
  printf '%-10s' "$app"
  for pair in "$@"; do printf ' %12s' "$(median <"$tmp/${pair%%=*}.$app")"; done
  echo
done
[ ! -f "$tmp/failed" ]
