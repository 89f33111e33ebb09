#!/bin/sh
# piglit's OpenCL profile (Debian's piglit: 710 tests - custom, api@*,
# program@* through cl-program-tester, interop tests), run by piglit's runner
# two at a time. To keep it near five minutes on two cores, the generated
# builtin tests run for uint, long, float and double only (char, uchar, short,
# ushort, int and ulong are left out: the same builtins, another type). A failure listed in test/apps/piglit-expected-failures.txt
# (name, then "# reason") does not fail the application; skips are reported.
APP=piglit
. "$(dirname "$0")/common.sh"
need_pkgs piglit
expected="$APPS_DIR/piglit-expected-failures.txt"
cd "$APP_TMP"
LD_PRELOAD="$LAUNCHCOUNT" HOME="$APP_TMP" timeout 840 piglit run -c -j 2 \
    -x 'builtin-(char|uchar|short|ushort|int|ulong)-' cl "$APP_TMP/results" > run.log 2>&1
rc=$?
tail -n 3 run.log
piglit summary console "$APP_TMP/results" > summary.txt 2>&1
# summary lines are "cl/<test>[/<subtest>]: status"; names here use piglit's "@".
grep -E ': (fail|crash|timeout|warn|incomplete|dmesg-warn|dmesg-fail)$' summary.txt | sed 's|^cl/||; s|/|@|g' > bad.txt
npass=$(grep -c ': pass$' summary.txt)
nskip=$(grep -c ': skip$' summary.txt)
nbad=$(wc -l < bad.txt)
unexpected=""; nexp=0; nunexp=0
# is_expected NAME: an entry of the list covers the test and its subtests.
is_expected() {
    grep -v '^#' "$expected" 2>/dev/null | sed 's/[[:space:]]*#.*//' | grep . | {
        while IFS= read -r e; do case "$1" in "$e"|"$e@"*) exit 0;; esac; done; exit 1; }
}
while IFS= read -r line; do
    name=${line%: *}; status=${line##*: }
    echo "piglit $status: $name"
    if is_expected "$name"; then nexp=$((nexp + 1))
    else nunexp=$((nunexp + 1)); unexpected="$unexpected $name($status)"; fi
done < bad.txt
[ $rc -eq 124 ] && { nunexp=$((nunexp + 1)); unexpected="$unexpected runner-timed-out"; }
echo "pass $npass, skip $nskip, fail/crash $nbad ($nexp expected)"
app_end $((npass + nexp)) $nunexp "profile cl less 6 integer types' builtins, tests+subtests: $npass pass, $nskip skip, $nexp expected failures${unexpected:+; unexpected:$unexpected}"
