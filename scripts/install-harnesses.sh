#!/usr/bin/env bash
# Installs the four coding-agent CLIs Polar drives, at the exact versions pinned in
# node/harness/pins.json, into a cache folder outside the repo:
#   <dir>/<name>@<version>/node_modules/.bin/<bin>
# Idempotent: a harness whose pinned version is already installed is skipped.
# Usage: scripts/install-harnesses.sh [dir]   (default ${POLAR_HARNESS_DIR:-$HOME/.cache/polar/harnesses})
# Node >= 20 and npm are needed. On Node 20, npm prints EBADENGINE warnings for claude-code and
# qwen-code (they declare node >= 22); both run fine (claude is a native binary).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pins="$here/../node/harness/pins.json"
dir="${1:-${POLAR_HARNESS_DIR:-$HOME/.cache/polar/harnesses}}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

command -v node >/dev/null || { echo "install-harnesses: node is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "install-harnesses: npm is required" >&2; exit 1; }

# "name package version bin" lines from the pins file (one source of truth with the adapters).
pin_lines="$(node -e '
  const pins = require(process.argv[1]);
  for (const [name, p] of Object.entries(pins)) console.log([name, p.package, p.version, p.bin].join(" "));
' "$pins")"

installed_version() { # prefix package -> version or empty
  local pkg_json="$1/node_modules/$2/package.json"
  [[ -f "$pkg_json" ]] && node -e 'console.log(require(process.argv[1]).version)' "$pkg_json" || true
}

while read -r name pkg version bin; do
  prefix="$dir/$name@$version"
  if [[ "$(installed_version "$prefix" "$pkg")" == "$version" && -x "$prefix/node_modules/.bin/$bin" ]]; then
    echo "install-harnesses: $name $version already installed"
  else
    echo "install-harnesses: installing $pkg@$version into $prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$pkg@$version"
    got="$(installed_version "$prefix" "$pkg")"
    [[ "$got" == "$version" ]] || { echo "install-harnesses: $pkg installed as '$got', wanted $version" >&2; exit 1; }
  fi
  if [[ "$name" == "qwen-code" ]]; then
    # The npm tarball ships its bundled ripgrep without the exec bit (qwen then falls back to a slow grep).
    find "$prefix/node_modules/$pkg/vendor/ripgrep" -type f -name rg -exec chmod +x {} + 2>/dev/null || true
  fi
done <<<"$pin_lines"

# Smoke check: each binary starts and reports its version. The CLIs write config dirs even for
# --version, so they get a throwaway home instead of the user's.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
echo "install-harnesses: binaries:"
while read -r name pkg version bin; do
  path="$dir/$name@$version/node_modules/.bin/$bin"
  reported="$(env HOME="$scratch" CODEX_HOME="$scratch/codex" CLAUDE_CONFIG_DIR="$scratch/claude" \
    QWEN_HOME="$scratch/qwen" PI_CODING_AGENT_DIR="$scratch/pi" PI_OFFLINE=1 \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "$path" --version 2>&1 </dev/null | grep -m1 -F "$version" || true)"
  [[ "$reported" == *"$version"* ]] || { echo "install-harnesses: $path --version printed '$reported', wanted $version" >&2; exit 1; }
  echo "  $name $version: $path"
done <<<"$pin_lines"
