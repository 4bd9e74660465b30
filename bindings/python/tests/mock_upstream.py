"""A mock provider on 127.0.0.1: Anthropic's ``/v1/messages`` and an OpenAI-compatible
``/chat/completions`` (DeepSeek), each rejecting with a 400 what the real API rejects, in the
real API's words (../shared/research/api-rules.md: AN-08, AN-16, AN-20, AN-21/AN-22 for
signatures and modified thinking, DS-03/DS-04 for DeepSeek's reasoning_content).

Its rules are written here independently of turnkeeper, so that turnkeeper is judged by a
referee it does not share code with. Thinking blocks it issues are signed with an HMAC of their
text, so any byte changed in a replayed thinking block is seen, as the real API sees it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

KEY = b"turnkeeper-mock-upstream"

AN16 = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`."
)
AN08 = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
MODIFIED = (
    "messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant "
    "message cannot be modified. These blocks must remain as they were in the original response."
)
SIGNATURE = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
AN20 = (
    "messages.{i}.content.{j}: When thinking is disabled, an `assistant` message in the final "
    "position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
)
DS03 = "Missing `reasoning_content` field in the assistant message at message index {i}"


def sign(thinking: str) -> str:
    """The signature the mock gives a thinking block: an HMAC of its exact text."""
    return base64.b64encode(hmac.new(KEY, thinking.encode(), hashlib.sha256).digest()).decode()


def thinking_block(text: str) -> dict:
    return {"type": "thinking", "thinking": text, "signature": sign(text)}


def _blocks(m: dict) -> list:
    c = m.get("content")
    return c if isinstance(c, list) else []


def anthropic_error(body: dict) -> Optional[str]:
    """What the Messages API would say about ``body``, or None when it would accept it."""
    msgs = body.get("messages", [])
    mode = (body.get("thinking") or {}).get("type", "disabled")
    last_assistant = max((i for i, m in enumerate(msgs) if m.get("role") == "assistant"), default=-1)
    for i, m in enumerate(msgs):
        if m.get("role") != "assistant":
            continue
        for j, b in enumerate(_blocks(m)):
            if b.get("type") == "thinking" and b.get("signature") != sign(b.get("thinking", "")):
                return (MODIFIED if i == last_assistant else SIGNATURE).format(i=i, j=j)
        calls = [b["id"] for b in _blocks(m) if b.get("type") == "tool_use"]
        if calls and i + 1 < len(msgs):
            nxt = msgs[i + 1]
            answered = {
                b.get("tool_use_id")
                for b in _blocks(nxt)
                if nxt.get("role") == "user" and b.get("type") == "tool_result"
            }
            missing = [c for c in calls if c not in answered]
            if missing:
                return AN08.format(i=i, ids=", ".join(missing))
    if msgs and msgs[-1].get("role") == "assistant" and mode == "disabled":
        for j, b in enumerate(_blocks(msgs[-1])):
            if b.get("type") in ("thinking", "redacted_thinking"):
                return AN20.format(i=len(msgs) - 1, j=j)
    if mode == "enabled" and msgs and msgs[-1].get("role") == "user":
        last = _blocks(msgs[-1])
        if last and all(b.get("type") == "tool_result" for b in last):
            # The open turn starts after the last user message with anything but tool results.
            start = 0
            for k, m in enumerate(msgs):
                if m.get("role") == "user" and not (
                    _blocks(m) and all(b.get("type") == "tool_result" for b in _blocks(m))
                ):
                    start = k
            first = next((k for k in range(start, len(msgs)) if msgs[k].get("role") == "assistant"), None)
            if first is not None:
                blocks = _blocks(msgs[first])
                found = blocks[0].get("type") if blocks else "text"
                if found not in ("thinking", "redacted_thinking"):
                    return AN16.format(i=first, found=found)
    return None


def chat_error(body: dict) -> Optional[str]:
    """What DeepSeek's thinking mode would say (DS-03/DS-04): a tool-calling assistant message,
    or with ``tools`` any assistant message, must carry ``reasoning_content``."""
    model = str(body.get("model", ""))
    if "deepseek" not in model:
        return None
    tools = bool(body.get("tools"))
    for i, m in enumerate(body.get("messages", [])):
        if m.get("role") == "assistant" and (tools or m.get("tool_calls")) and "reasoning_content" not in m:
            return DS03.format(i=i)
    return None


class MockUpstream:
    """The server. ``requests`` holds what it received: dicts with ``path``, ``headers`` and
    ``body`` (bytes, exactly as received). ``script`` holds Anthropic content lists to answer
    with, first first; without one it answers with a signed thinking block and a text."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[list[dict]] = []
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self._n = 0

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> None:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                mock.requests.append({"path": self.path, "headers": dict(self.headers), "body": raw})
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._send(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "invalid JSON"}})
                if self.path.endswith("/messages"):
                    err = anthropic_error(body)
                    if err:
                        return self._send(400, {"type": "error", "error": {"type": "invalid_request_error", "message": err}})
                    return self._send(200, mock._anthropic_response(body))
                if self.path.endswith("/chat/completions"):
                    err = chat_error(body)
                    if err:
                        return self._send(400, {"error": {"message": err, "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}})
                    return self._send(200, mock._chat_response(body))
                self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, obj: dict) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_mock_{mock._n}")
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _anthropic_response(self, body: dict) -> dict:
        self._n += 1
        content = self.script.pop(0) if self.script else [
            thinking_block(f"Answering request {self._n}."),
            {"type": "text", "text": "done"},
        ]
        return {
            "id": f"msg_mock_{self._n}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    def _chat_response(self, body: dict) -> dict:
        self._n += 1
        return {
            "id": f"chatcmpl-mock-{self._n}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "done", "reasoning_content": "thought"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }

    def bodies(self) -> list[dict]:
        return [json.loads(r["body"]) for r in self.requests]
