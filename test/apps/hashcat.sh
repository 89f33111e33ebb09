#!/bin/sh
# hashcat: backend info, the self-test (part of every attack), a short
# benchmark of modes 0 (MD5) and 100 (SHA1), a mask attack cracking a known MD5
# and a wordlist + rules attack cracking a known SHA1. HOME/XDG directories,
# session and potfile are private to the run, so every kernel is compiled.
APP=hashcat
. "$(dirname "$0")/common.sh"
need_pkgs hashcat
export HOME="$APP_TMP/home" XDG_CACHE_HOME="$APP_TMP/cache" XDG_DATA_HOME="$APP_TMP/data" XDG_CONFIG_HOME="$APP_TMP/config"
mkdir -p "$HOME"
cd "$APP_TMP"
HC="hashcat --potfile-path=$APP_TMP/pot --session=aquila-apps --quiet --logfile-disable -w 1 -D 1,2,3"
pass=0; fail=0; failed=""
result() { if [ "$2" = 1 ]; then pass=$((pass + 1)); echo "case $1 ok"; else fail=$((fail + 1)); failed="$failed $1"; echo "case $1 FAIL"; fi; }
out=$(with_count timeout 60 hashcat -I 2>&1); echo "$out"
ok=0; echo "$out" | grep -q "Backend Device ID" && ok=1; result backend-info $ok
for m in 0 100; do
    out=$(with_count timeout 180 hashcat -b -m $m -w 1 --runtime=5 -D 1,2,3 2>&1); rc=$?; echo "$out"
    ok=0; [ $rc -eq 0 ] && echo "$out" | grep -q "^Speed" && ! echo "$out" | grep -qi "error\|fail" && ok=1
    result "bench-m$m" $ok
done
# Mask attack: MD5("aqu1la"), 6 characters of ?l?l?l?d?l?l.
want=aqu1la
hash=$(printf %s $want | md5sum | cut -d' ' -f1)
out=$(with_count timeout 300 $HC -m 0 -a 3 "$hash" '?l?l?l?d?l?l' 2>&1); rc=$?; echo "$out"
got=$(hashcat --potfile-path="$APP_TMP/pot" -m 0 --show "$hash" 2>/dev/null | cut -d: -f2)
ok=0; [ "$got" = "$want" ] && ok=1; result "mask-md5" $ok
# Wordlist + rules: SHA1 of "Password12" from the word "password" with best64-style rules.
printf 'dragon\nsunshine\npassword\nletmein\nmonkey\n' > words
printf ':\nc\nc $1 $2\nu\n$1\n' > rules
want=Password12
hash=$(printf %s $want | sha1sum | cut -d' ' -f1)
out=$(with_count timeout 300 $HC -m 100 -a 0 -r rules "$hash" words 2>&1); rc=$?; echo "$out"
got=$(hashcat --potfile-path="$APP_TMP/pot" -m 100 --show "$hash" 2>/dev/null | cut -d: -f2)
ok=0; [ "$got" = "$want" ] && ok=1; result "wordlist-rules-sha1" $ok
app_end $pass $fail "hashcat -I, self-test + -b -m 0/100, MD5 mask crack, SHA1 wordlist+rules crack${failed:+; failed:$failed}"
