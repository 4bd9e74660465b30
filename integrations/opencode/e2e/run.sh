#!/usr/bin/env bash
# Runs the end-to-end tests with real agents: installs opencode-ai and @openai/codex (pinned)
# into $CARGO_TARGET_DIR/opencode-e2e (npm 11 skips opencode-ai's postinstall, which only copies
# the platform binary: it is run here by hand), then node --test e2e/. Needs the binding built and
# this folder's `npm install` done.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
dir="${CARGO_TARGET_DIR:-$root/target}/opencode-e2e"
version="${OPENCODE_VERSION:-1.18.33}"
codex_version="${CODEX_VERSION:-0.171.0}"
mkdir -p "$dir"
if { [ ! -x "$dir/node_modules/opencode-ai/bin/opencode" ] && [ ! -e "$dir/node_modules/opencode-ai/bin/opencode.exe" ]; } ||
    [ ! -e "$dir/node_modules/.bin/codex" ]; then
    [ -f "$dir/package.json" ] || echo '{"private":true}' > "$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "opencode-ai@$version" "@openai/codex@$codex_version")
    (cd "$dir/node_modules/opencode-ai" && node postinstall.mjs)
fi
export OPENCODE_BIN="$dir/node_modules/.bin/opencode"
export CODEX_BIN="$dir/node_modules/.bin/codex"
export TURNKEEPER_BIN="${TURNKEEPER_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/turnkeeper}"
[ -x "$TURNKEEPER_BIN" ] || (cd "$root" && cargo build -q -p turnkeeper-cli)
cd "$here/.."
exec node --test e2e/
