#!/bin/sh
# Runs each test program given as an argument and counts its cases.
# Each program prints "ok NAME" / "not ok NAME" lines (test/check.h); a
# program that crashes, times out or exits non-zero with no "not ok" line
# counts as one failed case. The last line is "N passed, N failed".
passed=0
failed=0
limit=${AQUILA_TEST_TIMEOUT:-300}
log=$(mktemp)
for t in "$@"; do
  printf '== %s\n' "$t"
  timeout "$limit" "$t" >"$log" 2>&1
  rc=$?
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
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
