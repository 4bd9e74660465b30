#!/usr/bin/env python3
"""Generates corpus/anthropic/long_200_messages.json: a 201-message manual-thinking session.

Realism comes from reusing REAL signed (thinking, tool_use) pairs recorded by charmbracelet/fantasy against
claude-sonnet-4-20250514 (all ask for the weather in Florence). Their bytes are spliced in verbatim. Sonnet 4
does not bind signatures to the prefix (api-rules.md AN-25 starts with Fable 5.1), so a pair may appear in
more than one turn. Every tool_use gets its tool_result in the next user message; the request ends in an open
tool loop of two steps whose first assistant message starts with thinking (AN-16); the second step has none,
which manual mode allows. Deterministic: same output every run.
"""
import glob
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from rawjson import COMPACT, TRAFFIC, Raw, Src, write  # noqa: E402

TARGET = 200


def pairs():
    out, seen = [], set()
    for path in sorted(glob.glob(os.path.join(TRAFFIC, "anthropic", "fantasy--*__1.request.json"))):
        s = Src(os.path.relpath(path, TRAFFIC))
        c = s.get("messages", 1, "content")
        if [b["type"] for b in c] != ["thinking", "tool_use"] or c[0]["signature"] in seen:
            continue
        seen.add(c[0]["signature"])
        out.append((s.raw("messages", 1, "content", 0), s.raw("messages", 1, "content", 1), c[1]["id"], s.rel))
    return out


def no_cache(tu):
    """The tool_use without its `cache_control`: each recorded request marks its one call, and a
    request may carry at most 4 breakpoints (api-rules.md AN-07), so only the final turn keeps its."""
    return Raw(re.sub(r',\s*"cache_control"\s*:\s*\{[^{}]*\}', "", tu.text))


def main():
    rng = random.Random(20260926)
    ps = pairs()
    base = Src("anthropic/fantasy--TestAnthropicThinking-claude-sonnet-4-thinking__1.request.json")
    o = lambda role, content: {"content": content, "role": role}  # fantasy's key order  # noqa: E731
    t = lambda s: {"text": s, "type": "text"}  # noqa: E731
    topics = ["packing for a day trip", "the best gelato near Santa Croce", "train times to Pisa",
              "how long the Uffizi queue is", "a rainy-day museum plan", "what to wear in the evening",
              "sunset time at Piazzale Michelangelo", "a budget for three days", "Renaissance painters to look for",
              "whether to book the Duomo climb"]
    ms, used, turn = [], [], 0
    while True:
        remaining = TARGET - len(ms)
        if remaining <= 5:
            break
        turn += 1
        kind = rng.random()
        if kind < 0.45 and remaining > 7:
            th, tu, tid, src = ps[rng.randrange(len(ps))]
            used.append(src)
            temp = rng.randint(12, 41)
            ms.append(o("user", [t(f"Turn {turn}: what's the weather in Florence right now?")]))
            ms.append(o("assistant", [th, no_cache(tu)]))
            ms.append(o("user", [{"tool_use_id": tid, "content": [t(f"{temp} C")], "type": "tool_result"}]))
            ms.append(o("assistant", [t(f"It is {temp} °C in Florence right now.")]))
        elif kind < 0.8:
            topic = topics[rng.randrange(len(topics))]
            ms.append(o("user", f"Turn {turn}: any tips on {topic}?"))
            ms.append(o("assistant", [t(f"Here are a few thoughts on {topic}: go early, keep it simple, and check opening hours.")]))
        else:
            ms.append(o("user", [t(f"Turn {turn}: thanks — note that down."), t("Also keep answers short from now on.")]))
            ms.append(o("assistant", [t("Noted. I'll keep it short.")]))
    # close with an open tool loop of two steps: only its first assistant message needs thinking (AN-16)
    th, tu, tid, src = ps[0]
    used.append(src)
    ms += [o("user", [t("Last check before I leave: the weather in Florence, and is the Duomo open?")]),
           o("assistant", [th, tu]),
           o("user", [{"tool_use_id": tid, "content": [t("28 C")], "type": "tool_result"}]),
           o("assistant", [t("Now the opening hours."),
                           {"id": "toolu_01LgQ7nVd3Xc8Rk2PzT5mWa9", "input": {"place": "Duomo di Firenze"},
                            "name": "opening_hours", "type": "tool_use"}]),
           o("user", [{"tool_use_id": "toolu_01LgQ7nVd3Xc8Rk2PzT5mWa9", "content": "10:15-16:45", "type": "tool_result"}])]
    body = {}
    for k in base.obj:
        body[k] = ms if k == "messages" else base.raw(k)
    body["tools"] = [base.raw("tools", 0), {"input_schema": {"properties": {"place": {"type": "string"}}, "required": ["place"],
                                                             "type": "object"},
                                            "name": "opening_hours", "description": "Opening hours of a venue"}]
    out = os.path.join(HERE, "long_200_messages.json")
    write(out, body, COMPACT)
    print(f"{out}: {len(ms)} messages, {len(set(used))} distinct real thinking blocks from {len(ps)} available")


if __name__ == "__main__":
    main()
