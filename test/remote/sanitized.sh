#!/bin/sh
# `make check-tsan`'s remote part (test/sanitize.mk): API tests with a remote
# device as the only device, against an aquilad of the same sanitized build
# on loopback, so that the client's and the daemon's threads (the network
# thread, waiters taking its turn, completers) run under the sanitizer too.
# Prints "ok" / "not ok" lines named remote_*, which run-tests.sh counts; a
# test that exits non-zero (66: the sanitizer reported) without a "not ok"
# line, and any report of the daemon's, is a failure. Every wait is bounded;
# the daemon is stopped by its own pid.
# Usage: sanitized.sh BUILD LAUNCH TEST...
#   LAUNCH: what the sanitizer needs to start the daemon (setarch -R for
#   TSan), may be empty; TEST: the API tests' sanitizer wrappers.
set -u
build=$1
launch=$2
shift 2
dir=$(mktemp -d)
pid=""
. "$(dirname "$0")/daemon.sh"
cleanup() {
  [ -n "$pid" ] && stop_pid "$pid"
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 1' INT TERM HUP PIPE
# UCX's memory hooks (its interception of malloc and mmap) and the
# sanitizer's interceptors crash each other at the first connection: off
# on both ends.
export UCX_MEM_EVENTS=no UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
head -c 32 /dev/urandom >"$dir/key"
chmod 600 "$dir/key"

# shellcheck disable=SC2086 # LAUNCH is words
if ! start_local_daemon "$build/aquilad" "$dir/key" "$dir/daemon.log" 2 $launch; then
  echo "not ok remote_daemon_starts: $(cat "$dir/daemon.log")"
  pid=""
  exit 0
fi

for t; do
  name=$(basename "$t")
  AQUILA_LOCAL_DEVICE=0 AQUILA_REMOTE=$addr AQUILA_REMOTE_KEY_FILE=$dir/key \
    timeout 900 "$t" >"$dir/out" 2>&1
  rc=$?
  sed -e 's/^ok /ok remote_/' -e 's/^not ok /not ok remote_/' "$dir/out"
  if ! grep -q '^ok ' "$dir/out"; then
    echo "not ok remote_$name: no case ran on the remote device (status $rc)"
  elif [ $rc -ne 0 ] && ! grep -q '^not ok ' "$dir/out"; then
    echo "not ok remote_$name: exited with status $rc"
  fi
done

kill "$pid" 2>/dev/null
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$pid" 2>/dev/null; then
  echo "not ok remote_daemon_stops: still running 30 s after SIGTERM"
elif grep -q 'WARNING: ThreadSanitizer\|ERROR: AddressSanitizer\|runtime error:' "$dir/daemon.log"; then
  echo "not ok remote_daemon_sanitizer: the daemon's reports follow"
  sed 's/^/  /' "$dir/daemon.log"
else
  echo "ok remote_daemon_sanitizer"
fi
pid=""
exit 0
