#!/bin/sh
# `make bench`, last part: issue 48's targets from the figures this run measured
# (bench.sh and apps-bench.sh append them to BENCH_RESULTS: "key aquila pocl" lines,
# medians over their rounds), each with the ratio it asks for, what limits it on this
# machine (FMA peak, STREAM add, hand-written C), and whether it is met.
# Usage: targets.sh RESULTS_FILE
results=$1
[ -r "$results" ] || {
  echo "targets: no results in $results"
  exit 1
}
awk '
  { a[$1] = $2; p[$1] = $3 }
  function num(v) { return v ~ /^[0-9.]+(e[-+]?[0-9]+)?$/ }
  function row(name, measured, limit, verdict) {
    printf "%-46s %-30s %-28s %s\n", name, measured, limit, verdict
  }
  function verdict(ok) { return ok ? "met" : "missed" }
  # ratio >= want (higher is better), or "-" when a figure is missing
  function higher(name, r, want, limit) {
    if (r == "") row(name, "-", limit, "not measured")
    else row(name, sprintf("%.2f (target >= %.2f)", r, want), limit, verdict(r >= want))
  }
  function lower(name, r, want, limit) {
    if (r == "") row(name, "-", limit, "not measured")
    else row(name, sprintf("%.2f (target <= %.2f)", r, want), limit, verdict(r <= want))
  }
  function over(k, flip) {   # Aquila over pocl, from times (flip) or rates
    if (!num(a[k]) || !num(p[k]) || a[k] == 0 || p[k] == 0) return ""
    return flip ? p[k] / a[k] : a[k] / p[k]
  }
  END {
    peak = a["limit_peak"]; bw = a["limit_bw"]
    printf "%-46s %-30s %-28s %s\n", "target", "measured", "limit on this machine", ""
    # 1. The tiled SGEMM without reqd_work_group_size within 10% of the version with it.
    r = ""
    if (num(a["sample_MatrixMul"]) && num(a["sample_MatrixMul-no-reqd"]))
      r = a["sample_MatrixMul"] / a["sample_MatrixMul-no-reqd"]
    lim = "-"
    if (num(a["sample_MatrixMul-no-reqd"]) && peak > 0)
      lim = sprintf("%.0f%% of the FMA peak", 100 * 2147483648 / (a["sample_MatrixMul-no-reqd"] * 1e-3) / 1e9 / peak)
    higher("MatrixMul without reqd / with reqd", r, 0.9, lim)
    # 2. hashcat against pocl.
    higher("hashcat MD5 / pocl", over("app_hashcat0_native", 0), 1.3, "vector-integer ports")
    higher("hashcat SHA-256 / pocl", over("app_hashcat1400_native", 0), 1.3, "vector-integer ports")
    # 3. Builds a pyopencl user waits for, against pocl.
    lower("build: reduction / pocl", over("build_reduction_ms", 0), 0.5, "code generation")
    lower("build: scan, 3 kernels / pocl", over("build_scan_ms", 0), 0.5, "code generation")
    lower("build: 200 kernels, 1 launched / pocl", over("build_many_kernels_ms", 0), 0.5,
          "code generation")
    # 5. clFFT against pocl.
    for (i = 1; i <= 2; i++) {
      k = i == 1 ? "app_clfft_1d" : "app_clfft_2d"
      # Memory-bound (docs/BENCHMARKS.md): 1D runs five passes over 8 MiB each way
      # (84 MB a transform, 5 N log2 N = 104.9 Mflop), 2D four over 32 MiB (268 MB,
      # 461.4 Mflop); the limit is that traffic at STREAM add.
      lim = "-"
      bound = i == 1 ? 104857600 * bw / 84e6 : 461373440 * bw / 268e6
      if (num(a[k]) && bw > 0) lim = sprintf("%.0f%% of %.1f (memory)", 100 * a[k] / bound, bound)
      higher(i == 1 ? "clFFT 1D 2^20 / pocl" : "clFFT 2D 2048^2 / pocl", over(k, 0), 3, lim)
    }
    # 6. NBody against hand-written C (gcc -O3 -march=native, OpenMP).
    r = ""
    if (num(a["sample_NBody"]) && num(a["nbody_c"]) && a["nbody_c"] > 0) {
      g = 5368709120 / (a["sample_NBody"] * 1e-3) / 1e9
      r = g / a["nbody_c"]
    }
    lim = "-"
    if (r != "" && peak > 0) lim = sprintf("%.0f%% of the FMA peak", 100 * g / peak)
    higher("NBody / hand-written C", r, 1.0, lim)
    printf "(FMA peak %s GFLOP/s, STREAM add %s GB/s, measured in this run; John the Ripper'"'"'s\n", peak, bw
    printf " formats and the pyopencl builds are measured apart: docs/BENCHMARKS.md)\n"
  }' "$results"
