#!/bin/sh
# `make bench`, remote section (docs/REMOTE.md): a remote device on this
# machine (aquilad on loopback, one compute unit) beside UCX's own
# ucx_perftest on the same transport: TCP (Aquila's links use UCX's peer
# error handling, which rules shared memory out: docs/REMOTE.md,
# "Transports"); ucx_perftest over shared memory for reference.
# Rows: the empty kernel's round trip against twice ucx_perftest's one-way
# stream latency, pipelined commands per second, 64 MiB write and read
# against ucx_perftest's stream bandwidth with 16 MiB messages, the size of
# the chunks Aquila's transfers are cut into (perftest sends one buffer
# again and again: with 1 MiB messages, which stay in the cache, it
# reported 5.9 GB/s where 4 and 16 MiB gave 2.0 in the same minute; a
# 64 MiB transfer cannot stay in the cache). Daemons and
# perftest servers use loopback only and are stopped by their pids.
# Usage: remote.sh BUILD_DIR AQUILA_ICD
build=${1:-build}
icd=$2
tmp=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 1' INT TERM HUP PIPE
head -c 32 /dev/urandom >"$tmp/key"
field() {
  sed -n "s/.*\"$1\": \"\{0,1\}\([^\",}]*\).*/\1/p"
}
median() {
  sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else print v[int((NR + 1) / 2)]}'
}
port() {
  echo $((20000 + ($$ * 13 + $(od -An -N2 -tu2 /dev/urandom)) % 40000))
}

# perftest TEST SIZE ITERATIONS: prints the "Final:" line's fields.
perftest() {
  p=$(port)
  timeout 120 ucx_perftest -p "$p" >"$tmp/perf-server" 2>&1 &
  spid=$!
  sleep 1
  timeout 120 ucx_perftest 127.0.0.1 -p "$p" -t "$1" -s "$2" -n "$3" 2>/dev/null | grep '^Final:'
  kill "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
}

pin0=""
pin1=""
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin0="taskset -c 0"
  pin1="taskset -c 1"
fi
printf '%-22s %12s %12s %14s %12s %12s\n' transport "rtt (us)" "perftest" "commands/s" "write GB/s" "read GB/s"
lat=$(perftest stream_lat 8 20000 | awk '{print $4}')
bw=$(perftest stream_bw 16777216 50 | awk '{print $7 / 1000}')
printf '%-22s %12s %12s %14s %12s %12s\n' "ucx_perftest, shm" "" \
  "$(awk -v l="$lat" 'BEGIN {printf "%.2f", 2 * l}')" "" "$bw" "$bw"
