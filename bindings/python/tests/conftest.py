"""Shared fixtures: the repository's corpus, the turnkeeper command line (for agreement tests),
and a mock upstream on 127.0.0.1 that rejects what the real APIs reject (mock_upstream.py)."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

from mock_upstream import MockUpstream

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = ROOT / "corpus"


def _ci() -> bool:
    return os.environ.get("CI", "") in ("true", "1")


def cli_path() -> pathlib.Path | None:
    """The command to compare with: $TURNKEEPER_CLI, else the workspace's debug build."""
    given = os.environ.get("TURNKEEPER_CLI")
    if given:
        return pathlib.Path(given)
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for p in (target / "debug" / "turnkeeper", target / "release" / "turnkeeper"):
        if p.exists():
            return p
    found = shutil.which("turnkeeper")
    return pathlib.Path(found) if found else None


@pytest.fixture(scope="session")
def cli():
    """Runs the command line: cli(args..., input=bytes) -> CompletedProcess."""
    path = cli_path()
    if path is None:
        message = (
            "the turnkeeper command is absent: build it with `cargo build -p turnkeeper-cli` "
            "(or set TURNKEEPER_CLI) to compare the binding with it"
        )
        if _ci():
            pytest.fail(message)
        pytest.skip(message)

    def run(*args, input=None):
        return subprocess.run(
            [str(path), *map(str, args)], input=input, capture_output=True, timeout=60
        )

    return run


@pytest.fixture
def upstream():
    server = MockUpstream()
    server.start()
    try:
        yield server
    finally:
        server.stop()
