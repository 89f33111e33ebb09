#!/bin/sh
# Aquila on CPUs other than this one, under QEMU's user mode (Debian
# qemu-user), which emulates a CPU for one process: Haswell (AVX2 and FMA,
# no AVX-512: x86-64-v3) and Nehalem (SSE4.2, no AVX: x86-64-v2). For each:
# samples through the loader, verified, with their kernels built for the
# emulated CPU's level (the compiler helper runs natively, so its CPU is not
# the application's); a binary saved on this machine, loaded there (its
# code for this CPU is not run: it is rebuilt from the bitcode it carries);
# the HSA sample with a fat binary of the three levels; and an aquilad
# under the emulation as the only device (samples, API tests) and beside
# the local device for one NDRange over both. Needs BUILD and
# OCL_ICD_VENDORS (make check-cpus sets them). Prints "ok NAME" /
# "not ok NAME" lines for test/run-tests.sh.
build=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../remote/daemon.sh"
if ! command -v qemu-x86_64 >/dev/null 2>&1; then
  echo "not ok qemu_user_installed: qemu-x86_64 not found (make check-cpus installs qemu-user)"
  exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
head -c 32 /dev/urandom >"$dir/key"
chmod 600 "$dir/key"
# QEMU warns about each host feature its TCG does not emulate.
quiet() { grep -v "TCG doesn't support" "$@"; }

# A binary saved here, with this CPU's code and the bitcode.
AQUILA_CACHE_DIR="$dir/cache-native" "$build/samples/vectoradd" --size 1000 \
  --save-binary "$dir/native.bin" >/dev/null 2>&1

for cpu in Haswell Nehalem; do
  case $cpu in
  Haswell) level=x86-64-v3 ;;
  Nehalem) level=x86-64-v2 ;;
  esac
  cache="$dir/cache-$cpu"
  for s in "vectoradd --size 100000" "matrixmul --size 128" "nbody --size 512" \
    "reduction --size 100001" "bitonicsort --size 4096" "histogram --size 10000" \
    "convolution --size 128 --radius 2" "transpose --size 256" "sobelfilter --image --size 128"; do
    name=${s%% *}
    # shellcheck disable=SC2086
    AQUILA_DEBUG=1 AQUILA_CACHE_DIR="$cache" timeout 300 qemu-x86_64 -cpu $cpu \
      "$build/samples/"$s >"$dir/out" 2>&1
    if grep -q verified "$dir/out" && grep -q "for $level" "$dir/out"; then
      echo "ok ${cpu}_$name"
    else
      echo "not ok ${cpu}_$name: $(quiet "$dir/out" | tail -3)"
    fi
  done
  # The binary made on this machine: its native code is not this CPU's.
  AQUILA_DEBUG=1 AQUILA_CACHE_DIR="$cache" timeout 300 qemu-x86_64 -cpu $cpu \
    "$build/samples/vectoradd" --size 1000 --binary "$dir/native.bin" >"$dir/out" 2>&1
  if grep -q verified "$dir/out" && grep -q "for $level" "$dir/out"; then
    echo "ok ${cpu}_binary_from_another_cpu_rebuilt"
  else
    echo "not ok ${cpu}_binary_from_another_cpu_rebuilt: $(quiet "$dir/out" | tail -3)"
  fi
  if out=$(timeout 300 qemu-x86_64 -cpu $cpu "$build/samples/hsa-vectoradd" \
    "$build/samples/hsa-vectoradd.fatbin" 100000 2>&1) && echo "$out" | grep -q -i verified; then
    echo "ok ${cpu}_hsa_sample"
  else
    echo "not ok ${cpu}_hsa_sample: $(echo "$out" | quiet | tail -2)"
  fi

  # A daemon on the emulated CPU: it names that CPU, the client builds for it.
  if ! start_local_daemon "$build/aquilad" "$dir/key" "$dir/daemon.log" 1 qemu-x86_64 -cpu $cpu; then
    echo "not ok ${cpu}_daemon_starts: $(quiet "$dir/daemon.log" | tail -2)"
    continue
  fi
  remote=$addr
  dpid=$pid
  export AQUILA_REMOTE_KEY_FILE="$dir/key" AQUILA_REMOTE_TIMEOUT_MS=20000
  for s in "vectoradd --size 100000" "matrixmul --size 128" "nbody --size 512" \
    "reduction --size 100001"; do
    name=${s%% *}
    # shellcheck disable=SC2086
    AQUILA_DEBUG=1 AQUILA_CACHE_DIR="$cache-client" AQUILA_LOCAL_DEVICE=0 AQUILA_REMOTE=$remote \
      timeout 300 "$build/samples/"$s >"$dir/out" 2>&1
    if grep -q verified "$dir/out" && grep -q "remote, $remote" "$dir/out"; then
      echo "ok ${cpu}_daemon_$name"
    else
      echo "not ok ${cpu}_daemon_$name: $(tail -3 "$dir/out")"
    fi
  done
  for t in test_buffers test_ndrange; do
    if AQUILA_CACHE_DIR="$cache-client" AQUILA_LOCAL_DEVICE=0 AQUILA_REMOTE=$remote \
      timeout 600 "$build/test/api/$t" >"$dir/out" 2>&1 && ! grep -q '^not ok' "$dir/out"; then
      echo "ok ${cpu}_daemon_api_$t ($(grep -c '^ok ' "$dir/out") cases)"
    else
      echo "not ok ${cpu}_daemon_api_$t: $(grep '^not ok' "$dir/out" | head -3) $(tail -2 "$dir/out")"
    fi
  done
  # One NDRange over this machine's device and the emulated one.
  AQUILA_SPREAD=1 AQUILA_DEBUG=1 AQUILA_CACHE_DIR="$cache-client" AQUILA_REMOTE=$remote \
    timeout 300 "$build/samples/matrixmul" --size 256 --all-devices >"$dir/out" 2>&1
  if grep -q verified "$dir/out" && grep "spread:" "$dir/out" | grep -q "remote, $remote"; then
    echo "ok ${cpu}_ndrange_over_local_and_daemon"
  else
    echo "not ok ${cpu}_ndrange_over_local_and_daemon: $(grep -i 'spread\|verif\|error' "$dir/out" | head -3)"
  fi
  unset AQUILA_REMOTE_KEY_FILE AQUILA_REMOTE_TIMEOUT_MS
  stop_pid "$dpid"
done
# Failures are the "not ok" lines above.
exit 0
