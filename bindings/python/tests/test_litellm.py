"""The LiteLLM callback with the real LiteLLM against the mock upstream."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price list
litellm = pytest.importorskip("litellm", reason="litellm is not installed")

import turnkeeper  # noqa: E402
from mock_upstream import thinking_block  # noqa: E402
from test_sdk import DS_MESSAGES, DS_TOOLS  # noqa: E402
from turnkeeper.litellm import TurnkeeperCallback  # noqa: E402


@pytest.fixture
def callbacks():
    saved = list(litellm.callbacks)
    yield litellm.callbacks
    litellm.callbacks[:] = saved


def complete(upstream, messages):
    return asyncio.run(
        litellm.acompletion(
            model="deepseek/deepseek-reasoner",
            api_base=upstream.url,
            api_key="k",
            messages=messages,
            tools=DS_TOOLS,
            num_retries=0,
        )
    )


def test_a_damaged_deepseek_conversation_succeeds(upstream, callbacks):
    with pytest.raises(litellm.BadRequestError, match="reasoning_content"):
        complete(upstream, DS_MESSAGES)
    cb = TurnkeeperCallback()
    callbacks.append(cb)
    r = complete(upstream, DS_MESSAGES)
    assert r.choices[0].message.content == "done"
    sent = upstream.bodies()[-1]["messages"]
    assert sent[3]["reasoning_content"] == ""
    assert sent[1]["reasoning_content"] == "Use the calculator."
    assert [c["rule"] for c in cb.last_report["changes"]] == ["DS-03"]
    assert DS_MESSAGES[3].get("reasoning_content") is None  # the caller's list is not mutated


def test_a_valid_conversation_reaches_the_mock_byte_identical(upstream, callbacks):
    valid = [dict(m) for m in DS_MESSAGES]
    valid[3] = dict(valid[3], reasoning_content="Done.")
    complete(upstream, valid)
    without = upstream.requests[-1]["body"]
    cb = TurnkeeperCallback()
    callbacks.append(cb)
    complete(upstream, valid)
    assert upstream.requests[-1]["body"] == without
    assert cb.last_report is None


def test_the_proxy_hook_repairs_anthropic_messages():
    # The shape LiteLLM's proxy passes for POST /v1/messages (call type anthropic_messages).
    thought = thinking_block("Call ls.")
    call = {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {}}
    data = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": [call, thought]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt"}]},
        ],
        "proxy_server_request": {"url": "http://gateway/v1/messages"},
    }
    store = turnkeeper.TurnStore()
    store.add(json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [thought, call], "stop_reason": "tool_use"}))
    cb = TurnkeeperCallback(store=store)
    out = asyncio.run(cb.async_pre_call_hook(None, None, data, "anthropic_messages"))
    assert out is not data
    assert out["messages"][1]["content"] == [thought, call]
    assert out["thinking"] == data["thinking"]
    assert out["proxy_server_request"] is data["proxy_server_request"]
    assert data["messages"][1]["content"] == [call, thought]  # the input is left as it was
    # and a request that needs nothing is passed on as the same object
    assert asyncio.run(cb.async_pre_call_hook(None, None, out, "anthropic_messages")) is out


def test_the_failure_hook_classifies(caplog):
    cb = TurnkeeperCallback()
    err = litellm.BadRequestError(
        message="messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_9.",
        model="claude-sonnet-4-5",
        llm_provider="anthropic",
    )
    with caplog.at_level("WARNING", logger="turnkeeper"):
        asyncio.run(cb.async_post_call_failure_hook({}, err, None))
    assert "tool_result_missing" in caplog.text and "repair" in caplog.text
