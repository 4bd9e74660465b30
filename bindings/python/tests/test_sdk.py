"""The httpx helper with the real ``anthropic`` and ``openai`` SDKs against the mock upstream: a
damaged conversation succeeds, a valid one reaches the mock byte-identical, and a 400 the
pre-send repair could not foresee is recovered with one retry."""

from __future__ import annotations

import asyncio
import json

import anthropic
import httpx2 as httpx  # what the anthropic (2.x) and openai (3.x) SDKs are built on
import openai
import pytest

import turnkeeper
from mock_upstream import thinking_block
from turnkeeper.httpx import AsyncRepairTransport, RepairTransport

MODEL = "claude-sonnet-4-5"
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOLS = [{"name": "ls", "description": "list files", "input_schema": {"type": "object", "properties": {}}}]
THOUGHT = "The user wants the files.\n\nI will call `ls` with no arguments."


def client(upstream, transport=None) -> anthropic.Anthropic:
    http = anthropic.DefaultHttpxClient(transport=transport) if transport else None
    return anthropic.Anthropic(base_url=upstream.url, api_key="test-key", max_retries=0, http_client=http)


def first_turn(upstream, c: anthropic.Anthropic):
    """The first request: the mock answers with signed thinking and a tool call."""
    upstream.script.append(
        [thinking_block(THOUGHT), {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {}}]
    )
    r = c.messages.create(
        model=MODEL, max_tokens=2048, thinking=THINKING, tools=TOOLS,
        messages=[{"role": "user", "content": "list files"}],
    )
    return [b.model_dump(exclude_none=True) for b in r.content]


def follow_up(c: anthropic.Anthropic, assistant: list):
    return c.messages.create(
        model=MODEL, max_tokens=2048, thinking=THINKING, tools=TOOLS,
        messages=[
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": assistant},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt"}]},
        ],
    )


def test_the_mock_rejects_the_damaged_conversation(upstream):
    plain = client(upstream)
    content = first_turn(upstream, plain)
    damaged = [content[1], content[0]]  # the tool call moved before its thinking (opencode#9364)
    with pytest.raises(anthropic.BadRequestError, match="must start with a thinking block"):
        follow_up(plain, damaged)


def test_a_damaged_conversation_succeeds_restored_from_the_store(upstream):
    store = turnkeeper.TurnStore()
    events = []
    c = client(upstream, RepairTransport(store=store, on_event=events.append))
    content = first_turn(upstream, c)
    assert len(store) == 1  # the transport kept the response as it arrived
    damaged = [content[1], content[0]]
    r = follow_up(c, damaged)
    assert r.content[-1].text == "done"
    sent = upstream.bodies()[-1]
    # the turn went back as the mock sent it: thinking first, byte for byte, signature valid
    assert sent["messages"][1]["content"][0] == thinking_block(THOUGHT)
    assert sent["messages"][1]["content"][1]["type"] == "tool_use"
    assert sent["thinking"] == THINKING
    assert [e["kind"] for e in events] == ["repair"]
    assert [(c["rule"], c["action"], c["path"]) for c in events[0]["changes"]] == [
        ("AN-22", "restored_message", "messages[1]")
    ]
    assert events[0]["request_changes"] == []


def test_a_damaged_conversation_succeeds_without_a_store(upstream):
    events = []
    c = client(upstream, RepairTransport(on_event=events.append))
    content = first_turn(upstream, c)
    r = follow_up(c, [content[1], content[0]])
    assert r.content[-1].text == "done"
    sent = upstream.bodies()[-1]
    # no original to restore: the trailing thinking block is dropped whole (reported with its
    # fingerprint) and thinking is off for this one request (the policy's next choice)
    assert [e["kind"] for e in events] == ["repair"]
    assert [(c["rule"], c["action"], c["path"]) for c in events[0]["changes"]] == [
        ("AN-19", "removed_block", "messages[1].content[1]"),
        ("AN-16", "request", "thinking"),
    ]
    assert events[0]["request_changes"] == [
        {"key": "thinking", "kind": "set_param", "rule": "AN-16", "value": '{"type":"disabled"}'}
    ]
    assert sent["thinking"] == {"type": "disabled"}
    assert sent["messages"][1]["content"] == [{"id": "toolu_01", "input": {}, "name": "ls", "type": "tool_use"}]


def test_a_valid_conversation_reaches_the_mock_byte_identical(upstream):
    plain = client(upstream)
    content = first_turn(upstream, plain)
    follow_up(plain, content)
    without = upstream.requests[-1]["body"]
    events = []
    c = client(upstream, RepairTransport(on_event=events.append))
    follow_up(c, content)
    assert upstream.requests[-1]["body"] == without
    assert events == []


