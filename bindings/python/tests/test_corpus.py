"""The binding agrees with the command line, field by field, on every corpus body: check --json,
repair (body bytes and --report), inspect --json, classify --json, recover --report."""

from __future__ import annotations

import json
import pathlib

import pytest

import turnkeeper
from conftest import CORPUS

BODIES = sorted(
    p
    for d in ("damaged", "anthropic", "gemini")
    for p in (CORPUS / d).glob("*.json")
    if not p.name.endswith((".after.json", ".expect.json", ".response.json"))
)
EXPORTS = sorted((CORPUS / "opencode" / "export").glob("*.json"))
ids = [p.relative_to(CORPUS).as_posix() for p in BODIES]


def test_the_corpus_is_there():
    # Guards against a glob that silently matches nothing.
    assert len(BODIES) > 100
    assert any("chat" in turnkeeper.inspect(p.read_bytes())["format"] for p in BODIES if p.name.startswith(("km", "ds", "oa")))


@pytest.mark.parametrize("path", BODIES, ids=ids)
def test_check_agrees_with_the_cli(cli, path: pathlib.Path):
    run = cli("check", "--json", path)
    assert run.returncode in (0, 1), run.stderr
    expected = json.loads(run.stdout)
    got = turnkeeper.check(path.read_bytes())
    assert got == expected
    # str and bytes read the same
    assert turnkeeper.check(path.read_text(encoding="utf-8")) == expected
    assert (run.returncode == 1) == any(f["severity"] == "error" for f in got["findings"])


@pytest.mark.parametrize("path", BODIES, ids=ids)
def test_repair_agrees_with_the_cli(cli, path: pathlib.Path, tmp_path):
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    run = cli("repair", path, "-o", out, "--report", report)
    raw = path.read_bytes()
    if run.returncode == 2:
        with pytest.raises(turnkeeper.TurnkeeperError):
            turnkeeper.repair(raw)
        return
    assert run.returncode in (0, 3), run.stderr
    expected = json.loads(report.read_text())
    got = turnkeeper.repair(raw)
    assert {k: got[k] for k in ("changes", "request_changes", "findings_left")} == expected
    assert got["body"] == out.read_bytes()
    if not expected["changes"] and not expected["request_changes"]:
        # nothing to repair: the very object passed in comes back
        assert got["body"] is raw
    text = raw.decode()
    as_text = turnkeeper.repair(text)
    assert isinstance(as_text["body"], str)
    assert as_text["body"].encode() == got["body"]


@pytest.mark.parametrize("path", BODIES + EXPORTS, ids=ids + [p.name for p in EXPORTS])
def test_inspect_agrees_with_the_cli(cli, path: pathlib.Path):
    run = cli("inspect", "--json", path)
    if run.returncode == 2:
        with pytest.raises(turnkeeper.FormatError):
            turnkeeper.inspect(path.read_bytes())
        return
    assert run.returncode == 0, run.stderr
    assert turnkeeper.inspect(path.read_bytes()) == json.loads(run.stdout)


@pytest.mark.parametrize("path", EXPORTS, ids=[p.name for p in EXPORTS])
def test_check_of_an_opencode_export_agrees_with_the_cli(cli, path: pathlib.Path):
    run = cli("check", "--json", path)
    assert run.returncode in (0, 1), run.stderr
    got = turnkeeper.check(path.read_bytes())
    assert got == json.loads(run.stdout)
    assert "model" in got
    with pytest.raises(turnkeeper.FormatError, match="OpenCode export"):
        turnkeeper.repair(path.read_bytes())


def _errors():
    out = []
    for f in sorted((CORPUS / "errors").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                e = json.loads(line)
                out.append(pytest.param(e.get("body", ""), e.get("status"), id=f"{f.stem}:{e['id']}"))
    return out


ERRORS = _errors()


def test_the_error_corpus_is_there():
    assert len(ERRORS) > 400


@pytest.mark.parametrize("text,status", ERRORS)
def test_classify_agrees_with_the_cli(cli, text: str, status):
    args = ["classify", "--json"] + (["--status", status] if status else [])
    run = cli(*args, input=text.encode())
    assert run.returncode == 0, run.stderr
    assert turnkeeper.classify(text, status=status) == json.loads(run.stdout)
    assert turnkeeper.classify(text.encode(), status) == json.loads(run.stdout)


def _recover_cases():
    cases = []
    for expect in sorted((CORPUS / "damaged").glob("*.expect.json")):
        error = json.loads(expect.read_text()).get("error")
        body = expect.with_name(expect.name.replace(".expect.json", ".json"))
        if error and body.exists():
            cases.append(pytest.param(body, error, id=body.name))
    return cases


RECOVER = _recover_cases()


def test_there_are_recover_cases():
    assert len(RECOVER) > 30


@pytest.mark.parametrize("path,error", RECOVER)
def test_recover_agrees_with_the_cli(cli, path: pathlib.Path, error: str, tmp_path):
    err, out, report, attempts = (tmp_path / n for n in ("err.txt", "out.json", "report.json", "attempts.json"))
    err.write_text(error)
    raw = path.read_bytes()
    tried = turnkeeper.Attempts()
    for round in range(2):  # the same error twice escalates, in both
        run = cli("recover", "--request", path, "--error", err, "--status", "400",
                  "--attempts", attempts, "--report", report, "-o", out)
        if run.returncode == 2:
            with pytest.raises(turnkeeper.TurnkeeperError):
                turnkeeper.recover(raw, error, tried, 400)
            return
        assert run.returncode in (0, 3), run.stderr
        expected = json.loads(report.read_text())
        got = turnkeeper.recover(raw, error, tried, 400)
        body = got.pop("body")
        assert got == expected, f"round {round}"
        assert len(tried) == expected["attempts"]
        assert json.loads(tried.to_json()) == json.loads(attempts.read_text())
        if run.returncode == 0:
            assert body == out.read_bytes()
        else:
            assert body is None
