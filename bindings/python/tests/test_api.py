"""The functions' contract beyond the CLI's fields: types in and out, typed exceptions, the GIL
released during a call, the turn store and attempts objects."""

from __future__ import annotations

import json
import threading
import time

import pytest

import turnkeeper
from conftest import CORPUS
from mock_upstream import thinking_block

VALID = CORPUS / "anthropic" / "tool_loop_manual.json"
DAMAGED = CORPUS / "damaged" / "an08_aborted_turn.json"


def test_a_valid_body_comes_back_as_the_same_object():
    raw = VALID.read_bytes()
    assert turnkeeper.check(raw) == {"findings": []}
    r = turnkeeper.repair(raw)
    assert r["body"] is raw and r["changes"] == []
    text = raw.decode()
    assert turnkeeper.repair(text)["body"] is text


def test_a_repaired_body_keeps_the_callers_type():
    raw = DAMAGED.read_bytes()
    assert isinstance(turnkeeper.repair(raw)["body"], bytes)
    assert isinstance(turnkeeper.repair(raw.decode())["body"], str)
    assert set(turnkeeper.repair(raw)) == {"body", "changes", "request_changes", "findings_left"}


@pytest.mark.parametrize(
    "body,exc,match",
    [
        (b"\xff{}", turnkeeper.ReadError, "invalid UTF-8 at byte 0"),
        ("{\"messages\": [", turnkeeper.ReadError, "invalid JSON"),
        ("{\"hello\": 1}", turnkeeper.FormatError, "cannot tell the format"),
        ("[1, 2]", turnkeeper.FormatError, ""),
    ],
)
def test_bad_input_raises_a_typed_error(body, exc, match):
    for f in (turnkeeper.check, turnkeeper.repair, turnkeeper.inspect):
        with pytest.raises(exc, match=match) as info:
            f(body)
        assert isinstance(info.value, turnkeeper.TurnkeeperError)
        assert isinstance(info.value, ValueError)


def test_wrong_types_and_options():
    with pytest.raises(TypeError, match="body must be str or bytes, not int"):
        turnkeeper.check(3)
    with pytest.raises(turnkeeper.OptionError, match="thinking=\"maybe\""):
        turnkeeper.check(VALID.read_bytes(), thinking="maybe")
    with pytest.raises(turnkeeper.OptionError, match="format=\"xml\""):
        turnkeeper.repair(VALID.read_bytes(), format="xml")
    with pytest.raises(turnkeeper.OptionError, match="on_prefix_edit"):
        turnkeeper.repair(VALID.read_bytes(), on_prefix_edit="sometimes")
    with pytest.raises(TypeError, match="store must be"):
        turnkeeper.check(VALID.read_bytes(), store=42)


def test_options_change_the_judgement():
    body = (CORPUS / "damaged" / "an16_thinking_stripped_open_loop.json").read_bytes()
    on = turnkeeper.check(body)["findings"]
    off = turnkeeper.check(body, thinking="disabled")["findings"]
    assert any(f["rule"] == "AN-16" for f in on)
    assert not any(f["rule"] == "AN-16" for f in off)
    # AN-16 with only `fail` left: nothing is repaired, the finding is left for the caller
    r = turnkeeper.repair(body, on_missing_thinking=["fail"])
    assert any(f["rule"] == "AN-16" for f in r["findings_left"])


def test_turn_store_on_disk(tmp_path):
    response = {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [thinking_block("Look at the files first."),
                    {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {}}],
        "stop_reason": "tool_use",
    }
    store = turnkeeper.TurnStore(tmp_path / "store")
    assert store.add(json.dumps(response).encode()) == "msg_01"
    assert len(store) == 1 and store.problems == []
    assert len(turnkeeper.TurnStore(str(tmp_path / "store"))) == 1  # reloaded from its files
    with pytest.raises(turnkeeper.StoreError):
        store.add("{\"not\": \"a response\"}")
    body = json.dumps({
        "model": "claude-sonnet-4-5", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {"role": "user", "content": "ls"},
            {"role": "assistant", "content": [response["content"][1], response["content"][0]]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a"}]},
        ],
    })
    for s in (store, tmp_path / "store", str(tmp_path / "store")):
        r = turnkeeper.repair(body, store=s)
        assert [c["rule"] for c in r["changes"]] == ["AN-22"]
        assert json.loads(r["body"])["messages"][1]["content"] == response["content"]


def test_attempts_escalate_and_round_trip():
    body = DAMAGED.read_bytes()
    error = "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified."
    a = turnkeeper.Attempts()
    first = turnkeeper.recover(body, error, a, 400)
    second = turnkeeper.recover(body, error, a, 400)
    assert len(a) == second["attempts"] >= 2
    assert first["action"] != second["action"]
    again = turnkeeper.Attempts.from_json(a.to_json())
    assert again.to_json() == a.to_json()
    with pytest.raises(turnkeeper.AttemptsError):
        turnkeeper.Attempts.from_json("[not json")


def test_recover_hands_back_with_no_body():
    r = turnkeeper.recover(VALID.read_bytes(), "prompt is too long: 250000 tokens > 200000 maximum", status=400)
    assert r["action"]["type"] == "compact" and r["outcome"] == "hand_back"
    assert r["body"] is None


def test_the_gil_is_released_during_a_call():
    # A Python thread counts while another repairs a large body: with the GIL held for the
    # whole call it could not count at all.
    big = (CORPUS / "anthropic" / "long_200_messages.json").read_text()
    body = big.replace('"messages":[', '"messages":[' + '{"role":"user","content":"x"},{"role":"assistant","content":"y"},' * 20000, 1)
    stop = threading.Event()
    ticks = []

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0)

    calls = []
    t = threading.Thread(target=count)
    t.start()
    try:
        for _ in range(3):
            start = time.perf_counter()
            turnkeeper.check(body)
            calls.append((start, time.perf_counter()))
    finally:
        stop.set()
        t.join()
    inside = [x for x in ticks if any(s < x < e for s, e in calls)]
    assert inside, "no Python bytecode ran while turnkeeper worked"
