#!/usr/bin/env bash
# Builds the Python package and runs its tests, as `cargo xtask verify` does:
#   bindings/python/test.sh [pytest args]
# A venv in $CARGO_TARGET_DIR/python-venv (target/ by default, kept between runs) gets the pinned
# test packages (requirements-test.txt); `pip install ./bindings/python` builds the extension
# with maturin (a dev build here, sharing the workspace's build of the crates; set
# TURNKEEPER_PY_PROFILE=release for the optimised one); the command line the tests compare with
# is `cargo build -p turnkeeper-cli` ($TURNKEEPER_CLI when set). Exit status: pytest's.
set -euo pipefail
# Nothing here reads standard input: cargo's probe of rustc (`rustc -`, run by maturin and napi)
# must not read the caller's.
exec </dev/null
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/python-venv"
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "python: creating $venv"
    "$py" -m venv "$venv"
fi
# maturin (the build backend, installed in the venv) must be found by pip.
export PATH="$venv/bin:$PATH"
stamp="$venv/.requirements-test.txt"
if ! cmp -s "$here/requirements-test.txt" "$stamp"; then
    echo "python: installing the test packages (requirements-test.txt)"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements-test.txt"
    cp "$here/requirements-test.txt" "$stamp"
fi
# $TURNKEEPER_CLI, when set, is the command to compare with (verify passes the one its test step
# built, whose features a `-p` build would not share: a second build of the command and its crates).
if [ -z "${TURNKEEPER_CLI:-}" ]; then
    echo "python: building the turnkeeper CLI the tests compare with"
    (cd "$root" && cargo build -q -p turnkeeper-cli)
fi
echo "python: pip install ./bindings/python (maturin, profile ${TURNKEEPER_PY_PROFILE:-dev})"
MATURIN_PEP517_ARGS="--profile ${TURNKEEPER_PY_PROFILE:-dev}" \
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps "$here"
cd "$here/tests"
export LITELLM_LOCAL_MODEL_COST_MAP=True
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$@"
