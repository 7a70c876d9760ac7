#!/usr/bin/env bash
# Why: the embedded default (`polar demo`, the process runtime, the bundled tasks) needs a few
# host programs besides Bun; this installs the missing ones with apt on Debian/Ubuntu, says what
# and why, and skips what is present. It never guesses: where it cannot install (not root, no
# apt-get) it prints one line naming exactly what to install and exits 2.
# Usage: bash scripts/setup.sh [--check]   (--check: report only, install nothing)
# Exit: 0 ready · 1 apt-get failed · 2 something is missing and cannot be installed here ·
#       3 bwrap is installed but cannot create a sandbox on this machine
set -u

CHECK_ONLY=0
[ "${1:-}" = "--check" ] && CHECK_ONLY=1

# What sandboxes see: bwrap binds the host's /usr, so the tasks' tests run the host's programs
# found on this PATH (not a user's pyenv or ~/.local).
SANDBOX_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "polar setup: $*"; }

# name | Debian package(s) | check (shell) | why
NEEDS=(
  "bwrap|bubblewrap|command -v bwrap|the process runtime (the demo's default) runs each sandbox under bubblewrap"
  "git|git|PATH=$SANDBOX_PATH command -v git|tasks are prepared as git repositories and the agent's change is read with git diff"
  "python3 with pytest|python3 python3-pytest|PATH=$SANDBOX_PATH python3 -c 'import pytest'|the bundled Python tasks run their tests with python3 -m pytest and unittest"
  "node|nodejs|command -v node|the bundled JavaScript tasks run their tests with node --test (the host's node is mounted into sandboxes)"
)

missing_names=()
missing_packages=()
for entry in "${NEEDS[@]}"; do
  IFS='|' read -r name packages check why <<<"$entry"
  if bash -c "$check" >/dev/null 2>&1; then
    say "$name: present"
  else
    say "$name: missing — $why"
    missing_names+=("$name")
    # shellcheck disable=SC2206
    missing_packages+=($packages)
  fi
done

if [ ${#missing_packages[@]} -gt 0 ]; then
  packages="${missing_packages[*]}"
  if [ "$CHECK_ONLY" = 1 ]; then
    say "to install: apt-get install -y $packages"
    exit 2
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "polar setup: cannot install here (no apt-get): install ${missing_names[*]} with this system's package manager, then run this again" >&2
    exit 2
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "polar setup: not root, so nothing was installed: run 'sudo apt-get install -y $packages' (or this script as root), then run it again" >&2
    exit 2
  fi
  say "installing with apt-get: $packages"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages >/dev/null; }; then
    echo "polar setup: apt-get install $packages failed (see its output above)" >&2
    exit 1
  fi
  for entry in "${NEEDS[@]}"; do
    IFS='|' read -r name _ check _ <<<"$entry"
    bash -c "$check" >/dev/null 2>&1 || { echo "polar setup: $name is still missing after apt-get install $packages" >&2; exit 1; }
  done
fi

# Installed is not enough: bwrap needs user namespaces (some containers and hardened kernels
# forbid them) and a /proc of its own. The same flags the process runtime uses, on `true`.
bwrap_works() {
  err=$(bwrap --ro-bind / / --proc /proc --dev /dev --unshare-all --die-with-parent --new-session --cap-drop ALL true 2>&1)
}
# Docker masks parts of a container's /proc (kcore, keys, …) with mounts over them; the kernel
# then refuses a sandbox a fresh /proc unless some proc mount is fully visible (its
# mnt_already_visible rule). As root in such a container, one unmasked proc mounted at
# /run/polar/proc is that mount; sandboxes never see /run. It lasts until the container stops.
PROC_DIR=/run/polar/proc
if ! bwrap_works && [ "$CHECK_ONLY" = 0 ] && [ "$(id -u)" = 0 ] && [[ "$err" == *"Can't mount proc"* ]] && ! mountpoint -q "$PROC_DIR" 2>/dev/null; then
  say "bwrap cannot mount a /proc for its sandboxes (this container masks parts of its own /proc): mounting an unmasked proc at $PROC_DIR, which sandboxes do not see"
  mkdir -p "$PROC_DIR" && mount -t proc -o nosuid,nodev,noexec proc "$PROC_DIR" || { echo "polar setup: mount -t proc proc $PROC_DIR failed" >&2; exit 3; }
fi
if ! bwrap_works; then
  echo "polar setup: bwrap is installed but cannot create a sandbox here (${err:-no message}); allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or use --runtime docker" >&2
  exit 3
fi
say "ready: the process runtime and the bundled Python and JavaScript tasks can run here"
