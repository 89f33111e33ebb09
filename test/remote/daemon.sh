# Sourced by test/remote/*.sh: an aquilad of the build on a loopback port,
# and the end of a process by its pid. Every wait is bounded.

# stop_pid PID: SIGTERM, at most 5 s for it to end, then SIGKILL.
stop_pid() {
  kill "$1" 2>/dev/null
  stop_tries=0
  while kill -0 "$1" 2>/dev/null && [ $stop_tries -lt 50 ]; do
    sleep 0.1
    stop_tries=$((stop_tries + 1))
  done
  kill -9 "$1" 2>/dev/null
}

# start_local_daemon AQUILAD KEY LOG UNITS [PREFIX...]: runs PREFIX AQUILAD
# on 127.0.0.1 with KEY and UNITS compute units, its output in LOG; tries up
# to 8 ports, each given 30 s to say it serves. Sets addr (ADDRESS:PORT)
# and pid; status 1 when no try served (LOG has the last one's output).
start_local_daemon() {
  daemon_bin=$1
  daemon_key=$2
  daemon_log=$3
  daemon_units=$4
  shift 4
  daemon_tries=0
  while [ $daemon_tries -lt 8 ]; do
    port=$((20000 + ($$ * 7 + daemon_tries * 613 + $(od -An -N2 -tu2 /dev/urandom)) % 40000))
    "$@" "$daemon_bin" --listen "127.0.0.1:$port" --key-file "$daemon_key" \
      --units "$daemon_units" >"$daemon_log" 2>&1 &
    pid=$!
    daemon_wait=0
    while [ $daemon_wait -lt 300 ] && kill -0 "$pid" 2>/dev/null &&
      ! grep -q serving "$daemon_log"; do
      sleep 0.1
      daemon_wait=$((daemon_wait + 1))
    done
    if grep -q serving "$daemon_log" && kill -0 "$pid" 2>/dev/null; then
      addr=127.0.0.1:$port
      return 0
    fi
    stop_pid "$pid"
    daemon_tries=$((daemon_tries + 1))
  done
  return 1
}
