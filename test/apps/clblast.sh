#!/bin/sh
# CLBlast: its own correctness tests (clblast_test_*, each routine against the
# reference CBLAS, default reduced test set, i.e. without -full_test) for a
# representative subset of the 50 routines (levels 1, 2, 3, batched, extras;
# xconvgemm is left out: 80 s alone), and one tuner (clblast_tuner_xaxpy on a
# tenth of its configurations, every one checked against the reference kernel).
APP=clblast
. "$(dirname "$0")/common.sh"
need_pkgs clblast-tests clblast-utils
ROUTINES="xaxpy xdot xnrm2 xamax xswap xgemv xger xsymv xtrsv xgemm xsymm xsyrk xtrsm xgemmbatched xomatcopy xhad xim2col"
pass=0; fail=0; failed=""; ntests=0; reasons=""
cd "$APP_TMP"
for r in $ROUTINES; do
    out=$(with_count timeout 300 clblast_test_$r -platform 0 -device 0 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
    echo "$out"
    p=$(echo "$out" | awk '/test\(s\) passed/ { n += $1 } END { print n + 0 }')
    f=$(echo "$out" | awk '/test\(s\) failed/ { n += $1 } END { print n + 0 }')
    ntests=$((ntests + p))
    if [ "$p" -gt 0 ] && [ "$f" -eq 0 ] && ! echo "$out" | grep -q -i 'fatal\|error:' && echo "$out" | grep -q "Completed all test-cases"; then
        pass=$((pass + 1)); echo "routine $r ok ($p tests)"
    else
        fail=$((fail + 1)); why=$(echo "$out" | grep -m1 -i 'fatal\|error:')
        echo "routine $r FAIL ($p passed, $f failed) $why"
        case "$why" in *"did not reach a fixpoint"*) why="instcombine fixpoint abort";; esac
        why=$(echo "$why" | cut -c1-50)
        failed="$failed $r"; reasons=$(printf '%s\n%s' "$reasons" "$why" | sort -u | grep .)
    fi
done
out=$(with_count timeout 300 clblast_tuner_xaxpy -platform 0 -device 0 -n 1048576 -fraction 0.1 -runs 2 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
echo "$out"
ok=$(echo "$out" | grep -c "results match")
if [ "$ok" -gt 0 ] && echo "$out" | grep -q "reference OK" && ! echo "$out" | grep -q -i "results differ\|error\|fatal"; then
    pass=$((pass + 1)); echo "tuner xaxpy ok ($ok configurations)"
else
    fail=$((fail + 1)); failed="$failed tuner_xaxpy"; echo "tuner xaxpy FAIL"
fi
reasons=$(echo "$reasons" | paste -sd';')
app_end $pass $fail "$(echo $ROUTINES | wc -w) routines ($ntests tests) + tuner_xaxpy${failed:+; failed:$failed${reasons:+ ($reasons)}}"
