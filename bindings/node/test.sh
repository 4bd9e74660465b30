#!/usr/bin/env bash
# Builds the Node package and runs its tests, as `cargo xtask verify` does:
#   bindings/node/test.sh [test files, default test/]
# `npm install` in bindings/node brings @napi-rs/cli (the only devDependency) and builds the addon
# (its `install` script: `napi build --platform`; a dev build here, sharing the workspace's build of
# the crates; set TURNKEEPER_NODE_PROFILE=release for the optimised one); the command line the
# tests compare with is `cargo build -p turnkeeper-cli` ($TURNKEEPER_CLI when set). Then the OpenCode plugin on the binding
# (integrations/opencode): npm install, node --test. Exit status: non-zero when any test failed.
set -euo pipefail
# Nothing here reads standard input: cargo's probe of rustc (`rustc -`, run by maturin and napi)
# must not read the caller's.
exec </dev/null
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# $TURNKEEPER_CLI, when set, is the command to compare with (verify passes the one its test step
# built, whose features a `-p` build would not share: a second build of the command and its crates).
if [ -z "${TURNKEEPER_CLI:-}" ]; then
    echo "node: building the turnkeeper CLI the tests compare with"
    (cd "$root" && cargo build -q -p turnkeeper-cli)
fi
cd "$here"
echo "node: npm install (napi build, profile ${TURNKEEPER_NODE_PROFILE:=dev})"
export TURNKEEPER_NODE_PROFILE
npm install --no-audit --no-fund --loglevel=error
# One dot per test on the terminal; the whole TAP report in the target directory, whose failures
# and counts are printed at the end.
tap="${CARGO_TARGET_DIR:-$root/target}/node-test.tap"
mkdir -p "$(dirname "$tap")"
status=0
node --test --test-reporter=dot --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" "${@:-test/}" || status=$?
echo
if [ "$status" -ne 0 ]; then
    grep -E -A14 '^ *not ok' "$tap" | grep -v '^ *at \|stack: |^ *Test\.' || true
fi
pass=$(sed -n 's/^# pass //p' "$tap" | tail -1)
fail=$(sed -n 's/^# fail //p' "$tap" | tail -1)

# The OpenCode plugin on this binding (integrations/opencode), when no test file was named.
if [ "$#" -eq 0 ] && [ -d "$root/integrations/opencode" ]; then
    echo "node: the OpenCode plugin (integrations/opencode): npm install, node --test"
    plugin_tap="${tap%.tap}-opencode.tap"
    (cd "$root/integrations/opencode" && npm install --no-audit --no-fund --loglevel=error &&
        node --test --test-reporter=dot --test-reporter-destination=stdout \
            --test-reporter=tap --test-reporter-destination="$plugin_tap" test/) || status=$?
    echo
    if grep -q -E '^ *not ok' "$plugin_tap" 2>/dev/null; then
        grep -E -A14 '^ *not ok' "$plugin_tap" | grep -v '^ *at \|stack: |^ *Test\.' || true
    fi
    plugin_pass=$(sed -n 's/^# pass //p' "$plugin_tap" 2>/dev/null | tail -1)
    plugin_fail=$(sed -n 's/^# fail //p' "$plugin_tap" 2>/dev/null | tail -1)
    pass=$(( ${pass:-0} + ${plugin_pass:-0} ))
    fail=$(( ${fail:-0} + ${plugin_fail:-0} ))
fi
echo "node: ${pass:-0} passed, ${fail:-0} failed (TAP reports: ${tap%.tap}*.tap)"
exit "$status"
