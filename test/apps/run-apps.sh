#!/bin/sh
# Runs test/apps/<name>.sh for each name given, each under a time limit, and
# prints a table: application, PASS/FAIL, detail, seconds. Logs go to
# $BUILD/apps/logs/<platform>/<name>.log.
: "${APPS_TIMEOUT:=900}"
dir=$(dirname "$0")
platform=$(basename "$ICD" .icd)
# REMOTE=1: the applications run on a remote device alone (docs/REMOTE.md),
# served by an aquilad this script starts on loopback and stops by its pid.
daemon=""
if [ "${REMOTE:-0}" = 1 ]; then
    platform="$platform-remote"
    mkdir -p "$BUILD/apps"
    key=$(mktemp)
    head -c 32 /dev/urandom > "$key"
    port=$((20000 + ($$ * 11 + $(od -An -N2 -tu2 /dev/urandom)) % 40000))
    "$BUILD/aquilad" --listen "127.0.0.1:$port" --key-file "$key" > "$BUILD/apps/aquilad.log" 2>&1 &
    daemon=$!
    trap 'kill "$daemon" 2>/dev/null; rm -f "$key"' EXIT INT TERM
    i=0
    while [ $i -lt 50 ] && ! grep -q serving "$BUILD/apps/aquilad.log"; do sleep 0.1; i=$((i + 1)); done
    export AQUILA_REMOTE="127.0.0.1:$port" AQUILA_REMOTE_KEY_FILE="$key" AQUILA_LOCAL_DEVICE=0
fi
logs="$BUILD/apps/logs/$platform"
mkdir -p "$logs"
results="$logs/results.txt"
: > "$results"
start_all=$(date +%s)
for app in "$@"; do
    t0=$(date +%s)
    echo "apps: $app on $platform (log $logs/$app.log)"
    timeout -k 10 "$APPS_TIMEOUT" sh "$dir/$app.sh" > "$logs/$app.log" 2>&1
    rc=$?
    t1=$(date +%s)
    line=$(grep '^APP ' "$logs/$app.log" | tail -n 1)
    if [ -z "$line" ]; then
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then line="APP $app FAIL timed out after ${APPS_TIMEOUT}s"
        else line="APP $app FAIL no result line (exit status $rc)"; fi
    fi
    printf '%s\t%s\n' "$((t1 - t0))" "$line" >> "$results"
done
end_all=$(date +%s)
echo
echo "Applications on $platform ($ICD${daemon:+, a remote device alone: aquilad on $AQUILA_REMOTE})"
printf '| %-9s | %-4s | %-7s | %s\n' application result seconds detail
printf '|-----------|------|---------|--------\n'
pass=0; fail=0
while IFS="$(printf '\t')" read -r secs line; do
    name=$(echo "$line" | cut -d' ' -f2)
    res=$(echo "$line" | cut -d' ' -f3)
    detail=$(echo "$line" | cut -d' ' -f4-)
    printf '| %-9s | %-4s | %7s | %s\n' "$name" "$res" "$secs" "$detail"
    if [ "$res" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done < "$results"
echo "$pass passed, $fail failed, $((end_all - start_all)) s in all"
