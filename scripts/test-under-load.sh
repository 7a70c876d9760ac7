#!/usr/bin/env bash
# Runs the tests with every core kept busy by a CPU hog (a shell busy loop per core), to catch
# tests that pass only on an idle machine (wall-clock assumptions, missing timeouts).
# Usage: scripts/test-under-load.sh [bun test arguments…]   (runs `bun run test`, the README's command)   (POLAR_LOAD_HOGS=N to change the count)
set -euo pipefail
cd "$(dirname "$0")/.."

hogs="${POLAR_LOAD_HOGS:-$(nproc)}"
pids=()
stop_hogs() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_hogs EXIT
for _ in $(seq "$hogs"); do
  (while :; do :; done) &
  pids+=("$!")
done
echo "test-under-load: ${hogs} CPU hog(s) running (pids ${pids[*]}); bun run test $*" >&2
bun run test "$@"
