#!/bin/sh
# `make bench`: every sample at a fixed size on Aquila and on pocl, alternately, for
# several rounds; prints median times, the ratio pocl/Aquila, and each figure as a
# fraction of this machine's measured limits (memory bandwidth, FMA peak).
# Usage: bench.sh BUILD_DIR AQUILA_ICD [ROUNDS]
# BENCH_AGAINST=ICD compares with another OpenCL library instead of pocl (an
# earlier Aquila, built elsewhere: its column is then "other"), and
# BENCH_SAMPLES_ONLY=1 stops after the samples. With BENCH_RESULTS=FILE, the
# medians and limits are also appended to FILE, one "key aquila other" line
# each, for bench/targets.sh.
build=${1:-build}
aquila_icd=$2
pocl_icd=${BENCH_AGAINST:-/etc/OpenCL/vendors/pocl.icd}
other=pocl
[ -n "$BENCH_AGAINST" ] && other=other
rounds=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() {
  sed -n "s/.*\"$1\": \"\{0,1\}\([^\",}]*\).*/\1/p"
}
median() {
  sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

echo "Machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
# Best of three tries each: on a shared machine a low reading is someone else's load,
# and a limit measured too low would make every fraction below look too good.
bw=0
peak=0
for try in 1 2 3; do
  bw=$(awk -v a="$bw" -v b="$("$build/bench/stream")" 'BEGIN {print (b > a) ? b : a}')
  peak=$(awk -v a="$peak" -v b="$("$build/bench/fmapeak")" 'BEGIN {print (b > a) ? b : a}')
done
echo "  memory bandwidth (STREAM add, all cores): $bw GB/s"
echo "  single-precision FMA peak (all cores):    $peak GFLOP/s"
# The NBody sample's computation written in C (bench/nbody_c.c): what NBody
# on Aquila is measured against besides pocl. Best of three.
nbc=0
for try in 1 2 3; do
  nbc=$(awk -v a="$nbc" -v b="$("$build/bench/nbody_c" 16384 3 | field gflops)" 'BEGIN {print (b > a) ? b : a}')
done
echo "  NBody 16384 as hand-written C (gcc -O3 -march=native, OpenMP): $nbc GFLOP/s"
echo
# result KEY AQUILA OTHER: one line for bench/targets.sh.
result() {
  [ -n "$BENCH_RESULTS" ] && echo "$1 $2 $3" >>"$BENCH_RESULTS"
  return 0
}
result limit_bw "$bw" "$bw"
result limit_peak "$peak" "$peak"
result nbody_c "$nbc" "$nbc"

# name | arguments | work per run | unit of work: B = bytes moved (at least), F = flops
cat >"$tmp/list" <<'LIST'
VectorAdd|vectoradd --size 16777216 --iterations 5|201326592|B
NBody|nbody --size 16384 --iterations 3|5368709120|F
NBody-no-tiling|nbody --size 16384 --iterations 3 --no-tiling|5368709120|F
SobelFilter|sobelfilter --size 4096 --iterations 3|134217728|B
SobelFilter-image|sobelfilter --size 4096 --iterations 3 --image|134217728|B
BlackScholes|blackscholes --size 4194304 --iterations 3|83886080|B
Histogram|histogram --size 67108864 --iterations 3|67108864|B
MatrixMul|matrixmul --size 1024 --iterations 3|2147483648|F
MatrixMul-no-reqd|matrixmul --size 1024 --iterations 10 --no-reqd|2147483648|F
Reduction|reduction --size 16777216 --iterations 3|67108864|B
PrefixSum|prefixsum --size 4194304 --iterations 3|33554432|B
RecursiveGaussian|recursivegaussian --size 2048 --iterations 3|134217728|B
Transpose|transpose --size 4096 --iterations 5|134217728|B
BitonicSort|bitonicsort --size 4194304 --iterations 3|3523215360|B
BitonicSort-poll|bitonicsort --size 262144 --iterations 5 --poll|115343360|B
BinomialOption|binomialoption --size 16384 --iterations 3|1604321280|F
Convolution2D|convolution --size 4096 --iterations 3|1644167168|F
LIST

failures=0
for round in $(seq "$rounds"); do
  # Alternate which platform goes first, so drift on a shared machine hits both alike.
  if [ $((round % 2)) = 1 ]; then order="aquila pocl"; else order="pocl aquila"; fi
  while IFS='|' read -r name cmd work unit; do
    for platform in $order; do
      if [ $platform = aquila ]; then icd=$aquila_icd; else icd=$pocl_icd; fi
      # One retry: other engineers relink libaquila.so in this tree, and a run that starts
      # mid-link finds no platform (-1001). A second failure counts.
      ok=0
      for attempt in 1 2; do
        # shellcheck disable=SC2086
        if out=$(OCL_ICD_VENDORS=$icd timeout 120 "$build/samples/"$cmd --json 2>"$tmp/err") &&
          [ "$(printf '%s\n' "$out" | field status)" = verified ]; then
          printf '%s\n' "$out" | field time_ms >>"$tmp/$name.$platform"
          ok=1
          break
        fi
        sleep 2
      done
      if [ $ok = 0 ]; then
        echo "  $name on $platform FAILED: $(head -3 "$tmp/err")"
        echo "FAILED" >"$tmp/$name.$platform.failed"
      fi
    done
  done <"$tmp/list"
  echo "  round $round of $rounds done"
done

echo
printf '%-18s %12s %12s %9s  %-26s %-26s\n' sample "Aquila ms" "$other ms" "$other/Aq" \
  "Aquila (of limit)" "$other (of limit)"
while IFS='|' read -r name cmd work unit; do
  a=$(median <"$tmp/$name.aquila" 2>/dev/null)
  p=$(median <"$tmp/$name.pocl" 2>/dev/null)
  [ -f "$tmp/$name.aquila.failed" ] && a=FAILED
  [ -f "$tmp/$name.pocl.failed" ] && p=FAILED
  result "sample_$name" "$a" "$p"
  awk -v n="$name" -v a="$a" -v p="$p" -v w="$work" -v u="$unit" -v bw="$bw" -v peak="$peak" '
    function fig(t) {
      if (t !~ /^[0-9.]+$/) return "-"
      r = w / (t * 1e-3) / 1e9
      return sprintf("%.1f %s (%.0f%%)", r, u == "F" ? "GFLOP/s" : "GB/s",
                     100 * r / (u == "F" ? peak : bw))
    }
    BEGIN {
      ratio = (a ~ /^[0-9.]+$/ && p ~ /^[0-9.]+$/) ? sprintf("%.2f", p / a) : "-"
      printf "%-18s %12s %12s %9s  %-26s %-26s\n", n, a, p, ratio, fig(a), fig(p)
    }'
done <"$tmp/list"
echo "(time: median over rounds of each run's median iteration; B = minimum bytes moved,"
echo " BitonicSort: each of its 105 launches at 2^22 keys reads and writes every key once;"
echo " BitonicSort-poll: 55 launches at 2^18 keys, each awaited by polling its event's status;"
echo " F = flops: NBody 20 per interaction, MatrixMul 2n^3, BinomialOption 3 per lattice node"
echo " and step, Convolution2D 2 per filter tap; limit = STREAM add or FMA peak)"
if [ -n "$BENCH_SAMPLES_ONLY" ]; then
  ls "$tmp"/*.failed >/dev/null 2>&1 && failures=1
  exit $failures
fi

echo
echo "Runtime microbenchmark (medians of 3; busy: one spinning process per CPU beside it)"
busy=$(nproc)
for round in 1 2 3; do
  for b in 0 "$busy"; do
    for platform in aquila pocl; do
      if [ $platform = aquila ]; then icd=$aquila_icd; else icd=$pocl_icd; fi
      OCL_ICD_VENDORS=$icd timeout 120 "$build/bench/micro" --busy "$b" >>"$tmp/micro$b.$platform" ||
        OCL_ICD_VENDORS=$icd timeout 120 "$build/bench/micro" --busy "$b" >>"$tmp/micro$b.$platform" ||
        failures=1
    done
  done
done
printf '%-40s %12s %12s %9s\n' measure Aquila pocl pocl/Aq
for row in 0:launch_us 0:launch_p99_us 0:poll_us 0:poll_p99_us 0:kernels_per_s 0:saxpy_us \
  "$busy:launch_us" "$busy:launch_p99_us" "$busy:poll_us" "$busy:poll_p99_us" "$busy:kernels_per_s" \
  "$busy:saxpy_us" 0:write_GBs 0:read_GBs 0:copy_GBs 0:map_GBs; do
  b=${row%%:*}
  key=${row#*:}
  a=$(field $key <"$tmp/micro$b.aquila" | median)
  p=$(field $key <"$tmp/micro$b.pocl" | median)
  case $key in
  launch_us) label="empty kernel enqueue+finish (us)" ;;
  launch_p99_us | poll_p99_us) label="  99th percentile (us)" ;;
  poll_us) label="empty kernel, status polled (us)" ;;
  kernels_per_s) label="back-to-back kernels/s" ;;
  saxpy_us) label="saxpy 64 Ki enqueue+finish (us)" ;;
  *) label="$(echo $key | sed 's/_GBs//') 256 MiB (GB/s)" ;;
  esac
  [ "$b" = 0 ] || label="$label, busy"
  awk -v l="$label" -v a="$a" -v p="$p" 'BEGIN {
    printf "%-40s %12s %12s %9s\n", l, a, p, (a + 0 > 0) ? sprintf("%.2f", p / a) : "-" }'
done

echo
echo "Building programs (fresh process and kernel cache each run; medians of 5)"
echo "  first/second build and cache hit: clBuildProgram alone; the rest: from the source to"
echo "  the first result read back, machine code included (bench/buildtime.c)"
for round in 1 2 3 4 5; do
  for platform in aquila pocl; do
    if [ $platform = aquila ]; then icd=$aquila_icd; else icd=$pocl_icd; fi
    OCL_ICD_VENDORS=$icd timeout 120 "$build/bench/buildtime" >>"$tmp/build.$platform" || failures=1
  done
done
printf '%-28s %12s %12s %9s\n' measure Aquila pocl pocl/Aq
for key in startup_ms cold_build_ms second_build_ms cache_hit_ms many_kernels_ms all_created_ms \
  reduction_ms scan_ms huge_kernel_ms; do
  a=$(field $key <"$tmp/build.aquila" | median)
  p=$(field $key <"$tmp/build.pocl" | median)
  result "build_$key" "$a" "$p"
  case $key in
  startup_ms) label="platform+context (ms)" ;;
  cold_build_ms) label="first build (ms)" ;;
  second_build_ms) label="second build (ms)" ;;
  cache_hit_ms) label="kernel-cache hit (ms)" ;;
  many_kernels_ms) label="200 kernels, 1 run (ms)" ;;
  all_created_ms) label="200 created, 1 run (ms)" ;;
  reduction_ms) label="reduction (ms)" ;;
  scan_ms) label="scan, 3 kernels (ms)" ;;
  huge_kernel_ms) label="100 KB kernel (ms)" ;;
  esac
  awk -v l="$label" -v a="$a" -v p="$p" 'BEGIN {
    printf "%-28s %12s %12s %9s\n", l, a, p, (a + 0 > 0) ? sprintf("%.2f", p / a) : "-" }'
done
ls "$tmp"/*.failed >/dev/null 2>&1 && failures=1
exit $failures
