#!/usr/bin/env bash
# Why: tests and benches need real container images on machines with no registry; this builds
# them from local parts with `docker import` (the engine: scripts/start-docker.sh):
#   polar-busybox:latest  busybox-static only (~2 MB, <1 s)
#   polar-bookworm:dev    Debian bookworm minbase + python3, git, ca-certificates, python3-pytest,
#                         libstdc++6 (the host's node is bind-mounted read-only; it needs
#                         libstdc++ and libgcc_s on top of glibc)
# An image that already exists is skipped; POLAR_REBUILD_IMAGES=1 rebuilds.
# Needs: root, docker CLI + DOCKER_HOST answering, busybox-static, debootstrap.
# Packages come from the Debian mirror this machine's apt already uses (its sources), or
# POLAR_DEBIAN_MIRROR when set.
set -euo pipefail

# The first archive URI of the machine's apt sources: deb822 `URIs:` lines, else one-line
# `deb [options] URI suite …` entries (security archives hold no bookworm base system: skipped).
apt_mirror() {
  local uri
  uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(sed -e 's/\[[^]]*\]//' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' || true)
  printf '%s' "$uri"
}

MIRROR="${POLAR_DEBIAN_MIRROR:-$(apt_mirror)}"
[ -n "$MIRROR" ] || { echo "no Debian mirror in this machine's apt sources (/etc/apt/sources.list*); set POLAR_DEBIAN_MIRROR" >&2; exit 1; }

have_image() {
  [ "${POLAR_REBUILD_IMAGES:-0}" != 1 ] && docker image inspect "$1" >/dev/null 2>&1
}

build_busybox() {
  local tag=polar-busybox:latest
  if have_image $tag; then echo "$tag: exists, skipped"; return; fi
  local bb; bb=$(command -v busybox || true)
  [ -n "$bb" ] || { echo "busybox not found (apt-get install busybox-static)" >&2; exit 1; }
  local r; r=$(mktemp -d)
  mkdir -p "$r"/{bin,tmp,etc,proc,sys,dev,root,work}
  cp "$bb" "$r/bin/busybox"
  for a in $("$r/bin/busybox" --list); do [ "$a" = busybox ] || ln -sf busybox "$r/bin/$a"; done
  echo 'root:x:0:0:root:/root:/bin/sh' > "$r/etc/passwd"
  echo 'root:x:0:' > "$r/etc/group"
  chmod 1777 "$r/tmp"
  tar -C "$r" --numeric-owner -cf - . | docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/bin' \
    -c 'WORKDIR /work' - $tag >/dev/null
  rm -rf "$r"
  echo "$tag: built"
}

build_bookworm() {
  local tag=polar-bookworm:dev
  if have_image $tag; then echo "$tag: exists, skipped"; return; fi
  local r; r=$(mktemp -d)
  debootstrap --variant=minbase \
    --include=python3,python3-pytest,git,ca-certificates,libstdc++6 \
    bookworm "$r" "$MIRROR" >"$r.log" 2>&1 || { tail -30 "$r.log" >&2; exit 1; }
  # Keep the image small: apt caches and docs are not needed inside a sandbox.
  rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/usr/share/doc/* \
    "$r"/usr/share/man/* "$r"/usr/share/locale/*
  mkdir -p "$r/work"
  tar -C "$r" --numeric-owner -cf - . | docker import -c 'CMD ["/bin/bash"]' -c 'WORKDIR /work' \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
    - $tag >/dev/null
  rm -rf "$r" "$r.log"
  echo "$tag: built"
}

docker info >/dev/null 2>&1 || { echo "no Docker engine answers at ${DOCKER_HOST:-default socket}" >&2; exit 1; }
build_busybox
build_bookworm
