#!/bin/sh
# `make bench`, second part: real applications' own benchmarks on Aquila and on pocl,
# alternately, for several rounds; prints each figure as the application reports it
# (median over rounds), the ratio Aquila/pocl, and where there is one the fraction of this
# machine's limit (STREAM add, FMA peak) measured in the same run.
#   CLBlast  SGEMM 1024 and 2048 (bench/clblast_sgemm: CLBlast's C API, timed as its
#            clblast_client_xgemm does, which Debian does not package)
#   clpeak   single, double precision and integer compute, global memory bandwidth: the
#            best vector width and the scalar kernel (float, double, int), which only
#            approaches the best if the platform vectorizes across work-items
#   hashcat  -b -m 0 (MD5) and -m 1400 (SHA-256), as it chooses its vector width from the
#            device's native vector width, and again with --backend-vector-width=16
#   clFFT    clFFT-client, single precision, 1D 2^20 and 2D 2048x2048 (checked once)
# The SGEMM rows are given as a fraction of OpenBLAS's sgemm on the same cores
# (bench/openblas_sgemm), the others of the FMA peak or STREAM add.
# Every command runs under `timeout`; a row that did not run says FAILED or TIMEOUT.
# Usage: apps-bench.sh BUILD_DIR AQUILA_ICD [ROUNDS]
# Absolute: the applications run in directories of their own.
build=$(cd "${1:-build}" && pwd)
aquila_icd=$2
pocl_icd=/etc/OpenCL/vendors/pocl.icd
rounds=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each platform gets its own HOME and XDG directories for the whole run: hashcat's kernel
# cache and both platforms' kernel caches start empty, and later rounds reuse them as a
# user's second run would. Compilation is outside every figure below, but not outside the
# time limits.
for platform in aquila pocl; do
  mkdir -p "$tmp/$platform/home" "$tmp/$platform/cache" "$tmp/$platform/data" \
    "$tmp/$platform/config" "$tmp/$platform/work"
done

# run PLATFORM SECONDS COMMAND...: the command's output in $tmp/out, its status returned.
run() {
  p=$1
  limit=$2
  shift 2
  if [ "$p" = aquila ]; then icd=$aquila_icd; else icd=$pocl_icd; fi
  (cd "$tmp/$p/work" && HOME="$tmp/$p/home" XDG_CACHE_HOME="$tmp/$p/cache" \
    XDG_DATA_HOME="$tmp/$p/data" XDG_CONFIG_HOME="$tmp/$p/config" OCL_ICD_VENDORS="$icd" \
    timeout -k 10 "$limit" "$@" </dev/null >"$tmp/out" 2>&1)
}

# record KEY PLATFORM VALUE: one round's figure; fail KEY PLATFORM STATUS WHY: the row
# did not run (status 124/137: the time limit).
record() {
  echo "$3" >>"$tmp/$1.$2"
}
fail() {
  case $3 in
  124 | 137) why="TIMEOUT" ;;
  *) why="FAILED" ;;
  esac
  echo "$why" >"$tmp/$1.$2.failed"
  echo "  $1 on $2: $why (status $3${4:+, $4})"
  tail -n 3 "$tmp/out" | sed 's/^/      /'
}