for transport in tcp; do
  export UCX_TLS=tcp
  # Final: iterations, latency 50%/avg/overall (us), bandwidth avg/overall (MB/s), rates;
  # medians of 3. perftest with the TCP segment sizes Aquila's processes use
  # (hsa/remote/link.c) unless the environment sets them for both; and, for
  # reference, with UCX's own.
  if [ -z "${UCX_TCP_TX_SEG_SIZE:-}${UCX_TCP_RX_SEG_SIZE:-}" ]; then
    ucx_bw=$(for i in 1 2 3; do perftest stream_bw 16777216 50 | awk '{print $7 / 1000}'; done | median)
    printf '%-22s %12s %12s %14s %12s %12s\n' "perftest, UCX segments" "" "" "" \
      "$ucx_bw" "$ucx_bw"
    export UCX_TCP_TX_SEG_SIZE=64K UCX_TCP_RX_SEG_SIZE=1M
    segments_set=1
  fi
  # Runs alternate with perftest's, medians of 5: on two cores, client and
  # server now and then share one, and a run's bandwidth then drops from
  # about 5 to 1.5 GB/s (perftest's and Aquila's alike, Zen 5 VM,
  # 2026-12-02); batches of one then the other made the ratio a draw of
  # where each batch landed. Not pinned: the client's network thread and
  # its waiting thread would then share one core (commands/s fell from
  # about 120,000 to 67,000).
  p=$(port)
  "$build/aquilad" --listen "127.0.0.1:$p" --key-file "$tmp/key" --units 1 >"$tmp/daemon" 2>&1 &
  dpid=$!
  pids="$pids $dpid"
  i=0
  while [ $i -lt 50 ] && ! grep -q serving "$tmp/daemon"; do sleep 0.1; i=$((i + 1)); done
  : >"$tmp/runs"
  : >"$tmp/lat"
  : >"$tmp/bw"
  for run in 1 2 3 4 5; do
    perftest stream_lat 8 20000 | awk '{print $4}' >>"$tmp/lat"
    perftest stream_bw 16777216 50 | awk '{print $7 / 1000}' >>"$tmp/bw"
    OCL_ICD_VENDORS=$icd AQUILA_REMOTE=127.0.0.1:$p AQUILA_REMOTE_KEY_FILE=$tmp/key \
      timeout 300 "$build/bench/remote" >>"$tmp/runs"
    echo >>"$tmp/runs"
  done
  lat=$(median <"$tmp/lat")
  bw=$(median <"$tmp/bw")
  if [ -n "${segments_set:-}" ]; then unset UCX_TCP_TX_SEG_SIZE UCX_TCP_RX_SEG_SIZE; fi
  kill "$dpid" 2>/dev/null
  rtt=$(field rtt_us <"$tmp/runs" | median)
  rate=$(field commands_per_s <"$tmp/runs" | median)
  w=$(field write_GBs <"$tmp/runs" | median)
  r=$(field read_GBs <"$tmp/runs" | median)
  printf '%-22s %12s %12s %14s %12s %12s\n' "Aquila, $transport" "$rtt" "" "$rate" "$w" "$r"
  printf '%-22s %12s %12s %14s %12s %12s\n' "ucx_perftest, $transport" "" \
    "$(awk -v l="$lat" 'BEGIN {printf "%.2f", 2 * l}')" "" "$bw" "$bw"
  awk -v rtt="$rtt" -v l="$lat" -v rate="$rate" -v w="$w" -v r="$r" -v bw="$bw" -v t="$transport" 'BEGIN {
    printf "  %s: round trip %.1fx perftest (target <= 2x + 5 us: %.1f us); %.0f commands/s (target 100000); write %.2f, read %.2f of perftest (target 0.8)\n",
      t, rtt / (2 * l), 4 * l + 5, rate, w / bw, r / bw }'
done
unset UCX_TLS

# One NDRange over the local device and one daemon (AQUILA_SPREAD=1), each
# with one compute unit, against the local device alone with one unit:
# alternating, medians of 3. Each agent on a core of its own, as on two
# machines (the application's process on core 0, the daemon on core 1;
# taskset): unpinned, "one unit" alone takes both cores of a 2-core
# machine, its waiting thread running work-groups beside the unit.
echo
printf '%-24s %14s %14s %8s\n' "spread (1 core each)" "one agent ms" "two agents ms" speed-up
p=$(port)
$pin1 "$build/aquilad" --listen "127.0.0.1:$p" --key-file "$tmp/key" --units 1 >"$tmp/daemon2" 2>&1 &
dpid=$!
pids="$pids $dpid"
i=0
while [ $i -lt 50 ] && ! grep -q serving "$tmp/daemon2"; do sleep 0.1; i=$((i + 1)); done
for s in "nbody --size 16384 --iterations 3" "matrixmul --size 1024 --iterations 3" \
  "binomialoption --size 16384 --iterations 3"; do
  : >"$tmp/one"
  : >"$tmp/two"
  for round in 1 2 3; do
    OCL_ICD_VENDORS=$icd AQUILA_CPU_UNITS=1 timeout 300 $pin0 "$build/samples/"$s --json |
      field time_ms >>"$tmp/one"
    OCL_ICD_VENDORS=$icd AQUILA_CPU_UNITS=1 AQUILA_SPREAD=1 AQUILA_REMOTE=127.0.0.1:$p \
      AQUILA_REMOTE_KEY_FILE=$tmp/key timeout 300 $pin0 "$build/samples/"$s --all-devices --json |
      field time_ms >>"$tmp/two"
  done
  one=$(median <"$tmp/one")
  two=$(median <"$tmp/two")
  printf '%-24s %14s %14s %8s\n' "${s%% *}" "$one" "$two" \
    "$(awk -v a="$one" -v b="$two" 'BEGIN {printf "%.2fx", a / b}')"
done
kill "$dpid" 2>/dev/null
