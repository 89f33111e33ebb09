#!/bin/sh
# Remote agents end to end (docs/REMOTE.md), a test of make check: starts
# aquilad daemons on loopback (UCX's default transports, and UCX_TLS=tcp),
# runs test_remote against them, a client with the wrong key, samples and
# API tests with a remote device as the only device, malformed messages
# (test_remote_link), and a daemon killed while a kernel runs. Every wait
# is bounded; every daemon is stopped by its own pid at the end.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/test/remote
dir=$(mktemp -d)
pids=""
. "$(dirname "$0")/daemon.sh"
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null; done
  for p in $pids; do stop_pid "$p"; done
  rm -rf "$dir"
}
trap cleanup EXIT
# A reader that went away (`run.sh | head`) or a hang-up must not leave
# daemons behind either.
trap 'cleanup; trap - EXIT; exit 1' INT TERM HUP PIPE
head -c 32 /dev/urandom >"$dir/key"
head -c 32 /dev/urandom >"$dir/wrong"
chmod 600 "$dir/key" "$dir/wrong"

# start_daemon NAME UCX_TLS: sets $addr and $pid; tries a few ports.
start_daemon() {
  if start_local_daemon "$BUILD/aquilad" "$dir/key" "$dir/$1.log" 1 env UCX_TLS="$2"; then
    pids="$pids $pid"
    return 0
  fi
  echo "not ok start_daemon_$1: $(cat "$dir/$1.log")"
  exit 1
}

start_daemon shm all
a=$addr
start_daemon tcp tcp
b=$addr
export AQUILA_REMOTE_KEY_FILE="$dir/key" AQUILA_REMOTE_TIMEOUT_MS=5000

AQUILA_DEBUG=1 AQUILA_REMOTE=$a,$b timeout 120 "$BIN/test_remote" 2>"$dir/debug"
# buffer_across_devices moved its buffer from one daemon to the other
# without the bytes passing through the client.
if grep -q "moved from .*($a).* to .*($b).* directly" "$dir/debug" ||
  grep -q "moved from .*remote, $a) to .*remote, $b) directly" "$dir/debug"; then
  echo "ok buffer_moved_daemon_to_daemon"
else
  echo "not ok buffer_moved_daemon_to_daemon: $(grep -i 'moved\|directly' "$dir/debug" | head -3)"
fi

# One NDRange spread over the local device and both daemons (AQUILA_SPREAD=1).
AQUILA_SPREAD=1 AQUILA_DEBUG=1 AQUILA_REMOTE=$a,$b timeout 120 "$BIN/test_remote" spread \
  2>"$dir/spread" | tee "$dir/spread.out"
if grep "kernel 'mix' spread" "$dir/spread" | grep -q "remote, $a" &&
  grep "kernel 'mix' spread" "$dir/spread" | grep -q "remote, $b"; then
  echo "ok ndrange_spread_over_three_devices"
else
  echo "not ok ndrange_spread_over_three_devices: $(grep -i spread "$dir/spread" | head -3)"
fi
# Which written buffers came back by their footprint's ranges (spread.c).
footprint_ok=1
for want in "mix:3 of 3" "offset_rows:1 of 1" "wraps:0 of 1" "columns:0 of 1" "in_loop:0 of 1" \
  "put:1 of 1"; do
  kernel=${want%%:*}
  if ! grep "kernel '$kernel' spread" "$dir/spread" | grep -q "reading back ${want#*:} written"; then
    echo "  $kernel: $(grep "kernel '$kernel' spread" "$dir/spread" | head -1), expected ${want#*:}"
    footprint_ok=0
  fi
done
if [ $footprint_ok = 1 ] && grep -q "^ok spread_by_footprint" "$dir/spread.out"; then
  echo "ok spread_reads_back_footprints"
else
  echo "not ok spread_reads_back_footprints: $(grep -v '^ok' "$dir/spread.out" | head -3)"
fi

# A client with the wrong key: the daemon is left out, quickly.
start=$(date +%s)
out=$(AQUILA_REMOTE=$a AQUILA_REMOTE_KEY_FILE="$dir/wrong" AQUILA_DEBUG=1 timeout 30 \
  "$BIN/test_remote" count 2>"$dir/wrong.log")
took=$(($(date +%s) - start))
# The client says why (its check of the daemon's proof fails first), not a
# lost connection.
if [ "$out" = "devices 1" ] && [ $took -le 10 ] &&
  grep -q "does not hold the key" "$dir/wrong.log"; then
  echo "ok wrong_key_refused"
else
  echo "not ok wrong_key_refused: '$out' after ${took}s: $(grep -i remote "$dir/wrong.log" | head -2)"
fi

# A daemon whose UCX TCP segment sizes differ from the client's: refused at
# the handshake, before UCX would abort the receiver of a segment larger
# than its own (it did, in both directions); the client lives on, and one
# with the same sizes is served. The daemon has UCX's own sizes, the client
# Aquila's (64K sent, 1M received) unless it says UCX's too.
export UCX_TCP_RX_SEG_SIZE=64K UCX_TCP_TX_SEG_SIZE=8K
start_daemon segments tcp
unset UCX_TCP_RX_SEG_SIZE UCX_TCP_TX_SEG_SIZE
seg=$addr
segpid=$pid
differ=$(UCX_TLS=tcp AQUILA_REMOTE=$seg AQUILA_DEBUG=1 timeout 30 "$BIN/test_remote" count \
  2>"$dir/segments.log")
same=$(UCX_TLS=tcp UCX_TCP_RX_SEG_SIZE=65536 UCX_TCP_TX_SEG_SIZE=8k AQUILA_REMOTE=$seg \
  timeout 30 "$BIN/test_remote" count 2>/dev/null)
