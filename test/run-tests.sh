#!/bin/sh
# Runs each test program given as an argument and counts its cases.
# Each program prints "ok NAME" / "not ok NAME" lines (test/check.h); a
# program that crashes, times out or exits non-zero with no "not ok" line
# counts as one failed case. The last line is "N passed, N failed".
#
# A program still running after AQUILA_TEST_TIMEOUT seconds (300) is
# stopped (status 124, as timeout(1) gives), after its state is printed:
# its threads and the processes under it, with what each waits in, and
# every thread's stack where gdb is installed. A hang seen once on a CI
# machine is otherwise only a status.
passed=0
failed=0
limit=${AQUILA_TEST_TIMEOUT:-300}
log=$(mktemp)
flag=$(mktemp)

# describe_hang PID: the process's threads, its descendants, their stacks.
describe_hang() {
  echo "  still running after ${limit} s; its threads:"
  ps -L -o tid=,stat=,wchan:32=,time=,comm= -p "$1" 2>/dev/null | sed 's/^/    /'
  echo "  processes under it:"
  ps -eo pid=,ppid=,stat=,wchan:32=,time=,args= 2>/dev/null |
    awk -v root="$1" '{ parent[$1] = $2; line[$1] = $0 }
      END { for (p in line) { q = p; while (q in parent && q != root && q > 1) q = parent[q];
                              if (q == root && p != root) print "    " line[p] } }'
  if command -v gdb >/dev/null 2>&1; then
    echo "  stacks (gdb):"
    timeout 60 gdb -p "$1" -batch -ex 'thread apply all bt 12' 2>/dev/null |
      grep -E '^(Thread|#)' | head -n 200 | sed 's/^/    /'
  fi
}

for t in "$@"; do
  printf '== %s\n' "$t"
  : >"$flag"
  "$t" >"$log" 2>&1 &
  pid=$!
  # The watchdog: polls once a second, so that it ends by itself soon
  # after the test (it is also stopped below, by its pid).
  (
    i=0
    while [ "$i" -lt "$limit" ]; do
      kill -0 "$pid" 2>/dev/null || exit 0
      sleep 1
      i=$((i + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo timeout >"$flag"
      describe_hang "$pid" >>"$log" 2>&1
      kill -TERM "$pid" 2>/dev/null
      sleep 5
      kill -KILL "$pid" 2>/dev/null
    fi
  ) &
  watchdog=$!
  wait "$pid" 2>/dev/null
  rc=$?
  # Its sleep first (by its parent's pid), then the watchdog itself.
  pkill -P "$watchdog" sleep 2>/dev/null
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  [ -s "$flag" ] && rc=124
  cat "$log"
  ok=$(grep -c '^ok ' "$log")
  bad=$(grep -c '^not ok ' "$log")
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    echo "not ok $t: exited with status $rc"
    bad=1
  fi
  passed=$((passed + ok))
  failed=$((failed + bad))
done
rm -f "$log" "$flag"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
