#!/bin/sh
# make check-vectorize: runs the given test programs (test/run-tests.sh)
# with AQUILA_VECTORIZE=check, so that every vectorized kernel they run is
# also run scalar and compared (README); a difference the self-check
# reports counts as a failure, beside the programs' own cases. The
# deliberate difference of test_vector_check (kernel 'neighbours') is its
# own test's and does not count. The last line is "N passed, N failed".
out=$(mktemp)
AQUILA_VECTORIZE=check sh "$(dirname "$0")/run-tests.sh" "$@" >"$out" 2>&1
grep -v '^[0-9]* passed, [0-9]* failed$' "$out"
tally=$(tail -n 1 "$out")
passed=${tally%% passed*}
failed=${tally#*passed, }
failed=${failed%% failed*}
differences=$(grep 'AQUILA_VECTORIZE=check: kernel' "$out" | grep -v "kernel 'neighbours'" |
  grep -c 'differ in\|faulted where')
compared=$(grep -o '[0-9]* kernel commands compared' "$out" | awk '{ n += $1 } END { print n + 0 }')
rm -f "$out"
echo "vectorizer self-check: $compared kernel commands compared, $differences differences"
failed=$((failed + differences))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
