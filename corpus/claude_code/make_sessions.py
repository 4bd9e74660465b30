#!/usr/bin/env python3
"""Writes synthetic Claude Code sessions modelled on the real ones in
shared/real-stores/claude-code (values invented; signatures only look like base64).

- 5f0c2a1e-....jsonl: one content block per line, lines of a response sharing message.id,
  parallel tool calls stored as a tree (each result hangs off its own call, the next response off
  the last result written), `caller` on tool_use blocks, and a session that stopped mid-tool: the
  last response's two calls have no results (the real f530d903 ends the same way).

Run: python3 corpus/claude_code/make_sessions.py (also writes the fuzz seeds).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SID = "5f0c2a1e-7b3d-4c8e-9a1f-2b3c4d5e6f70"
SIG = "EqQBCkgIDBABGAIqQ" + "Zm9vYmFyYmF6cXV4" * 8 + "=="
ENV = {"userType": "external", "entrypoint": "cli", "cwd": "/home/dev/app", "sessionId": SID,
       "version": "2.1.81", "gitBranch": "main"}
n = [0]


def uid():
    n[0] += 1
    return f"00000000-0000-4000-8000-{n[0]:012d}"


def user(parent, content, **extra):
    u = uid()
    return u, {"parentUuid": parent, "isSidechain": False, "type": "user",
               "message": {"role": "user", "content": content}, "uuid": u,
               "timestamp": f"2026-03-29T22:15:{n[0]:02d}.000Z", **extra, **ENV}


def asst(parent, mid, block):
    u = uid()
    return u, {"parentUuid": parent, "isSidechain": False,
               "message": {"model": "claude-sonnet-4-6", "id": mid, "type": "message",
                           "role": "assistant", "content": [block], "stop_reason": None,
                           "usage": {"input_tokens": 10, "output_tokens": 5}},
               "requestId": "req_" + mid[4:], "type": "assistant", "uuid": u,
               "timestamp": f"2026-03-29T22:15:{n[0]:02d}.000Z", **ENV}


def call(i):
    return {"type": "tool_use", "id": f"toolu_01Synthetic{i:013d}", "name": "Read",
            "input": {"file_path": f"/home/dev/app/f{i}.txt"}, "caller": {"type": "direct"}}


def result(i):
    return [{"tool_use_id": f"toolu_01Synthetic{i:013d}", "type": "tool_result",
             "content": f"contents of f{i}"}]


lines = []
u0, l = user(None, "Read f1 and f2, then f3 and f4."); lines.append(l)
a1, l = asst(u0, "msg_01SyntheticAAAAAAAAAAAA", {"type": "thinking", "thinking": "Two files first.", "signature": SIG}); lines.append(l)
a2, l = asst(a1, "msg_01SyntheticAAAAAAAAAAAA", {"type": "text", "text": "Reading both."}); lines.append(l)
c1, l = asst(a2, "msg_01SyntheticAAAAAAAAAAAA", call(1)); lines.append(l)
c2, l = asst(c1, "msg_01SyntheticAAAAAAAAAAAA", call(2)); lines.append(l)
r1, l = user(c1, result(1), toolUseResult={"type": "text"}, sourceToolAssistantUUID=c1); lines.append(l)
r2, l = user(c2, result(2), toolUseResult={"type": "text"}, sourceToolAssistantUUID=c2); lines.append(l)
b1, l = asst(r2, "msg_01SyntheticBBBBBBBBBBBB", {"type": "thinking", "thinking": "", "signature": SIG}); lines.append(l)
c3, l = asst(b1, "msg_01SyntheticBBBBBBBBBBBB", call(3)); lines.append(l)
c4, l = asst(c3, "msg_01SyntheticBBBBBBBBBBBB", call(4)); lines.append(l)

text = "".join(json.dumps(x, separators=(",", ":"), ensure_ascii=False) + "\n" for x in lines)
with open(os.path.join(HERE, f"{SID}.jsonl"), "w") as f:
    f.write(text)
seeds = os.path.join(ROOT, "fuzz", "claude_code_jsonl")
os.makedirs(seeds, exist_ok=True)
with open(os.path.join(seeds, "stopped-mid-tool.jsonl"), "w") as f:
    f.write(text)
body = text.split("\n")
with open(os.path.join(seeds, "torn-and-duplicated.jsonl"), "w") as f:
    f.write("\n".join(body[:3] + [body[2]] + body[3:8]) + "\n" + body[8][: len(body[8]) // 2])
with open(os.path.join(seeds, "removed-result.jsonl"), "w") as f:
    f.write("\n".join(body[:5] + body[6:]))