def test_a_modified_thinking_block_is_recovered_with_one_retry(upstream):
    events = []
    c = client(upstream, RepairTransport(on_event=events.append))
    content = first_turn(upstream, c)
    altered = [dict(content[0], thinking=content[0]["thinking"].rstrip() + " "), content[1]]
    before = len(upstream.requests)
    r = follow_up(c, altered)
    assert r.content[-1].text == "done"
    got = upstream.requests[before:]
    assert len(got) == 2, "one 400, one retry"
    first, second = (json.loads(x["body"]) for x in got)
    # nothing to see before sending (the text changed, the signature cannot be checked here)
    assert first["messages"][1]["content"][0] == altered[0]
    assert [e["kind"] for e in events] == ["recover"]
    e = events[0]
    assert e["diagnosis"]["kind"] == "thinking_block_modified"
    assert e["diagnosis"]["location"] == {"message": 1, "block": 0}
    # no store to restore from: the altered block is removed whole, never rewritten
    assert e["action"] == {"from": 1, "type": "strip_thinking"}
    assert [(c["rule"], c["action"], c["path"]) for c in e["changes"]] == [
        ("recover", "removed_block", "messages[1].content[0]"),
        ("AN-16", "request", "thinking"),
    ]
    assert e["status"] == 200
    assert second["messages"][1]["content"] == [content[1]]
    assert second["thinking"] == {"type": "disabled"}


def test_async_client_with_the_async_transport(upstream):
    async def go():
        store = turnkeeper.TurnStore()
        c = anthropic.AsyncAnthropic(
            base_url=upstream.url, api_key="k", max_retries=0,
            http_client=httpx.AsyncClient(transport=AsyncRepairTransport(store=store)),
        )
        upstream.script.append([thinking_block(THOUGHT), {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {}}])
        r = await c.messages.create(model=MODEL, max_tokens=2048, thinking=THINKING, tools=TOOLS,
                                    messages=[{"role": "user", "content": "list files"}])
        content = [b.model_dump(exclude_none=True) for b in r.content]
        r2 = await c.messages.create(
            model=MODEL, max_tokens=2048, thinking=THINKING, tools=TOOLS,
            messages=[
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": [content[1], content[0]]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt"}]},
            ],
        )
        await c.close()
        return r2

    r2 = asyncio.run(go())
    assert r2.content[-1].text == "done"
    assert upstream.bodies()[-1]["messages"][1]["content"][0] == thinking_block(THOUGHT)


# --- OpenAI SDK, DeepSeek thinking mode ---------------------------------------------------------

DS_MESSAGES = [
    {"role": "user", "content": "what is 2+2? use the tool"},
    {"role": "assistant", "content": None, "reasoning_content": "Use the calculator.",
     "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "calc", "arguments": "{\"x\":\"2+2\"}"}}]},
    {"role": "tool", "tool_call_id": "call_0", "content": "4"},
    {"role": "assistant", "content": "It is 4."},
    {"role": "user", "content": "thanks"},
]
DS_TOOLS = [{"type": "function", "function": {"name": "calc", "parameters": {"type": "object", "properties": {}}}}]


def oa_client(upstream, transport=None) -> openai.OpenAI:
    http = anthropic.DefaultHttpxClient(transport=transport) if transport else None
    return openai.OpenAI(base_url=upstream.url + "/v1", api_key="k", max_retries=0, http_client=http)


def test_openai_sdk_deepseek_turn_without_reasoning_content(upstream):
    with pytest.raises(openai.BadRequestError, match="reasoning_content"):
        oa_client(upstream).chat.completions.create(model="deepseek-reasoner", messages=DS_MESSAGES, tools=DS_TOOLS)
    events = []
    r = oa_client(upstream, RepairTransport(on_event=events.append)).chat.completions.create(
        model="deepseek-reasoner", messages=DS_MESSAGES, tools=DS_TOOLS
    )
    assert r.choices[0].message.content == "done"
    sent = upstream.bodies()[-1]["messages"]
    assert sent[3]["reasoning_content"] == ""  # the key DeepSeek requires, empty: reported as lossy
    assert sent[1]["reasoning_content"] == "Use the calculator."
    assert events[0]["changes"][0]["rule"] == "DS-03"


def test_openai_sdk_valid_body_byte_identical(upstream):
    valid = [dict(m) for m in DS_MESSAGES]
    valid[3] = dict(valid[3], reasoning_content="Done.")
    oa_client(upstream).chat.completions.create(model="deepseek-reasoner", messages=valid, tools=DS_TOOLS)
    without = upstream.requests[-1]["body"]
    oa_client(upstream, RepairTransport()).chat.completions.create(model="deepseek-reasoner", messages=valid, tools=DS_TOOLS)
    assert upstream.requests[-1]["body"] == without