if [ "$differ" = "devices 1" ] && [ "$same" = "devices 2" ] &&
  grep -q "the daemon refused this client: its UCX TCP segment sizes" "$dir/segments.log" &&
  kill -0 "$segpid" 2>/dev/null; then
  echo "ok tcp_segment_sizes_must_agree"
else
  echo "not ok tcp_segment_sizes_must_agree: '$differ' '$same' $(grep -i segment "$dir/segments.log" | head -2)"
fi

# The settings from a configuration file: a key file named relative to it,
# the environment over the file, lines that are no setting left out.
mkdir -p "$dir/conf"
cp "$dir/key" "$dir/conf/k"
printf '# remote agents\nAQUILA_REMOTE="%s"\n  AQUILA_REMOTE_KEY_FILE = k\nNOT_A_SETTING=1\ngarbage\n' \
  "$a" >"$dir/conf/remote.conf"
one=$(env -u AQUILA_REMOTE_KEY_FILE AQUILA_REMOTE_CONFIG="$dir/conf/remote.conf" AQUILA_DEBUG=1 \
  timeout 30 "$BIN/test_remote" count 2>"$dir/conf.log")
two=$(env -u AQUILA_REMOTE_KEY_FILE AQUILA_REMOTE_CONFIG="$dir/conf/remote.conf" \
  AQUILA_REMOTE=$a,$b timeout 30 "$BIN/test_remote" count 2>/dev/null)
none=$(env -u AQUILA_REMOTE_KEY_FILE AQUILA_REMOTE_CONFIG="$dir/conf/missing.conf" \
  timeout 30 "$BIN/test_remote" count 2>/dev/null)
if [ "$one" = "devices 2" ] && [ "$two" = "devices 3" ] && [ "$none" = "devices 1" ] &&
  grep -q "remote.conf:4: 'NOT_A_SETTING' is not a setting" "$dir/conf.log" &&
  grep -q "remote.conf:5: not NAME=VALUE" "$dir/conf.log"; then
  echo "ok settings_from_configuration_file"
else
  echo "not ok settings_from_configuration_file: '$one' '$two' '$none' $(grep remote.conf "$dir/conf.log" | head -3)"
fi

# Malformed and unauthenticated messages, straight over UCX.
timeout 60 "$BIN/test_remote_link" "$a" "$dir/key"

# Samples and API tests with a remote device as the only device.
for s in vectoradd matrixmul nbody bitonicsort reduction transpose histogram; do
  if AQUILA_LOCAL_DEVICE=0 AQUILA_REMOTE=$b timeout 120 "$BUILD/samples/$s" >"$dir/out" 2>&1 &&
    grep -q verified "$dir/out" && grep -q "remote, $b" "$dir/out"; then
    echo "ok sample_on_remote_$s"
  else
    echo "not ok sample_on_remote_$s: $(tail -3 "$dir/out")"
  fi
done
# (test_subdevices and test_platform_device ask for partitions, which a
# remote device has not; test_robust sets the local device's memory size.)
for t in ${REMOTE_API_TESTS:-test_buffers test_events test_ndrange test_program_kernel test_context_queue test_threads test_images test_misuse test_spirv test_svm}; do
  if AQUILA_LOCAL_DEVICE=0 AQUILA_REMOTE=$a timeout 300 "$BUILD/test/api/$t" >"$dir/out" 2>&1 &&
    ! grep -q '^not ok' "$dir/out"; then
    echo "ok api_on_remote_$t ($(grep -c '^ok ' "$dir/out") cases)"
  else
    echo "not ok api_on_remote_$t: $(grep '^not ok' "$dir/out" | head -5 | tr '\n' ' ')"
  fi
done

# Tiers on a remote device: quick-tier code first, then the vector version
# built in the background and loaded on the daemon, both launches right
# (test_compiler's child; every kernel taken for a large one).
mkdir -p "$dir/tiers-cache"
if AQUILA_LOCAL_DEVICE=0 AQUILA_REMOTE=$a AQUILA_DEBUG=1 AQUILA_QUICK_TIER_MIN_INSTRUCTIONS=0 \
  AQUILA_CACHE_DIR="$dir/tiers-cache" timeout 120 "$BUILD/test/compiler/test_compiler" \
  --tiers-child >"$dir/out" 2>"$dir/err" &&
  grep -q "launched with its quick tier's scalar code" "$dir/err" &&
  grep -q "launched with its vector version" "$dir/err"; then
  echo "ok tiers_on_a_remote_device"
else
  echo "not ok tiers_on_a_remote_device: $(grep -v '^ok' "$dir/out" | head -3) $(tail -3 "$dir/err")"
fi

# A daemon killed while its kernel runs: commands fail, nothing hangs.
start_daemon lost all
c=$addr
cpid=$pid
# The test restarts it (exec, so that its pid is the daemon's) and stops it.
AQUILA_REMOTE=$c,$b AQUILA_TEST_DAEMON_PID=$cpid AQUILA_REMOTE_TIMEOUT_MS=2000 \
  AQUILA_TEST_DAEMON_RESTART="exec $BUILD/aquilad --listen $c --key-file $dir/key --units 1 >$dir/again.log 2>&1" \
  timeout 90 "$BIN/test_remote" lost

# The daemons stop on SIGTERM.
stopped=1
for p in $pids; do
  kill -0 "$p" 2>/dev/null || continue
  kill "$p"
  i=0
  while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  kill -0 "$p" 2>/dev/null && stopped=0
done
[ $stopped = 1 ] && echo "ok daemons_stop_on_sigterm" || echo "not ok daemons_stop_on_sigterm"
