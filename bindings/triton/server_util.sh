# Helpers that test.sh and gpu_test.sh source to run a tritonserver of their
# own on loopback.

# free_loopback_ports PYTHON N: N free ports on 127.0.0.1, on one line.
free_loopback_ports() {
  "$1" -c "
import socket
socks = [socket.socket() for _ in range($2)]
for s in socks: s.bind(('127.0.0.1', 0))
print(' '.join(str(s.getsockname()[1]) for s in socks))"
}

# wait_until_ready PYTHON PID HTTP_PORT LOG TAG: waits up to 60 s for the
# server PID to answer /v2/health/ready; prints its LOG (prefixed with TAG's
# message) and fails when it exits or does not become ready.
wait_until_ready() {
  local python=$1 pid=$2 port=$3 log=$4 tag=$5
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    if "$python" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/v2/health/ready', timeout=1)" 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  echo "$tag: the server did not become ready; its log:" >&2
  cat "$log" >&2
  return 1
}

# stop_server_and_clean_up: the EXIT trap of a script that set server_pid
# (empty until started) and work (its temporary directory): stops the
# server by its pid and removes the directory.
stop_server_and_clean_up() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
