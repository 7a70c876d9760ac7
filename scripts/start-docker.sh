#!/usr/bin/env bash
# Why: machines without systemd (CI, these dev boxes) need dockerd started by hand, isolated
# from anything else on the host (own socket, data root, exec root, containerd namespace; no
# bridge or iptables: sandboxes use network none or host). Idempotent: if the socket already
# answers, nothing is started. Prints the line to eval:  eval "$(bash scripts/start-docker.sh)"
# Stop it with: kill "$(cat /tmp/polar-docker/docker.pid)"
set -euo pipefail

D="${POLAR_DOCKER_DIR:-/tmp/polar-docker}"
SOCK="unix://$D/docker.sock"

if DOCKER_HOST="$SOCK" docker info >/dev/null 2>&1; then
  echo "export DOCKER_HOST=$SOCK"
  exit 0
fi

command -v dockerd >/dev/null || { echo "dockerd not found (apt-get install docker.io)" >&2; exit 1; }
mkdir -p "$D/data" "$D/exec"
# An engine killed without cleaning up (a machine reused after a hard stop) leaves its pid file,
# and dockerd refuses to start while one names a process: remove it unless a live dockerd has it.
if [ -f "$D/docker.pid" ]; then
  pid=$(cat "$D/docker.pid")
  state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
  comm=$(ps -o comm= -p "$pid" 2>/dev/null || true)
  if [ -z "$state" ] || [ "${state#Z}" != "$state" ] || [ "$comm" != "dockerd" ]; then
    rm -f "$D/docker.pid" "$D/docker.sock"
  fi
fi
setsid dockerd --host "$SOCK" --data-root "$D/data" --exec-root "$D/exec" \
  --pidfile "$D/docker.pid" --storage-driver overlay2 \
  --iptables=false --ip6tables=false --ip-masq=false --bridge=none \
  --containerd-namespace polar --containerd-plugins-namespace polar-plugins \
  >>"$D/dockerd.log" 2>&1 </dev/null &

for _ in $(seq 1 150); do
  if DOCKER_HOST="$SOCK" docker info >/dev/null 2>&1; then
    echo "export DOCKER_HOST=$SOCK"
    exit 0
  fi
  sleep 0.2
done
echo "dockerd did not answer within 30 s; log: $D/dockerd.log" >&2
tail -20 "$D/dockerd.log" >&2
exit 1
