#!/bin/sh
# A silent network between a client and its daemon (docs/REMOTE.md,
# "Faults"), a test of make check: two network namespaces made here and
# joined by a veth pair, the daemon in one and the client (test_remote
# silence) in the other; while a kernel runs on the daemon, tc netem drops
# every packet both ways (nothing is closed: the peers just stop hearing
# each other; nftables, or tc netem), then lets them through again. Needs
# CAP_NET_ADMIN; without it the cases are skipped. The addresses exist only inside the namespaces;
# every wait is bounded; the daemon is stopped by its own pid and the
# namespaces are deleted at the end.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/test/remote
name=network_silent_fails_commands
cns=aqc$$
dns=aqd$$
if ! ip netns add "$cns" 2>/dev/null; then
  echo "ok silent_daemon_left_out # SKIP no network namespaces here (needs CAP_NET_ADMIN and iproute2)"
  echo "ok $name # SKIP no network namespaces here"
  exit 0
fi
dir=$(mktemp -d)
pid=""
. "$(dirname "$0")/daemon.sh"
cleanup() {
  [ -n "$pid" ] && stop_pid "$pid"
  ip netns del "$cns" 2>/dev/null
  ip netns del "$dns" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 1' INT TERM HUP PIPE
fail() {
  echo "not ok $name: $1"
  exit 1
}
# What the machine does not allow (a container may have namespaces but no
# veth pairs) is a skip, not a failure.
skip() {
  echo "ok silent_daemon_left_out # SKIP $1"
  echo "ok $name # SKIP $1"
  exit 0
}
ip netns add "$dns" 2>/dev/null || skip "cannot make a second namespace"
ip -n "$cns" link add vc type veth peer name vd netns "$dns" 2>/dev/null || skip "no veth pairs"
{ ip -n "$cns" addr add 10.213.0.1/24 dev vc && ip -n "$dns" addr add 10.213.0.2/24 dev vd &&
  ip -n "$cns" link set lo up && ip -n "$dns" link set lo up &&
  ip -n "$cns" link set vc up && ip -n "$dns" link set vd up; } 2>/dev/null ||
  skip "cannot set the pair up"
# UCX takes the interfaces that are running when the daemon starts: wait
# for the pair's carrier.
i=0
while ! { ip -n "$dns" link show vd | grep -q LOWER_UP &&
  ip -n "$cns" link show vc | grep -q LOWER_UP; }; do
  [ $i -lt 50 ] || skip "the pair has no carrier after 5 s"
  sleep 0.1
  i=$((i + 1))
done
head -c 32 /dev/urandom >"$dir/key"
chmod 600 "$dir/key"

# UCX's keepalive finds a silent peer; shortened so that the test is quick.
export UCX_TLS=tcp UCX_KEEPALIVE_INTERVAL=1s UCX_TCP_KEEPIDLE=1s UCX_TCP_KEEPINTVL=1s
ip netns exec "$dns" "$BUILD/aquilad" --listen 10.213.0.2:4711 --key-file "$dir/key" --units 1 \
  >"$dir/daemon.log" 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && kill -0 "$pid" 2>/dev/null && ! grep -q serving "$dir/daemon.log"; do
  sleep 0.1
  i=$((i + 1))
done
grep -q serving "$dir/daemon.log" || fail "the daemon did not start: $(cat "$dir/daemon.log")"

# Silence: nftables drops every packet leaving either end of the pair
# (tc netem where the kernel has no nftables).
cat >"$dir/cut.sh" <<END
drop() {
  ip netns exec \$1 nft add table inet aqtest &&
    ip netns exec \$1 nft add chain inet aqtest out '{ type filter hook output priority 0; }' &&
    ip netns exec \$1 nft add rule inet aqtest out oifname \$2 drop
}
if command -v nft >/dev/null && drop $cns vc 2>/dev/null; then
  drop $dns vd
else
  ip netns exec $cns tc qdisc add dev vc root netem loss 100% &&
    ip netns exec $dns tc qdisc add dev vd root netem loss 100%
fi
END
cat >"$dir/restore.sh" <<END
for ns in $cns $dns; do ip netns exec \$ns nft delete table inet aqtest 2>/dev/null; done
ip netns exec $cns tc qdisc del dev vc root 2>/dev/null
ip netns exec $dns tc qdisc del dev vd root 2>/dev/null
exit 0
END
cut="sh $dir/cut.sh"
restore="sh $dir/restore.sh"

# Silent from the start: the daemon is left out within the timeout, and
# the process goes on (giving up on a connection that never answered made
# UCX abort the process).
sh "$dir/cut.sh" 2>"$dir/cut.err" ||
  skip "neither nftables nor tc netem here: $(head -c 200 "$dir/cut.err" | tr '\n' ' ')"
start=$(date +%s)
out=$(AQUILA_REMOTE=10.213.0.2:4711 AQUILA_REMOTE_KEY_FILE="$dir/key" AQUILA_REMOTE_TIMEOUT_MS=2000 \
  timeout 60 ip netns exec "$cns" "$BIN/test_remote" count 2>"$dir/count.err")
rc=$?
took=$(($(date +%s) - start))
sh "$dir/restore.sh"
if [ $rc = 0 ] && [ "$out" = "devices 1" ] && [ $took -le 10 ]; then
  echo "ok silent_daemon_left_out"
else
  echo "not ok silent_daemon_left_out: rc $rc, '$out' after ${took}s: $(head -c 300 "$dir/count.err")"
fi

AQUILA_REMOTE=10.213.0.2:4711 AQUILA_REMOTE_KEY_FILE="$dir/key" AQUILA_REMOTE_TIMEOUT_MS=5000 \
  AQUILA_TEST_CUT="$cut" AQUILA_TEST_RESTORE="$restore" \
  timeout 180 ip netns exec "$cns" "$BIN/test_remote" silence >"$dir/out" 2>&1
rc=$?
sed -n 's/^  \(commands failed\|the device came back\)/  \1/p' "$dir/out"
if [ $rc = 0 ] && grep -q '^ok network_silent_mid_kernel' "$dir/out" && ! grep -q '^not ok' "$dir/out"; then
  echo "ok $name"
else
  fail "$(grep -v '^ok' "$dir/out" | head -8 | tr '\n' ' ')"
fi