field() {
  sed -n "s/.*\"$1\": \"\{0,1\}\([^\",}]*\).*/\1/p"
}
median() {
  sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

bench_clblast() {
  for n in 1024 2048; do
    # Enough calls that the median is a steady one: with 3 and 2, Aquila's rows read 10-20%
    # below 20-call medians on this VM (the first calls after a warm-up still settle).
    if [ $n = 1024 ]; then iters=10; else iters=4; fi
    run "$1" 600 "$build/bench/clblast_sgemm" --size $n --iterations $iters --json
    rc=$?
    if [ $rc = 0 ] && [ "$(field status <"$tmp/out")" = verified ]; then
      record clblast$n "$1" "$(field rate <"$tmp/out")"
    else
      fail clblast$n "$1" $rc "$(field status <"$tmp/out")"
    fi
  done
}

bench_clpeak() {
  run "$1" 600 clpeak --compute-sp --compute-dp --compute-integer --global-bandwidth
  rc=$?
  # Sections are headed "Single-precision compute (GFLOPS)" and so on; each line below is
  # "float4  : 16.15". The scalar kernel is the one without a width digit.
  awk '
    /Single-precision compute/ { s = "sp" } /Double-precision compute/ { s = "dp" }
    /Integer compute \(/ { s = "int" } /Global memory bandwidth/ { s = "bw" }
    /Integer compute Fast|Half-precision|Transfer bandwidth|Kernel launch/ { s = "" }
    s != "" && $1 ~ /^(float|double|int)[0-9]*$/ && $2 == ":" && $3 ~ /^[0-9.]+$/ {
      if ($1 !~ /[0-9]$/) scalar[s] = $3
      if ($3 + 0 > best[s] + 0) best[s] = $3
    }
    END { for (k in best) print k "_best", best[k]; for (k in scalar) print k "_scalar", scalar[k] }
  ' "$tmp/out" >"$tmp/clpeak"
  for key in sp_best sp_scalar dp_best dp_scalar int_best int_scalar bw_best bw_scalar; do
    v=$(awk -v k=$key '$1 == k { print $2 }' "$tmp/clpeak")
    if [ $rc = 0 ] && [ -n "$v" ]; then record clpeak_$key "$1" "$v"; else fail clpeak_$key "$1" $rc; fi
  done
}

bench_hashcat() {
  for vec in native 16; do
    for m in 0 1400; do
      key=hashcat${m}_$vec
      # -D 1,2,3: hashcat takes GPUs only by default; Aquila and pocl are CPU devices.
      if [ $vec = native ]; then
        run "$1" 300 hashcat -b -m $m --runtime=5 -D 1,2,3
      else
        run "$1" 300 hashcat -b -m $m --runtime=5 -D 1,2,3 --backend-vector-width=$vec
      fi
      rc=$?
      # "Speed.#1.........:   222.9 MH/s (4.52ms) @ ...", in MH/s whatever the prefix.
      v=$(awk '/^Speed\.#/ {
             for (i = 2; i < NF; i++) if ($i ~ /^[0-9.]+$/ && $(i + 1) ~ /H\/s$/) {
               u = $(i + 1); f = u ~ /^kH/ ? 1e-3 : u ~ /^MH/ ? 1 : u ~ /^GH/ ? 1e3 : u ~ /^TH/ ? 1e6 : 1e-6
               printf "%.2f\n", $i * f; exit
             }
           }' "$tmp/out")
      if [ $rc = 0 ] && [ -n "$v" ]; then record $key "$1" "$v"; else fail $key "$1" $rc; fi
    done
  done
}

bench_clfft() {
  p=$1
  for shape in "1d -x 1048576" "2d -x 2048 -y 2048"; do
    # shellcheck disable=SC2086
    set -- $shape
    key=clfft_$1
    shift
    # The timed run (-p 20) does not verify; the first round also runs it once with its
    # internal check, so that a wrong transform cannot pass as a fast one.
    if [ "$round" = 1 ]; then
      run "$p" 120 clFFT-client -p 1 "$@"
      rc=$?
      if ! grep -q 'Internal Client Test \*\*\*\*\*PASS' "$tmp/out"; then
        fail $key "$p" $rc "clFFT-client check did not pass"
        continue
      fi
    fi
    run "$p" 120 clFFT-client -p 20 "$@"
    rc=$?
    v=$(awk '/^Execution gflops:/ { printf "%.2f\n", $3 }' "$tmp/out")
    if [ $rc = 0 ] && [ -n "$v" ]; then record $key "$p" "$v"; else fail $key "$p" $rc; fi
  done
}

echo "Applications' own benchmarks, Aquila and pocl alternating, $rounds rounds"
bw=0
peak=0
for try in 1 2 3; do
  bw=$(awk -v a="$bw" -v b="$("$build/bench/stream")" 'BEGIN {print (b > a) ? b : a}')
  peak=$(awk -v a="$peak" -v b="$("$build/bench/fmapeak")" 'BEGIN {print (b > a) ? b : a}')
done
echo "  memory bandwidth (STREAM add): $bw GB/s; single-precision FMA peak: $peak GFLOP/s"
# A tuned BLAS on the same cores, the limit for the SGEMM rows: OpenBLAS, best of three.
blas1024=0
blas2048=0
for try in 1 2 3; do
  for n in 1024 2048; do
    v=$("$build/bench/openblas_sgemm" $n 2 | field rate)
    eval "best=\$blas$n"
    eval "blas$n=$(awk -v a="$best" -v b="${v:-0}" 'BEGIN {print (b > a) ? b : a}')"
  done
done
echo "  OpenBLAS sgemm (all cores): $blas1024 GFLOP/s at 1024, $blas2048 at 2048"
start=$(date +%s)
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then order="aquila pocl"; else order="pocl aquila"; fi
  for app in clblast clpeak hashcat clfft; do
    for platform in $order; do
      bench_$app $platform
    done
  done
  echo "  round $round of $rounds done ($(($(date +%s) - start)) s)"
done

# key | label | limit: F = the FMA peak, D = half of it (double precision), B = STREAM add,
# S1024 / S2048 = OpenBLAS sgemm at that size
cat >"$tmp/rows" <<'ROWS'
clblast1024|CLBlast SGEMM 1024 (GFLOPS)|S1024
clblast2048|CLBlast SGEMM 2048 (GFLOPS)|S2048
clpeak_sp_best|clpeak SP best (GFLOPS)|F
clpeak_sp_scalar|clpeak SP float (GFLOPS)|F
clpeak_dp_best|clpeak DP best (GFLOPS)|D
clpeak_dp_scalar|clpeak DP double (GFLOPS)|D
clpeak_int_best|clpeak int best (GIOPS)|
clpeak_int_scalar|clpeak int int (GIOPS)|
clpeak_bw_best|clpeak global bw best (GB/s)|B
clpeak_bw_scalar|clpeak global bw float (GB/s)|B
hashcat0_native|hashcat MD5 (MH/s)|
hashcat1400_native|hashcat SHA-256 (MH/s)|
hashcat0_16|hashcat MD5 vec 16 (MH/s)|
hashcat1400_16|hashcat SHA-256 vec 16 (MH/s)|
clfft_1d|clFFT 1D 2^20 (GFLOPS)|F
clfft_2d|clFFT 2D 2048^2 (GFLOPS)|F
ROWS

echo
printf '%-31s %10s %10s %8s  %-8s %-8s\n' "application benchmark" Aquila pocl Aq/pocl \
  "Aquila%" "pocl%"
failures=0
while IFS='|' read -r key label limit; do
  a=$(cat "$tmp/$key.aquila" 2>/dev/null | median)
  p=$(cat "$tmp/$key.pocl" 2>/dev/null | median)
  [ -f "$tmp/$key.aquila.failed" ] && a=$(cat "$tmp/$key.aquila.failed") && failures=1
  [ -f "$tmp/$key.pocl.failed" ] && p=$(cat "$tmp/$key.pocl.failed") && failures=1
  # For bench/targets.sh (BENCH_RESULTS, as in bench.sh).
  [ -n "$BENCH_RESULTS" ] && echo "app_$key $a $p" >>"$BENCH_RESULTS"
  awk -v l="$label" -v a="$a" -v p="$p" -v lim="$limit" -v bw="$bw" -v peak="$peak" \
    -v s1024="$blas1024" -v s2048="$blas2048" '
    function frac(v, by) {
      if (v !~ /^[0-9.]+$/ || lim == "") return "-"
      by = lim == "B" ? bw : lim == "D" ? peak / 2 : lim == "S1024" ? s1024 : lim == "S2048" ? s2048 : peak
      return by > 0 ? sprintf("%.0f%%", 100 * v / by) : "-"
    }
    BEGIN {
      ratio = (a ~ /^[0-9.]+$/ && p ~ /^[0-9.]+$/ && p > 0) ? sprintf("%.2f", a / p) : "-"
      printf "%-31s %10s %10s %8s  %-8s %-8s\n", l, a, p, ratio, frac(a), frac(p)
    }'
done <"$tmp/rows"
echo "(medians over rounds of each application's own figure; Aq/pocl > 1: Aquila faster;"
echo " % of the FMA peak (DP: half of it), of STREAM add, or for SGEMM of OpenBLAS sgemm;"
echo " $(($(date +%s) - start)) s)"
exit $failures
